#!/usr/bin/env bash
# Runs the memory ablation (bench/ablation/memory_ablation.cc) on a fresh local cluster built in $1.
# Usage: scripts/run-memory-ablation.sh [BUILD_DIR] [small|realistic] [--shared]
set -euo pipefail
build_dir=${1:-build/dev}
shape=${2:-realistic}
shift $(( $# < 2 ? $# : 2 ))
data_dir="$build_dir/ablation-cluster"
cmake --build "$build_dir" --target memory_ablation accelopt orchestrator planner executor memory profiler
rm -rf "$data_dir"
"$build_dir/bin/accelopt" up --data-dir "$data_dir" --profilers 2 --base-port 50650 >/dev/null
trap '"$build_dir/bin/accelopt" down --data-dir "$data_dir" >/dev/null 2>&1 || true' EXIT
"$build_dir/bench/memory_ablation" --server 127.0.0.1:50650 --shape "$shape" "$@"
