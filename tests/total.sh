#!/bin/sh
# total.sh TALLY...: prints the closing "N passed, N failed" line over the given tallies and
# exits non-zero when any check failed.
cat "$@" 2>/dev/null | awk '{p += $1; f += $2} END {printf "%d passed, %d failed\n", p, f; exit (f > 0)}'
