#!/bin/bash
# Prints what a Keras model.fit(verbose=2) prints each epoch, and writes its history as JSON,
# as the tutorial's training script does. Its accuracy grows with --learning_rate.
lr=0.01 expid=0
while [ $# -gt 0 ]; do
  case $1 in
    --learning_rate) lr=$2; shift ;;
    --expid) expid=$2; shift ;;
  esac
  shift
done
hist="{\"val_accuracy\": ["
for e in 1 2 3; do
  acc=$(awk -v e=$e -v lr=$lr 'BEGIN { printf "%.4f", 0.5 + e * lr }')
  echo "Epoch $e/3"
  echo "293/293 - 1s - loss: 0.$((7 - e))259 - accuracy: 0.6564 - val_loss: 0.6948 - val_accuracy: $acc"
  hist="$hist$acc"; [ $e -lt 3 ] && hist="$hist, "
done
echo "$hist]}" > "history-$expid.json"
