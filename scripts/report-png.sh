#!/usr/bin/env bash
# Makes docs/report.png, the README's picture of the report: runs the worked example
# (examples/train/tasks.yml: MinIO, the dataset, four PyTorch trials on the CPU, a simulated
# 32 GiB GPU) through its end-to-end test, keeps the run's results, re-draws the report with
# this tree's runall and screenshots it with headless Chromium (Debian's chromium package).
#
#   scripts/report-png.sh [OUT.png]
# Needs: go, minio, python3 with torch (Debian's python3-torch), chromium.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/docs/report.png}
command -v chromium >/dev/null || { echo "report-png: chromium is missing (apt-get install chromium)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$root"
go build -o "$work/runall" ./cmd/runall
RUNALL_EXAMPLE_LOGS=$work CI=true go test -count=1 -run '^TestExampleTrain$' ./cmd/runall
"$work/runall" report "$work" -o "$work/report.html"
# --window-size is the page's width and how much of it is shot; the report is ~1100 px wide.
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --force-device-scale-factor=1 \
	--window-size=1140,1500 --screenshot="$out" "file://$work/report.html" 2>/dev/null
echo "report-png: wrote $out"
