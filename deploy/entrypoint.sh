#!/bin/sh
# Container entrypoint: for `colony-<service>` commands, load the credentials that
# `colony-admin provision` wrote to /app/.local/secrets/<service>.env (shared volume), then exec.
set -eu
cmd="${1:-}"
service="${cmd#colony-}"
if [ "$service" != "$cmd" ] && [ "$service" != "admin" ]; then
    secrets="/app/.local/secrets/$service.env"
    if [ -f "$secrets" ]; then
        set -a
        # shellcheck source=/dev/null
        . "$secrets"
        set +a
    else
        echo "colony-entrypoint: warning: $secrets not found (did provision run?)" >&2
    fi
fi
exec "$@"
