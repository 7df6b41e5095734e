# shellcheck shell=bash
# The stand-in OAuth/OIDC provider (scripts/lib/oauth-provider.py) for test stacks only (scripts/e2e;
# the production scripts/run never starts it), and the apps file naming it as the apps' providers.
# Source it after common.sh.
#   start_oauth_provider GATEWAY_PORT  starts it on a free port, registers the test clients with the
#                                      gateway's callback as their one redirect URI, writes the apps
#                                      file (COLONY_APPS_FILE's own content, if set, with the
#                                      providers added) and exports COLONY_APPS_FILE and
#                                      COLONY_OAUTH_PROVIDER_URL
#   stop_oauth_provider

OAUTH_PROVIDER_PID=""
OAUTH_PROVIDER_LOG="$LOG_DIR/oauth-provider.log"
OAUTH_APPS_FILE="$LOCAL_DIR/e2e-apps.json"

start_oauth_provider() {
    local gateway="$1" out="$LOCAL_DIR/oauth-provider.out" port="" deadline
    # --port 0: the provider picks the port and says which on its first line (no race for a free one).
    : >"$out"
    python3 scripts/lib/oauth-provider.py serve --port 0 </dev/null >"$out" 2>"$OAUTH_PROVIDER_LOG" &
    OAUTH_PROVIDER_PID=$!
    deadline=$((SECONDS + 30))
    until port="$(sed -n 's/^listening on \([0-9][0-9]*\)$/\1/p' "$out")" && [[ -n "$port" ]]; do
        if ! pid_alive "$OAUTH_PROVIDER_PID" || ((SECONDS >= deadline)); then
            tail_log "$OAUTH_PROVIDER_LOG"
            die "the OAuth stand-in provider did not start (is python3's cryptography installed? scripts/setup)"
        fi
        sleep 0.1
    done
    export COLONY_OAUTH_PROVIDER_URL="http://127.0.0.1:$port"
    local callback="${COLONY_AUTH_PUBLIC_URL:-http://127.0.0.1:$gateway/auth/v1}/callback"
    # The clients (fixed test values) go to the provider and into the apps file in one place.
    python3 - "$COLONY_OAUTH_PROVIDER_URL" "$callback" "${COLONY_APPS_FILE:-}" "$OAUTH_APPS_FILE" <<'PY' ||
import json, os, sys, urllib.request

base, callback, existing, target = sys.argv[1:5]
secret = "stand-in-secret"
apps = {
    "socialspot": {
        "google": {"client_id": "socialspot-google-web", "client_secret": secret, "issuer": f"{base}/oidc"},
        "apple": {"client_id": "com.socialspot.web", "client_secret": secret, "issuer": f"{base}/apple"},
        "github": {"client_id": "socialspot-github", "client_secret": secret, "authorize_url": f"{base}/github/login/oauth/authorize",
                   "token_url": f"{base}/github/login/oauth/access_token", "api_url": f"{base}/github/api"},
        "acme": {"kind": "oidc", "issuer": f"{base}/oidc", "client_id": "socialspot-acme", "client_secret": secret, "scopes": ["openid", "email", "profile"]},
    },
    "habithive": {
        "google": {"client_id": "habithive-google-web", "client_secret": secret, "native_client_ids": ["habithive-google-ios"], "issuer": f"{base}/oidc"},
    },
}
for providers in apps.values():
    for settings in providers.values():
        request = urllib.request.Request(f"{base}/_control/clients", method="POST", headers={"Content-Type": "application/json"},
                                         data=json.dumps({"client_id": settings["client_id"], "client_secret": secret, "redirect_uris": [callback]}).encode())
        urllib.request.urlopen(request, timeout=10).read()
# Whatever else the operator's apps file says stays; the stand-in's providers are added to (or replace) its oauth_providers.
merged = json.load(open(existing)) if existing else {}
for app, providers in apps.items():
    merged.setdefault(app, {}).setdefault("oauth_providers", {}).update(providers)
# Anonymous sign-ins (test_anonymous_users.py): MyCirclee's services accept them, Unify's access policy refuses them.
for app in ("mycirclee", "unify"):
    merged.setdefault(app, {}).setdefault("anonymous_sign_ins", True)
temporary = target + ".tmp"
with open(temporary, "w") as file:
    json.dump(merged, file, indent=2)
os.replace(temporary, target)
PY
        { stop_oauth_provider; die "could not register the OAuth stand-in's clients or write $OAUTH_APPS_FILE"; }
    export COLONY_APPS_FILE="$OAUTH_APPS_FILE"
    log "e2e: OAuth stand-in provider at $COLONY_OAUTH_PROVIDER_URL (log: $OAUTH_PROVIDER_LOG), the apps file $COLONY_APPS_FILE"
}

stop_oauth_provider() {
    [[ -n "$OAUTH_PROVIDER_PID" ]] || return 0
    kill -TERM "$OAUTH_PROVIDER_PID" 2>/dev/null || true
    wait "$OAUTH_PROVIDER_PID" 2>/dev/null || true
    OAUTH_PROVIDER_PID=""
}
