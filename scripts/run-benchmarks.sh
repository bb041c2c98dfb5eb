#!/usr/bin/env bash
# Builds every benchmark target of the build in $1 and runs each; results go to $1/bench/*.json.
set -euo pipefail
build_dir=${1:-build/dev}
targets=$(ninja -C "$build_dir" -t targets all | grep -o '^[a-z_]*_benchmark' | sort -u || true)
if [[ -z "$targets" ]]; then echo "no benchmarks"; exit 0; fi
ninja -C "$build_dir" $targets
for t in $targets; do
  echo "== $t"
  "$build_dir/bench/$t" --benchmark_out="$build_dir/bench/$t.json" --benchmark_out_format=json
done
