# Faults: clients killed in the middle of a blocking read or ioctl, the
# daemon stopped while clients hold its nodes or wait in them, and a long
# load that must not grow the daemon's descriptors or memory; x86_64 and
# i386 clients alike.
# Sourced by client-tests/integration.

fault_ctl=$work/fault-control
# What the load may add to the daemon's VmRSS: allocator noise, not a
# leak. A leak of 100 bytes per open file or of 10 per ioctl exceeds it.
rss_slack_kib=1024

other_abi() { [ "$1" = 32 ] && echo 64 || echo 32; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# in_call PID CALL ABI: the process sleeps in CALL (read or ioctl), by the
# system call numbers of its ABI
in_call() {
	local state nr want
	case $2/$3 in
	read/64) want=0 ;; ioctl/64) want=16 ;;
	read/32) want=3 ;; ioctl/32) want=54 ;;
	esac
	state=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || return 1
	read -r nr _ <"/proc/$1/syscall" 2>/dev/null || return 1
	[ "$state" = S ] && [ "$nr" = "$want" ]
}

# fault_start ABI NAME OP NODE [ARG]: fault-client in the background, its
# output in $work/NAME.out; sets fault_pid
fault_start() {
	local abi=$1 name=$2
	shift 2
	"$clients/fault-client-$abi" "$@" >"$work/$name.out" 2>&1 &
	fault_pid=$!
}

# fault_ok ABI OP NODE [ARG]: the call of OP succeeds ("OP: 0")
fault_ok() {
	"$clients/fault-client-$1" "${@:2}" >"$work/fault-ok.out" 2>&1 &&
		grep -qx "$2: 0" "$work/fault-ok.out"
}

# fault_result NAME CALL: what the call printed, e.g. "-1 (EINTR/...)"
fault_result() { sed -n "s/^$2: //p" "$work/$1.out"; }

# fault_stat DEVICE COMMAND ABI FIELD: a number of cusemuctl stats --json,
# FIELD a path such as calls or errors.EINTR; 0 when absent
fault_stat() {
	"$cusemuctl" --socket "$fault_ctl" stats --json | python3 -c '
import json, sys
dev, cmd, abi, field = sys.argv[1:]
for d in json.load(sys.stdin)["devices"]:
    for c in d["stats"]["commands"] if d["name"] == dev else []:
        if c["name"] == cmd and c["abi"] == abi:
            for k in field.split("."):
                c = c.get(k, {})
            print(c or 0)
            sys.exit(0)
print(0)' "$@"
}

# kill_blocked ABI CALL WHAT OP NODE [ARG]: a client blocked in CALL,
# killed with SIGKILL; the kernel keeps it until the daemon answers, so it
# is gone soon only if the daemon heard the interrupt (the bounds are wide:
# the VM's CPU is emulated, and shared). Sets killed_ms.
kill_blocked() {
	local abi=$1 call=$2 what=$3 arch t0
	arch=$(arch_of "$abi")
	shift 3
	fault_start "$abi" killed "$@"
	# Its death by SIGKILL is expected: no job report for it.
	disown "$fault_pid"
	if ! wait_for 10 in_call "$fault_pid" "$call" "$abi"; then
		not_ok "$what ($arch) blocks in $call()"; diag <"$work/killed.out"
		kill -9 "$fault_pid" 2>/dev/null
		killed_ms=
		return 1
	fi
	ok "$what ($arch) blocks in $call()"
	t0=$(now_ms)
	kill -9 "$fault_pid"
	wait_for 5 is_dead "$fault_pid"
	killed_ms=$(($(now_ms) - t0))
	check "... killed with SIGKILL, it is gone within 5 s (took $killed_ms ms)" \
		test "$killed_ms" -lt 5000
}

# next_served ABI WHAT OP NODE [ARG]: another client's OP succeeds within 5 s
next_served() {
	local abi=$1 what=$2 t0 took
	shift 2
	t0=$(now_ms)
	if wait_for 5 fault_ok "$abi" "$@"; then
		took=$(($(now_ms) - t0))
		ok "... then an $(arch_of "$abi") client $what (in $took ms)"
	else
		not_ok "... then an $(arch_of "$abi") client $what within 5 s"
		diag <"$work/fault-ok.out"
	fi
}

no_warnings() { # no_warnings LOG WHAT
	if grep -qiE "warning|error|critical" "$1"; then
		not_ok "$2 logged no warning or error"; diag <"$1"
	else
		ok "$2 logged no warning or error"
	fi
}

# --- clients killed in the middle of a call; 2.6.10, so that a handler
# left holding the big lock would stop every later call (evdev has only
# the methods of later kernels)
log=$work/faults.log
start_daemon "$log" --model 2.6.10 --control "$fault_ctl" \
	--device rtc:name=rtc-fault --device evdev:name=event-fault,kernel=modern \
	--device slow:name=slow-fault,hold=sleep
if wait_for 15 is_char_node /dev/rtc-fault && wait_for 5 is_char_node /dev/event-fault &&
	wait_for 5 is_char_node /dev/slow-fault; then
	for abi in 64 32; do
		other=$(other_abi $abi)
		hold_abi=$([ $abi = 32 ] && echo compat || echo native)

		# rtc takes one opener at a time: the next open shows the
		# killed client's file was released.
		kill_blocked $abi read "a read of /dev/rtc-fault with no interrupt armed" \
			read /dev/rtc-fault &&
			next_served $other "opens /dev/rtc-fault (the file was released)" \
				open /dev/rtc-fault

		# The killed client held a grab: the next one gets it.
		kill_blocked $abi read "a read of /dev/event-fault by a client holding EVIOCGRAB" \
			grab-read /dev/event-fault &&
			next_served $other "grabs /dev/event-fault (grab and file released)" \
				grab /dev/event-fault

		# Seconds of sleep in the handler, under the big lock when
		# not asleep: one SLOW_HOLD_US of 1 s after the other.
		"$cusemuctl" --socket "$fault_ctl" reset >/dev/null
		if kill_blocked $abi ioctl "SLOW_HOLD_US of 1 s, again and again, with hold=sleep" \
			hold-loop /dev/slow-fault 1000000; then
			# Its sleep ended with the kill, not 1 s later.
			check "... cusemuctl counts that SLOW_HOLD_US ($hold_abi) as ended by EINTR" \
				test "$(fault_stat slow-fault SLOW_HOLD_US $hold_abi errors.EINTR)" = 1
			next_served $other "is served SLOW_HOLD_US 0 (no big lock left held)" \
				hold-us /dev/slow-fault 0
		fi
	done
	check "cusemud is still running after the killed clients" kill -0 "$daemon_pid"
	stop_daemon TERM
	status=$?
	check "SIGTERM after the killed clients: cusemud exits 0 (exit $status)" test "$status" = 0
	no_warnings "$log" "the daemon of the killed clients"
else
	not_ok "cusemud starts with rtc, evdev and slow devices"; diag <"$log"
	stop_daemon TERM
fi

# --- the daemon stopped while clients wait in it and hold its nodes; the
# EEPROM file starts as 00 01 ... ff, so every byte says where it is
eeprom=$work/fault-eeprom.bin
python3 -c 'import sys; sys.stdout.buffer.write(bytes(range(256)))' >"$eeprom"
cp "$eeprom" "$work/fault-eeprom-before.bin"
log=$work/stop.log
stop_nodes="/dev/i2c-9 /dev/rtc-stop /dev/event-stop /dev/slow-stop /dev/fioc-stop"
start_daemon "$log" --control none --device "i2c:name=i2c-9,eeprom_file=$eeprom" \
	--device rtc:name=rtc-stop --device evdev:name=event-stop \
	--device slow:name=slow-stop,hold=sleep --device fioc:name=fioc-stop
started=yes
for node in $stop_nodes; do
	wait_for 15 is_char_node "$node" || started=
done
if [ -n "$started" ]; then
	check "i2cset (x86_64) writes 0x99 at EEPROM offset 0x42" /usr/sbin/i2cset -y 9 0x50 0x42 0x99
	check "i2cset (i386) writes 0x66 at EEPROM offset 0x43" \
		"$here/run-i386" usr/sbin/i2cset -y 9 0x50 0x43 0x66
	# name ABI CALL OP NODE [ARG]: each blocked in CALL, or holding
	waiting="
		stop-rtc 32 read read /dev/rtc-stop
		stop-evdev 64 read grab-read /dev/event-stop
		stop-slow 32 ioctl hold-loop /dev/slow-stop 1000000
		hold-i2c 64 - hold /dev/i2c-9
		hold-fioc 32 - hold /dev/fioc-stop"
	declare -A pids=()
	while read -r name abi call op node arg; do
		[ -n "$name" ] || continue
		# shellcheck disable=SC2086 # no ARG, or one word
		fault_start "$abi" "$name" "$op" "$node" $arg
		pids[$name]=$fault_pid
		if [ "$call" = - ]; then
			check "$name: fault-client-$abi holds $node open" \
				wait_for 10 grep -qx holding "$work/$name.out"
		else
			check "$name: fault-client-$abi $op $node blocks in $call()" \
				wait_for 10 in_call "$fault_pid" "$call" "$abi"
		fi
	done <<<"$waiting"
	t0=$(now_ms)
	stop_daemon TERM
	status=$?
	took=$(($(now_ms) - t0))
	check "SIGTERM with 3 clients blocked and 2 holding nodes: cusemud exits 0 (exit $status)" \
		test "$status" = 0
	check "... within 5 s (took $took ms)" test "$took" -lt 5000
	for node in $stop_nodes; do
		check "... $node is removed" wait_for 5 is_gone "$node"
	done
	for name in stop-rtc stop-evdev stop-slow; do
		call=$([ $name = stop-slow ] && echo hold-us || echo read)
		if wait_for 5 is_dead "${pids[$name]}"; then
			got=$(fault_result "$name" "$call")
			check "$name: the blocked $call fails instead of hanging: $got" \
				test "${got%% *}" = -1
		else
			not_ok "$name: the blocked $call fails instead of hanging"
			kill -9 "${pids[$name]}" 2>/dev/null
		fi
		wait "${pids[$name]}" 2>/dev/null
	done
	for name in hold-i2c hold-fioc; do
		kill -USR1 "${pids[$name]}"
		wait_for 5 is_dead "${pids[$name]}"
		got="read $(fault_result "$name" read), ioctl $(fault_result "$name" ioctl)"
		check "$name: the holder's read and ioctl after the stop fail: $got" \
			sh -c "grep -qx 'read: -1 .*' '$work/$name.out' && grep -qx 'ioctl: -1 .*' '$work/$name.out'"
		kill -9 "${pids[$name]}" 2>/dev/null
		wait "${pids[$name]}" 2>/dev/null
	done
	unset pids
	size=$(wc -c <"$eeprom")
	got=$(od -An -tx1 -j 0x42 -N 2 "$eeprom" | tr -d ' ')
	changed=$(cmp -l "$work/fault-eeprom-before.bin" "$eeprom" | wc -l)
	check "the EEPROM file after the stop: 256 bytes ($size), 99 66 at 0x42 ($got), nothing else changed ($changed bytes differ)" \
		test "$size/$got/$changed" = 256/9966/2
	no_warnings "$log" "the daemon stopped under its clients"
else
	not_ok "cusemud starts with i2c, rtc, evdev, slow and fioc devices"; diag <"$log"
	stop_daemon TERM
fi

# --- a long load: 8 processes at a time, 4 x86_64 and 4 i386; the
# daemon's descriptors and memory measured after a warm-up and after.
# Two things move VmRSS by megabytes whatever the load: worker threads
# that come and go (each takes a malloc arena and leaves it filled), and
# transparent huge pages (2 MiB at once where malloc first touches an
# aligned region). So this daemon keeps every worker it starts (no more
# than it keeps idle), and runs without huge pages (PR_SET_THP_DISABLE,
# kept across exec): its VmRSS counts the pages it uses.
fd_count() { find "/proc/$daemon_pid/fd" -mindepth 1 | wc -l; }
rss_kib() { awk '$1 == "VmRSS:" { print $2 }' "/proc/$daemon_pid/status"; }
thread_count() { find "/proc/$daemon_pid/task" -mindepth 1 -maxdepth 1 | wc -l; }
# python3 -c "$without_thp" PROGRAM ARG...: PROGRAM, in the same process
without_thp='import ctypes, os, sys
ctypes.CDLL(None).prctl(41, 1, 0, 0, 0)  # PR_SET_THP_DISABLE
os.execv(sys.argv[1], sys.argv[1:])'

# load_both OP ITERATIONS NAME: OP, ITERATIONS times in all, split over
# the 8 processes; their summaries in $work/NAME-64 and -32
load_both() {
	local per=$(($2 / 8)) p64 s64 s32
	"$clients/load-client-64" --procs 4 --iterations $per /dev/fioc-load "$1" \
		>"$work/$3-64" 2>&1 &
	p64=$!
	"$clients/load-client-32" --procs 4 --iterations $per /dev/fioc-load "$1" \
		>"$work/$3-32" 2>&1
	s32=$?
	wait $p64
	s64=$?
	sed "s/^/$3 x86_64: /" "$work/$3-64" | diag
	sed "s/^/$3 i386: /" "$work/$3-32" | diag
	[ "$s64$s32" = 00 ]
}

warm_up() { load_both open-close 1000 warm-oc && load_both fioc-size 8000 warm-io; }
# seconds MS: "12.3"
seconds() { echo "$(($1 / 1000)).$((($1 % 1000) / 100))"; }

log=$work/load.log
python3 -c "$without_thp" "$cusemud" --foreground --control "$fault_ctl" --threads 4 \
	--device fioc:name=fioc-load >"$log" 2>&1 &
daemon_pid=$!
if wait_for 15 is_char_node /dev/fioc-load; then
	thp=$(awk '$1 == "THP_enabled:" { print $2 }' "/proc/$daemon_pid/status")
	check "the load's cusemud runs without transparent huge pages (THP_enabled $thp)" \
		test "$(cat "/proc/$daemon_pid/comm")/$thp" = cusemud/0
	check "warm-up: 1,000 open/close cycles, then 8,000 FIOC_GET_SIZE" warm_up
	fds0=$(fd_count)
	rss0=$(rss_kib)
	threads0=$(thread_count)
	"$cusemuctl" --socket "$fault_ctl" reset >/dev/null
	t0=$(now_ms)
	load_both open-close 10000 load-oc
	s_oc=$?
	t1=$(now_ms)
	load_both fioc-size 100000 load-io
	s_io=$?
	t2=$(now_ms)
	fds1=$(fd_count)
	rss1=$(rss_kib)
	threads1=$(thread_count)
	check "10,000 open/close cycles succeed (took $(seconds $((t1 - t0))) s)" \
		test "$s_oc" = 0
	check "100,000 FIOC_GET_SIZE succeed (took $(seconds $((t2 - t1))) s)" \
		test "$s_io" = 0
	native=$(fault_stat fioc-load FIOC_GET_SIZE native calls)
	compat=$(fault_stat fioc-load FIOC_GET_SIZE32 compat calls)
	check "cusemuctl counts them: $native native FIOC_GET_SIZE, $compat compat FIOC_GET_SIZE32" \
		test "$native/$compat" = 50000/50000
	check "the daemon's descriptors do not grow: $fds0 after the warm-up, $fds1 after the load" \
		test "$fds1" -le "$fds0"
	if [ -n "${ASAN_OPTIONS:-}" ]; then
		# AddressSanitizer keeps freed memory in quarantine: RSS grows.
		ok "its VmRSS: $rss0 KiB after the warm-up, $rss1 KiB after the load # SKIP measured in the build without AddressSanitizer"
	else
		check "its VmRSS grows by at most $rss_slack_kib KiB (allocator noise): $rss0 KiB after the warm-up, $rss1 KiB after the load ($threads0 and $threads1 threads)" \
			test "$((rss1 - rss0))" -le "$rss_slack_kib"
	fi
	check "cusemud is still running after the load" kill -0 "$daemon_pid"
	stop_daemon TERM
	status=$?
	check "SIGTERM after the load: cusemud exits 0 (exit $status)" test "$status" = 0
	no_warnings "$log" "the daemon under load"
else
	not_ok "cusemud starts with a fioc device for the load"; diag <"$log"
	stop_daemon TERM
fi
