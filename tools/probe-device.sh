#!/usr/bin/env bash
# The probe's evidence on a machine with an NVIDIA GPU, in one bounded run (under 6 minutes by default).
#
#   tools/probe-device.sh [OUTDIR]        # OUTDIR: default $OUT, else ./probe-evidence
#
# Builds nothing: it runs an already built binary (GPU_TRUST; default target/dist/gpu-trust beside this
# script, else target/release/gpu-trust). Build it where the repository is, so that the evidence names
# the commit (the binary's SHA-256 is recorded by the probe itself), and carry the stripped binary
# (about 15 MiB) to the GPU machine in the working tree:
#
#   GPU_TRUST_COMMIT=$(git rev-parse HEAD) cargo build --profile dist -p gpu-trust
#
# In order, each step bounded by `timeout`:
#
#   1. facts: `nvidia-smi -q`, `nvidia-smi -L`, the GPU settings the probe must not change (compute mode,
#      MIG mode, persistence, application clocks), the host and the binary's version;
#   2. time-slicing: `gpu-trust probe` with both roles on one GPU, two processes in whatever compute mode
#      the GPU is in, with an empty private MPS pipe directory so that no MPS daemon of the host serves it;
#   3. MPS: an MPS control daemon started by this script as the calling user, with its own pipe and log
#      directories under /tmp, then `gpu-trust probe` as its client, then the daemon stopped (`quit`);
#      each probe run is named (`--run`, PROBE_RUN_PREFIX/NAME) and told the limits this script set on
#      its daemon (`--setting`), since an MPS client cannot read them;
#      3b. declared against enforced under MPS: a second daemon of our own configured as the device
#      plugin's MPS daemon configures a GPU of PROBE_MPS_REPLICAS replicas (each client's default pinned
#      memory limit the GPU's memory over the replicas, its default active thread percentage 100 over
#      them, set before any client connects); two processes with one environment take what they can
#      and hold it, then a third (tools/probe-limits.py); then the whole battery as its clients; then
#      the daemon stopped;
#      3c. a limit only a library would enforce, set without it: HAMi-core's CUDA_DEVICE_MEMORY_LIMIT
#      (PROBE_HAMI_LIMIT) with no libvgpu.so preloaded and no MPS daemon, one process taking what it can;
#   4. MIG: recorded as not measured, with the GPU's MIG mode as the reason: this script never changes
#      MIG mode;
#   5. the settings and the GPU's compute processes again, and summary.json.
#
# It never changes MIG mode, compute mode, clocks or persistence and never resets a GPU: nvidia-smi is
# only queried, and the MPS limits are set on daemons this script started and stops. A step that fails is
# recorded with its exit status and error text, never as evidence. On TERM, INT or HUP it stops the step
# under way at once (the probe's JSON holds the scenarios it finished, marked partial, and the summary
# lists that run as `partial`), stops its MPS daemon and writes summary.json.
# Files under OUTDIR: summary.json, steps.log, facts/, time-slicing.json (+ .stderr), mps.json
# (+ .stderr), mps/ (the daemon's logs), mps-replicas-one-pod-two-processes.json, mps-replicas.json
# (+ .stderr), mps-replicas/ (that daemon's logs and the limits it reported), variable-only-limit.json.
# docs/evidence/README.md describes them.
#
# Exit status: 0 when every run wrote its evidence, 1 when one failed (see summary.json), 2 when the
# script could not start (no binary, OUTDIR not writable).
#
# Environment: GPU_TRUST (the binary), PROBE_DEVICE (the GPU both roles use, default 0),
# PROBE_SCENARIO_SECS (bound of each scenario, default 18), PROBE_DEVICE_BUDGET_SECS (the whole run,
# default 360), PROBE_MPS_REPLICAS (default 2), PROBE_HAMI_LIMIT (default 8g), PROBE_RUN_PREFIX (the
# runs' names before `/NAME`, default OUTDIR's name), PROBE_LIMITS (the limits tool, default
# tools/probe-limits.py run by python3; the tests give a stub).
set -u -o pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
out=${1:-${OUT:-probe-evidence}}
gpu_trust=${GPU_TRUST:-}
if [ -z "$gpu_trust" ]; then
    gpu_trust="$repo/target/release/gpu-trust"
    [ -x "$repo/target/dist/gpu-trust" ] && gpu_trust="$repo/target/dist/gpu-trust"
fi
device=${PROBE_DEVICE:-0}
scenario_secs=${PROBE_SCENARIO_SECS:-18}
budget=${PROBE_DEVICE_BUDGET_SECS:-360}
# The replicas the MPS daemon of step 3b is configured for, and the HAMi-core limit of step 3c.
mps_replicas=${PROBE_MPS_REPLICAS:-2}
hami_limit=${PROBE_HAMI_LIMIT:-8g}
# Seconds kept back from every bounded step for what follows the runs: stopping the MPS daemon (at most
# 21 s), the settings and processes afterwards (10 s each) and the summary.
reserve=45
# The probe runs seven scenarios; this is the slack on top of their bounds for starting and detecting.
scenarios=7
probe_slack=15
# The shortest probe run worth starting: one second per scenario.
min_probe_secs=$((scenarios + probe_slack))

for n in "$scenario_secs" "$budget" "$mps_replicas"; do
    case $n in
    '' | *[!0-9]*)
        echo "probe-device: PROBE_SCENARIO_SECS, PROBE_DEVICE_BUDGET_SECS and PROBE_MPS_REPLICAS must be whole numbers" >&2
        exit 2
        ;;
    esac
done
if [ ! -x "$gpu_trust" ]; then
    echo "probe-device: no gpu-trust binary at $gpu_trust (cargo build --release, or set GPU_TRUST)" >&2
    exit 2
fi
if ! mkdir -p "$out/facts" || [ ! -w "$out" ]; then
    echo "probe-device: cannot write to $out" >&2
    exit 2
fi

started_at=$(date -u +%Y-%m-%dT%H:%M:%SZ)
run_prefix=${PROBE_RUN_PREFIX:-$(basename "$(cd "$out" && pwd)")}
SECONDS=0
steps_log="$out/steps.log"
: >"$steps_log"
runs=()
failed=0
mps_pipe=''
mps_log=''
mps_name=mps
mps_started=0
mps_stopped=0
ts_pipe=''
finished=0
# The step under way (its `timeout` process) and the probe run it belongs to, for the signal trap.
step_pid=''
current_run=''
# The limits set on the running MPS daemon, as `--setting` arguments of the probe.
mps_settings=()

log() {
    printf '%4ss %s\n' "$SECONDS" "$*" | tee -a "$steps_log" >&2
}

# A JSON string: backslashes and quotes escaped, control characters dropped.
json_str() {
    local s=$1
    s=${s//\\/\\\\}
    s=${s//\"/\\\"}
    s=$(printf '%s' "$s" | tr -d '\000-\037')
    printf '"%s"' "$s"
}

# Standard input as one line of at most 600 characters, for a reason in the summary.
one_line() {
    tr '\n' ' ' | cut -c 1-600 | sed 's/ *$//'
}

# Seconds a step may take: at most $1, and never into the reserve.
allowance() {
    local left=$((budget - SECONDS - reserve))
    if [ "$left" -lt "$1" ]; then
        echo "$left"
    else
        echo "$1"
    fi
}

# step NAME SECS STDOUT STDERR CMD...: runs CMD bounded in time, within the budget; logs its status and
# returns it.
step() {
    local t
    t=$(allowance "$2")
    if [ "$t" -lt 1 ]; then
        log "$1: not run, the time budget of ${budget}s is spent"
        return 124
    fi
    bounded "$1" "$t" "${@:3}"
}

# bounded NAME SECS STDOUT STDERR CMD...: runs CMD for at most SECS (the reserve's own steps).
bounded() {
    local name=$1 t=$2 stdout=$3 stderr=$4
    shift 4
    local t0=$SECONDS rc
    # In the background and waited for: bash runs a trap only once the foreground command has ended,
    # and `wait` returns as soon as a signal arrives, so TERM stops the step at once (see on_signal).
    timeout -k 5 "$t" "$@" >"$stdout" 2>"$stderr" &
    step_pid=$!
    wait "$step_pid"
    rc=$?
    step_pid=''

    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        log "$name: timed out after ${t}s (exit $rc)"
    else
        log "$name: exit $rc in $((SECONDS - t0))s"
    fi
    return "$rc"
}

# The GPU settings this script and the probe must leave as they found them.
settings_query=index,uuid,name,driver_version,compute_mode,mig.mode.current,persistence_mode,clocks.applications.graphics,clocks.applications.memory

# PIDs of MPS daemons (control or server) started for our pipe directory: comm and environment both match.
our_mps_pids() {
    local d pid
    [ -n "$mps_pipe" ] || return 0
    for d in /proc/[0-9]*; do
        pid=${d#/proc/}
        case $(cat "$d/comm" 2>/dev/null) in
        nvidia-cuda-mps*)
            if tr '\0' '\n' <"$d/environ" 2>/dev/null | grep -qxF "CUDA_MPS_PIPE_DIRECTORY=$mps_pipe"; then
                echo "$pid"
            fi
            ;;
        esac
    done
}

stop_mps() {
    [ "$mps_started" -eq 1 ] && [ "$mps_stopped" -eq 0 ] || return 0
    mps_stopped=1
    echo quit | CUDA_MPS_PIPE_DIRECTORY=$mps_pipe CUDA_MPS_LOG_DIRECTORY=$mps_log \
        timeout -k 1 10 nvidia-cuda-mps-control >"$out/$mps_name/stop.txt" 2>&1
    log "$mps_name: quit sent (exit $?)"
    local i=0 left
    while [ "$i" -lt 20 ]; do
        left=$(our_mps_pids)
        [ -z "$left" ] && break
        sleep 0.5
        i=$((i + 1))
    done
    left=$(our_mps_pids)
    if [ -n "$left" ]; then
        # Only the daemons this script started: matched by their pipe directory.
        log "$mps_name: daemon processes still running after quit: $(echo $left); sending TERM to them"
        # shellcheck disable=SC2086
        kill -TERM $left 2>/dev/null
        sleep 1
    else
        log "$mps_name: daemon stopped"
    fi
    cp -R "$mps_log/." "$out/$mps_name/" 2>/dev/null
    rm -rf "$mps_pipe" "$mps_log"
    mps_settings=()
}

# start_mps NAME [LIMIT THREADS]: starts an MPS control daemon of our own, with its own pipe and log
# directories (its logs end in OUTDIR/NAME/), and with LIMIT (e.g. 71885M) as every client's default
# pinned device memory limit on the device and THREADS as its default active thread percentage, set
# before any client connects, as the device plugin's MPS daemon does. Returns 0 when its control socket
# is there; otherwise records NAME as failed. The limits the daemon accepted (a daemon without any set
# runs with all threads and no pinned memory limit) become the probe's `--setting`s (mps_settings).
start_mps() {
    local name=$1 limit=${2:-} threads=${3:-}
    stop_mps
    mps_name=$name
    mps_stopped=0
    mkdir -p "$out/$name"
    mps_pipe=$(mktemp -d /tmp/gpu-trust-mps-pipe.XXXXXX)
    mps_log=$(mktemp -d /tmp/gpu-trust-mps-log.XXXXXX)
    CUDA_MPS_PIPE_DIRECTORY=$mps_pipe CUDA_MPS_LOG_DIRECTORY=$mps_log \
        step "$name: nvidia-cuda-mps-control -d" 20 "$out/$name/start.txt" "$out/$name/start.stderr" \
        nvidia-cuda-mps-control -d
    local start_rc=$? i=0 why
    mps_started=1
    while [ "$i" -lt 20 ] && [ ! -e "$mps_pipe/control" ]; do
        sleep 0.5
        i=$((i + 1))
    done
    if [ "$start_rc" -ne 0 ] || [ ! -e "$mps_pipe/control" ]; then
        why=$(cat "$out/$name/start.txt" "$out/$name/start.stderr" 2>/dev/null | one_line)
        log "$name: the control daemon did not start (exit $start_rc)"
        run_entry "$name" failed "$start_rc" "the MPS control daemon did not start (no control socket in its pipe directory): $why" '' ''
        failed=1
        return 1
    fi
    mps_settings=(--setting mps-active-thread-percentage=100 --setting mps-pinned-memory-limit=none)
    if [ -n "$limit" ]; then
        local limit_rc threads_rc=0
        {
            echo "set_default_device_pinned_mem_limit $device $limit" |
                CUDA_MPS_PIPE_DIRECTORY=$mps_pipe timeout -k 1 10 nvidia-cuda-mps-control
            limit_rc=$?
            echo "exit $limit_rc"
            echo "get_default_device_pinned_mem_limit $device" |
                CUDA_MPS_PIPE_DIRECTORY=$mps_pipe timeout -k 1 10 nvidia-cuda-mps-control
            echo "exit $?"
            if [ -n "$threads" ]; then
                echo "set_default_active_thread_percentage $threads" |
                    CUDA_MPS_PIPE_DIRECTORY=$mps_pipe timeout -k 1 10 nvidia-cuda-mps-control
                threads_rc=$?
                echo "exit $threads_rc"
                echo "get_default_active_thread_percentage" |
                    CUDA_MPS_PIPE_DIRECTORY=$mps_pipe timeout -k 1 10 nvidia-cuda-mps-control
                echo "exit $?"
            fi
        } >"$out/$name/limit.txt" 2>&1
        log "$name: default pinned memory limit $limit and active thread percentage ${threads:-unset} asked; the daemon says: $(one_line <"$out/$name/limit.txt")"
        # What the daemon refused is not declared: the probe's evidence then says it was not.
        mps_settings=()
        [ "$limit_rc" -eq 0 ] && mps_settings+=(--setting "mps-pinned-memory-limit=$limit")
        [ -n "$threads" ] && [ "$threads_rc" -eq 0 ] &&
            mps_settings+=(--setting "mps-active-thread-percentage=$threads")
    fi
    log "$name: control daemon running"
    return 0
}

# Appends a run to the summary. run_entry NAME STATUS EXIT REASON EVIDENCE STDERR
run_entry() {
    local name=$1 status=$2 rc=$3 reason=$4 evidence=$5 stderr=$6
    local e="{\"run\": $(json_str "$name"), \"status\": $(json_str "$status")"
    [ -n "$rc" ] && e="$e, \"exitCode\": $rc"
    [ -n "$reason" ] && e="$e, \"reason\": $(json_str "$reason")"
    if [ -n "$evidence" ]; then
        e="$e, \"evidence\": $(json_str "$evidence")"
        local kind verdicts
        kind=$(grep -o '"kind": "[a-z-]*"' "$out/$evidence" | head -n 1 | sed 's/.*: "\(.*\)"/\1/')
        [ -n "$kind" ] && e="$e, \"mechanismDetected\": $(json_str "$kind")"
        verdicts=$(grep -o '"\(scenario\|verdict\)": "[a-z-]*"' "$out/$evidence" |
            sed 's/.*: "\(.*\)"/\1/' | paste -d ' ' - - |
            while read -r s v; do printf '%s: %s, ' "$(json_str "$s")" "$(json_str "$v")"; done)
        e="$e, \"verdicts\": {${verdicts%, }}"
    fi
    [ -n "$stderr" ] && e="$e, \"stderr\": $(json_str "$stderr")"
    runs+=("$e}")
}

# probe_run NAME [ARGS...]: runs the probe with the current environment (and ARGS, e.g. one
# --scenario); records the outcome.
probe_run() {
    local name=$1
    shift
    local t secs
    t=$(allowance $((scenarios * scenario_secs + probe_slack)))
    if [ "$t" -lt "$min_probe_secs" ]; then
        log "$name: not run, the time budget of ${budget}s is spent"
        run_entry "$name" failed '' "not run: the time budget of ${budget}s was spent before it" '' ''
        failed=1
        return
    fi
    # Scenario bounds that fit the run's own bound, so the probe writes its JSON before it is killed.
    secs=$(((t - probe_slack) / scenarios))
    [ "$secs" -gt "$scenario_secs" ] && secs=$scenario_secs
    rm -f "$out/$name.json"
    current_run=$name
    step "$name: gpu-trust probe (${secs}s per scenario)" "$t" "$out/$name.stdout" "$out/$name.stderr" \
        "$gpu_trust" probe --victim "$device" --aggressor "$device" --timeout "$secs" \
        --format json --output "$out/$name.json" --run "$run_prefix/$name" \
        ${mps_settings[@]+"${mps_settings[@]}"} "$@"
    local rc=$?
    current_run=''
    if { [ "$rc" -eq 0 ] || [ "$rc" -eq 1 ]; } && grep -q '"schema": "gpu-trust/probe/v2"' "$out/$name.json" 2>/dev/null; then
        run_entry "$name" completed "$rc" '' "$name.json" "$name.stderr"
    else
        local why
        why=$(one_line <"$out/$name.stderr")
        [ -z "$why" ] && why="no message"
        case $rc in
        124 | 137) why="timed out after ${t}s: $why" ;;
        esac
        run_entry "$name" failed "$rc" "gpu-trust probe exited $rc: $why" '' "$name.stderr"
        rm -f "$out/$name.json"
        failed=1
    fi
    [ -s "$out/$name.stdout" ] || rm -f "$out/$name.stdout"
}

# limits_run NAME PROCESSES [ARGS...]: tools/probe-limits.py with the current environment (and ARGS,
# e.g. --first): how much device memory each of PROCESSES processes takes at the same time; records the
# outcome.
limits_run() {
    local name=$1 n=$2 t
    shift 2
    local tool=(python3 "$here/probe-limits.py")
    [ -n "${PROBE_LIMITS:-}" ] && tool=("$PROBE_LIMITS")
    if [ -z "${PROBE_LIMITS:-}" ] && ! command -v python3 >/dev/null 2>&1; then
        log "$name: python3 not found"
        run_entry "$name" not-measured '' "python3 is not installed on this machine (tools/probe-limits.py needs it and libcuda only)" '' ''
        return
    fi
    t=$(allowance 40)
    if [ "$t" -lt 10 ]; then
        log "$name: not run, the time budget of ${budget}s is spent"
        run_entry "$name" failed '' "not run: the time budget of ${budget}s was spent before it" '' ''
        failed=1
        return
    fi
    step "$name: probe-limits.py, $n process(es)" "$t" "$out/$name.json" "$out/$name.stderr" \
        "${tool[@]}" --processes "$n" --device "$device" --label "$name" \
        --hold-secs $((t - 5)) "$@"
    local rc=$?
    if [ "$rc" -eq 0 ] && grep -q '"sumAllocatedMiB"' "$out/$name.json"; then
        local e="{\"run\": $(json_str "$name"), \"status\": \"completed\", \"exitCode\": 0"
        e="$e, \"evidence\": $(json_str "$name.json")"
        e="$e, \"allocatedMiB\": [$(grep -o '"allocatedMiB": [0-9]*' "$out/$name.json" | sed 's/.*: //' | paste -sd, -)]"
        e="$e, \"sumAllocatedMiB\": $(grep -o '"sumAllocatedMiB": [0-9]*' "$out/$name.json" | sed 's/.*: //')}"
        runs+=("$e")
    else
        local why
        why=$( { grep -o '"error": "[^"]*"' "$out/$name.json" 2>/dev/null; cat "$out/$name.stderr"; } | one_line)
        [ -z "$why" ] && why="no message"
        local err=''
        [ -s "$out/$name.stderr" ] && err="$name.stderr"
        run_entry "$name" failed "$rc" "probe-limits.py exited $rc: $why" '' "$err"
        failed=1
    fi
    [ -s "$out/$name.stderr" ] || rm -f "$out/$name.stderr"
}

finish() {
    [ "$finished" -eq 0 ] || return 0
    finished=1
    stop_mps
    [ -n "$ts_pipe" ] && rm -rf "$ts_pipe"
    local unchanged=null
    if [ -s "$out/facts/settings-before.csv" ] && [ -s "$out/facts/settings-after.csv" ]; then
        if cmp -s "$out/facts/settings-before.csv" "$out/facts/settings-after.csv"; then
            unchanged=true
        else
            unchanged=false
            log "the GPU settings differ before and after: see facts/settings-*.csv"
        fi
    fi
    {
        printf '{\n'
        printf '  "script": "tools/probe-device.sh",\n'
        printf '  "startedAt": %s,\n' "$(json_str "$started_at")"
        printf '  "wallSeconds": %s,\n' "$SECONDS"
        printf '  "budgetSeconds": %s,\n' "$budget"
        printf '  "scenarioTimeoutSeconds": %s,\n' "$scenario_secs"
        printf '  "device": %s,\n' "$(json_str "$device")"
        printf '  "settingsUnchanged": %s,\n' "$unchanged"
        printf '  "runs": [\n'
        local i
        for i in "${!runs[@]}"; do
            if [ "$i" -lt $((${#runs[@]} - 1)) ]; then
                printf '    %s,\n' "${runs[$i]}"
            else
                printf '    %s\n' "${runs[$i]}"
            fi
        done
        printf '  ]\n}\n'
    } >"$out/summary.json"
    log "done in ${SECONDS}s: $out/summary.json"
}
# A signal: the step under way is stopped at once (its `timeout` passes the signal on to the probe and
# its workers, and kills them 5 s later), the probe run it belonged to is recorded with the scenarios
# it finished, and the EXIT trap stops the MPS daemon and writes the summary.
# shellcheck disable=SC2317 # run by the traps below
on_signal() {
    trap '' INT TERM HUP
    log "interrupted by $1"
    if [ -n "$step_pid" ]; then
        kill -TERM "$step_pid" 2>/dev/null
        wait "$step_pid" 2>/dev/null
        step_pid=''
    fi
    if [ -n "$current_run" ]; then
        if grep -q '"schema": "gpu-trust/probe/v2"' "$out/$current_run.json" 2>/dev/null; then
            run_entry "$current_run" partial '' "interrupted by $1: the evidence holds the scenarios that finished before it" "$current_run.json" "$current_run.stderr"
        else
            run_entry "$current_run" failed '' "interrupted by $1 before a scenario finished" '' "$current_run.stderr"
            rm -f "$out/$current_run.json"
        fi
        current_run=''
    fi
    failed=1
    exit 130
}
trap finish EXIT
trap 'on_signal INT' INT
trap 'on_signal TERM' TERM
trap 'on_signal HUP' HUP

# 1. Facts.
log "output: $out; binary: $gpu_trust; device: $device; budget ${budget}s"
{
    echo "date: $started_at"
    echo "kernel: $(uname -srm)"
    echo "uid: $(id -u)"
    echo "gpu-trust: $("$gpu_trust" --version 2>&1)"
    echo "environment:"
    env | grep -E '^(CUDA_|NVIDIA_)' | sort | sed 's/^/  /'
    echo "MPS daemons already running:"
    for d in /proc/[0-9]*; do
        case $(cat "$d/comm" 2>/dev/null) in
        nvidia-cuda-mps*) echo "  pid ${d#/proc/}: $(cat "$d/comm")" ;;
        esac
    done
} >"$out/facts/host.txt" 2>&1
step "facts: nvidia-smi -q" 30 "$out/facts/nvidia-smi-q.txt" "$out/facts/nvidia-smi-q.stderr" nvidia-smi -q
step "facts: nvidia-smi -L" 15 "$out/facts/nvidia-smi-L.txt" "$out/facts/nvidia-smi-L.stderr" nvidia-smi -L
step "facts: settings before" 15 "$out/facts/settings-before.csv" "$out/facts/settings-before.stderr" \
    nvidia-smi --query-gpu="$settings_query" --format=csv
mig_mode=$(timeout -k 2 10 nvidia-smi -i "$device" --query-gpu=mig.mode.current --format=csv,noheader 2>/dev/null | head -n 1 | tr -d '\r')

# 2. Time-slicing: two processes on one GPU, no MPS.
ts_pipe=$(mktemp -d /tmp/gpu-trust-no-mps.XXXXXX)
CUDA_MPS_PIPE_DIRECTORY=$ts_pipe probe_run time-slicing

# 3. MPS: our own control daemon, stopped at the end (also on interruption, by the EXIT trap).
if ! command -v nvidia-cuda-mps-control >/dev/null 2>&1; then
    log "mps: nvidia-cuda-mps-control not found"
    run_entry mps not-measured '' "nvidia-cuda-mps-control is not installed on this machine" '' ''
    run_entry mps-replicas not-measured '' "nvidia-cuda-mps-control is not installed on this machine" '' ''
elif [ $((budget - SECONDS - reserve)) -lt $((10 + min_probe_secs)) ]; then
    # Starting the daemon (up to 10 s to its socket) and the shortest probe run would not fit.
    log "mps: not run, the time budget of ${budget}s is spent"
    run_entry mps failed '' "not run: the time budget of ${budget}s was spent before it" '' ''
    run_entry mps-replicas failed '' "not run: the time budget of ${budget}s was spent before it" '' ''
    failed=1
else
    if start_mps mps; then
        CUDA_MPS_PIPE_DIRECTORY=$mps_pipe CUDA_MPS_LOG_DIRECTORY=$mps_log probe_run mps
    fi
    stop_mps

    # 3b. Declared against enforced under MPS, configured as the device plugin's MPS daemon configures
    # a GPU shared by PROBE_MPS_REPLICAS replicas: every client's default pinned memory limit is the
    # GPU's memory divided by the replicas, and its default active thread percentage 100 divided by
    # them (k8s-device-plugin, cmd/mps-control-daemon/mps/daemon.go). The plugin also sets the GPU to
    # EXCLUSIVE_PROCESS; this script never changes the compute mode. Two processes with one
    # environment (one pod's) take what they can and hold it, then a third (the neighbour replica's);
    # then the whole battery with both roles as clients.
    total_mib=$(timeout -k 2 10 nvidia-smi -i "$device" --query-gpu=memory.total --format=csv,noheader,nounits 2>/dev/null | head -n 1 | tr -dc '0-9')
    if [ -z "$total_mib" ]; then
        log "mps-replicas: nvidia-smi did not report the memory of GPU $device"
        run_entry mps-replicas failed '' "nvidia-smi did not report the memory of GPU $device" '' ''
        failed=1
    elif start_mps mps-replicas "$((total_mib / mps_replicas))M" "$((100 / mps_replicas))"; then
        mps_settings+=(--setting "replicas=$mps_replicas")
        CUDA_MPS_PIPE_DIRECTORY=$mps_pipe CUDA_MPS_LOG_DIRECTORY=$mps_log \
            limits_run mps-replicas-one-pod-two-processes 3 --first 2
        CUDA_MPS_PIPE_DIRECTORY=$mps_pipe CUDA_MPS_LOG_DIRECTORY=$mps_log probe_run mps-replicas
    fi
    stop_mps
fi

# 3c. A limit only a library would enforce, set without the library: HAMi-core's variable with no
# libvgpu.so preloaded, as a container gets it when the library is switched off, and no MPS daemon.
CUDA_MPS_PIPE_DIRECTORY=$ts_pipe CUDA_DEVICE_MEMORY_LIMIT=$hami_limit limits_run variable-only-limit 1

# 4. MIG: never enabled by this script.
case $mig_mode in
Enabled)
    mig_why="MIG mode of GPU $device is Enabled, but this script measures time-slicing and MPS only; run gpu-trust probe --victim MIG-<uuid> --aggressor MIG-<uuid> with two instances"
    ;;
'')
    mig_why="nvidia-smi did not report the MIG mode of GPU $device; this script never changes MIG mode"
    ;;
*)
    mig_why="MIG mode of GPU $device is $mig_mode; this script never changes MIG mode (enabling it needs administrator rights and an idle GPU)"
    ;;
esac
log "mig: not measured: $mig_why"
run_entry mig not-measured '' "$mig_why" '' ''

# 5. Settings and compute processes after the runs, in the reserved time.
bounded "facts: settings after" 10 "$out/facts/settings-after.csv" "$out/facts/settings-after.stderr" \
    nvidia-smi --query-gpu="$settings_query" --format=csv
bounded "facts: compute processes after" 10 "$out/facts/compute-apps-after.csv" \
    "$out/facts/compute-apps-after.stderr" \
    nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv

finish
exit "$failed"
