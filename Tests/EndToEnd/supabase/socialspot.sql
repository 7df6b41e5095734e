-- SocialSpot's tables as socialspot.md describes them (it names the data, not the DDL): a profile
-- per user created at sign-up with the card's fields, the social links and the settings; one
-- location row per sharing user, removed when sharing stops, stale ones removed after a TTL; RLS
-- so users write only their own rows. Positions in PostGIS, as a "within 500 feet" app keeps them.

CREATE EXTENSION IF NOT EXISTS postgis;

CREATE TABLE public.profiles (
    id uuid PRIMARY KEY REFERENCES auth.users (id) ON DELETE CASCADE,
    name text NOT NULL DEFAULT '',
    bio text,
    school text,
    birthday date,
    avatar_url text,
    instagram text,
    snapchat text,
    tiktok text,
    linkedin text,
    youtube text,
    twitter text,
    other text,
    dark_mode boolean NOT NULL DEFAULT false,
    satellite_map boolean NOT NULL DEFAULT false,
    share_location boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE public.locations (
    user_id uuid PRIMARY KEY REFERENCES public.profiles (id) ON DELETE CASCADE,
    location geography(Point, 4326) NOT NULL,
    accuracy double precision,
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX locations_location ON public.locations USING gist (location);

ALTER TABLE public.profiles ENABLE ROW LEVEL SECURITY;
ALTER TABLE public.locations ENABLE ROW LEVEL SECURITY;
CREATE POLICY "read profiles" ON public.profiles FOR SELECT USING (auth.uid() IS NOT NULL);
CREATE POLICY "own profile" ON public.profiles FOR UPDATE USING (id = auth.uid());
CREATE POLICY "read shared locations" ON public.locations FOR SELECT USING (auth.uid() IS NOT NULL);
CREATE POLICY "own location" ON public.locations FOR ALL USING (user_id = auth.uid()) WITH CHECK (user_id = auth.uid());

INSERT INTO storage.buckets (id, name, public) VALUES ('avatars', 'avatars', true);
