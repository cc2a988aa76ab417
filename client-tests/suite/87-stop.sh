# Job control and a debugger on a sandboxed daemon serving every model:
# SIGSTOP then SIGCONT (Ctrl-Z and fg on --foreground), a call made while
# it is stopped, and strace attached to every thread and detached. Threads
# stopped in timed waits come back through restart_syscall, which the
# system call filter must allow. Sourced by client-tests/integration.

st_ctl=$work/st.sock
start_daemon "$work/st.log" --control "$st_ctl" \
	--device fioc:name=st-fioc --device rtc:name=st-rtc \
	--device watchdog:name=st-wd --device i2c:name=i2c-12 \
	--device evdev:name=st-event --device legacy:name=st-legacy \
	--device probe:name=st-probe --device slow:name=st-slow,hold=sleep
st_serving() {
	"$clients/cuse_client-64" /dev/st-fioc s 3 >/dev/null 2>&1 &&
		[ "$("$clients/cuse_client-32" /dev/st-fioc s 2>/dev/null)" = 3 ] &&
		"$cusemuctl" --socket "$st_ctl" list >/dev/null 2>&1
}
st_alive() { kill -0 "$daemon_pid" 2>/dev/null && [ -c /dev/st-rtc ] && [ -c /dev/st-event ]; }
if wait_for 15 is_char_node /dev/st-slow && wait_for 10 st_serving; then
	ok "cusemud serves every model (fioc, rtc, watchdog, i2c, evdev, legacy, probe, slow)"
	st_helper=$(cat /proc/"$daemon_pid"/task/*/children 2>/dev/null | tr -s " " "\n" | grep -m1 .)
	for round in 1 2; do
		kill -STOP "$daemon_pid"
		sleep 1
		# A call made while the daemon is stopped waits, then is served.
		"$clients/cuse_client-32" /dev/st-fioc s >"$work/st-stopped.out" 2>&1 &
		st_client=$!
		sleep 1
		kill -CONT "$daemon_pid"
		wait "$st_client"
		check "round $round: SIGSTOP then SIGCONT leaves the daemon alive with its nodes" \
			wait_for 3 st_alive
		check "round $round: the i386 call made while it was stopped is served" \
			test "$(cat "$work/st-stopped.out")" = 3
		check "round $round: it serves both ABIs and the control socket after SIGCONT" \
			wait_for 5 st_serving
	done
	if [ -n "$st_helper" ]; then
		kill -STOP "$st_helper"; sleep 1; kill -CONT "$st_helper"
		check "its /proc helper stopped and continued: an evdev open still learns the i386 ABI" \
			sh -c "'$clients/evdev-client-32' /dev/st-event >'$work/st-ev.out' 2>&1"
		[ $? = 0 ] || diag <"$work/st-ev.out"
		check "... and the helper is alive" kill -0 "$st_helper"
	fi
	if command -v strace >/dev/null; then
		strace -f -qq -p "$daemon_pid" -o "$work/st.strace" &
		st_strace=$!
		sleep 2
		check "with strace attached to every thread, it serves both ABIs" st_serving
		kill -INT "$st_strace"; wait "$st_strace" 2>/dev/null
		check "strace saw its threads' calls" test -s "$work/st.strace"
		check "strace detached: the daemon is alive with its nodes" wait_for 3 st_alive
		check "... and serves both ABIs" wait_for 5 st_serving
	else
		ok "strace attach and detach # SKIP strace is not installed"
	fi
else
	not_ok "cusemud serves every model (fioc, rtc, watchdog, i2c, evdev, legacy, probe, slow)"
	diag <"$work/st.log"
fi
[ -z "$daemon_pid" ] || stop_daemon TERM
status=$?
# A call the filter refuses kills the daemon with SIGSYS: exit 159.
check "SIGTERM after all that: exit 0 (exit $status)" test "$status" = 0
