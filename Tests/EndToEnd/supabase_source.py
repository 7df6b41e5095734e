"""A Supabase project to import from, for the import journeys (test_import.py): a scratch database
in the stack's own Postgres built as a real project's is: Supabase's roles and storage tables
(Tests/EndToEnd/supabase/platform.sql), the auth schema made by GoTrue's own migrations
(Tests/EndToEnd/supabase/gotrue-migrations/, applied in order as `gotrue migrate` does), then the
seed's own tables and triggers (Tests/EndToEnd/supabase/<app>.sql); a folder of Storage objects as
`supabase storage cp` leaves them, and `colony-admin import supabase` run against both.

The database is made with psql as the cluster's admin (COLONY_PG_* from the environment, or from
.local/env when scripts/e2e was run by hand) and dropped at the end. Everything a test inserts
gets fresh ids, emails and phones, so the journeys can run again against the same stack.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import struct
import subprocess
import tempfile
import uuid
import zlib
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Optional

from e2e_support import ROOT

SUPABASE_DIR = Path(__file__).resolve().parent / "supabase"
GOTRUE_MIGRATIONS = SUPABASE_DIR / "gotrue-migrations"
# GoTrue's migrations are Go templates of one value, the auth schema's name.
NAMESPACE = re.compile(r'\{\{\s*index\s+\.Options\s+"Namespace"\s*\}\}')


def gotrue_migrations_script(namespace: str = "auth") -> str:
    """GoTrue's migrations as one psql script, as `gotrue migrate` applies them: in version (file
    name) order, each in its own transaction as supabase_auth_admin with the namespace on the
    search path, its version recorded in schema_migrations (which the first one creates)."""
    files = sorted(GOTRUE_MIGRATIONS.glob("*.up.sql"))
    assert len(files) > 50, f"GoTrue's migrations are missing from {GOTRUE_MIGRATIONS}"
    parts = []
    for path in files:
        version = path.name.split("_", 1)[0]
        body = NAMESPACE.sub(namespace, path.read_text())
        parts.append(f"BEGIN;\nSET LOCAL ROLE supabase_auth_admin;\nSET LOCAL search_path = {namespace};\n{body}\n;\n"
                     f"INSERT INTO {namespace}.schema_migrations (version) VALUES ('{version}');\nCOMMIT;\n")
    return "".join(parts)
LOG_DIR = ROOT / ".local" / "logs"


def local_env() -> dict[str, str]:
    """The environment colony-admin needs: the admin database settings (.local/env), auth's
    phone pepper and the services' storage settings as scripts/run gives them."""
    env = dict(os.environ)
    if "COLONY_PG_HOST" not in env:
        dumped = subprocess.run(["bash", "-c", f"source {ROOT / '.local' / 'env'} && env -0"], check=True, capture_output=True).stdout
        for item in dumped.split(b"\0"):
            if b"=" in item:
                key, value = item.split(b"=", 1)
                env.setdefault(key.decode(), value.decode())
    secrets_dir = ROOT / ".local" / "secrets"
    for variable, name in (("COLONY_AUTH_PHONE_PEPPER", "auth-phone-pepper"), ("COLONY_STORAGE_SIGNING_KEY", "storage-signing-key")):
        if variable not in env:
            env[variable] = (secrets_dir / name).read_text().strip()
    env.setdefault("COLONY_STORAGE_PATH", str(ROOT / ".local" / "storage"))
    return env


def psql(sql: str) -> str:
    """One statement as the database's superuser (the local stack's), its rows as psql -At prints them."""
    env = local_env()
    command = ["psql", "-h", env["COLONY_PG_HOST"], "-p", env["COLONY_PG_PORT"], "-U", env.get("COLONY_PG_ADMIN_USER", "postgres"),
               "-d", env.get("COLONY_PG_DATABASE", "colony"), "-v", "ON_ERROR_STOP=1", "-At", "-c", sql]
    done = subprocess.run(command, capture_output=True, text=True, env={**env, "PGPASSWORD": env.get("COLONY_PG_ADMIN_PASSWORD", "")})
    assert done.returncode == 0, f"psql failed: {done.stderr}\n{sql}"
    return done.stdout


def colony_admin() -> str:
    """The colony-admin that scripts/run built (debug under scripts/e2e), or COLONY_ADMIN."""
    if os.environ.get("COLONY_ADMIN"):
        return os.environ["COLONY_ADMIN"]
    built = [ROOT / ".build" / config / "colony-admin" for config in ("debug", "release")]
    found = [path for path in built if path.exists()]
    assert found, f"no colony-admin in {built}: build first (scripts/run does)"
    return str(max(found, key=lambda path: path.stat().st_mtime))


def iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).isoformat()


def now() -> datetime:
    return datetime.now(timezone.utc)


def sql_literal(value: Any) -> str:
    """A Python value as SQL: lists of text as text[], other lists and dicts as jsonb."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, datetime):
        return f"'{iso(value)}'::timestamptz"
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return "ARRAY[" + ", ".join(sql_literal(item) for item in value) + "]::text[]" if value else "'{}'::text[]"
    if isinstance(value, (dict, list)):
        return "'" + json.dumps(value).replace("'", "''") + "'::jsonb"
    return "'" + str(value).replace("'", "''") + "'"


def png(seed: int = 0) -> bytes:
    """A valid 1x1 PNG (the signature Colony checks uploads against), different per seed."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    pixel = zlib.compress(bytes([0, seed % 256, (seed * 7) % 256, (seed * 13) % 256]))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)) + chunk(b"IDAT", pixel) + chunk(b"IEND", b"")


def m4a(seed: int = 0) -> bytes:
    """The start of an MPEG-4 audio file: a box of type ftyp (what Colony checks)."""
    return struct.pack(">I", 24) + b"ftypM4A " + struct.pack(">I", 0) + b"M4A mp42isom" + secrets.token_bytes(32 + seed % 8)


@dataclass
class SourceUser:
    id: str
    email: Optional[str]
    phone: Optional[str]
    password: Optional[str]
    name: str
    apple_sub: Optional[str] = None


@dataclass
class ImportRun:
    status: int
    output: str
    summary: dict

    def table(self, name: str) -> dict:
        for table in self.summary["tables"]:
            if table["name"] == name:
                return table
        raise AssertionError(f"no {name} in the summary:\n{self.output}")

    def counts(self, name: str) -> tuple[int, int, int, int, int]:
        """(source, imported, already, not imported, skipped) of a table."""
        table = self.table(name)
        return (table["read"], table["imported"], table["already"], sum(table["not_imported"].values()), len(table["skipped"]))

    def skipped_ids(self, name: str) -> set[str]:
        return {issue["id"] for issue in self.table(name)["skipped"]}

    @property
    def written(self) -> int:
        return sum(table["imported"] for table in self.summary["tables"])


class SourceProject:
    """A scratch database shaped like `app`'s Supabase project, and its Storage folder."""

    def __init__(self, app: str) -> None:
        self.app = app
        self.env = local_env()
        self.ref = secrets.token_hex(10)
        self.database = f"supabase_{app}_{self.ref[:8]}"
        self.base_url = f"https://{self.ref}.supabase.co"
        self.storage = Path(tempfile.mkdtemp(prefix=f"supabase-{app}-storage-"))
        self._admin(f"CREATE DATABASE {self.database}", database="postgres")
        self.run_file(SUPABASE_DIR / "platform.sql")
        self.sql(gotrue_migrations_script())
        self.run_file(SUPABASE_DIR / f"{app}.sql")

    # ---------------------------------------------------------------------------- SQL

    def _psql(self, args: list[str], database: str, stdin: Optional[str] = None) -> str:
        env = {**self.env, "PGPASSWORD": self.env["COLONY_PG_ADMIN_PASSWORD"]}
        command = ["psql", "-h", self.env["COLONY_PG_HOST"], "-p", self.env["COLONY_PG_PORT"], "-U", self.env.get("COLONY_PG_ADMIN_USER", "postgres"),
                   "-d", database, "-v", "ON_ERROR_STOP=1", "-q", "-At", *args]
        done = subprocess.run(command, input=stdin, env=env, capture_output=True, text=True)
        assert done.returncode == 0, f"psql failed ({done.returncode}): {done.stderr}\n{(stdin or '')[:2000]}"
        return done.stdout

    def _admin(self, statement: str, database: str) -> str:
        return self._psql(["-c", statement], database)

    def run_file(self, path: Path) -> None:
        self._psql(["-f", str(path)], self.database)

    def sql(self, text: str) -> str:
        return self._psql([], self.database, stdin=text)

    def insert(self, table: str, **columns: Any) -> None:
        names = ", ".join(f'"{name}"' for name in columns)
        values = ", ".join(sql_literal(value) for value in columns.values())
        self.sql(f"INSERT INTO {table} ({names}) VALUES ({values});")

    @property
    def url(self) -> str:
        user = self.env.get("COLONY_PG_ADMIN_USER", "postgres")
        password = self.env["COLONY_PG_ADMIN_PASSWORD"]
        from urllib.parse import quote
        return f"postgres://{quote(user)}:{quote(password, safe='')}@{self.env['COLONY_PG_HOST']}:{self.env['COLONY_PG_PORT']}/{self.database}?sslmode=disable"

    def drop(self) -> None:
        self._admin(f"DROP DATABASE IF EXISTS {self.database} WITH (FORCE)", database="postgres")
        shutil.rmtree(self.storage, ignore_errors=True)

    # ---------------------------------------------------------------------------- auth

    def add_user(self, name: str, *, email: bool = True, phone: bool = False, password: Optional[str] = None, apple: bool = False,
                 apple_only: bool = False, password_hash: Optional[str] = None, deleted: bool = False, created: Optional[datetime] = None,
                 metadata: Optional[dict] = None, name_key: str = "full_name") -> SourceUser:
        """An auth.users row as GoTrue writes it, with its identities as GoTrue makes them.

        GoTrue's conventions: `''` for no password (and for the token and *_change columns),
        NULL for no email or phone, bcrypt cost 10 `$2a$` hashes (pgcrypto's `crypt` writes the
        same), `raw_app_meta_data` {"provider", "providers"}, `raw_user_meta_data` with the
        sign-up's data and the identity's claims (`sub`, `email`, `email_verified`,
        `phone_verified`), `confirmed_at` generated by the migrations. An email user has an
        `email` identity, a phone user a `phone` one, `apple` adds Sign in with Apple's, and
        `apple_only` is an account made by Sign in with Apple alone: Apple's identity and
        nothing else, its email Apple's. `password_hash` stores another hash as is (GoTrue keeps
        argon2 and Firebase scrypt hashes of users it imported). `name_key` names the sign-up
        name's key (I Believe In You's trigger reads `name`; None: no name at all)."""
        user_id = str(uuid.uuid4())
        tag = uuid.uuid4().hex[:10]
        email = email or apple_only
        address = f"import-{self.app}-{tag}@{'privaterelay.appleid.com' if apple_only else 'example.com'}" if email else None
        number = "1555" + "".join(secrets.choice("0123456789") for _ in range(7)) if phone and not apple_only else None
        created = created or now() - timedelta(days=40)
        apple_sub = f"00{secrets.randbelow(10**4):04d}.{secrets.token_hex(16)}.{secrets.randbelow(10**4):04d}" if apple or apple_only else None
        providers = ["apple"] if apple_only else (["email"] if email else []) + (["phone"] if number else []) + (["apple"] if apple else [])
        claims = {"sub": apple_sub if apple_only else user_id, **({"email": address} if address else {}), **({"phone": number} if number else {}),
                  "email_verified": bool(address), "phone_verified": bool(number)}
        if apple_only:
            claims.update({"iss": "https://appleid.apple.com", "provider_id": apple_sub, "custom_claims": {"auth_time": 1716400000}})
        user_metadata = {**({name_key: name} if name_key else {}), **claims, **(metadata or {})}
        if password_hash is not None:
            secret_sql = sql_literal(password_hash)
        else:
            secret_sql = f"crypt({sql_literal(password)}, gen_salt('bf', 10))" if password else "''"
        self.sql(f"""
            INSERT INTO auth.users (instance_id, id, aud, role, email, encrypted_password, email_confirmed_at, phone, phone_confirmed_at,
                raw_app_meta_data, raw_user_meta_data, is_super_admin, created_at, updated_at, last_sign_in_at, deleted_at,
                confirmation_token, recovery_token, email_change_token_new, email_change, email_change_token_current, phone_change,
                phone_change_token, reauthentication_token)
            VALUES ('00000000-0000-0000-0000-000000000000', '{user_id}', 'authenticated', 'authenticated', {sql_literal(address)}, {secret_sql},
                {sql_literal(created if address else None)}, {sql_literal(number)}, {sql_literal(created if number else None)},
                {sql_literal({"provider": providers[0], "providers": providers})}, {sql_literal(user_metadata)}, NULL,
                {sql_literal(created)}, {sql_literal(created)}, {sql_literal(now() - timedelta(days=2))}, {sql_literal(now() - timedelta(days=1) if deleted else None)},
                '', '', '', '', '', '', '', '');
        """)
        if address and not apple_only:
            self.insert("auth.identities", provider_id=user_id, user_id=user_id, provider="email", created_at=created, updated_at=created,
                        last_sign_in_at=created, identity_data={"sub": user_id, "email": address, "email_verified": True, "phone_verified": False})
        if number:
            self.insert("auth.identities", provider_id=user_id, user_id=user_id, provider="phone", created_at=created, updated_at=created,
                        last_sign_in_at=created, identity_data={"sub": user_id, "phone": number, "email_verified": False, "phone_verified": True})
        if apple_sub:
            self.insert("auth.identities", provider_id=apple_sub, user_id=user_id, provider="apple", created_at=created, updated_at=created,
                        last_sign_in_at=now() - timedelta(days=3),
                        identity_data={"iss": "https://appleid.apple.com", "sub": apple_sub, "email": address, "provider_id": apple_sub,
                                       "email_verified": True, "phone_verified": False, "is_private_email": apple_only,
                                       "custom_claims": {"auth_time": 1716400000}})
        return SourceUser(id=user_id, email=address, phone=number, password=password, name=name, apple_sub=apple_sub)

    def identities(self, user_id: str) -> list[tuple[str, str]]:
        """The user's (provider, provider_id) in the source, sorted."""
        rows = self.sql(f"SELECT provider || '|' || provider_id FROM auth.identities WHERE user_id = '{user_id}' ORDER BY 1;")
        return [tuple(line.split("|", 1)) for line in rows.splitlines() if line]

    # ---------------------------------------------------------------------------- storage

    def add_object(self, bucket: str, name: str, data: bytes, mimetype: str, *, in_folder: bool = True) -> str:
        """An object in the project's Storage (its storage.objects row, and its bytes in the
        folder unless `in_folder` is False: a row whose file is missing); returns its public URL."""
        self.sql(f"INSERT INTO storage.buckets (id, name, public) VALUES ({sql_literal(bucket)}, {sql_literal(bucket)}, true) ON CONFLICT DO NOTHING;")
        self.insert("storage.objects", bucket_id=bucket, name=name, metadata={"mimetype": mimetype, "size": len(data), "cacheControl": "max-age=3600"})
        if in_folder:
            path = self.storage / bucket / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        return f"{self.base_url}/storage/v1/object/public/{bucket}/{name}"

    # ---------------------------------------------------------------------------- import

    def run_import(self, *, dry_run: bool = False, storage: Optional[str] = None, extra_env: Optional[dict] = None, label: str = "") -> ImportRun:
        """`colony-admin import supabase` for this project; its summary is kept in
        .local/logs/import-<app>-<label>.txt (the human table) and parsed from --summary-json."""
        LOG_DIR.mkdir(parents=True, exist_ok=True)
        summary_file = Path(tempfile.mktemp(prefix="import-summary-", suffix=".json"))
        command = [colony_admin(), "import", "supabase", "--app", self.app, "--source", self.url,
                   "--storage", storage or str(self.storage), "--summary-json", str(summary_file)]
        if dry_run:
            command.append("--dry-run")
        done = subprocess.run(command, env={**self.env, **(extra_env or {})}, capture_output=True, text=True, timeout=600)
        output = done.stdout + done.stderr
        (LOG_DIR / f"import-{self.app}-{label or ('dry-run' if dry_run else 'run')}.txt").write_text(output)
        assert summary_file.exists(), f"colony-admin import failed without a summary ({done.returncode}):\n{output}"
        summary = json.loads(summary_file.read_text())
        summary_file.unlink()
        return ImportRun(status=done.returncode, output=output, summary=summary)


def service_role_key(app: str) -> str:
    """The app's service-role key, from the keys file scripts/run writes."""
    keys = Path(os.environ.get("COLONY_API_KEYS_FILE", ROOT / ".local" / "api-keys.txt"))
    return next(line.split()[2] for line in keys.read_text().splitlines() if line.split()[:2] == [app, "service_role"])


def admin_command(env: dict, *args: str) -> str:
    done = subprocess.run([colony_admin(), *args], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"colony-admin {' '.join(args)} failed ({done.returncode}): {done.stdout}{done.stderr}"
    return done.stdout


def wait_for_projections(env: dict, service: str, timeout: float = 120) -> None:
    """Until what the import announced has reached realtime's and notifications' projections:
    `service`'s outbox is empty (the relay sent it) and both consumer groups have no lag (they
    applied it), as `colony-admin outbox status` and `consumers lag` report them."""
    import time
    deadline = time.monotonic() + timeout
    state = ""
    while time.monotonic() < deadline:
        outbox = admin_command(env, "outbox", "status", "--service", service)
        row = next((line.split() for line in outbox.splitlines() if line.split()[:1] == [service]), None)
        state = outbox
        if row and row[1] == "0":
            lag = admin_command(env, "consumers", "lag", "--service", "realtime", "--service", "notifications")
            state = lag
            total = next((line.split(":")[1].strip() for line in lag.splitlines() if line.startswith("total lag:")), None)
            if total == "0" and "unknown" not in lag:
                return
        time.sleep(0.5)
    raise AssertionError(f"the import's events did not reach realtime and notifications within {timeout:g}s:\n{state}")


def pipeline_idle(env: dict) -> bool:
    """Every outbox sent and every consumer group caught up: what the journey's events made the
    consumers log has been written."""
    outbox = admin_command(env, "outbox", "status")
    pending = [line.split() for line in outbox.splitlines() if len(line.split()) > 1 and line.split()[1].isdigit()]
    if any(row[1] != "0" for row in pending):
        return False
    lag = admin_command(env, "consumers", "lag")
    total = next((line.split(":")[1].strip() for line in lag.splitlines() if line.startswith("total lag:")), None)
    return total == "0" and "unknown" not in lag
