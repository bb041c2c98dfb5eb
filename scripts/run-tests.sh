#!/usr/bin/env bash
# `make test`: ctest for the preset in $1 (further arguments go to ctest) under a fresh temporary root, which
# every test and the services it starts use (TMPDIR, TEST_TMPDIR). Afterwards the root must be empty: a test
# removes what it makes. What failed tests kept stays there for debugging; files left by passing tests fail the run.
set -uo pipefail
cd "$(dirname "$0")/.."
preset=${1:-dev}
shift || true
root=$(mktemp -d "${TMPDIR:-/tmp}/accelopt-test.XXXXXX") || exit 1
# Sandbox users pass through to the profilers' scratch directories under it (but cannot list it).
chmod 0711 "$root"
TMPDIR=$root TEST_TMPDIR=$root ctest --preset "$preset" "$@"
status=$?
mapfile -t left < <(find "$root" -mindepth 1 -maxdepth 1 | sort)
if ((${#left[@]} == 0)); then
  rmdir "$root"
  exit "$status"
fi
if ((status != 0)); then
  echo "test files kept for debugging in $root (what the failed tests left):"
  printf '  %s\n' "${left[@]}"
  exit "$status"
fi
echo "every test passed but these were left in $root (a test must remove what it creates):"
printf '  %s\n' "${left[@]}"
exit 1
