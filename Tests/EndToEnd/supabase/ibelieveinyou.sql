-- I Believe In You's nine tables as ibelieveinyou.md, section 2, gives them (columns, types,
-- references, uniques, enums), its sign-up trigger, and the Storage its screens use for avatars,
-- covers and post images.

CREATE TABLE public.builders (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id uuid UNIQUE REFERENCES auth.users (id),
    name text NOT NULL,
    bio text,
    avatar_url text,
    website_url text,
    twitter_handle text,
    is_creator boolean DEFAULT false,
    created_at timestamptz DEFAULT now(),
    updated_at timestamptz DEFAULT now()
);

CREATE TABLE public.karma (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id uuid UNIQUE REFERENCES auth.users (id),
    total_points integer DEFAULT 0,
    level integer DEFAULT 1,
    created_at timestamptz DEFAULT now(),
    updated_at timestamptz DEFAULT now()
);

CREATE TABLE public.projects (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    builder_id uuid NOT NULL REFERENCES public.builders (id),
    title text NOT NULL,
    tagline text,
    description text,
    cover_image_url text,
    public_slug text UNIQUE NOT NULL,
    mood text CHECK (mood IN ('green', 'yellow', 'red')),
    follower_count integer DEFAULT 0,
    is_published boolean DEFAULT true,
    created_at timestamptz DEFAULT now(),
    updated_at timestamptz DEFAULT now()
);

CREATE TABLE public.posts (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    project_id uuid NOT NULL REFERENCES public.projects (id) ON DELETE CASCADE,
    content text NOT NULL,
    images text[],
    like_count integer DEFAULT 0,
    created_at timestamptz DEFAULT now(),
    updated_at timestamptz DEFAULT now()
);

CREATE TABLE public.follows (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id uuid NOT NULL REFERENCES auth.users (id),
    project_id uuid NOT NULL REFERENCES public.projects (id) ON DELETE CASCADE,
    created_at timestamptz DEFAULT now(),
    UNIQUE (user_id, project_id)
);

CREATE TABLE public.milestones (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    project_id uuid NOT NULL REFERENCES public.projects (id) ON DELETE CASCADE,
    title text NOT NULL,
    description text,
    is_completed boolean DEFAULT false,
    target_date date,
    completed_at timestamptz,
    created_at timestamptz DEFAULT now()
);

CREATE TABLE public.support_messages (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    project_id uuid NOT NULL REFERENCES public.projects (id) ON DELETE CASCADE,
    sender_id uuid NOT NULL REFERENCES public.builders (id),
    message text NOT NULL,
    is_anonymous boolean DEFAULT false,
    created_at timestamptz DEFAULT now()
);

CREATE TABLE public.likes (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id uuid NOT NULL REFERENCES auth.users (id),
    post_id uuid NOT NULL REFERENCES public.posts (id) ON DELETE CASCADE,
    created_at timestamptz DEFAULT now(),
    UNIQUE (user_id, post_id)
);

CREATE TABLE public.support_actions (
    id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id uuid NOT NULL REFERENCES auth.users (id),
    project_id uuid NOT NULL REFERENCES public.projects (id) ON DELETE CASCADE,
    action_type text CHECK (action_type IN ('follow', 'message', 'like')),
    points_earned integer NOT NULL,
    metadata jsonb,
    created_at timestamptz DEFAULT now()
);

-- The sign-up trigger of section 2 ("Database Triggers"): every new auth.users row gets its
-- builder, named from the sign-up's metadata (the app sends `name`; `''` when there is none, as
-- for an account made by the dashboard, an invite or Sign in with Apple), and its karma row.
CREATE FUNCTION public.handle_new_user() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = public AS $$
BEGIN
    INSERT INTO public.builders (user_id, name) VALUES (new.id, coalesce(new.raw_user_meta_data->>'name', ''));
    INSERT INTO public.karma (user_id, total_points) VALUES (new.id, 0);
    RETURN new;
END $$;
CREATE TRIGGER on_auth_user_created AFTER INSERT ON auth.users FOR EACH ROW EXECUTE FUNCTION public.handle_new_user();

ALTER TABLE public.builders ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.karma ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.projects ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.posts ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.follows ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.milestones ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.support_messages ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.likes ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.support_actions ENABLE ROW LEVEL SECURITY;
CREATE POLICY "published projects" ON public.projects FOR SELECT
    USING (is_published OR builder_id IN (SELECT id FROM public.builders WHERE user_id = auth.uid()));
CREATE POLICY "own follows" ON public.follows FOR ALL USING (user_id = auth.uid()) WITH CHECK (user_id = auth.uid());

INSERT INTO storage.buckets (id, name, public) VALUES ('avatars', 'avatars', true), ('project-images', 'project-images', true);
