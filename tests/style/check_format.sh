#!/usr/bin/env bash
# Fails when a tracked C++ file is not formatted by .clang-format (ADR 0008). Usage: check_format.sh SOURCE_DIR
set -euo pipefail
cd "$1"
format=$(command -v clang-format-14 || command -v clang-format)
mapfile -t files < <(git ls-files '*.cc' '*.h' 2>/dev/null || find cli libs services tests bench -name '*.cc' -o -name '*.h')
"$format" --dry-run --Werror "${files[@]}"
echo "format: ${#files[@]} files clean"
