# Model hosts over CUSE: client-tests/host-isolation's cases on real
# character devices. One daemon serves fioc, rtc and the plugin
# tests/rogue.so in a model host (isolation=process, the plugin's default)
# on rogue-h0 and rogue-h1, and in the daemon on rogue-h2
# (isolation=none). x86_64 and i386 callers make the model NULL-dereference,
# double-free, corrupt the heap, exit(0), leak, fork, overflow its stack,
# spin, deadlock on its own mutex and block on a wait queue: each call that
# ends its host gets EIO in time, as does a call in flight on the host's
# other device, with one report; the host's devices are fenced until
# cusemuctl reload; a killed caller is gone within a second; the daemon
# lives, tainted. Meanwhile a loop runs hwclock (x86_64 and i386) on rtc and
# libfuse's cuse_client (both builds) on fioc, and not one of its calls
# fails. Last, SIGTERM ends a daemon with a spinning and a blocked call in
# flight within 2 s, every node gone.
# Sourced by client-tests/integration.

hosts_dir=$(mktemp -d /run/cusemu-hosts.XXXXXX)
hosts_ctl=$work/hosts.sock
hosts_log=$work/hosts.log
cp "$build/tests/rogue.so" "$hosts_dir/rogue.so"
chmod 0644 "$hosts_dir/rogue.so"

# Milliseconds, and naps and polls, from bash itself: a program started
# for each (date, sleep) costs tens of milliseconds in the VM, up to a
# second when the machine is loaded, which would blur what is measured.
hosts_ms() { local t=${EPOCHREALTIME/[.,]/}; echo $((t / 1000)); }
exec {hosts_nap_fd}<> <(:)
hosts_nap() { read -r -t "$1" -u "$hosts_nap_fd" _; true; }
# hosts_until SECS COMMAND...: until COMMAND (a builtin, or a function of
# builtins) succeeds, polled every 10 ms; false after SECS
hosts_until() {
	local t=${EPOCHREALTIME/[.,]/}
	local end=$((t + $1 * 1000000))
	shift
	until "$@"; do
		t=${EPOCHREALTIME/[.,]/}
		[ "$t" -lt "$end" ] || return 1
		hosts_nap 0.01
	done
}
hosts_cusemuctl() { "$cusemuctl" --socket "$hosts_ctl" "$@"; }
# A call that does not end in 30 s is a failure, not a section that hangs.
hosts_rogue() { local abi=$1; shift; timeout -k 5 30 "$clients/rogue-client-$abi" "$@" 2>&1; }
# hosts_reap PID SECS: PID, a child, ends within SECS, and is waited for (a
# call that never ends must not hang the section in wait)
hosts_ended() {
	local state=
	kill -0 "$1" 2>/dev/null || return 0
	read -r _ _ state _ 2>/dev/null <"/proc/$1/stat"
	[ "$state" = Z ]
}
hosts_reap() { hosts_until "$2" hosts_ended "$1" && { wait "$1" 2>/dev/null; true; }; }
# hosts_timed TEXT: TEXT, the output of rogue-client -t, as hosts_out (its
# first line, what the call returned), hosts_took (the call's time in ms,
# without the client's start) and hosts_end (its end, CLOCK_MONOTONIC ms)
hosts_timed() {
	hosts_out=${1%%$'\n'*} hosts_took=-1 hosts_end=0
	if [[ $1 =~ took:\ ([0-9]+)\ ms,\ ended:\ ([0-9]+) ]]; then
		hosts_took=${BASH_REMATCH[1]} hosts_end=${BASH_REMATCH[2]}
	fi
}
hosts_reports() { grep -cE '^cusemud: (BUG|divide error|invalid opcode)' "$hosts_log"; }
hosts_lockups() { grep -c "BUG: soft lockup - rogue's ioctl stuck for" "$hosts_log"; }
hosts_blocked() { grep -c "It is blocked outside the helpers of <cusemu/sched.h>" "$hosts_log"; }
hosts_traces() { grep -c -- '---\[ end trace \]---' "$hosts_log"; }
# hosts_more COUNTER N: COUNTER (a function above) counts more than N
hosts_more() { [ "$($1)" -gt "$2" ]; }

# hosts_in_call PID: the client PID is in ioctl(2) (16 on x86_64, 54 on
# i386), then 0.3 s more for the daemon and the host to take the request
# (a CUSE round trip is about 0.5 ms in the VM).
hosts_in_call_now() {
	local nr=
	read -r nr _ 2>/dev/null <"/proc/$1/syscall"
	[ "$nr" = 16 ] || [ "$nr" = 54 ]
}
hosts_in_call() { hosts_until 10 hosts_in_call_now "$1"; hosts_nap 0.3; }

# The devices that must answer throughout: each call of the loop that
# fails (or takes 60 s) is a line of hosts.fail; the others' times, in
# hosts.ok, are printed at the end. A time there is a program's start and
# end in the VM: about a second for cuse_client, more for hwclock, which
# waits for the clock's tick, and the i386 one starts through run-i386.
hosts_loop() {
	local i=0 abi t0 ms out
	while [ ! -e "$work/hosts.stop" ]; do
		i=$((i + 1))
		for abi in 64 32; do
			t0=$(hosts_ms)
			out=
			if timeout 60 "$clients/cuse_client-$abi" /dev/fioc-hosts s "$i" >/dev/null 2>&1 &&
				out=$(timeout 60 "$clients/cuse_client-$abi" /dev/fioc-hosts s 2>&1) &&
				[ "$out" = "$i" ]; then
				ms=$(($(hosts_ms) - t0))
				echo "cuse_client-$abi $ms" >>"$work/hosts.ok"
			else
				echo "cuse_client-$abi: size $i set and read back: '$out'" >>"$work/hosts.fail"
			fi
			t0=$(hosts_ms)
			if [ $abi = 64 ]; then
				out=$(timeout 60 /sbin/hwclock --rtc=/dev/rtc-hosts --utc --noadjfile --show 2>&1)
			else
				out=$(timeout 60 "$here/run-i386" usr/sbin/hwclock --rtc=/dev/rtc-hosts \
					--utc --noadjfile --show 2>&1)
			fi
			ms=$(($(hosts_ms) - t0))
			if [[ $out =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}\  ]]; then
				echo "hwclock-$abi $ms" >>"$work/hosts.ok"
			else
				echo "hwclock-$abi: '$out'" >>"$work/hosts.fail"
			fi
		done
	done
}

# hosts_reload: both hosted devices back, on a fresh host
hosts_reload() {
	hosts_cusemuctl reload rogue-h0 >>"$work/hosts.reload" 2>&1 &&
		hosts_cusemuctl reload rogue-h1 >>"$work/hosts.reload" 2>&1 &&
		[ "$(hosts_rogue 64 /dev/rogue-h0 size)" = "size: 0 4096" ] &&
		[ "$(hosts_rogue 32 /dev/rogue-h1 size)" = "size: 0 4096" ]
}

# hosts_answers ABI NODE OP WANT TEXT: rogue-client-ABI's OP (and its
# argument) on /dev/NODE prints WANT
hosts_answers() {
	local out
	# shellcheck disable=SC2086 # OP may be words: "pair 20"
	out=$(hosts_rogue "$1" "/dev/$2" $3)
	[ "$out" = "$4" ] && ok "$5" || not_ok "$5 (got: $out)"
}
# hosts_reloads TEXT: cusemuctl reload brings a working host back
hosts_reloads() {
	if hosts_reload; then ok "$1"; else not_ok "$1"; diag <"$work/hosts.reload"; fi
}

# hosts_fenced: cusemuctl list shows both devices of the host fenced. The
# calls fail as soon as the host is dead; the fence comes with its report,
# which takes a while to symbolize in the VM.
hosts_fenced_now() {
	hosts_cusemuctl list >"$work/hosts.list" 2>&1
	grep -qE '^rogue-h0 .*FENCED' "$work/hosts.list" && grep -qE '^rogue-h1 .*FENCED' "$work/hosts.list"
}

# hosts_fatal ABI OP PATTERN [LIMIT_MS]: OP ends the host of rogue-h0 and
# rogue-h1. Its call gets EIO within LIMIT_MS (3 s, as host-isolation
# allows: the host's fault handler and the daemon take tens of
# milliseconds in the VM, but a loaded machine may stop the VM's CPUs for
# a second or more), and a call waiting on rogue-h1 gets EIO within a
# second of it, the host's death; one report matching PATTERN; rogue-h1
# fenced; the daemon alive; reload brings the host back.
hosts_fatal() {
	local abi=$1 op=$2 expect=$3 limit=${4:-3000} before traces out took end waiter waited fenced
	before=$(hosts_reports)
	traces=$(hosts_traces)
	"$clients/rogue-client-$abi" -t /dev/rogue-h1 wait 30000 >"$work/hosts.waiter" 2>&1 &
	waiter=$!
	hosts_in_call "$waiter"
	hosts_timed "$(hosts_rogue "$abi" -t /dev/rogue-h0 "$op")"
	out=$hosts_out took=$hosts_took end=$hosts_end
	hosts_reap "$waiter" 10
	hosts_timed "$(<"$work/hosts.waiter")"
	# From the start of the call that ends the host.
	waited=$((hosts_end - (end - took)))
	if [ "$out" = "$op: -1 EIO" ] && [ "$took" -ge 0 ] && [ "$took" -lt "$limit" ]; then
		ok "$abi-bit $op: EIO after $took ms"
	else
		not_ok "$abi-bit $op: EIO within $limit ms (got: '$out' after $took ms)"
	fi
	# It ends after the fatal call began, and no later than a second
	# after that call's own EIO, which says the host is dead.
	if [ "$hosts_out" = "wait: -1 EIO" ] && [ "$waited" -ge 0 ] && [ "$waited" -lt $((took + 1000)) ]; then
		ok "$abi-bit $op: the call in flight on rogue-h1 gets EIO too, $waited ms after the fatal call began"
	else
		not_ok "$abi-bit $op: the call in flight on rogue-h1 gets EIO within a second of the fatal one (got: '$hosts_out', $waited ms after it began, which took $took ms)"
	fi
	wait_for 10 hosts_more hosts_traces "$traces"
	wait_for 10 hosts_fenced_now
	fenced=$?
	sleep 0.2
	if [ $(($(hosts_reports) - before)) = 1 ] && grep -qE -- "$expect" "$hosts_log"; then
		ok "$abi-bit $op: one report: $(grep -E -- "$expect" "$hosts_log" | tail -1 | cut -c1-100)"
	else
		not_ok "$abi-bit $op: one report matching $expect ($(($(hosts_reports) - before)) reports)"
		diag <"$hosts_log"
	fi
	hosts_answers "$abi" rogue-h1 size "open: -1 EIO" "$abi-bit $op: rogue-h1, of the same host, is fenced"
	[ "$fenced" = 0 ] && ok "$abi-bit $op: cusemuctl list shows both devices FENCED" ||
		{ not_ok "$abi-bit $op: cusemuctl list shows both devices FENCED"; diag <"$work/hosts.list"; }
	check "$abi-bit $op: the daemon lives" kill -0 "$daemon_pid"
	hosts_reloads "$abi-bit $op: cusemuctl reload brings a working host back"
}

# hosts_killed ABI OP: a caller killed in OP, which never ends by itself,
# is gone within 3 s (the host has 0.8 s to end the call after the kernel's
# FUSE interrupt, then the daemon answers it; 3 s as host-isolation allows,
# for a loaded machine).
hosts_killed() {
	local abi=$1 op=$2 t0 t1 pid
	"$clients/rogue-client-$abi" /dev/rogue-h0 "$op" >/dev/null 2>&1 &
	pid=$! hosts_killed_pid=$!
	hosts_in_call "$pid"
	t0=$(hosts_ms)
	kill -9 "$pid"
	hosts_reap "$pid" 10
	t1=$(hosts_ms)
	if [ ! -e "/proc/$pid" ] && [ $((t1 - t0)) -lt 3000 ]; then
		ok "$abi-bit $op: the caller, killed, is gone after $((t1 - t0)) ms"
	else
		not_ok "$abi-bit $op: the killed caller is gone within 3 s ($((t1 - t0)) ms)"
	fi
}

# The thresholds short, for the section to stay short: a soft lockup after
# 5 s, a hung task after 2 s (no call of fioc or rtc runs that long, even
# in a loaded VM). 64 MiB of address space for the host (it starts with
# about 15): the leak ends in 0.3 to 0.9 s in the VM at load 14, 3.9 s with
# stress-ng beside it, before the soft-lockup threshold, which would give
# it a second report (with 256 MiB: 3.5 to 5.3 s at load 14, the
# client's start included).
start_daemon "$hosts_log" --plugin "$hosts_dir/rogue.so" \
	--device rogue:name=rogue-h0 --device rogue:name=rogue-h1 \
	--device rogue:name=rogue-h2,isolation=none \
	--device fioc:name=fioc-hosts --device rtc:name=rtc-hosts \
	--control "$hosts_ctl" --soft-lockup-secs 5 --hung-task-secs 2 --host-memory 64M
if wait_for 15 is_char_node /dev/rogue-h0 && wait_for 5 is_char_node /dev/rtc-hosts &&
	wait_for 5 grep -q '^cusemud: ready' "$hosts_log"; then
	ok "cusemud serves fioc, rtc, and rogue in a model host and in the daemon"
	hosts_start=$(hosts_ms)
	for abi in 64 32; do
		hosts_answers $abi rogue-h0 size "size: 0 4096" "$abi-bit: an _IOR from the host"
		hosts_answers $abi rogue-h1 "pair 20" "pair: 0 20 41" "$abi-bit: an _IOWR from the host"
		hosts_answers $abi rogue-h0 read "read: 6 rogue" "$abi-bit: read from the host"
	done
	hosts_answers 32 rogue-h2 size "size: 0 4096" "isolation=none: the same model in the daemon answers"
	launcher=$(pgrep -P "$daemon_pid" -f '^cusemu-host --launcher' | head -1)
	host=$([ -z "$launcher" ] || pgrep -P "$launcher" -f '^cusemu-host: rogue.so' | head -1)
	[ -n "$host" ] && ok "the model host runs: pid $host" || not_ok "a model host runs"
	# What the host of a root daemon reaches: a uid of its own, no
	# /proc of the daemon, no /dev/cuse to make nodes with.
	uid=$(awk '/^Uid:/ { print $2 }' "/proc/$host/status" 2>/dev/null)
	[ -n "$uid" ] && [ "$uid" != 0 ] && ok "the model host runs as a uid of its own: $uid" ||
		not_ok "the model host runs as a uid of its own (uid '$uid')"
	for what in "64 rw /proc/$daemon_pid/mem" "64 ro /proc/$daemon_pid/fd/1" \
		"64 rw /dev/cuse" "32 rw /dev/cuse" "64 rw /dev/fuse"; do
		read -r abi mode path <<<"$what"
		out=$(hosts_rogue "$abi" /dev/rogue-h0 path "$mode" "$path")
		case "$out" in
		"path: -1 "*) ok "$abi-bit: the host cannot open $path: ${out#path: -1 }" ;;
		*) not_ok "$abi-bit: the host cannot open $path (got: $out)" ;;
		esac
	done

	rm -f "$work/hosts.stop" "$work/hosts.ok" "$work/hosts.fail"
	: >"$work/hosts.fail"
	hosts_loop &
	hosts_loop_pid=$!

	for abi in 64 32; do
		hosts_fatal $abi null 'RIP: rogue_null_deref\+0x[0-9a-f]+/0x[0-9a-f]+ \[rogue.so\] rogue.c:[0-9]+'
		hosts_fatal $abi double-free ' rogue_double_free\+0x[0-9a-f]+/0x[0-9a-f]+ \[rogue.so\] rogue.c:[0-9]+'
		hosts_fatal $abi heap ' rogue_heap\+0x[0-9a-f]+/0x[0-9a-f]+ \[rogue.so\] rogue.c:[0-9]+'
		hosts_fatal $abi exit 'BUG: the model host of .*rogue.so \(pid [0-9]+\) exited with status 0'
		# About 50 MiB written a MiB at a time before malloc fails;
		# 8 s allowed, as host-isolation does. AddressSanitizer's
		# shadow reserves terabytes, so its build gives a host no
		# address-space limit (sandbox.c): there the leak would end
		# only if the VM ran out of memory, which is no check of ours.
		if [ -n "${ASAN_OPTIONS:-}" ]; then
			ok "$abi-bit leak: the host dies at host_memory= # SKIP checked in the build without AddressSanitizer, which has no address-space limit"
		else
			hosts_fatal $abi leak ' rogue_leak\+0x[0-9a-f]+/0x[0-9a-f]+ \[rogue.so\] rogue.c:[0-9]+' 8000
		fi
		hosts_fatal $abi fork 'BUG: system call [0-9]+ is off the model host.s allow-list'
		# The host's fault handler unwinds the whole recursion, tens of
		# thousands of frames, folding them, before it ends: 0.4 to
		# 1.4 s in the VM at load 14, 3.7 s with stress-ng beside it.
		hosts_fatal $abi stack 'BUG: stack guard page was hit at [0-9a-f]+ \(stack is [0-9a-f]+\.\.[0-9a-f]+\)' 8000
	done
	for abi in 64 32; do
		hosts_answers $abi rogue-h2 size "size: 0 4096" \
			"$abi-bit: after 14 hosts' ends, rogue-h2 (isolation=none) serves on"
	done
	check "the fork's report names the model's function" \
		grep -q 'rogue_fork+0x[0-9a-f]*/0x[0-9a-f]* \[rogue.so\] rogue.c' "$hosts_log"

	for abi in 64 32; do
		# A spin is a soft lockup: after the 5 s threshold the daemon
		# ends the host, and the call gets EIO: the watchdog looks every
		# 250 ms and asks the host for a backtrace (500 ms at most)
		# before it ends it; 3 s allowed for that on a loaded machine.
		before=$(hosts_reports)
		spins=$(hosts_lockups)
		hosts_timed "$(hosts_rogue $abi -t /dev/rogue-h0 spin)"
		if [ "$hosts_out" = "spin: -1 EIO" ] && [ "$hosts_took" -ge 5000 ] &&
			[ "$hosts_took" -lt 8000 ]; then
			ok "$abi-bit spin: EIO after $hosts_took ms, the soft-lockup threshold being 5 s"
		else
			not_ok "$abi-bit spin: EIO within 3 s of the 5 s threshold (got: '$hosts_out' after $hosts_took ms)"
		fi
		wait_for 10 hosts_fenced_now
		sleep 0.2
		if [ "$(hosts_lockups)" = $((spins + 1)) ] && [ "$(hosts_reports)" = $((before + 1)) ] &&
			grep -q "The daemon ends the model host of" "$hosts_log" &&
			grep -q " rogue_spin+0x[0-9a-f]*/0x[0-9a-f]* \[rogue.so\] rogue.c" "$hosts_log"; then
			ok "$abi-bit spin: one soft-lockup report, with the spin's file:line, and the host ended"
		else
			not_ok "$abi-bit spin: one soft-lockup report and the host ended"; diag <"$hosts_log"
		fi
		hosts_answers $abi rogue-h1 size "open: -1 EIO" "$abi-bit spin: rogue-h1, of that host, is fenced"
		hosts_reloads "$abi-bit spin: reload brings a working host back"

		# A wait nothing ends: only the caller's giving up does.
		hosts_killed $abi block
		hosts_answers $abi rogue-h0 size "size: 0 4096" "$abi-bit block: its host serves on"

		# A deadlock spins no CPU: a hung task, reported after 2 s,
		# and the host kept; reload ends it. The report comes after
		# the caller is gone: it names its pid and ABI, not its name.
		arch=$([ $abi = 32 ] && echo i386 || echo x86_64)
		before=$(hosts_blocked)
		spins=$(hosts_lockups)
		bugs=$(hosts_reports)
		traces=$(hosts_traces)
		hosts_killed $abi deadlock
		wait_for 10 hosts_more hosts_blocked "$before"
		wait_for 10 hosts_more hosts_traces "$traces"
		sleep 0.2
		if [ "$(hosts_blocked)" = $((before + 1)) ] && [ "$(hosts_lockups)" = "$spins" ] &&
			[ "$(hosts_reports)" = "$bugs" ] &&
			grep -q "INFO: task [^ ]*:$hosts_killed_pid blocked for more than 2 seconds.$" "$hosts_log" &&
			grep -q "Call: ioctl ROGUE_IOC_DEADLOCK (0x00005207) from an $arch caller, pid $hosts_killed_pid " "$hosts_log" &&
			grep -q " rogue_deadlock+0x[0-9a-f]*/0x[0-9a-f]* \[rogue.so\] rogue.c" "$hosts_log"; then
			ok "$abi-bit deadlock: one hung-task report, blocked, not a soft lockup"
		else
			not_ok "$abi-bit deadlock: one hung-task report, not a soft lockup"; diag <"$hosts_log"
		fi
		hosts_answers $abi rogue-h1 size "size: 0 4096" "$abi-bit deadlock: the host is not ended: rogue-h1 serves on"
		hosts_reloads "$abi-bit deadlock: reload ends the stuck host, a working one back"
	done

	# An _IOR that writes nothing, over CUSE's retries: the caller's
	# buffer is as it was, and the daemon warns once.
	for abi in 64 32; do
		hosts_answers $abi rogue-h0 forget "forget: 0 5a5a5a5a5a5a5a5a" \
			"$abi-bit: an _IOR that writes nothing leaves the caller's buffer as it was"
	done
	check "one warning of the forgotten copy_to_user, with its file:line" sh -c "
		[ \$(grep -c 'a forgotten copy_to_user' '$hosts_log') = 1 ] &&
		grep -qE 'Its handler: rogue_forget\+0x0/0x[0-9a-f]+ \[rogue.so\] rogue.c:[0-9]+$' '$hosts_log'"

	touch "$work/hosts.stop"
	wait "$hosts_loop_pid"
	calls=$(wc -l <"$work/hosts.ok" 2>/dev/null || echo 0)
	fails=$(wc -l <"$work/hosts.fail")
	for prog in cuse_client-64 cuse_client-32 hwclock-64 hwclock-32; do
		awk -v p="$prog" '$1 == p { n++; s += $2; if ($2 > m) m = $2 }
			END { printf "# %s: %d calls, %d ms on average, %d ms at most\n", p, n, n ? s / n : 0, m }' \
			"$work/hosts.ok" 2>/dev/null
	done
	if [ "$fails" = 0 ] && grep -q '^hwclock-32 ' "$work/hosts.ok" &&
		grep -q '^cuse_client-32 ' "$work/hosts.ok"; then
		ok "fioc and rtc answered cuse_client and hwclock in both ABIs throughout: $calls calls in $((($(hosts_ms) - hosts_start) / 1000)) s"
	else
		not_ok "fioc and rtc answered throughout ($fails of $((calls + fails)) calls failed)"
		diag <"$work/hosts.fail"
	fi
	hosts_cusemuctl list >"$work/hosts.list" 2>&1
	check "cusemuctl list shows the daemon tainted" grep -q '^tainted: D' "$work/hosts.list"
	grep '^tainted' "$work/hosts.list" | diag
	check "the daemon lives" kill -0 "$daemon_pid"
else
	not_ok "cusemud serves fioc, rtc, and rogue in a model host and in the daemon"
	diag <"$hosts_log"
fi
[ -z "$daemon_pid" ] || stop_daemon TERM
check "the daemon stops with status 0" test "$?" = 0

# SIGTERM while a host spins in one call and is blocked in another, and a
# call in the daemon waits (rogue-h2): the daemon ends within 2 s, every
# node with it. No watchdog here: a soft lockup would end the host first.
start_daemon "$hosts_log" --plugin "$hosts_dir/rogue.so" \
	--device rogue:name=rogue-h0 --device rogue:name=rogue-h1 \
	--device rogue:name=rogue-h2,isolation=none \
	--device fioc:name=fioc-hosts --device rtc:name=rtc-hosts \
	--control "$hosts_ctl" --soft-lockup-secs 0 --hung-task-secs 0
if wait_for 15 is_char_node /dev/rogue-h0 && wait_for 5 is_char_node /dev/rtc-hosts &&
	wait_for 5 grep -q '^cusemud: ready' "$hosts_log"; then
	hosts_callers=()
	for call in 64:h0:spin 32:h1:deadlock 32:h2:block; do
		IFS=: read -r abi node op <<<"$call"
		"$clients/rogue-client-$abi" "/dev/rogue-$node" "$op" >"$work/hosts.$op" 2>&1 &
		hosts_callers+=($!)
		hosts_in_call $!
	done
	launcher=$(pgrep -P "$daemon_pid" -f '^cusemu-host --launcher' | head -1)
	host=$([ -z "$launcher" ] || pgrep -P "$launcher" -f '^cusemu-host: rogue.so' | head -1)
	pid=$daemon_pid
	t0=$(hosts_ms)
	kill -TERM "$pid"
	hosts_until 10 hosts_ended "$pid"
	t1=$(hosts_ms)
	if hosts_ended "$pid" && [ $((t1 - t0)) -lt 2000 ]; then
		ok "SIGTERM ends the daemon with a spinning and a blocked host call in $((t1 - t0)) ms"
	else
		not_ok "SIGTERM ends the daemon within 2 s ($((t1 - t0)) ms)"; diag <"$hosts_log"
		kill -9 "$pid"
	fi
	hosts_until 10 hosts_ended "$pid" && wait "$pid"
	status=$?
	daemon_pid=
	check "... with status 0" test "$status" = 0
	left=
	for node in rogue-h0 rogue-h1 rogue-h2 fioc-hosts rtc-hosts; do
		[ ! -e "/dev/$node" ] || left+=" /dev/$node"
	done
	[ -z "$left" ] && ok "... every node is gone from /dev" ||
		not_ok "... every node is gone from /dev (left:$left)"
	for _ in $(seq 100); do [ -n "$host" ] && [ -e "/proc/$host" ] || break; sleep 0.05; done
	[ -n "$host" ] && [ ! -e "/proc/$host" ] && ok "... and its model host ($host) is gone" ||
		not_ok "... its model host is gone (pid '$host')"
	ended=1
	for caller in "${hosts_callers[@]}"; do
		hosts_reap "$caller" 5 || ended=
	done
	[ -n "$ended" ] && ok "... and the three callers' calls ended: $(cat "$work"/hosts.{spin,deadlock,block} | paste -sd, -)" ||
		not_ok "... the three callers' calls ended"
else
	not_ok "cusemud starts again for SIGTERM"
	diag <"$hosts_log"
	[ -z "$daemon_pid" ] || stop_daemon KILL
fi
exec {hosts_nap_fd}>&-
rm -rf "$hosts_dir"
