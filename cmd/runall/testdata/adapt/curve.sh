#!/bin/sh
# curve.sh C A P STEPS: prints runall-metric acc=C-A*s^-P for s = 1..STEPS, one a tenth of a
# second, as a trial's epochs; curve.sh exp C A K STEPS: acc=C-A*e^(-K*s), a curve that
# climbs fast and levels off.
if [ "$1" = exp ]; then
  shift
  form='c - a * exp(-p * s)'
else
  form='c - a * s ^ -p'
fi
awk -v c="$1" -v a="$2" -v p="$3" -v n="$4" "BEGIN { for (s = 1; s <= n; s++) { printf \"runall-metric acc=%.5f\\n\", $form; fflush(); system(\"sleep 0.1\") } }"
