#!/bin/sh
# total.sh TALLY...: prints the closing "N passed, N failed" line over the given tallies and
# exits non-zero when any check failed. A missing or empty tally (its pass never ran: the build
# of the tests failed) counts as one failure, so a broken build can never read as a pass.
missing=0
for t in "$@"; do [ -s "$t" ] || { echo "total: $t is missing or empty: that pass did not run" >&2; missing=$((missing + 1)); }; done
cat "$@" 2>/dev/null | awk -v m="$missing" '{p += $1; f += $2} END {f += m; printf "%d passed, %d failed\n", p, f; exit (f > 0)}'
