#!/usr/bin/env bash
# Multi-host test (`make multihost-test`; docs/deploy.md, "Multi-host test"). Needs root (network namespaces).
#
# Every service runs in its own network namespace with its own address on a bridge that lives in a further
# namespace (amh-sw): 10.231.0.0/24 exists only inside namespaces this test makes, and the host's own network is
# not touched. The orchestrator finds the two profilers by the DNS name profilers.accelopt.test through the hosts
# file of its namespace (/etc/netns/amh-orch/hosts, bind-mounted over /etc/hosts by `ip netns exec`). Mid-job,
# profiler 0's process is killed and its namespace deleted: the job must still succeed by re-dispatch to profiler
# 1, with every candidate profiled once.
#
#   tests/multihost/run.sh <build-dir> [job.yaml]
#   MULTIHOST_QUICK=1 tests/multihost/run.sh <build-dir>   only the topology and DNS discovery (the ctest case)
set -euo pipefail

build=$(realpath "${1:?usage: run.sh <build-dir> [job.yaml]}")
repo=$(cd "$(dirname "$0")/../.." && pwd)
job_file=$(realpath "${2:-$repo/examples/softmax/job.yaml}")
bin="$build/bin"
prefix=amh$$  # unique per run: parallel runs do not share namespaces
subnet=10.231.0
port=50051
admin=9090

[[ $(id -u) -eq 0 ]] || { echo "multihost: needs root (ip netns)" >&2; exit 2; }
for b in accelopt accelopt-orchestrator accelopt-planner accelopt-executor accelopt-memory accelopt-profiler; do
  [[ -x "$bin/$b" ]] || { echo "multihost: no $bin/$b (build first)" >&2; exit 2; }
done
# Configs, logs, stores and the profilers' scratch directories (0711: their sandbox users pass through).
work=$(mktemp -d "${TMPDIR:-/tmp}/accelopt-multihost.XXXXXX")
chmod 0711 "$work"

# name -> last octet of its address
declare -A host=([orch]=1 [plan]=2 [exec]=3 [mem]=4 [prof0]=10 [prof1]=11)
pids=()

cleanup() {
  local status=$?
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  for n in "${!host[@]}" sw; do ip netns del "$prefix-$n" 2>/dev/null || true; done
  for n in "${!host[@]}"; do rm -rf "/etc/netns/$prefix-$n"; done
  if ((status == 0 || status == 2)); then
    rm -rf "$work"
  else
    echo "multihost: kept the configs and logs in $work" >&2
  fi
}
trap cleanup EXIT
cleanup_stale() { for n in "${!host[@]}" sw; do ip netns del "$prefix-$n" 2>/dev/null || true; done; }
cleanup_stale

# The switch: a bridge in its own namespace.
ip netns add "$prefix-sw" || { echo "multihost: cannot create network namespaces here (skipped)" >&2; exit 2; }
ip -n "$prefix-sw" link add br0 type bridge
ip -n "$prefix-sw" link set br0 up
for n in "${!host[@]}"; do
  ns="$prefix-$n"
  ip netns add "$ns"
  ip -n "$ns" link set lo up
  ip link add "v-$n" netns "$prefix-sw" type veth peer name eth0 netns "$ns"
  ip -n "$prefix-sw" link set "v-$n" master br0 up
  ip -n "$ns" addr add "$subnet.${host[$n]}/24" dev eth0
  ip -n "$ns" link set eth0 up
  # Every namespace resolves the service names; the profilers' name has both workers.
  mkdir -p "/etc/netns/$ns"
  {
    echo "127.0.0.1 localhost"
    echo "$subnet.${host[orch]} orchestrator.accelopt.test"
    echo "$subnet.${host[plan]} planner.accelopt.test"
    echo "$subnet.${host[exec]} executor.accelopt.test"
    echo "$subnet.${host[mem]} memory.accelopt.test"
    echo "$subnet.${host[prof0]} profilers.accelopt.test"
    echo "$subnet.${host[prof1]} profilers.accelopt.test"
  } >"/etc/netns/$ns/hosts"
done

# The orchestrator's resolver sees both profilers behind one name, from inside its namespace only.
resolved=$(ip netns exec "$prefix-orch" getent ahostsv4 profilers.accelopt.test | awk '{print $1}' | sort -u | paste -sd' ')
[[ "$resolved" == "$subnet.${host[prof0]} $subnet.${host[prof1]}" ]] ||
  { echo "multihost: profilers.accelopt.test resolves to '$resolved' inside $prefix-orch" >&2; exit 1; }
! getent ahostsv4 profilers.accelopt.test >/dev/null || { echo "multihost: the host must not resolve the test names" >&2; exit 1; }

server() { printf 'server: {grpc_address: "%s:%d", admin_address: "127.0.0.1:%d", insecure: true}\n' "$1" "$port" "$admin"; }
start() {  # <name> <binary> <config>
  local n=$1
  echo "$3" >"$work/$n.yaml"
  ip netns exec "$prefix-$n" "$bin/$2" --config "$work/$n.yaml" >"$work/$n.log" 2>&1 &
  pids+=($!)
  eval "pid_$n=$!"
}
start plan accelopt-planner "$(server "$subnet.${host[plan]}")"
start exec accelopt-executor "$(server "$subnet.${host[exec]}")"
start mem accelopt-memory "$(server "$subnet.${host[mem]}")
data_dir: \"$work/memory\""
start prof0 accelopt-profiler "$(server "$subnet.${host[prof0]}")
device: sim-trn1
slots: 1
scratch_root: \"$work\""
start prof1 accelopt-profiler "$(server "$subnet.${host[prof1]}")
device: sim-trn1
slots: 1
scratch_root: \"$work\""
start orch accelopt-orchestrator "$(server "$subnet.${host[orch]}")
data_dir: \"$work/orchestrator\"
planner_address: \"dns:///planner.accelopt.test:$port\"
executor_address: \"dns:///executor.accelopt.test:$port\"
memory_address: \"memory.accelopt.test:$port\"
profiler_dns: \"profilers.accelopt.test:$port\"
dns_refresh_seconds: 1"

# The CLI runs in the orchestrator's namespace and reaches it by name.
cli() { ip netns exec "$prefix-orch" "$bin/accelopt" "$@"; }
orch="orchestrator.accelopt.test:$port"
metric() {  # <name> <series prefix>: the sum of the matching samples of a service's /metrics, read in its namespace
  ip netns exec "$prefix-$1" curl -sf "http://127.0.0.1:$admin/metrics" |
    awk -v m="$2" 'index($1, m) == 1 { s += $2; n++ } END { if (n) print s }'
}

up=0
for _ in $(seq 1 120); do
  if cli list --server "$orch" >/dev/null 2>&1; then up=1; break; fi
  sleep 0.5
done
((up)) || { echo "multihost: orchestrator not reachable"; tail "$work"/orch.log; exit 1; }

# Both profilers found through the name, and their slots polled across the bridge.
slots=""
for _ in $(seq 1 120); do
  slots=$(metric orch 'accelopt_pool_slots{' || true)  # busy + free
  [[ "$slots" == 2 ]] && break
  sleep 0.5
done
[[ "$slots" == 2 ]] || { echo "multihost: FAIL the orchestrator sees '$slots' profiler slots, expected 2"; tail "$work"/orch.log; exit 1; }
echo "multihost: orchestrator found both profilers by DNS name (2 slots)"
if [[ "${MULTIHOST_QUICK:-}" == 1 ]]; then
  echo "multihost: quick check passed"
  exit 0
fi

(cd "$(dirname "$job_file")" && cli submit "$job_file" --server "$orch" --json) >"$work/submit.json"
job=$(sed -n 's/.*"job_id": *"\([^"]*\)".*/\1/p' "$work/submit.json")
[[ -n "$job" ]] || { echo "multihost: submit failed: $(cat "$work/submit.json")"; exit 1; }
echo "multihost: job $job submitted over $subnet.0/24"

job_field() { cli get "$job" --server "$orch" --json | /usr/bin/python3 -c "import json,sys; j=json.load(sys.stdin); print($1)"; }

# Kill profiler 0 and its namespace mid-profile: once it has finished a profile and both slots of the pool are
# busy (as the orchestrator's dispatch sees them), so that a profile is in flight on it.
rss_before=$(awk '/^VmRSS/ { print $2 }' "/proc/$pid_orch/status")
killed=0
for _ in $(seq 1 1200); do
  done0=$(metric prof0 'accelopt_profiler_profiles_total' || true)
  busy=$(metric orch 'accelopt_pool_slots{state="busy"' || true)
  if [[ -n "$done0" && "$busy" == 2 ]] && awk -v d="$done0" 'BEGIN { exit !(d >= 1) }'; then
    kill -9 "$pid_prof0"
    ip netns del "$prefix-prof0"
    killed=1
    echo "multihost: profiler 0 ($subnet.${host[prof0]}) killed mid-profile after $done0 profile(s); namespace deleted"
    break
  fi
  sleep 0.1
done
((killed)) || { echo "multihost: profiler 0 never busy beside profiler 1"; tail "$work"/orch.log; exit 1; }

state=""
for _ in $(seq 1 900); do
  state=$(job_field 'j["state"]')
  [[ "$state" == *SUCCEEDED* || "$state" == *FAILED* || "$state" == *CANCELLED* ]] && break
  sleep 1
done
cli get "$job" --server "$orch"
failures=0
[[ "$state" == *SUCCEEDED* ]] || { echo "multihost: FAIL job ended $state"; failures=$((failures + 1)); }
profiles_run=$(job_field 'j.get("stats", {}).get("profilesRun", j.get("stats", {}).get("profiles_run", 0))')
# Candidates that reached a profiler (not NO_KERNEL, DUPLICATE or CANCELLED, which are decided without one).
verdicts=$(job_field 'sum(n for v, n in j.get("candidates", {}).items() if v not in ("NO_KERNEL", "DUPLICATE", "CANCELLED"))')
retries=$(job_field 'j.get("stats", {}).get("dispatchRetries", j.get("stats", {}).get("dispatch_retries", 0))')
wall=$(job_field 'j.get("stats", {}).get("wallSeconds", j.get("stats", {}).get("wall_seconds", 0))')
rss_after=$(awk '/^VmRSS/ { print $2 }' "/proc/$pid_orch/status")
done1=$(metric prof1 accelopt_profiler_profiles_total)
executed=$(awk -v a="$done0" -v b="$done1" 'BEGIN { print a + b }')
echo "multihost: profiled candidates $verdicts, profiles run $profiles_run, re-dispatched $retries, executed by the workers $executed (profiler 0 $done0 before the kill, profiler 1 $done1)"
awk -v n="$verdicts" -v w="$wall" -v a="$rss_before" -v b="$rss_after" 'BEGIN {
  printf "multihost: capacity: %.0f candidates/hour over 2 profiler slots (one lost mid-job), wall %.0f s; orchestrator RSS %d -> %d KiB\n", n * 3600 / w, w, a, b }'
[[ "$retries" -ge 1 ]] || { echo "multihost: FAIL the profile in flight on profiler 0 was not re-dispatched"; failures=$((failures + 1)); }
# Each candidate has one result and was counted once. The workers completed each candidate once: profiler 0's
# count is read just before the kill, so its one slot may finish one more profile in between (reported, or lost
# and re-dispatched): verdicts - 1 <= executed <= verdicts. A candidate profiled twice would exceed it.
[[ "$profiles_run" == "$verdicts" ]] || { echo "multihost: FAIL profiles run $profiles_run != candidates $verdicts"; failures=$((failures + 1)); }
awk -v e="$executed" -v d="$verdicts" 'BEGIN { exit !(e >= d - 1 && e <= d) }' ||
  { echo "multihost: FAIL the workers completed $executed profiles for $verdicts candidates"; failures=$((failures + 1)); }
if ((failures)); then
  tail -20 "$work/orch.log"
  exit 1
fi
echo "multihost: passed"
