#!/usr/bin/env bash
# Build the Kubernetes binaries the cluster tests of examples/k8s/test run (etcd,
# kube-apiserver, kube-controller-manager, kube-scheduler, kubelet) into a cache outside the
# clone, and print the directory that holds them. A second run finds them and returns at once.
#
#   scripts/k8s-bin.sh                 # prints e.g. /root/.cache/runall-k8s/v1.37.2/bin
#   scripts/k8s-bin.sh --built         # prints it when every binary is there, else exits 1
#   K8S_BIN_CACHE=/some/dir scripts/k8s-bin.sh
#
# The version has one source: k8s.io/api in examples/k8s/test/go.mod (v0.X.Y is Kubernetes
# 1.X.Y), so the cluster is the one the tests' client libraries speak to. etcd is the version
# that Kubernetes release requires.
#
# k8s.io/kubernetes cannot be `go install`ed (its go.mod replaces the k8s.io/* staging modules
# with ./staging, which its module zip lacks), so this makes a module that requires it,
# replaces each staging module with its published v0.X.Y twin and lists the commands as `tool`
# directives. From an empty Go build cache it takes 15-35 minutes of two cores and about
# 290 MB of module downloads; with the binaries there, well under a second.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
api=$(awk '$1 == "k8s.io/api" {print $2; exit}' "$root/examples/k8s/test/go.mod")
case $api in
v0.*.*) ;;
*) echo "k8s-bin: no k8s.io/api v0.X.Y in examples/k8s/test/go.mod (found \"$api\")" >&2; exit 2 ;;
esac
K8S=1.${api#v0.}
OUT=${K8S_BIN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/runall-k8s}/v$K8S
names="etcd kube-apiserver kube-controller-manager kube-scheduler kubelet"

have_all() {
  local n
  for n in $names; do [ -x "$OUT/bin/$n" ] || return 1; done
}
if have_all; then echo "$OUT/bin"; exit 0; fi
[ "${1:-}" = --built ] && exit 1

mkdir -p "$OUT/bin"
# One build at a time per cache: a second caller waits for the first, then finds the binaries.
exec 9>"$OUT/.lock"
flock 9
if have_all; then echo "$OUT/bin"; exit 0; fi

cd "$OUT"
export CGO_ENABLED=0
declare -A pkg=(
  [kube-apiserver]=k8s.io/kubernetes/cmd/kube-apiserver
  [kube-controller-manager]=k8s.io/kubernetes/cmd/kube-controller-manager
  [kube-scheduler]=k8s.io/kubernetes/cmd/kube-scheduler
  [kubelet]=k8s.io/kubernetes/cmd/kubelet
  [etcd]=go.etcd.io/etcd/server/v3
)
if ! grep -Eq "^(require)?[[:space:]]+k8s.io/kubernetes v$K8S( |\$)" go.mod 2>/dev/null; then
  echo "k8s-bin: writing $OUT/go.mod for Kubernetes v$K8S" >&2
  modfile=$(go mod download -json "k8s.io/kubernetes@v$K8S" | sed -n 's/.*"GoMod": "\(.*\)",/\1/p')
  {
    printf 'module local/k8sbuild\n\ngo 1.24.0\n\nrequire k8s.io/kubernetes v%s\n\ntool (\n' "$K8S"
    for n in $names; do printf '\t%s\n' "${pkg[$n]}"; done
    printf ')\n\nreplace (\n'
    awk '/^replace \(/,/^\)/' "$modfile" | awk -v v="0.${K8S#1.}" '$2 == "=>" {print "\t" $1 " => " $1 " v" v}'
    printf ')\n'
  } >go.mod
  go mod tidy
fi
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=v$K8S -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$(echo "$K8S" | cut -d. -f2)"
for n in $names; do
  [ -x "bin/$n" ] && continue
  s=$(date +%s)
  # Built beside, then renamed: a build cut short never leaves a binary that looks whole.
  go build -trimpath -ldflags "$ldflags" -o "bin/.$n.tmp" "${pkg[$n]}"
  mv "bin/.$n.tmp" "bin/$n"
  echo "k8s-bin: built $n in $(($(date +%s) - s))s" >&2
done
echo "$OUT/bin"
