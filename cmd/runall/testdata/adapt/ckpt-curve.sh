#!/bin/sh
# ckpt-curve.sh C A P STEPS DIR [SECONDS]: prints runall-metric acc=C-A*s^-P for s = 1..STEPS,
# one each SECONDS (a tenth by default), saving the step it reached in DIR after each (a
# checkpoint, said with runall-checkpoint step=N), and going on from it when runall resumes it
# (RUNALL_RESUMED=1).
c=$1 a=$2 p=$3 n=$4 dir=$5 pace=${6:-0.1}
start=0
if [ "$RUNALL_RESUMED" = 1 ]; then
  start=$(cat "$dir/step")
  echo "resumed after epoch $start"
fi
mkdir -p "$dir"
s=$((start + 1))
while [ "$s" -le "$n" ]; do
  awk -v c="$c" -v a="$a" -v p="$p" -v s="$s" 'BEGIN { printf "runall-metric acc=%.5f\n", c - a * s ^ -p }'
  echo "$s" > "$dir/step.tmp" && mv "$dir/step.tmp" "$dir/step"
  echo "runall-checkpoint step=$s"
  sleep "$pace"
  s=$((s + 1))
done
