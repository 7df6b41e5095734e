-- Unify's five tables as unify.md, section 1, gives them (with its RLS: members see their groups'
-- messages and events, personal events their creator), and its three Storage buckets.

CREATE TYPE public.group_role AS ENUM ('owner', 'admin', 'user');

CREATE TABLE public."user" (
    id uuid PRIMARY KEY REFERENCES auth.users (id),
    display_name text NOT NULL,
    email text,
    avatar_url text
);

CREATE TABLE public."group" (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name text NOT NULL,
    owner_id uuid NOT NULL REFERENCES public."user" (id)
);

CREATE TABLE public.group_members (
    user_id uuid NOT NULL REFERENCES public."user" (id),
    group_id uuid NOT NULL REFERENCES public."group" (id) ON DELETE CASCADE,
    role public.group_role NOT NULL DEFAULT 'user',
    joined_at timestamptz NOT NULL DEFAULT now(),
    last_read_at timestamptz,
    PRIMARY KEY (group_id, user_id)
);

CREATE TABLE public.message (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    group_id uuid NOT NULL REFERENCES public."group" (id) ON DELETE CASCADE,
    content text,
    sent_by uuid NOT NULL REFERENCES public."user" (id),
    sent_at timestamptz NOT NULL DEFAULT now(),
    is_edited boolean NOT NULL DEFAULT false,
    message_type text NOT NULL DEFAULT 'text' CHECK (message_type IN ('text', 'voice')),
    voice_duration double precision,
    voice_url text
);
CREATE INDEX message_group_sent ON public.message (group_id, sent_at);

CREATE TABLE public.event (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    title text NOT NULL,
    details text,
    starts_at timestamptz NOT NULL,
    ends_at timestamptz NOT NULL,
    group_id uuid REFERENCES public."group" (id) ON DELETE CASCADE,
    created_by uuid NOT NULL REFERENCES public."user" (id)
);

ALTER TABLE public."user" ENABLE ROW LEVEL SECURITY;
ALTER TABLE public."group" ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.group_members ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.message ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.event ENABLE ROW LEVEL SECURITY;
CREATE POLICY members_can_select_messages ON public.message FOR SELECT
    USING (auth.uid() IN (SELECT user_id FROM public.group_members WHERE group_id = message.group_id));
CREATE POLICY members_can_select_events ON public.event FOR SELECT
    USING (created_by = auth.uid() OR group_id IN (SELECT group_id FROM public.group_members WHERE user_id = auth.uid()));
CREATE POLICY members_can_insert_events ON public.event FOR INSERT
    WITH CHECK (created_by = auth.uid() AND (group_id IS NULL OR group_id IN (SELECT group_id FROM public.group_members WHERE user_id = auth.uid())));

INSERT INTO storage.buckets (id, name, public) VALUES
    ('profile-pictures', 'profile-pictures', true), ('group-pictures', 'group-pictures', true), ('voice-messages', 'voice-messages', true);
