#!/usr/bin/env bash
# bench/s3.sh: runall sync against aws s3 sync on a local MinIO, in one run.
#
#   bench/s3.sh                 # 1000 x 10 KB and 4 x 256 MiB, each case once
#   RUNS=3 bench/s3.sh          # best of 3 for each case
#   SMALL=1000 LARGE=4 LARGE_MB=256 BENCH_DIR=/mnt/fast bench/s3.sh
#
# Needs: go, minio ($MINIO_BIN, PATH or $(go env GOPATH)/bin/minio), aws (the CLI), python3,
# curl, GNU time (/usr/bin/time).
# Prints a markdown table on stdout; progress on stderr. Uses about
# (3 + 4 * RUNS) * LARGE * LARGE_MB of disk under BENCH_DIR (default: a temp dir).
set -euo pipefail

SMALL=${SMALL:-1000}
SMALL_KB=${SMALL_KB:-10}
LARGE=${LARGE:-4}
LARGE_MB=${LARGE_MB:-256}
RUNS=${RUNS:-1}

cd "$(dirname "$0")/.."
log() { echo "bench: $*" >&2; }

minio_bin=${MINIO_BIN:-$(command -v minio || true)}
if [[ -z $minio_bin ]]; then
	minio_bin="$(go env GOPATH)/bin/minio"
fi
[[ -x $minio_bin ]] || { log "no minio binary (set MINIO_BIN)"; exit 1; }
command -v aws >/dev/null || { log "no aws CLI on PATH"; exit 1; }

work=$(mktemp -d "${BENCH_DIR:-${TMPDIR:-/tmp}}/runall-s3-bench.XXXXXX")
minio_pid=
cleanup() {
	if [[ -n $minio_pid ]]; then
		kill "$minio_pid" 2>/dev/null || true
		wait "$minio_pid" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT

log "building runall"
go build -o "$work/runall" ./cmd/runall
runall=$work/runall

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
console=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
endpoint=http://127.0.0.1:$port
export MINIO_ROOT_USER=bench-user MINIO_ROOT_PASSWORD=bench-secret-key MINIO_BROWSER=off MINIO_UPDATE=off
log "starting minio on $endpoint"
"$minio_bin" server "$work/minio" --address "127.0.0.1:$port" --console-address "127.0.0.1:$console" --quiet \
	>"$work/minio.log" 2>&1 &
minio_pid=$!
for _ in $(seq 1 300); do
	curl -fs "$endpoint/minio/health/ready" >/dev/null 2>&1 && break
	sleep 0.1
done
curl -fs "$endpoint/minio/health/ready" >/dev/null || { cat "$work/minio.log" >&2; exit 1; }

# Both tools read the same environment; runall keeps its record under XDG_CACHE_HOME.
export AWS_ACCESS_KEY_ID=$MINIO_ROOT_USER AWS_SECRET_ACCESS_KEY=$MINIO_ROOT_PASSWORD
export AWS_REGION=us-east-1 AWS_DEFAULT_REGION=us-east-1 AWS_EC2_METADATA_DISABLED=true
export AWS_ENDPOINT_URL=$endpoint XDG_CACHE_HOME=$work/cache
unset AWS_PROFILE AWS_SESSION_TOKEN
aws --endpoint-url "$endpoint" s3 mb s3://bench >/dev/null
awss3=(aws --endpoint-url "$endpoint" s3)
q=--only-show-errors

log "creating $SMALL files of $SMALL_KB KB and $LARGE of $LARGE_MB MiB"
mkdir -p "$work/small" "$work/large"
python3 - "$work/small" "$SMALL" "$SMALL_KB" <<'EOF'
import os, sys
d, n, kb = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for i in range(n):
    sub = os.path.join(d, "shard-%02d" % (i % 20))
    os.makedirs(sub, exist_ok=True)
    with open(os.path.join(sub, "f%05d.bin" % i), "wb") as f:
        f.write(os.urandom(kb * 1000))
EOF
for i in $(seq 1 "$LARGE"); do
	head -c $((LARGE_MB << 20)) /dev/urandom >"$work/large/part-$i.bin"
done

# measure CMD...: run CMD; print its wall time and its CPU time (user + sys, children
# included), in seconds.
measure() {
	/usr/bin/time -f "%e %U %S" -o "$work/time" "$@" >/dev/null 2>"$work/stderr" || {
		cat "$work/stderr" >&2
		exit 1
	}
	awk '{ printf "%.3f %.3f", $1, $2 + $3 }' "$work/time"
}

# best CASE CMD...: wall and CPU time of the fastest of RUNS runs; "{}" in CMD becomes the
# run number.
best() {
	local name=$1 b= t
	shift
	for r in $(seq 1 "$RUNS"); do
		t=$(measure "${@//\{\}/$r}")
		log "$name (run $r): wall, cpu = $t s"
		if [[ -z $b ]] || awk -v a="${t% *}" -v b="${b% *}" 'BEGIN { exit !(a < b) }'; then b=$t; fi
	done
	echo "$b"
}

check_same() { diff -rq "$1" "$2" >/dev/null || { log "MISMATCH: $1 vs $2"; exit 1; }; }

declare -A T
for set in small large; do
	T[runall_up_$set]=$(best "runall upload $set" "$runall" sync "$work/$set" "s3://bench/runall-{}/$set/")
	T[aws_up_$set]=$(best "aws upload $set" "${awss3[@]}" sync "$work/$set" "s3://bench/aws-{}/$set/" $q)
	T[runall_down_$set]=$(best "runall download $set" "$runall" sync "s3://bench/runall-1/$set/" "$work/down-runall-{}/$set")
	T[aws_down_$set]=$(best "aws download $set" "${awss3[@]}" sync "s3://bench/aws-1/$set/" "$work/down-aws-{}/$set" $q)
	check_same "$work/$set" "$work/down-runall-1/$set"
	check_same "$work/$set" "$work/down-aws-1/$set"
done

# No-op re-syncs of the small files. The first runall re-sync after an upload may hash files
# written less than 2 s before they were uploaded (see docs/s3.md, racily clean files);
# measure the steady state, as a periodic sync sees it.
"$runall" sync "$work/small" s3://bench/runall-1/small/ >/dev/null 2>&1
T[runall_noop_up]=$(best "runall no-op upload" "$runall" sync "$work/small" s3://bench/runall-1/small/)
T[aws_noop_up]=$(best "aws no-op upload" "${awss3[@]}" sync "$work/small" s3://bench/aws-1/small/ $q)
T[runall_noop_down]=$(best "runall no-op download" "$runall" sync s3://bench/runall-1/small/ "$work/down-runall-1/small")
T[aws_noop_down]=$(best "aws no-op download" "${awss3[@]}" sync s3://bench/aws-1/small/ "$work/down-aws-1/small" $q)

row() {
	local label=$1 r=${T[runall_$2]} a=${T[aws_$2]}
	awk -v l="$label" -v r="$r" -v a="$a" 'BEGIN {
		split(r, rv, " "); split(a, av, " ")
		printf "| %s | %.2f s | %.2f s | %.1fx | %.2f s | %.2f s | %.1fx |\n", l, rv[1], av[1], av[1] / rv[1], rv[2], av[2], av[2] / rv[2]
	}'
}
small_label="$SMALL x $SMALL_KB KB"
large_label="$LARGE x $LARGE_MB MiB"
echo
echo "| case | runall wall | aws wall | speed-up | runall CPU | aws CPU | CPU ratio |"
echo "|---|---:|---:|---:|---:|---:|---:|"
row "upload $small_label" up_small
row "download $small_label" down_small
row "upload $large_label" up_large
row "download $large_label" down_large
row "no-op re-sync up, $SMALL files" noop_up
row "no-op re-sync down, $SMALL files" noop_down
echo
echo "Client CPU = user + sys of the runall or aws process. MinIO runs on the same machine."
echo "$(aws --version 2>&1 | cut -d' ' -f1), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end, best of $RUNS run(s)."
