#!/usr/bin/env bash
# bench/s3.sh: runall sync against aws s3 sync and rclone sync on a local MinIO, in one run.
#
#   bench/s3.sh                 # 1000 x 10 KB, 4 x 256 MiB and 1 x 2 GiB, each case once
#   RUNS=3 bench/s3.sh          # best of 3 for each case
#   SMALL=1000 LARGE=4 LARGE_MB=256 HUGE_MB=2048 BENCH_DIR=/mnt/fast bench/s3.sh
#   HUGE_MB=0 bench/s3.sh       # without the single large file (SMALL=0, LARGE=0: without those)
#   BASE=/tmp/runall-old bench/s3.sh  # also another runall build, side by side (a second table)
#
# Needs: go, minio ($MINIO_BIN, PATH or $(go env GOPATH)/bin/minio), aws (the CLI), python3,
# curl, GNU time (/usr/bin/time); rclone when on PATH (its columns are left out otherwise).
# Prints a markdown table on stdout; progress on stderr. Uses about
# 8 * (LARGE * LARGE_MB + HUGE_MB) MiB of disk under BENCH_DIR (default: a temp dir): every
# run but the first is deleted as soon as it is measured.
set -euo pipefail
shopt -s inherit_errexit # a failed measurement in $(...) stops the script

SMALL=${SMALL:-1000}
SMALL_KB=${SMALL_KB:-10}
LARGE=${LARGE:-4}
LARGE_MB=${LARGE_MB:-256}
HUGE_MB=${HUGE_MB:-2048}
RUNS=${RUNS:-1}

cd "$(dirname "$0")/.."
log() { echo "bench: $*" >&2; }
. bench/need.sh
need awk python3 curl go getconf head mktemp

minio_bin=${MINIO_BIN:-$(command -v minio || true)}
if [[ -z $minio_bin ]]; then
	minio_bin="$(go env GOPATH)/bin/minio"
fi
[[ -x $minio_bin ]] || { log "no minio binary (set MINIO_BIN)"; exit 1; }
command -v aws >/dev/null || { log "no aws CLI on PATH"; exit 1; }
have_rclone=
if command -v rclone >/dev/null; then have_rclone=1; else log "no rclone on PATH: its columns are left out"; fi

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
unset AWS_PROFILE AWS_SESSION_TOKEN AWS_CA_BUNDLE # plain HTTP on loopback; rclone refuses a CA bundle it cannot use
aws --endpoint-url "$endpoint" s3 mb s3://bench >/dev/null
awss3=(aws --endpoint-url "$endpoint" s3)
q=--only-show-errors
# rclone reads its remote from the environment: "bench:" is this MinIO, with rclone's defaults
# otherwise (4 transfers, 4 streams per large download, 5 MiB parts, 4 at a time per upload).
export RCLONE_CONFIG_BENCH_TYPE=s3 RCLONE_CONFIG_BENCH_PROVIDER=Minio RCLONE_CONFIG_BENCH_ENDPOINT=$endpoint
export RCLONE_CONFIG_BENCH_ACCESS_KEY_ID=$MINIO_ROOT_USER RCLONE_CONFIG_BENCH_SECRET_ACCESS_KEY=$MINIO_ROOT_PASSWORD
export RCLONE_CONFIG_BENCH_REGION=us-east-1 RCLONE_CONFIG=/dev/null

log "creating $SMALL files of $SMALL_KB KB, $LARGE of $LARGE_MB MiB and one of $HUGE_MB MiB"
mkdir -p "$work/small" "$work/large" "$work/huge"
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
sets=""
((SMALL > 0)) && sets+=" small"
((LARGE > 0)) && sets+=" large"
if ((HUGE_MB > 0)); then
	head -c $((HUGE_MB << 20)) /dev/urandom >"$work/huge/model.bin"
	sets+=" huge"
fi
tools="runall aws"
[[ -n $have_rclone ]] && tools+=" rclone"
BASE=${BASE:-}
if [[ -n $BASE ]]; then
	[[ -x $BASE ]] || { log "BASE=$BASE is not an executable"; exit 1; }
	tools+=" base"
fi

# settle waits, up to 30 s, until MinIO uses under 5% of a CPU over half a second.
settle() {
	local hz before after
	hz=$(getconf CLK_TCK)
	for _ in $(seq 60); do
		before=$(awk '{ print $14 + $15 }' "/proc/$minio_pid/stat")
		sleep 0.5
		after=$(awk '{ print $14 + $15 }' "/proc/$minio_pid/stat")
		((after - before <= hz / 40)) && return
	done
	log "MinIO still busy after 30 s; measuring anyway"
}

# measure CMD...: run CMD; print its wall time, its CPU time (user + sys) and its peak RSS
# in MB.
measure() {
	# Outside the timing, let the last run's work end first: otherwise each run pays for the
	# one before it. sync writes back its dirty pages (the kernel throttles writers once they
	# pile up); settle waits for MinIO to finish in the background what it was asked (it
	# purges deleted objects after answering).
	sync
	settle
	/usr/bin/time -f "%e %U %S %M" -o "$work/time" "$@" >/dev/null 2>"$work/stderr" || {
		cat "$work/stderr" >&2
		exit 1
	}
	awk '{ printf "%.3f %.3f %.0f", $1, $2 + $3, $4 / 1024 }' "$work/time"
}

# cmd TOOL OP SET RUN: the command line of one transfer.
cmd() {
	local tool=$1 op=$2 set=$3 r=$4 lp rp
	if [[ $op == up ]]; then
		lp=$work/$set rp=$tool-$r/$set/
	else
		lp=$work/down-$tool-$r/$set rp=$tool-1/$set/
	fi
	case $tool in
	runall | base)
		local bin=$runall
		[[ $tool == base ]] && bin=$BASE
		[[ $op == up ]] && echo "$bin" sync "$lp" "s3://bench/$rp" || echo "$bin" sync "s3://bench/$rp" "$lp"
		;;
	aws)
		[[ $op == up ]] && echo "${awss3[@]}" sync "$lp" "s3://bench/$rp" $q || echo "${awss3[@]}" sync "s3://bench/$rp" "$lp" $q
		;;
	rclone)
		[[ $op == up ]] && echo rclone sync "$lp" "bench:bench/$rp" || echo rclone sync "bench:bench/$rp" "$lp"
		;;
	esac
}

# measure_all OP SET: every tool's wall, CPU and peak RSS for OP on SET, run RUNS times with
# the tools taking turns (runall, aws, rclone, runall, ...), so that a change in the
# machine's load falls on all of them alike. Keeps, for each tool, the fastest run's wall
# and CPU and the largest peak RSS of its runs, in T[TOOL_OP_SET]. Every run but the first
# is deleted once measured; the first stays, to download from and to compare with.
measure_all() {
	local op=$1 set=$2 t tool key b rss
	for r in $(seq 1 "$RUNS"); do
		for tool in $tools; do
			# shellcheck disable=SC2046 # cmd prints a command line of plain words
			t=$(measure $(cmd "$tool" "$op" "$set" "$r"))
			log "$tool $op $set (run $r): wall, cpu, peak RSS = $t"
			key=${tool}_${op}_$set
			b=${T[$key]:-}
			if [[ -z $b ]]; then
				T[$key]=$t
			else
				rss=$(awk -v a="${t##* }" -v b="${b##* }" 'BEGIN { print (a > b ? a : b) }')
				if awk -v a="${t%% *}" -v b="${b%% *}" 'BEGIN { exit !(a < b) }'; then b=$t; fi
				T[$key]="${b% *} $rss"
			fi
			if ((r > 1)); then
				if [[ $op == up ]]; then
					"${awss3[@]}" rm --recursive "s3://bench/$tool-$r/" $q
				else
					rm -rf "$work/down-$tool-$r"
				fi
			fi
		done
	done
}

check_same() { diff -rq "$1" "$2" >/dev/null || { log "MISMATCH: $1 vs $2"; exit 1; }; }

declare -A T
for set in $sets; do
	for op in up down; do
		measure_all "$op" "$set"
	done
	for tool in $tools; do
		check_same "$work/$set" "$work/down-$tool-1/$set"
		rm -rf "$work/down-$tool-1/$set"
	done
done

# No-op re-syncs of the small files. The first runall re-sync after an upload may hash files
# written less than 2 s before they were uploaded (see docs/s3.md, racily clean files);
# measure the steady state, as a periodic sync sees it.
if ((SMALL > 0)); then
	"$runall" sync "$work/small" s3://bench/runall-1/small/ >/dev/null 2>&1
	for tool in $tools; do
		mkdir -p "$work/down-$tool-1"
		# shellcheck disable=SC2046
		measure $(cmd "$tool" down small 1) >/dev/null
		# shellcheck disable=SC2046
		T[${tool}_noopup]=$(measure $(cmd "$tool" up small 1))
		# shellcheck disable=SC2046
		T[${tool}_noopdown]=$(measure $(cmd "$tool" down small 1))
		for r in $(seq 2 "$RUNS"); do
			# shellcheck disable=SC2046
			t=$(measure $(cmd "$tool" up small 1))
			awk -v a="${t%% *}" -v b="${T[${tool}_noopup]%% *}" 'BEGIN { exit !(a < b) }' && T[${tool}_noopup]=$t
			# shellcheck disable=SC2046
			t=$(measure $(cmd "$tool" down small 1))
			awk -v a="${t%% *}" -v b="${T[${tool}_noopdown]%% *}" 'BEGIN { exit !(a < b) }' && T[${tool}_noopdown]=$t
		done
		log "$tool no-op re-sync up, down: ${T[${tool}_noopup]}; ${T[${tool}_noopdown]}"
	done
fi

row() {
	local label=$1 key=$2 r=${T[runall_$2]} a=${T[aws_$2]} c=${T[rclone_$2]:-}
	awk -v l="$label" -v r="$r" -v a="$a" -v c="$c" 'BEGIN {
		split(r, rv, " "); split(a, av, " ")
		line = sprintf("| %s | %.2f s | %.2f s | %.1fx |", l, rv[1], av[1], av[1] / rv[1])
		if (c != "") { split(c, cv, " "); line = line sprintf(" %.2f s | %.1fx |", cv[1], cv[1] / rv[1]) }
		line = line sprintf(" %d MB | %d MB |", rv[3], av[3])
		if (c != "") line = line sprintf(" %d MB |", cv[3])
		line = line sprintf(" %.2f s | %.2f s |", rv[2], av[2])
		if (c != "") line = line sprintf(" %.2f s |", cv[2])
		print line
	}'
}
# set_label names a set of files in the tables.
set_label() {
	case $1 in
	small) echo "$SMALL x $SMALL_KB KB" ;;
	large) echo "$LARGE x $LARGE_MB MiB" ;;
	huge) echo "1 x $HUGE_MB MiB" ;;
	esac
}
echo
if [[ -n $have_rclone ]]; then
	echo "| case | runall wall | aws wall | vs aws | rclone wall | vs rclone | runall peak RSS | aws peak RSS | rclone peak RSS | runall CPU | aws CPU | rclone CPU |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
else
	echo "| case | runall wall | aws wall | vs aws | runall peak RSS | aws peak RSS | runall CPU | aws CPU |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|"
fi
for set in $sets; do
	label=$(set_label "$set")
	row "upload $label" "up_$set"
	row "download $label" "down_$set"
done
if ((SMALL > 0)); then
	row "no-op re-sync up, $SMALL files" noopup
	row "no-op re-sync down, $SMALL files" noopdown
fi
if [[ -n $BASE ]]; then
	echo
	echo "| case | runall wall | base wall | base / runall | runall CPU | base CPU | runall peak RSS | base peak RSS |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|"
	for set in $sets; do
		label=$(set_label "$set")
		for op in up down; do
			awk -v l="$([[ $op == up ]] && echo upload || echo download) $label" -v r="${T[runall_${op}_$set]}" -v b="${T[base_${op}_$set]}" 'BEGIN {
				split(r, rv, " "); split(b, bv, " ")
				printf "| %s | %.2f s | %.2f s | %.2fx | %.2f s | %.2f s | %d MB | %d MB |\n", l, rv[1], bv[1], bv[1] / rv[1], rv[2], bv[2], rv[3], bv[3]
			}'
		done
	done
	echo
	echo "base: $BASE"
fi
echo
echo "Wall: best of $RUNS, the tools taking turns; peak RSS: the largest of the runs (GNU time's maximum resident set size);"
echo "CPU = user + sys of the client process. MinIO runs on the same machine."
echo "$(aws --version 2>&1 | cut -d' ' -f1)${have_rclone:+, $(rclone version 2>/dev/null | head -1)}, $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end."
