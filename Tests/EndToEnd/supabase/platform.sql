-- The parts of a Supabase project every app's database has, before GoTrue's own migrations
-- (gotrue-migrations/, applied next by the loader: supabase_source.py, the Swift import tests)
-- make the auth schema: the roles Supabase has, the `auth` schema owned by supabase_auth_admin
-- (as Supabase's image and GoTrue's hack/init_postgres.sql make it), and the storage tables
-- Colony's import reads (storage.buckets, storage.objects) in the shape Storage's migrations leave
-- them (columns the import does not read are kept, so a real project's rows fit). Roles belong to
-- the whole cluster: made only when missing, and a concurrent maker is no error.

DO $$
DECLARE
    wanted text[] := ARRAY['anon', 'authenticated', 'service_role', 'supabase_auth_admin', 'postgres'];
    name text;
BEGIN
    FOREACH name IN ARRAY wanted LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = name) THEN
            BEGIN
                EXECUTE format('CREATE ROLE %I NOLOGIN NOINHERIT', name);
            EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
            END;
        END IF;
    END LOOP;
END $$;

CREATE EXTENSION IF NOT EXISTS pgcrypto;
CREATE SCHEMA auth AUTHORIZATION supabase_auth_admin;
DO $$ BEGIN EXECUTE format('GRANT CREATE ON DATABASE %I TO supabase_auth_admin', current_database()); END $$;
CREATE SCHEMA storage;

CREATE TABLE storage.buckets (
    id text NOT NULL PRIMARY KEY,
    name text NOT NULL UNIQUE,
    owner uuid,
    public boolean DEFAULT false,
    created_at timestamptz DEFAULT now(),
    updated_at timestamptz DEFAULT now()
);

CREATE TABLE storage.objects (
    id uuid NOT NULL DEFAULT gen_random_uuid() PRIMARY KEY,
    bucket_id text REFERENCES storage.buckets (id),
    name text,
    owner uuid,
    created_at timestamptz DEFAULT now(),
    updated_at timestamptz DEFAULT now(),
    last_accessed_at timestamptz DEFAULT now(),
    metadata jsonb
);
CREATE UNIQUE INDEX bucketid_objname ON storage.objects (bucket_id, name);
