#!/usr/bin/env bash
# `make demo`: an offline optimization run. Starts a local cluster from the build in $1 (two simulator
# workers), submits examples/rope/job.yaml (realistic shape, builtin optimizer: no LLM, no Trainium), shows
# the live progress, prints the result and the experiences learned, writes the best kernel, stops the cluster,
# and ends with the path of the job's HTML report.
# Exits non-zero unless the job found a verified speedup above 1 and stored experiences.
set -euo pipefail
build_dir=${1:-build/dev}
bin="$build_dir/bin"
data_dir="$build_dir/demo-cluster"
out_dir="$build_dir/demo-result"
job_file=${DEMO_JOB:-examples/rope/job.yaml}
base_port=${DEMO_BASE_PORT:-50450}

rm -rf "$data_dir" "$out_dir"
echo "== accelopt up: a local cluster on 127.0.0.1 (data in $data_dir)"
"$bin/accelopt" up --data-dir "$data_dir" --profilers 2 --base-port "$base_port"
trap '"$bin/accelopt" down --data-dir "$data_dir" >/dev/null 2>&1 || true' EXIT

echo
echo "== accelopt submit $job_file"
job=$("$bin/accelopt" submit "$job_file" --data-dir "$data_dir" --json | sed -n 's/.*"job_id": *"\([^"]*\)".*/\1/p')
echo "job $job"
echo
echo "== accelopt watch $job"
"$bin/accelopt" watch "$job" --data-dir "$data_dir"
echo
echo "== result"
"$bin/accelopt" get "$job" --data-dir "$data_dir"
echo
echo "== experiences learned"
"$bin/accelopt" memory list --namespace "$job" --data-dir "$data_dir"
echo
"$bin/accelopt" export "$job" --out "$out_dir" --data-dir "$data_dir"
echo "best kernel, lineage and report written to $out_dir"
report=$("$bin/accelopt" report "$job" --out "$out_dir" --data-dir "$data_dir")

json=$("$bin/accelopt" get "$job" --data-dir "$data_dir" --json)
speedup=$(echo "$json" | sed -n 's/.*"best_speedup": *\([0-9.e+-]*\).*/\1/p')
learned=$("$bin/accelopt" memory list --namespace "$job" --data-dir "$data_dir" --json | grep -o '"sequence"' | wc -l)
echo
echo "== accelopt down"
"$bin/accelopt" down --data-dir "$data_dir"
trap - EXIT
if awk -v s="$speedup" 'BEGIN { exit !(s > 1.0) }' && [[ "$learned" -gt 0 ]]; then
  echo "demo: verified speedup ${speedup}x, $learned experience(s) learned"
  echo "report (open it in a browser): $report"
else
  echo "demo: no speedup above 1 or no experience learned (speedup '$speedup', experiences $learned)" >&2
  exit 1
fi
