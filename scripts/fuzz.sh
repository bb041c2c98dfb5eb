#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ (CMake preset `fuzz`: clang-14, ASan) and runs each for
# FUZZ_SECONDS (default 60). `make fuzz FUZZ_SECONDS=N` calls this.
#   FUZZ_TARGETS="chat_json http_response"   run only these targets
# Seeds are read from fuzz/corpus/<target>/ and fuzz/regressions/<target>/; inputs the fuzzer finds go to
# build/fuzz/work/corpus/<target>/ (never into the repo), crashes to build/fuzz/work/crashes/<target>/.
# Prints executions per second per target; exits 1 when any target crashed (turn the crash file into a
# regression: copy it to fuzz/regressions/<target>/ and fix the code, see docs/fuzzing.md).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${FUZZ_SECONDS:-60}"
read -r -a targets <<<"${FUZZ_TARGETS:-job_spec problem_metadata trace_reader chat_json text_extract experience_jsonl http_response}"
build=build/fuzz
work="$build/work"

[[ -f "$build/build.ninja" ]] || cmake --preset fuzz
cmake --build --preset fuzz --target "${targets[@]/%/_fuzzer}"

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"

failed=()
summary=()
for t in "${targets[@]}"; do
  mkdir -p "$work/corpus/$t" "$work/crashes/$t"
  log="$work/$t.log"
  echo "fuzz: $t for ${seconds}s"
  status=0
  "$build/bin/fuzz/${t}_fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$work/crashes/$t/" "$work/corpus/$t" "fuzz/corpus/$t" "fuzz/regressions/$t" \
    >"$log" 2>&1 || status=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  corpus=$(find "$work/corpus/$t" -type f | wc -l)
  if ((status != 0)); then
    failed+=("$t")
    summary+=("$(printf '%-18s CRASH (exit %d) after %s runs; see %s and %s' "$t" "$status" "${execs:-?}" "$log" \
      "$work/crashes/$t/")")
    grep -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error)' "$log" | head -5 || true
  else
    summary+=("$(printf '%-18s %10s exec/s %12s runs %6s corpus files' "$t" "${rate:-?}" "${execs:-?}" "$corpus")")
  fi
done

echo "fuzz: ${seconds}s per target"
printf '  %s\n' "${summary[@]}"
if ((${#failed[@]})); then
  echo "fuzz: crashes in ${failed[*]}" >&2
  exit 1
fi
