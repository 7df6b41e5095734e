-- MyCirclee's 14 tables as mycirclee.md lists them ("Database Schema": the columns, the key
-- relationships; every table under RLS gated by circle_members). The seed names columns
-- without types: these are the types its flows imply.

CREATE TABLE public.profiles (
    user_id uuid PRIMARY KEY REFERENCES auth.users (id),
    display_name text NOT NULL,
    handle text NOT NULL UNIQUE,
    bio text,
    dm_privacy text NOT NULL DEFAULT 'anyone' CHECK (dm_privacy IN ('anyone', 'reciprocal', 'nobody')),
    is_pro boolean NOT NULL DEFAULT false,
    full_name text,
    location text,
    address text,
    email text,
    phone text,
    birthday date
);

CREATE TABLE public.circles (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name text NOT NULL,
    created_by uuid NOT NULL REFERENCES auth.users (id),
    created_at timestamptz NOT NULL DEFAULT now(),
    invite_code text UNIQUE
);

CREATE TABLE public.circle_members (
    circle_id uuid NOT NULL REFERENCES public.circles (id) ON DELETE CASCADE,
    user_id uuid NOT NULL REFERENCES auth.users (id),
    role text NOT NULL DEFAULT 'member',
    joined_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (circle_id, user_id)
);

CREATE TABLE public.posts (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    circle_id uuid NOT NULL REFERENCES public.circles (id) ON DELETE CASCADE,
    author_id uuid NOT NULL REFERENCES auth.users (id),
    type text NOT NULL CHECK (type IN ('note', 'event', 'ask', 'poll')),
    body text NOT NULL,
    mood text,
    category text,
    urgency text,
    location text,
    latitude double precision,
    longitude double precision,
    photo_url text,
    expires_at timestamptz NOT NULL DEFAULT now() + interval '24 hours',
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE public.post_reactions (
    post_id uuid NOT NULL REFERENCES public.posts (id) ON DELETE CASCADE,
    user_id uuid NOT NULL REFERENCES auth.users (id),
    emoji text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (post_id, user_id, emoji)
);

CREATE TABLE public.poll_options (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    post_id uuid NOT NULL REFERENCES public.posts (id) ON DELETE CASCADE,
    label text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE public.poll_votes (
    option_id uuid NOT NULL REFERENCES public.poll_options (id) ON DELETE CASCADE,
    user_id uuid NOT NULL REFERENCES auth.users (id),
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (option_id, user_id)
);

CREATE TABLE public.event_rsvps (
    post_id uuid NOT NULL REFERENCES public.posts (id) ON DELETE CASCADE,
    user_id uuid NOT NULL REFERENCES auth.users (id),
    status text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (post_id, user_id)
);

CREATE TABLE public.dm_threads (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    circle_id uuid NOT NULL REFERENCES public.circles (id) ON DELETE CASCADE,
    user_a uuid NOT NULL REFERENCES auth.users (id),
    user_b uuid NOT NULL REFERENCES auth.users (id),
    last_message_at timestamptz,
    notify_a boolean NOT NULL DEFAULT true,
    notify_b boolean NOT NULL DEFAULT true
);

CREATE TABLE public.dm_messages (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    thread_id uuid NOT NULL REFERENCES public.dm_threads (id) ON DELETE CASCADE,
    sender_id uuid NOT NULL REFERENCES auth.users (id),
    body text NOT NULL,
    reply_to_id uuid REFERENCES public.dm_messages (id),
    created_at timestamptz NOT NULL DEFAULT now(),
    read_at timestamptz
);

CREATE TABLE public.dm_reactions (
    message_id uuid NOT NULL REFERENCES public.dm_messages (id) ON DELETE CASCADE,
    user_id uuid NOT NULL REFERENCES auth.users (id),
    emoji text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (message_id, user_id, emoji)
);

CREATE TABLE public.presence_states (
    user_id uuid NOT NULL REFERENCES auth.users (id),
    circle_id uuid NOT NULL REFERENCES public.circles (id) ON DELETE CASCADE,
    status text NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, circle_id)
);

CREATE TABLE public.push_tokens (
    user_id uuid NOT NULL REFERENCES auth.users (id) ON DELETE CASCADE,
    token text NOT NULL,
    platform text NOT NULL DEFAULT 'ios',
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, token)
);

CREATE TABLE public.kept_posts (
    user_id uuid NOT NULL REFERENCES auth.users (id),
    post_id uuid NOT NULL REFERENCES public.posts (id) ON DELETE CASCADE,
    kept_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, post_id)
);

CREATE TABLE public.add_requests (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    circle_id uuid NOT NULL REFERENCES public.circles (id) ON DELETE CASCADE,
    from_user_id uuid NOT NULL REFERENCES auth.users (id),
    to_user_id uuid NOT NULL REFERENCES auth.users (id),
    status text NOT NULL DEFAULT 'pending',
    created_at timestamptz NOT NULL DEFAULT now()
);

-- "A user can only read rows where their user_id appears in circle_members for the relevant circle_id."
DO $$
DECLARE t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['profiles', 'circles', 'circle_members', 'posts', 'post_reactions', 'poll_options', 'poll_votes', 'event_rsvps',
                             'dm_threads', 'dm_messages', 'dm_reactions', 'presence_states', 'push_tokens', 'kept_posts', 'add_requests'] LOOP
        EXECUTE format('ALTER TABLE public.%I ENABLE ROW LEVEL SECURITY', t);
    END LOOP;
END $$;
CREATE POLICY "members read circles" ON public.circles FOR SELECT
    USING (id IN (SELECT circle_id FROM public.circle_members WHERE user_id = auth.uid()));
CREATE POLICY "members read members" ON public.circle_members FOR SELECT
    USING (circle_id IN (SELECT circle_id FROM public.circle_members WHERE user_id = auth.uid()));
CREATE POLICY "members read posts" ON public.posts FOR SELECT
    USING (circle_id IN (SELECT circle_id FROM public.circle_members WHERE user_id = auth.uid()));
CREATE POLICY "members write posts" ON public.posts FOR INSERT
    WITH CHECK (author_id = auth.uid() AND circle_id IN (SELECT circle_id FROM public.circle_members WHERE user_id = auth.uid()));
CREATE POLICY "own push tokens" ON public.push_tokens FOR ALL USING (user_id = auth.uid()) WITH CHECK (user_id = auth.uid());
