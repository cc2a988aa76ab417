# What every scenario shares; sourced by bench/scenarios/*. A scenario prints
# its CSV on standard output, preceded by "# key=value" lines about where it
# ran, and its progress on standard error: the VM gives back nothing else.
# Usage of a scenario: SCENARIO BUILD_DIR [--quick] [--fuse]
# Two modes:
# - CUSE (the default), where CUSE is: in the VM, or directly as root.
#   cusemud's devices are nodes /dev/NAME; libfuse's example server to
#   compare with is example/cuse.c, its node /dev/NAME.
# - FUSE (--fuse), on any kernel with a usable /dev/fuse, as any user:
#   cusemud --fuse serves its devices as files $work/mnt/NAME; the example
#   server is example/ioctl.c mounted on $work/NAME, its file $work/NAME/fioc.
#   The kernel passes only restricted ioctls there (what the _IOC bits say).
# A scenario names a device's path "$dev/NAME", and starts the example
# server with example NAME (its path in example_file): the same script in
# both modes.
# shellcheck shell=bash disable=SC2034 # the variables are the scenarios'
set -euo pipefail

build=$(cd "${1:?usage: ${0##*/} BUILD_DIR [--quick] [--fuse]}" && pwd)
shift
quick='' fuse=''
for arg; do
	case $arg in
	--quick) quick=1 ;;
	--fuse) fuse=1 ;;
	*) echo "usage: ${0##*/} BUILD_DIR [--quick] [--fuse]" >&2; exit 2 ;;
	esac
done
cusemud=$build/daemon/cusemud
cusemuctl=$build/tools/cusemuctl/cusemuctl
load64=$build/bench/cusemu-load
load32=$build/bench/cusemu-load-i386
work=$(mktemp -d /tmp/cusemu-bench.XXXXXX)
daemon_pid=
# FUSE mode: every mount point of this run, cusemud's first.
mounts=()
if [ -n "$fuse" ]; then
	dev=$work/mnt
	mkdir "$dev"
	mounts+=("$dev")
else
	dev=/dev
fi

say() { echo "${0##*/}: $*" >&2; }
die() { say "$*"; exit 1; }

if [ -n "$fuse" ]; then
	if [ "$(id -u)" != 0 ] && { [ ! -w /dev/fuse ] || ! command -v fusermount3 >/dev/null; }; then
		rmdir "$dev" "$work"
		die "FUSE mode needs /dev/fuse, and fusermount3 when not root"
	fi
elif [ ! -c /dev/cuse ] || [ "$(id -u)" != 0 ]; then
	rmdir "$work"
	die "needs /dev/cuse and root: run it through client-tests/with-cuse, or use --fuse"
fi

# unmounted DIR: waits up to 10 s for DIR to be no mount point any more
# (the daemon or example server unmounts it as it ends); false if it still is
unmounted() {
	local tries=500
	while mountpoint -q "$1"; do
		[ $((tries -= 1)) -gt 0 ] || return 1
		sleep 0.02
	done
}

# Nothing a scenario started may outlive it, nor keep the VM up, nor stay
# mounted.
finish() {
	local left m
	left=$(jobs -p)
	# shellcheck disable=SC2086 # a list of pids
	[ -z "$left" ] || kill $left 2>/dev/null || true
	wait 2>/dev/null || true
	for m in "${mounts[@]}"; do
		unmounted "$m" && continue
		say "$m still mounted: unmounting it"
		if [ "$(id -u)" = 0 ]; then umount -l "$m"; else fusermount3 -u -z "$m"; fi
	done
	# Never into a file system still mounted below.
	rm -rf --one-file-system "$work"
}
trap finish EXIT

echo "# kernel=$(uname -r)"
echo "# vcpus=$(nproc)"
echo "# quick=${quick:-0}"
echo "# transport=$([ -n "$fuse" ] && echo fuse || echo cuse)"

# pick FULL QUICK: the full run's value, or the --quick one
pick() { if [ -n "$quick" ]; then echo "$2"; else echo "$1"; fi; }

# nodes_exist NODE...: true once each one is there: a character device
# (CUSE), a regular file (FUSE: its file system is mounted)
nodes_exist() {
	local n
	for n in "$@"; do
		if [ -n "$fuse" ]; then [ -f "$n" ] || return 1
		else [ -c "$n" ] || return 1; fi
	done
}

# daemon "NODE..." ARG...: cusemud with the ARGs and a control socket in
# $work (in FUSE mode --fuse $dev), back once each NODE exists and it is
# ready (20 s at most)
daemon() {
	local nodes=$1 tries=1000
	shift
	"$cusemud" --foreground --control "$work/control" ${fuse:+--fuse "$dev"} "$@" \
		>"$work/cusemud.log" 2>&1 &
	daemon_pid=$!
	# shellcheck disable=SC2086 # a list of nodes
	until nodes_exist $nodes && grep -q '^cusemud: ready' "$work/cusemud.log"; do
		tries=$((tries - 1))
		if [ $tries = 0 ] || ! kill -0 "$daemon_pid" 2>/dev/null; then
			cat "$work/cusemud.log" >&2
			die "cusemud $* did not create $nodes"
		fi
		sleep 0.02
	done
}

# daemon_stop: SIGTERM, and SIGKILL after 20 s; in FUSE mode back once $dev
# is unmounted
daemon_stop() {
	local tries=1000
	kill -TERM "$daemon_pid"
	while kill -0 "$daemon_pid" 2>/dev/null && [ $((tries -= 1)) -gt 0 ]; do
		sleep 0.02
	done
	kill -KILL "$daemon_pid" 2>/dev/null && say "cusemud hung on SIGTERM"
	wait "$daemon_pid" 2>/dev/null || true
	daemon_pid=
	[ -z "$fuse" ] || unmounted "$dev" || die "$dev still mounted after cusemud ended"
}

# example NAME: libfuse's example server, unmodified, in the background with
# its default multi-threaded loop, its log in $work/NAME.log; sets
# example_file to the path its clients open: in CUSE mode example/cuse.c,
# node /dev/NAME; in FUSE mode example/ioctl.c mounted on $work/NAME, file
# $work/NAME/fioc. Then examples_wait.
example() {
	if [ -n "$fuse" ]; then
		mkdir "$work/$1"
		mounts+=("$work/$1")
		"$build/client-tests/fuse-example-ioctl" -f "$work/$1" >"$work/$1.log" 2>&1 &
		example_file=$work/$1/fioc
	else
		"$build/client-tests/fuse-example-cuse" -f --name="$1" >"$work/$1.log" 2>&1 &
		example_file=/dev/$1
	fi
}

# examples_wait FILE...: back once the example servers' files exist (20 s)
examples_wait() {
	local tries=1000
	until nodes_exist "$@"; do
		if [ $((tries -= 1)) = 0 ]; then
			cat "$work"/*.log >&2
			die "libfuse's example server did not create $*"
		fi
		sleep 0.02
	done
}

# load LOADER ARG...: a cusemu-load run; prints its total row
load() {
	local out=$work/load.csv
	if ! "$@" >"$out" 2>"$work/load.err"; then
		cat "$work/load.err" >&2
		die "failed: ${*##*/}"
	fi
	[ ! -s "$work/load.err" ] || sed 's/^/  /' "$work/load.err" >&2
	awk -F, '$1 == "total"' "$out"
}

# field ROW NAME: one column of a cusemu-load row by its header name
field() {
	awk -F, -v row="$1" -v name="$2" 'BEGIN {
		split("node,clients,ops,errors,seconds,ops_per_s,p50_us,p90_us,p99_us,max_us", h, ",")
		split(row, v, ",")
		for (i in h) if (h[i] == name) print v[i]
	}'
}

# requests DEVICE COMMAND ABI: "calls retries" of one statistics row
requests() {
	"$cusemuctl" --socket "$work/control" stats --json | python3 -c '
import json, sys
want = sys.argv[1:]
rows = [(d["name"], c["name"], c["abi"], c["calls"], c["retries"])
        for d in json.load(sys.stdin)["devices"] for c in d["stats"]["commands"]]
found = [r[3:] for r in rows if list(r[:3]) == want]
print(*(found[0] if found else (0, 0)))' "$@"
}

stats_reset() { "$cusemuctl" --socket "$work/control" reset >/dev/null; }
