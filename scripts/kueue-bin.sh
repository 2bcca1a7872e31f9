#!/usr/bin/env bash
# Build Kueue's controller manager, the version the cluster tests of examples/k8s/test run, into
# the cache scripts/k8s-bin.sh uses, beside it its CRDs, and print the directory that holds the
# binary. A second run finds it and returns at once.
#
#   scripts/kueue-bin.sh            # prints e.g. /root/.cache/runall-k8s/kueue-v0.17.0/bin
#   scripts/kueue-bin.sh --built    # prints it when the binary and CRDs are there, else exits 1
#
# `go install sigs.k8s.io/kueue/cmd/kueue@VERSION` builds it in a module of its own (Kueue's
# go.mod, which has no replace directives), so its k8s.io/* libraries (v0.35.3 for v0.17.0) are
# its own choice, not the tests' module's; it speaks to the newer API server through the stable
# APIs (batch/v1, core/v1, coordination/v1) that every Kubernetes release keeps serving. The
# CRDs come from the same module's config/components/crd/bases. From an empty Go build cache it
# takes about 10 minutes of two cores.
set -euo pipefail
VERSION=${KUEUE_VERSION:-v0.17.0}
OUT=${K8S_BIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/runall-k8s}/kueue-$VERSION

have_all() { [ -x "$OUT/bin/kueue" ] && [ -s "$OUT/crd/kueue.x-k8s.io_workloads.yaml" ]; }
if have_all; then echo "$OUT/bin"; exit 0; fi
[ "${1:-}" = --built ] && exit 1

mkdir -p "$OUT/bin"
exec 9>"$OUT/.lock"
flock 9
if have_all; then echo "$OUT/bin"; exit 0; fi

s=$(date +%s)
tmp=$(mktemp -d "$OUT/.gobin.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# Built beside, then renamed: a build cut short never leaves a binary that looks whole.
CGO_ENABLED=0 GOBIN=$tmp GOFLAGS=-trimpath go install -ldflags "-s -w" "sigs.k8s.io/kueue/cmd/kueue@$VERSION"
dir=$(go mod download -json "sigs.k8s.io/kueue@$VERSION" | sed -n 's/.*"Dir": "\(.*\)",/\1/p')
rm -rf "$OUT/crd.tmp" && mkdir -p "$OUT/crd.tmp"
cp "$dir"/config/components/crd/bases/*.yaml "$OUT/crd.tmp/"
chmod -R u+w "$OUT/crd.tmp"
rm -rf "$OUT/crd" && mv "$OUT/crd.tmp" "$OUT/crd"
mv "$tmp/kueue" "$OUT/bin/kueue"
echo "kueue-bin: built kueue $VERSION in $(($(date +%s) - s))s" >&2
echo "$OUT/bin"
