#!/usr/bin/env bash
# A stdout nobody reads (docs/benchmarks.md, issue 29's run): four trials print 3,000 lines
# each with stdout a pipe nobody reads for 15 s. For each build given, how long after its
# start runall had its trials ended and its results written, and how many of the 12,000
# lines reached the logs.
#
#   bench/stall.sh /path/to/before/runall /path/to/after/runall
set -euo pipefail
. "$(dirname "$0")/need.sh"
need bc stat find grep paste mktemp "$@"
for bin in "$@"; do
  d=$(mktemp -d)
  cat > "$d/s.yml" <<'YML'
config:
  max-parallel-commands: 4
tasks:
  - name: s
    parallel-tasks:
      - name: s <replace>
        cmd: for i in $(seq 3000); do echo "trial <replace> line $i"; done
        for-each: [1, 2, 3, 4]
YML
  cd "$d"
  start=$(date +%s.%N)
  "$bin" --output plain --log-dir logs --results results.json s.yml | (sleep 15; cat >/dev/null)
  ended=$(stat -c %.9Y results.json)
  lines=$(figure "lines in the logs" "$(find logs -type f -exec grep -hc '^trial' {} + | paste -sd+ | bc)")
  took=$(figure "seconds to the results" "$(echo "$ended - $start" | bc)")
  printf '%s: trials ended and results written %.2f s after the start; %s of 12000 lines in the logs\n' "$bin" "$took" "$lines"
  cd - >/dev/null; rm -rf "$d"
done
