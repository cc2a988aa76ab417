# The rtc device: rtc-client built x86_64 and i386 against one node (the
# node takes one opener at a time, so one after the other), util-linux
# rtcwake in both ABIs against its alarm's reach, its interrupt counts in
# cusemuctl, and shutdown while a reader is blocked.
# Sourced by client-tests/integration.

rtcwake64() { /usr/sbin/rtcwake "$@"; }
rtcwake32() { "$here/run-i386" usr/sbin/rtcwake "$@"; }

rtc_socket=$work/rtc-control

# rtc_event NAME: how often the rtc-emu device raised that interrupt kind
rtc_event() {
	"$cusemuctl" --socket "$rtc_socket" stats --json | python3 -c '
import json, sys
for d in json.load(sys.stdin)["devices"]:
    if d["name"] == "rtc-emu":
        print(d["stats"].get("events", {}).get(sys.argv[1], 0))
        sys.exit(0)
print(0)' "$1"
}

# blocked_in_read PID: the process sleeps in read(2)
blocked_in_read() {
	local state syscall
	state=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || return 1
	read -r syscall _ <"/proc/$1/syscall" 2>/dev/null || return 1
	[ "$state" = S ] && [ "$syscall" = 0 ]
}

start_daemon "$work/rtc.log" --control "$rtc_socket" --device rtc:name=rtc-emu
if wait_for 15 is_char_node /dev/rtc-emu; then
	ok "cusemud creates /dev/rtc-emu"
	for abi in 64 32; do
		"$clients/rtc-client-$abi" /dev/rtc-emu >"$work/rtc-client-$abi.out" 2>&1
		status=$?
		[ $abi = 64 ] && name=x86_64 || name=i386
		report_client "rtc-client-$abi" $name $status
	done
	check "cusemud is still running after both rtc-clients" kill -0 "$daemon_pid"

	# --- rtcwake: an alarm is armed at most a day ahead, as rtc-cmos
	# does on a PC without ACPI's day and month alarm registers. -m no
	# sets the alarm and suspends nothing (nor reads sysfs).
	for abi in 64 32; do
		[ $abi = 64 ] && name=x86_64 || name=i386
		rtcwake$abi -d /dev/rtc-emu -m no -u --date '+2 days' \
			>"$work/rtcwake.out" 2>&1
		status=$?
		diag <"$work/rtcwake.out"
		check "rtcwake ($name) --date '+2 days' fails (exit $status)" \
			test "$status" = 1
		check "... with the driver's EINVAL" \
			grep -q 'set rtc wake alarm failed: Invalid argument' "$work/rtcwake.out"
		rtcwake$abi -d /dev/rtc-emu -m no -u --date '+2 hours' \
			>"$work/rtcwake.out" 2>&1
		status=$?
		diag <"$work/rtcwake.out"
		check "rtcwake ($name) --date '+2 hours' sets the alarm (exit $status)" \
			sh -c "test $status = 0 && grep -q 'wakeup using /dev/rtc-emu' '$work/rtcwake.out'"
	done
	check "cusemuctl counts the alarms that fired (one per client)" \
		test "$(rtc_event alarm)" -ge 2
	check "... and the update and periodic interrupts" \
		test "$(rtc_event update)" -ge 4 -a "$(rtc_event periodic)" -ge 8

	# --- shutdown with a reader blocked: nothing is armed, cat waits
	cat /dev/rtc-emu >/dev/null 2>"$work/rtc-cat.err" &
	cat_pid=$!
	if wait_for 10 blocked_in_read "$cat_pid"; then
		ok "a read of /dev/rtc-emu blocks while no interrupt is armed"
	else
		not_ok "a read of /dev/rtc-emu blocks while no interrupt is armed"
	fi
	started=$(date +%s)
	stop_daemon TERM
	status=$?
	took=$(($(date +%s) - started))
	check "SIGTERM with a reader blocked: cusemud exits 0 (exit $status)" test "$status" = 0
	check "... within 5 s (took $took s)" test "$took" -le 5
	check "... /dev/rtc-emu is removed" wait_for 5 is_gone /dev/rtc-emu
	if wait_for 5 is_dead "$cat_pid"; then
		wait "$cat_pid"
		status=$?
		check "... the blocked read fails instead of hanging (exit $status: $(cat "$work/rtc-cat.err"))" \
			test "$status" != 0
	else
		not_ok "... the blocked read fails instead of hanging"
		kill "$cat_pid" 2>/dev/null
		wait "$cat_pid" 2>/dev/null
	fi
	if grep -qiE "warning|error|critical" "$work/rtc.log"; then
		not_ok "the rtc daemon logged no warning or error"; diag <"$work/rtc.log"
	else
		ok "the rtc daemon logged no warning or error"
	fi
else
	not_ok "cusemud creates /dev/rtc-emu"; diag <"$work/rtc.log"
	stop_daemon TERM
fi
