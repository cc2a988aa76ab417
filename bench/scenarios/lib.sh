# What every scenario shares; sourced by bench/scenarios/* where CUSE is (in
# the VM, or directly as root). A scenario prints its CSV on standard output,
# preceded by "# key=value" lines about where it ran, and its progress on
# standard error: the VM gives back nothing else.
# Usage of a scenario: SCENARIO BUILD_DIR [--quick]
# shellcheck shell=bash disable=SC2034 # the variables are the scenarios'
set -euo pipefail

build=$(cd "${1:?usage: ${0##*/} BUILD_DIR [--quick]}" && pwd)
quick=
[ "${2:-}" != --quick ] || quick=1
cusemud=$build/daemon/cusemud
cusemuctl=$build/daemon/cusemuctl
load64=$build/bench/cusemu-load
load32=$build/bench/cusemu-load-i386
work=$(mktemp -d /tmp/cusemu-bench.XXXXXX)
daemon_pid=

say() { echo "${0##*/}: $*" >&2; }
die() { say "$*"; exit 1; }

if [ ! -c /dev/cuse ] || [ "$(id -u)" != 0 ]; then
	die "needs /dev/cuse and root: run it through client-tests/with-cuse"
fi

# Nothing a scenario started may outlive it, nor keep the VM up.
finish() {
	local left
	left=$(jobs -p)
	# shellcheck disable=SC2086 # a list of pids
	[ -z "$left" ] || kill $left 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap finish EXIT

echo "# kernel=$(uname -r)"
echo "# vcpus=$(nproc)"
echo "# quick=${quick:-0}"

# pick FULL QUICK: the full run's value, or the --quick one
pick() { if [ -n "$quick" ]; then echo "$2"; else echo "$1"; fi; }

# nodes_exist NODE...: true once each one is a character device
nodes_exist() {
	local n
	for n in "$@"; do [ -c "$n" ] || return 1; done
}

# daemon "NODE..." ARG...: cusemud with the ARGs and a control socket in
# $work, back once each NODE exists (20 s at most)
daemon() {
	local nodes=$1 tries=1000
	shift
	"$cusemud" --foreground --control "$work/control" "$@" >"$work/cusemud.log" 2>&1 &
	daemon_pid=$!
	# shellcheck disable=SC2086 # a list of nodes
	until nodes_exist $nodes; do
		tries=$((tries - 1))
		if [ $tries = 0 ] || ! kill -0 "$daemon_pid" 2>/dev/null; then
			cat "$work/cusemud.log" >&2
			die "cusemud $* did not create $nodes"
		fi
		sleep 0.02
	done
}

# daemon_stop: SIGTERM, and SIGKILL after 20 s
daemon_stop() {
	local tries=1000
	kill -TERM "$daemon_pid"
	while kill -0 "$daemon_pid" 2>/dev/null && [ $((tries -= 1)) -gt 0 ]; do
		sleep 0.02
	done
	kill -KILL "$daemon_pid" 2>/dev/null && say "cusemud hung on SIGTERM"
	wait "$daemon_pid" 2>/dev/null || true
	daemon_pid=
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
