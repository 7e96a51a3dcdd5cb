#!/bin/sh
# The log compiler of every test: runs it and appends its wall time to its log,
# so test.sh can say which tests a slow CI run spent its minutes on (make check
# runs them side by side; the times overlap).
start=$(date +%s)
"$@"
rc=$?
echo "timed: $1 $(( $(date +%s) - start )) s (exit $rc)"
exit $rc
