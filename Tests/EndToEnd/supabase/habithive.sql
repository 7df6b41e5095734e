-- HabitHive's DDL from habithive.md, section 2, as the seed gives it (tables, constraints,
-- indexes, RLS, the sign-up trigger). Two repairs so Postgres takes it: CREATE POLICY has no
-- IF NOT EXISTS, and the RPC functions, which the import does not read, are left out.

CREATE TABLE IF NOT EXISTS public.profiles (
  id uuid PRIMARY KEY REFERENCES auth.users(id) ON DELETE CASCADE,
  display_name text NOT NULL DEFAULT 'New Bee',
  avatar_url text,
  timezone text NOT NULL DEFAULT 'America/New_York',
  day_start_hour int NOT NULL DEFAULT 4 CHECK (day_start_hour BETWEEN 0 AND 23),
  theme text NOT NULL DEFAULT 'honey',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE public.profiles ENABLE ROW LEVEL SECURITY;

CREATE OR REPLACE FUNCTION public.handle_new_user()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER SET search_path = public AS $$
BEGIN
  INSERT INTO public.profiles (id, display_name)
  VALUES (new.id, coalesce(new.raw_user_meta_data->>'display_name', 'Bee ' || substring(new.id::text, 1, 6)))
  ON CONFLICT (id) DO NOTHING;
  RETURN new;
END $$;
CREATE TRIGGER on_auth_user_created AFTER INSERT ON auth.users FOR EACH ROW EXECUTE FUNCTION public.handle_new_user();

CREATE POLICY "read own profile" ON public.profiles FOR SELECT USING (auth.uid() = id);
CREATE POLICY "insert own profile" ON public.profiles FOR INSERT WITH CHECK (auth.uid() = id);
CREATE POLICY "update own profile" ON public.profiles FOR UPDATE USING (auth.uid() = id);

CREATE TABLE IF NOT EXISTS public.device_tokens (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  user_id uuid NOT NULL REFERENCES auth.users(id) ON DELETE CASCADE,
  apns_token text NOT NULL,
  environment text NOT NULL DEFAULT 'prod',
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE(apns_token)
);
ALTER TABLE public.device_tokens ENABLE ROW LEVEL SECURITY;
CREATE POLICY "owner manage tokens" ON public.device_tokens FOR ALL USING (user_id = auth.uid()) WITH CHECK (user_id = auth.uid());

CREATE TYPE public.habit_type AS ENUM ('checkbox', 'counter');

CREATE TABLE IF NOT EXISTS public.habits (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  user_id uuid NOT NULL REFERENCES auth.users(id) ON DELETE CASCADE,
  name text NOT NULL,
  emoji text,
  color_hex text NOT NULL DEFAULT '#FF9F1C',
  type public.habit_type NOT NULL DEFAULT 'checkbox',
  target_per_day int NOT NULL DEFAULT 1 CHECK (target_per_day > 0),
  schedule_daily boolean NOT NULL DEFAULT true,
  schedule_weekmask int NOT NULL DEFAULT 127,
  is_active boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS idx_habits_user ON public.habits(user_id);
ALTER TABLE public.habits ENABLE ROW LEVEL SECURITY;
CREATE POLICY "owner crud habit" ON public.habits FOR ALL USING (user_id = auth.uid()) WITH CHECK (user_id = auth.uid());

CREATE TABLE IF NOT EXISTS public.habit_logs (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  habit_id uuid NOT NULL REFERENCES public.habits(id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES auth.users(id) ON DELETE CASCADE,
  log_date date NOT NULL,
  value int NOT NULL DEFAULT 1,
  source text NOT NULL DEFAULT 'manual',
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (habit_id, log_date)
);
CREATE INDEX IF NOT EXISTS idx_logs_user_date ON public.habit_logs(user_id, log_date);
ALTER TABLE public.habit_logs ENABLE ROW LEVEL SECURITY;
CREATE POLICY "owner read logs" ON public.habit_logs FOR SELECT USING (user_id = auth.uid());
CREATE POLICY "owner write logs" ON public.habit_logs FOR INSERT WITH CHECK (user_id = auth.uid());
CREATE POLICY "owner delete logs" ON public.habit_logs FOR DELETE USING (user_id = auth.uid());

CREATE TABLE IF NOT EXISTS public.hives (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL,
  owner_id uuid NOT NULL REFERENCES auth.users(id) ON DELETE CASCADE,
  color_hex text NOT NULL DEFAULT '#FF9F1C',
  type public.habit_type NOT NULL DEFAULT 'checkbox',
  target_per_day int NOT NULL DEFAULT 1,
  rule text NOT NULL DEFAULT 'all_must_complete',
  threshold int,
  schedule_daily boolean NOT NULL DEFAULT true,
  schedule_weekmask int NOT NULL DEFAULT 127,
  current_length int NOT NULL DEFAULT 0,
  last_advanced_on date,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS idx_hives_owner ON public.hives(owner_id);

CREATE TABLE IF NOT EXISTS public.hive_members (
  hive_id uuid NOT NULL REFERENCES public.hives(id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES auth.users(id) ON DELETE CASCADE,
  role text NOT NULL DEFAULT 'member',
  joined_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (hive_id, user_id)
);
CREATE INDEX IF NOT EXISTS idx_hive_members_user ON public.hive_members(user_id);

CREATE TABLE IF NOT EXISTS public.hive_member_days (
  hive_id uuid NOT NULL REFERENCES public.hives(id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES auth.users(id) ON DELETE CASCADE,
  day_date date NOT NULL,
  value int NOT NULL DEFAULT 1,
  done boolean GENERATED ALWAYS AS (value > 0) STORED,
  PRIMARY KEY (hive_id, user_id, day_date)
);

CREATE TABLE IF NOT EXISTS public.hive_days (
  hive_id uuid NOT NULL REFERENCES public.hives(id) ON DELETE CASCADE,
  day_date date NOT NULL,
  complete_count int NOT NULL DEFAULT 0,
  required_count int NOT NULL,
  advanced boolean NOT NULL DEFAULT false,
  PRIMARY KEY (hive_id, day_date)
);

ALTER TABLE public.hives ENABLE ROW LEVEL SECURITY;
CREATE POLICY "members read hives" ON public.hives FOR SELECT
  USING (EXISTS (SELECT 1 FROM public.hive_members m WHERE m.hive_id = hives.id AND m.user_id = auth.uid()));
CREATE POLICY "owner manage hive" ON public.hives FOR ALL USING (owner_id = auth.uid()) WITH CHECK (owner_id = auth.uid());
ALTER TABLE public.hive_members ENABLE ROW LEVEL SECURITY;
CREATE POLICY "members read list" ON public.hive_members FOR SELECT
  USING (EXISTS (SELECT 1 FROM public.hive_members mm WHERE mm.hive_id = hive_members.hive_id AND mm.user_id = auth.uid()));
CREATE POLICY "owner add members" ON public.hive_members FOR INSERT
  WITH CHECK (EXISTS (SELECT 1 FROM public.hives h WHERE h.id = hive_members.hive_id AND h.owner_id = auth.uid()));
CREATE POLICY "owner remove members" ON public.hive_members FOR DELETE
  USING (EXISTS (SELECT 1 FROM public.hives h WHERE h.id = hive_members.hive_id AND h.owner_id = auth.uid()));
ALTER TABLE public.hive_member_days ENABLE ROW LEVEL SECURITY;
CREATE POLICY "member write own day" ON public.hive_member_days FOR INSERT WITH CHECK (user_id = auth.uid());
CREATE POLICY "members read days" ON public.hive_member_days FOR SELECT
  USING (EXISTS (SELECT 1 FROM public.hive_members m WHERE m.hive_id = hive_member_days.hive_id AND m.user_id = auth.uid()));
ALTER TABLE public.hive_days ENABLE ROW LEVEL SECURITY;
CREATE POLICY "members read hive days" ON public.hive_days FOR SELECT
  USING (EXISTS (SELECT 1 FROM public.hive_members m WHERE m.hive_id = hive_days.hive_id AND m.user_id = auth.uid()));

CREATE TABLE IF NOT EXISTS public.hive_invites (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  hive_id uuid NOT NULL REFERENCES public.hives(id) ON DELETE CASCADE,
  code text NOT NULL UNIQUE,
  created_by uuid NOT NULL REFERENCES auth.users(id) ON DELETE CASCADE,
  expires_at timestamptz NOT NULL,
  max_uses int NOT NULL DEFAULT 20,
  use_count int NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE public.hive_invites ENABLE ROW LEVEL SECURITY;
CREATE POLICY "members read invites" ON public.hive_invites FOR SELECT
  USING (EXISTS (SELECT 1 FROM public.hive_members m WHERE m.hive_id = hive_invites.hive_id AND m.user_id = auth.uid()));
CREATE POLICY "owner create invites" ON public.hive_invites FOR INSERT
  WITH CHECK (EXISTS (SELECT 1 FROM public.hives h WHERE h.id = hive_invites.hive_id AND h.owner_id = auth.uid()));

CREATE TABLE IF NOT EXISTS public.contact_hashes (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  user_id uuid NOT NULL REFERENCES auth.users(id) ON DELETE CASCADE,
  contact_hash text NOT NULL,
  display_name text,
  imported_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE(user_id, contact_hash)
);
ALTER TABLE public.contact_hashes ENABLE ROW LEVEL SECURITY;
CREATE POLICY "owner manage contacts" ON public.contact_hashes FOR ALL USING (user_id = auth.uid()) WITH CHECK (user_id = auth.uid());

CREATE TYPE public.activity_type AS ENUM ('habit_completed', 'streak_milestone', 'hive_joined', 'hive_advanced', 'hive_broken');

CREATE TABLE IF NOT EXISTS public.activity_events (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  actor_id uuid NOT NULL REFERENCES auth.users(id) ON DELETE CASCADE,
  hive_id uuid REFERENCES public.hives(id),
  habit_id uuid REFERENCES public.habits(id),
  type public.activity_type NOT NULL,
  data jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS idx_activity_hive_time ON public.activity_events(hive_id, created_at DESC);
ALTER TABLE public.activity_events ENABLE ROW LEVEL SECURITY;
CREATE POLICY "members read hive activity" ON public.activity_events FOR SELECT
  USING (hive_id IS NULL OR EXISTS (SELECT 1 FROM public.hive_members m WHERE m.hive_id = activity_events.hive_id AND m.user_id = auth.uid()));
CREATE POLICY "actor writes events" ON public.activity_events FOR INSERT WITH CHECK (actor_id = auth.uid());
