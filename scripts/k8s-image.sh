#!/usr/bin/env bash
# Build the two OCI image archives the cluster tests of examples/k8s/test import into their
# containerd with `ctr images import`, without Docker or a registry:
#
#   OUTDIR/runall.tar  docker.io/local/runall-test:1  runall (RUNALL, its shared libraries),
#                      busybox for the test's task file, /opt/catdog owned by the example's
#                      non-root user 10001 (examples/train/Dockerfile), which it runs as
#   OUTDIR/pause.tar   docker.io/local/pause:1        the Pods' sandbox: busybox sleep
#
#   scripts/k8s-image.sh OUTDIR [RUNALL]     # RUNALL: the binary, by default ./runall
#
# What the trials run is only what the test's own task file asks (busybox's sh, sleep, mkdir,
# echo...): the training script is not under test. Needs busybox-static (Debian) and root (the
# files are owned by 10001 inside the layer). Each image is one layer: a tar, its digest, a
# config and a manifest, as containerd's importer reads an OCI layout.
set -euo pipefail
out=${1:?usage: k8s-image.sh OUTDIR [RUNALL]}
runall=${2:-./runall}
busybox=${BUSYBOX:-/bin/busybox}
[ -x "$runall" ] || { echo "k8s-image: $runall: no runall binary (make build, or pass its path)" >&2; exit 2; }
"$busybox" --list >/dev/null 2>&1 || { echo "k8s-image: $busybox: no busybox (apt-get install busybox-static)" >&2; exit 2; }
ldd "$busybox" >/dev/null 2>&1 && { echo "k8s-image: $busybox is not static (apt-get install busybox-static)" >&2; exit 2; }
mkdir -p "$out"
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT

# rootfs DIR: busybox and its applets under /bin, /tmp, /etc/passwd with the example's user.
rootfs() {
  local r=$1
  mkdir -p "$r/bin" "$r/etc" "$r/tmp" "$r/proc" "$r/sys" "$r/dev"
  chmod 1777 "$r/tmp"
  cp "$busybox" "$r/bin/busybox"
  for a in $("$busybox" --list); do [ "$a" = busybox ] || ln -s busybox "$r/bin/$a"; done
  printf 'root:x:0:0:root:/root:/bin/sh\ntrainer:x:10001:10001:trainer:/opt/catdog:/bin/sh\n' >"$r/etc/passwd"
  printf 'root:x:0:\ntrainer:x:10001:\n' >"$r/etc/group"
}

# image DIR REF OUT.tar CONFIG_JSON: a one-layer OCI archive (the recipe of shared/k8s/mk-oci-image.sh).
image() {
  local r=$1 ref=$2 tarball=$3 config=$4 b="$w/oci-$RANDOM"
  mkdir -p "$b/blobs/sha256"
  put() { local d s; d=$(sha256sum "$1" | cut -d' ' -f1); s=$(stat -c %s "$1"); mv "$1" "$b/blobs/sha256/$d"; echo "$d $s"; }
  tar -C "$r" --numeric-owner --sort=name --mtime=@0 -cf "$b/layer" .
  read -r ld ls < <(put "$b/layer")
  printf '{"architecture":"amd64","os":"linux","config":%s,"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' "$config" "$ld" >"$b/config"
  read -r cd cs < <(put "$b/config")
  printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:%s","size":%s}]}' "$cd" "$cs" "$ld" "$ls" >"$b/manifest"
  read -r md ms < <(put "$b/manifest")
  printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"platform":{"architecture":"amd64","os":"linux"},"annotations":{"io.containerd.image.name":"%s","org.opencontainers.image.ref.name":"%s"}}]}' "$md" "$ms" "$ref" "${ref##*:}" >"$b/index.json"
  echo '{"imageLayoutVersion":"1.0.0"}' >"$b/oci-layout"
  tar -C "$b" -cf "$tarball.tmp" oci-layout index.json blobs
  mv "$tarball.tmp" "$tarball"
}

# The sandbox: PID 1 of every Pod, holding its namespaces.
rootfs "$w/pause"
image "$w/pause" docker.io/local/pause:1 "$out/pause.tar" '{"Cmd":["/bin/sleep","999999999"]}'

# runall, the shared libraries ldd names (glibc for a cgo build), and the example's layout.
r="$w/runall"
rootfs "$r"
mkdir -p "$r/usr/local/bin" "$r/opt/catdog" "$r/data" "$r/outputs"
cp "$runall" "$r/usr/local/bin/runall"
for lib in $(ldd "$runall" 2>/dev/null | grep -o '/[^ ]*' || true); do
  mkdir -p "$r$(dirname "$lib")" && cp -L "$lib" "$r$lib"
done
chown -R 10001:10001 "$r/opt/catdog" "$r/data" "$r/outputs"
image "$r" docker.io/local/runall-test:1 "$out/runall.tar" \
  '{"User":"10001:10001","WorkingDir":"/opt/catdog","Entrypoint":["runall"],"Cmd":["tasks.yml"],"Env":["PATH=/usr/local/bin:/bin","DATA_DIR=/data","OUTPUT_DIR=/outputs"]}'
echo "$out/runall.tar $out/pause.tar"
