# shellcheck shell=bash
# Running the whole stack (scripts/run) in the background for a test driver, and stopping it.
# Source it after common.sh; set STACK_LOG (scripts/run's output) and STACK_NAME (for messages).
#   start_stack [ENV=VALUE ...]   starts scripts/run with the settings given, waits for "run: ready"
#   stop_stack                    SIGTERM (scripts/run's cleanup, as for Ctrl-C), waits until it stopped (then KILL)
#   stack_logs                    prints the end of the run log and of every service's log

STACK_SERVICES=(auth circles chat habits nearby projects realtime notifications console)
STACK_PID=""
STACK_START_TIMEOUT="${STACK_START_TIMEOUT:-600}"  # a debug build may have to finish first
STACK_STOP_TIMEOUT=180  # scripts/run gives each service up to 15 s, then tears down what it started

stack_logs() {
    tail_log "$STACK_LOG"
    local name
    for name in "${STACK_SERVICES[@]}"; do tail_log "$LOG_DIR/$name.log"; done
    # Replicas' logs (COLONY_REPLICAS > 1): <service>-<k>.log
    for name in "$LOG_DIR"/*-[1-9].log; do [[ -f "$name" ]] && tail_log "$name"; done
    tail_log "$LOG_DIR/nginx-error.log"
}

start_stack() {
    local base="${COLONY_SERVICE_BASE_PORT:-8081}" gateway="${COLONY_GATEWAY_PORT:-8080}" port setting replicas=1 replica
    for setting in "$@"; do [[ "$setting" == COLONY_REPLICAS=* ]] && replicas="${setting#*=}"; done
    # Another stack on these ports would answer in place of ours (with replicas: replica k's, 100·k
    # above, and the gateway's internal listeners, 50 above).
    for port in "$gateway" $(seq "$base" $((base + ${#STACK_SERVICES[@]} - 1))); do
        port_open "$port" && die "port $port on 127.0.0.1 is in use (another scripts/run?); stop it first"
        [[ "$port" == "$gateway" ]] && continue
        for ((replica = 1; replica < replicas; replica++)); do
            port_open $((port + 100 * replica)) && die "port $((port + 100 * replica)) on 127.0.0.1 is in use; stop it first"
        done
        ((replicas == 1)) || ! port_open $((port + 50)) || die "port $((port + 50)) on 127.0.0.1 is in use; stop it first"
    done
    log "$STACK_NAME: starting scripts/run $* (output: $STACK_LOG)"
    # Emptied first: the wait below must not read "run: ready" from the last run's log.
    : >"$STACK_LOG"
    # Its own process group (job control), so a Ctrl-C at the terminal reaches the driver alone and
    # the driver's stop_stack decides when the stack goes.
    set -m
    env "$@" scripts/run </dev/null >"$STACK_LOG" 2>&1 &
    STACK_PID=$!
    set +m
    local deadline=$((SECONDS + STACK_START_TIMEOUT))
    until grep -qx 'run: ready' "$STACK_LOG" 2>/dev/null; do
        pid_alive "$STACK_PID" || { stack_logs; die "$STACK_NAME: scripts/run exited before it was ready"; }
        ((SECONDS < deadline)) || { stack_logs; die "$STACK_NAME: scripts/run was not ready after ${STACK_START_TIMEOUT}s"; }
        sleep 1
    done
}

stop_stack() {
    [[ -n "$STACK_PID" ]] || return 0
    local pid="$STACK_PID" deadline
    STACK_PID=""
    if pid_alive "$pid"; then
        # SIGTERM, not SIGINT: a shell started with SIGINT ignored (any background job of a
        # non-interactive script, and everything it starts) cannot trap it, so scripts/run would
        # never clean up and its ports would stay taken.
        log "$STACK_NAME: stopping scripts/run (SIGTERM)"
        kill -TERM "$pid" 2>/dev/null || true
        deadline=$((SECONDS + STACK_STOP_TIMEOUT))
        while pid_alive "$pid" && ((SECONDS < deadline)); do sleep 0.2; done
        if pid_alive "$pid"; then
            # Its whole process group (start_stack gave it one): the services and the gateway too,
            # or they would keep the ports the next stack needs.
            log "$STACK_NAME: scripts/run (pid $pid) did not stop within ${STACK_STOP_TIMEOUT}s; killing it and what it started"
            kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
        fi
    fi
    wait "$pid" 2>/dev/null || true
    tail -n 3 "$STACK_LOG" >&2 || true
}
