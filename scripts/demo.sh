#!/usr/bin/env bash
# `make demo`: start a local cluster from the build in $1, show that every service is healthy, stop it.
set -euo pipefail
build_dir=${1:-build/dev}
bin="$build_dir/bin"
data_dir="$build_dir/demo-cluster"

echo "== accelopt up (local cluster on 127.0.0.1, data in $data_dir)"
"$bin/accelopt" up --data-dir "$data_dir"
trap '"$bin/accelopt" down --data-dir "$data_dir" >/dev/null 2>&1 || true' EXIT
echo
echo "== accelopt status"
"$bin/accelopt" status --data-dir "$data_dir"
echo
echo "== a scrape of the orchestrator's /metrics (first lines)"
metrics=$(grep -o '"admin_address": "[^"]*"' "$data_dir/cluster.json" | tail -1 | cut -d'"' -f4)
curl -s "http://$metrics/metrics" | grep '^accelopt_' | head -5
echo
echo "== accelopt down"
"$bin/accelopt" down --data-dir "$data_dir"
trap - EXIT
