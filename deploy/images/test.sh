#!/usr/bin/env bash
# The image test (`make image-test`; docs/deploy.md, "Images"). For each OCI archive that `make images` wrote:
# unpacks it with umoci, starts its entrypoint under bubblewrap with the image's own files only (the unpacked root
# filesystem bound at /, as the image's user 10001, loopback network of the host), and waits until the service is
# SERVING over its gRPC health check. Then the profiler image profiles examples/silu (small shape) to OK, and the
# installed binaries are checked for paths of the build machine.
#
#   deploy/images/test.sh <image-dir> <build-dir-with-bin/accelopt>
set -euo pipefail

image_dir=$(realpath "${1:?usage: test.sh <image-dir> <build-dir>}")
cli=$(realpath "${2:?usage: test.sh <image-dir> <build-dir>}")/bin/accelopt
repo=$(cd "$(dirname "$0")/../.." && pwd)
tag=$(cat "$image_dir/TAG")
base_port=${ACCELOPT_IMAGE_TEST_PORT:-50620}
uid=10001

for tool in umoci bwrap setpriv; do command -v "$tool" >/dev/null || { echo "image-test: needs $tool" >&2; exit 1; }; done
[[ -x "$cli" ]] || { echo "image-test: no $cli (build the CLI first)" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/accelopt-image-test.XXXXXX")
chmod 0755 "$work"
pids=()
cleanup() {
  local status=$?
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if ((status == 0)); then
    rm -rf "$work"
  else  # the logs and configs; the unpacked images are large
    rm -rf "$work"/*/layout "$work"/*/bundle
    echo "image-test: kept the logs in $work" >&2
  fi
}
trap cleanup EXIT

failures=0
fail() { echo "image-test: FAIL $*" >&2; failures=$((failures + 1)); }

unpack() {  # <service> -> rootfs path on stdout
  local service=$1 archive="$image_dir/accelopt-$1-$tag.oci.tar"
  [[ -f "$archive" ]] || { echo "image-test: missing $archive" >&2; return 1; }
  mkdir -p "$work/$service/layout"
  tar -C "$work/$service/layout" -xf "$archive"
  umoci unpack --image "$work/$service/layout:$tag" "$work/$service/bundle" >/dev/null
  chmod 0755 "$work/$service" "$work/$service/bundle"
  echo "$work/$service/bundle/rootfs"
}

# Reads the image's entrypoint, user and environment from its OCI config (runtime bundle config.json).
bundle_config() {  # <service> <jq-like key: entrypoint|user|env>
  /usr/bin/python3 - "$work/$1/bundle/config.json" "$2" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
key = sys.argv[2]
if key == "args": print("\n".join(c["process"]["args"]))
elif key == "user": print(f'{c["process"]["user"]["uid"]}:{c["process"]["user"]["gid"]}')
elif key == "env": print("\n".join(c["process"]["env"]))
elif key == "cwd": print(c["process"]["cwd"])
PY
}

start() {  # <service> <port> <admin-port> [extra config lines]
  local service=$1 port=$2 admin=$3 rootfs
  rootfs=$(unpack "$service")
  mkdir -p "$work/$service/etc"
  chmod 0755 "$work/$service/etc"
  local config="$work/$service/etc/config.yaml"
  printf 'server: {grpc_address: "127.0.0.1:%d", admin_address: "127.0.0.1:%d"}\n%s' "$port" "$admin" "${4:-}" >"$config"
  chmod 0644 "$config"
  local user cwd
  user=$(bundle_config "$service" user)
  cwd=$(bundle_config "$service" cwd)
  [[ "$user" == "$uid:$uid" ]] || fail "$service: image user is $user, expected $uid:$uid"
  mapfile -t args < <(bundle_config "$service" args)
  mapfile -t env < <(bundle_config "$service" env)
  local env_args=(--clearenv)
  for e in "${env[@]}"; do env_args+=(--setenv "${e%%=*}" "${e#*=}"); done
  # The image's files only: its root filesystem at /, fresh /proc, /dev, /tmp; the config file bound in.
  setpriv --reuid "$uid" --regid "$uid" --clear-groups \
    bwrap --unshare-user --uid "$uid" --gid "$uid" --unshare-pid --unshare-ipc --unshare-uts --die-with-parent \
    --bind "$rootfs" / --proc /proc --dev /dev --tmpfs /tmp --ro-bind "$work/$service/etc" /etc/accelopt \
    --chdir "$cwd" "${env_args[@]}" \
    -- "${args[@]}" --config /etc/accelopt/config.yaml >"$work/$service.log" 2>&1 &
  pids+=($!)
  echo "image-test: $service started from $(basename "$(dirname "$rootfs")") (${args[*]})"
}

# A cluster.json naming the image-run services, so that `accelopt status` probes their health.
state="$work/state"
mkdir -p "$state"
services_json=()
add_state() {  # <service> <port>: the process just started (bubblewrap, whose command line names the binary)
  services_json+=("{\"name\": \"$1\", \"binary\": \"accelopt-$1\", \"grpc_address\": \"127.0.0.1:$2\", \"pid\": \"${pids[-1]}\", \"log_path\": \"$work/$1.log\"}")
}

p=$((base_port))
start planner $((p + 1)) $((p + 101))
add_state planner $((p + 1))
start executor $((p + 2)) $((p + 102))
add_state executor $((p + 2))
start memory $((p + 3)) $((p + 103)) 'data_dir: "/var/lib/accelopt/memory"
'
add_state memory $((p + 3))
start profiler $((p + 10)) $((p + 110)) 'device: sim-trn1
'
add_state profiler $((p + 10))
start orchestrator $p $((p + 100)) "data_dir: \"/var/lib/accelopt/orchestrator\"
planner_address: \"127.0.0.1:$((p + 1))\"
executor_address: \"127.0.0.1:$((p + 2))\"
memory_address: \"127.0.0.1:$((p + 3))\"
profiler_addresses: [\"127.0.0.1:$((p + 10))\"]
"
add_state orchestrator $p
(IFS=,; echo "{\"services\": [${services_json[*]}]}") >"$state/cluster.json"

serving=0
for _ in $(seq 1 120); do
  if "$cli" status --data-dir "$state" >"$work/status.txt" 2>&1; then serving=1; break; fi
  sleep 0.5
done
cat "$work/status.txt"
if ((serving == 0)); then
  fail "not every service reached SERVING within 60 s"
  for s in orchestrator planner executor memory profiler; do echo "--- $s.log"; tail -5 "$work/$s.log"; done
else
  echo "image-test: every service SERVING"
fi

# The profiler image profiles an example kernel to OK (simulator, small shape).
silu="$repo/examples/silu"
if "$cli" profile --problem "$silu/reference_small.py" --kernel "$silu/kernel.py" \
  --metadata "$silu/problem_small.yaml" --server "127.0.0.1:$((p + 10))" --json >"$work/profile.json" 2>&1 &&
  grep -q '"verdict": *"OK"' "$work/profile.json"; then
  echo "image-test: profiler image profiled examples/silu: $(grep -o '"latency_ms": *[0-9.e+-]*' "$work/profile.json")"
else
  fail "profile of examples/silu on the profiler image: $(head -c 600 "$work/profile.json")"
  tail -20 "$work/profiler.log"
fi

# Runtime packages: the profiler image has the sandbox and numpy, the others have neither.
for s in orchestrator planner executor memory profiler; do
  rootfs="$work/$s/bundle/rootfs"
  has_bwrap=$([[ -x "$rootfs/usr/bin/bwrap" ]] && echo 1 || echo 0)
  has_numpy=$([[ -d "$rootfs/usr/lib/python3/dist-packages/numpy" ]] && echo 1 || echo 0)
  want=$([[ $s == profiler ]] && echo 1 || echo 0)
  [[ "$has_bwrap$has_numpy" == "$want$want" ]] || fail "$s: bubblewrap=$has_bwrap numpy=$has_numpy, expected $want"
done

# No path of the build machine in the installed binaries (meaningful for Release builds: docs/deploy.md).
for s in orchestrator planner executor memory profiler; do
  bin="$work/$s/bundle/rootfs/opt/accelopt/bin/accelopt-$s"
  if strings -n 8 "$bin" | grep -F -e "$repo" -e "$(dirname "$image_dir")" >"$work/paths.txt"; then
    fail "$s binary names build-machine paths, e.g. $(head -1 "$work/paths.txt")"
  fi
done

if ((failures)); then
  echo "image-test: $failures failure(s)"
  exit 1
fi
echo "image-test: 5 images passed (tag $tag)"
