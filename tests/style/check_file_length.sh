#!/usr/bin/env bash
# Fails when a C++ source in services/, libs/ or cli/ is longer than 700 lines (one concept per file).
# Usage: check_file_length.sh SOURCE_DIR
set -euo pipefail
cd "$1"
limit=700
status=0
while IFS= read -r file; do
  lines=$(wc -l < "$file")
  if ((lines > limit)); then
    echo "$file: $lines lines (limit $limit)"
    status=1
  fi
done < <(find services libs cli -name '*.cc' -o -name '*.h')
((status == 0)) && echo "file length: every C++ source is at most $limit lines"
exit $status
