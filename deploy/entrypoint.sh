#!/bin/sh
# Container entrypoint (the image's ENTRYPOINT): colony-entrypoint [COMMAND ARGS...]
#
# With no command it runs colony-$COLONY_SERVICE (the image's SERVICE build argument; for "all" and
# "admin": colony-admin provision).
#
# Credentials for a `colony-<service>` command come from one of:
#   - the environment (Kubernetes: envFrom a Secret): COLONY_PG_PASSWORD is already set, nothing is read;
#   - <secrets dir>/<service>.env, written by `colony-admin provision` (docker compose: into the service's
#     own volume, secrets-<service>, which only that service mounts here), loaded into the environment
#     before the exec. The secrets dir is $COLONY_SECRETS_DIR, by default /app/.local/secrets
#     (provision's default --secrets-dir, relative to the image's WORKDIR /app).
#
# Secrets as files: for each of COLONY_PG_ADMIN_PASSWORD, COLONY_AUTH_PHONE_PEPPER,
# COLONY_HABITS_PHONE_PEPPER, COLONY_STORAGE_SIGNING_KEY, COLONY_INTERNAL_KEY, COLONY_CONSOLE_KEY, COLONY_AUTH_SMTP_PASSWORD,
# COLONY_AUTH_TWILIO_AUTH_TOKEN and COLONY_KAFKA_SASL_PASSWORD that is empty, <VAR>_FILE (when set) names a
# file to read it from (docker compose: the files the one-shot make-secrets generates and copies into
# each service's volume, only those that service reads). A value set in
# the environment wins. The services refuse known defaults and weak values themselves.
#
# For `colony-admin provision`, COLONY_PROVISION_PASSWORDS_DIR (optional) names a folder with one file
# per service, named after it and holding that service's database password (Kubernetes: the
# colony-<service>-db Secrets projected into one volume). Each becomes <secrets dir>/<service>.env
# first, so provision gives each role the password its service is started with.
set -eu

secrets_dir="${COLONY_SECRETS_DIR:-/app/.local/secrets}"

if [ "$#" -eq 0 ]; then
    case "${COLONY_SERVICE:-all}" in
        all | admin | "") set -- colony-admin provision ;;
        *) set -- "colony-${COLONY_SERVICE}" ;;
    esac
fi

cmd="$1"
service="${cmd#colony-}"

for name in COLONY_PG_ADMIN_PASSWORD COLONY_AUTH_PHONE_PEPPER COLONY_HABITS_PHONE_PEPPER COLONY_STORAGE_SIGNING_KEY COLONY_INTERNAL_KEY COLONY_CONSOLE_KEY \
    COLONY_AUTH_SMTP_PASSWORD COLONY_AUTH_TWILIO_AUTH_TOKEN COLONY_KAFKA_SASL_PASSWORD; do
    file="$(printenv "${name}_FILE" || true)"
    if [ -n "$file" ] && [ -z "$(printenv "$name" || true)" ]; then
        [ -r "$file" ] || {
            echo "colony-entrypoint: ${name}_FILE=$file cannot be read (did make-secrets run?)" >&2
            exit 1
        }
        value="$(cat "$file")"
        export "$name=$value"
    fi
done

case "$service" in
    "$cmd" | "" | *[!a-z0-9-]*)
        # Not a colony-* executable (a shell, a tool): run it as it is.
        ;;
    admin)
        if [ "${2:-}" = provision ] && [ -n "${COLONY_PROVISION_PASSWORDS_DIR:-}" ]; then
            [ -d "$COLONY_PROVISION_PASSWORDS_DIR" ] || {
                echo "colony-entrypoint: COLONY_PROVISION_PASSWORDS_DIR=$COLONY_PROVISION_PASSWORDS_DIR is not a directory" >&2
                exit 1
            }
            mkdir -p "$secrets_dir"
            for file in "$COLONY_PROVISION_PASSWORDS_DIR"/*; do
                [ -f "$file" ] || continue
                name="$(basename "$file")"
                case "$name" in *[!a-z0-9-]* | "") continue ;; esac
                umask 077
                printf 'COLONY_PG_PASSWORD=%s\n' "$(cat "$file")" >"$secrets_dir/$name.env"
            done
        fi
        ;;
    *)
        if [ -n "${COLONY_PG_PASSWORD:-}" ]; then
            : # Credentials from the environment (Kubernetes Secrets): no file needed.
        elif [ -f "$secrets_dir/$service.env" ]; then
            set -a
            # shellcheck source=/dev/null
            . "$secrets_dir/$service.env"
            set +a
        else
            echo "colony-entrypoint: warning: COLONY_PG_PASSWORD is not set and $secrets_dir/$service.env" \
                "does not exist (did colony-admin provision run?)" >&2
        fi
        ;;
esac

exec "$@"
