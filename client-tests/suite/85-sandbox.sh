# The sandbox cusemud enters once its nodes exist: capabilities dropped in
# every thread (also in threads made later), the /proc helper keeping
# CAP_SYS_PTRACE alone under a filter of its own, --user, the seccomp filter
# stopping a forbidden call as --seccomp says (cusemud-test's test-only
# `forbidden` model makes them), a detached daemon logging to syslog under
# the filter, and the control socket's peer check on a real daemon.
# Sourced by client-tests/integration.

cusemud_test=$build/daemon/cusemud-test
# Reachable by an unprivileged user, unlike $work.
sb_pub=$(mktemp -d /tmp/cusemu-sandbox.XXXXXX)
chmod 755 "$sb_pub"
sb_ctl=$sb_pub/control
sb_user=nobody
sb_uid=$(id -u $sb_user)
sb_gid=$(id -g $sb_user)
# The daemons killed below dump no core.
ulimit -c 0

# CAP_SYS_PTRACE alone, which the /proc helper keeps (capability 19).
ptrace_only=0000000000080000
none=0000000000000000

# threads_have PID FIELD VALUE: FIELD of /proc/PID/task/*/status is VALUE
# in every thread; prints the threads that differ
threads_have() {
	local t got bad=0
	for t in /proc/"$1"/task/*; do
		got=$(sed -n "s/^$2:[[:space:]]*//p" "$t/status" | tr -s '\t' ' ')
		[ -z "$got" ] && [ ! -d "$t" ] && continue # ended meanwhile
		[ "$got" = "$3" ] && continue
		echo "thread ${t##*/} ($(cat "$t/comm" 2>/dev/null)): $2 is '$got', not '$3'"
		bad=1
	done
	return $bad
}

# check_caps WHAT PID PRM: every thread of PID holds PRM (permitted and
# effective), nothing inheritable or ambient, an empty bounding set, no new
# privileges
check_caps() {
	local what=$1 pid=$2 prm=$3 field want
	for field in CapPrm:$prm CapEff:$prm CapInh:$none CapBnd:$none CapAmb:$none NoNewPrivs:1; do
		want=${field#*:}
		check "$what: every thread's ${field%%:*} is $want" threads_have "$pid" "${field%%:*}" "$want"
	done
}

thread_count() { local t=(/proc/"$1"/task/*); echo ${#t[@]}; }
# helper_of PID: the pid of cusemud PID's /proc helper, its one child
helper_of() { cat /proc/"$1"/task/*/children 2>/dev/null | tr -s ' ' '\n' | grep -m1 .; }

# check_helper WHAT DAEMON_PID: the /proc helper holds CAP_SYS_PTRACE alone,
# runs as root under its own filter, and holds no descriptor of the daemon's
check_helper() {
	local what=$1 helper fds
	helper=$(helper_of "$2")
	if [ -z "$helper" ]; then
		not_ok "$what: cusemud has a /proc helper process"; return
	fi
	check "$what: the /proc helper (pid $helper) is named cusemud-proc" \
		grep -qx cusemud-proc /proc/"$helper"/comm
	check_caps "$what: the /proc helper" "$helper" $ptrace_only
	check "$what: ... runs under its own seccomp filter (Seccomp: 2)" threads_have "$helper" Seccomp 2
	check "$what: ... as root (Uid 0)" threads_have "$helper" Uid "0 0 0 0"
	fds=$(ls -l /proc/"$helper"/fd | awk 'NR > 1 { print $NF }' | sort | paste -sd' ')
	check "$what: ... with nothing open but stdin, stdout, stderr and its socket ($fds)" \
		sh -c "[ \$(ls /proc/$helper/fd | wc -l) -le 4 ] && ! ls -l /proc/$helper/fd | grep -q /dev/cuse"
}
more_threads() { [ "$(thread_count "$1")" -gt "$2" ]; }
log_has() { grep -qF -- "$2" "$1"; }

# --- root (the default): every thread, models' timers included, keeps
# no capability; the filter is on; threads made later inherit both
start_daemon "$work/sb-root.log" --control "$sb_ctl" \
	--device fioc:name=sb-fioc --device rtc:name=sb-rtc --device watchdog:name=sb-wd \
	--device slow:name=sb-slow,hold=sleep
if wait_for 15 is_char_node /dev/sb-fioc && wait_for 5 is_char_node /dev/sb-slow &&
	wait_for 10 log_has "$work/sb-root.log" "ready:"; then
	echo "# $(grep 'sandbox:' "$work/sb-root.log")"
	check "the start-up log says what the sandbox kept" \
		grep -qE "sandbox: seccomp enforce \([0-9]+ system calls allowed\), capabilities kept: none \(every one dropped, in every thread\), user root \(uid 0, gid 0\); /proc helper pid [0-9]+: cap_sys_ptrace only" "$work/sb-root.log"
	check "the models' timer threads exist (rtc-timer, and watchdog's cusemu-timer)" \
		sh -c "grep -qx rtc-timer /proc/$daemon_pid/task/*/comm && grep -qx cusemu-timer /proc/$daemon_pid/task/*/comm"
	check_caps "root" "$daemon_pid" $none
	check "every thread runs under the seccomp filter (Seccomp: 2)" threads_have "$daemon_pid" Seccomp 2
	check_helper "root" "$daemon_pid"
	check "... and the daemon is still root (Uid 0)" threads_have "$daemon_pid" Uid "0 0 0 0"
	# Eight callers at once, each held 50 ms for 3 s: libfuse starts
	# more workers, checked while they serve (idle ones end later).
	before=$(thread_count "$daemon_pid")
	"$clients/load-client-64" --procs 8 --iterations 60 --value 50000 /dev/sb-slow hold-us \
		>"$work/sb-load.out" 2>&1 &
	load_pid=$!
	wait_for 10 more_threads "$daemon_pid" "$before"
	check "8 concurrent SLOW_HOLD_US callers: the daemon starts workers ($before threads before, $(thread_count "$daemon_pid") now)" \
		more_threads "$daemon_pid" "$before"
	check_caps "root, with new workers" "$daemon_pid" $none
	check "... which run under the filter too" threads_have "$daemon_pid" Seccomp 2
	wait "$load_pid"
	status=$?
	check "... and serve every call (exit $status)" test "$status" = 0
	[ "$status" = 0 ] || diag <"$work/sb-load.out"
	check "fioc still serves both ABIs (cuse_client-32 sets and reads the size)" \
		sh -c "'$clients/cuse_client-32' /dev/sb-fioc s 5 && test \"\$('$clients/cuse_client-64' /dev/sb-fioc s)\" = 5"
	"$cusemuctl" --socket "$sb_ctl" list >"$work/sb-list.out" 2>&1
	diag <"$work/sb-list.out"
	check "cusemuctl list says what the sandbox kept" \
		grep -qE '^sandbox: seccomp enforce .*capabilities kept: none .*user root .*/proc helper pid [0-9]+: cap_sys_ptrace only' "$work/sb-list.out"
	check "cusemuctl list --json has it too" \
		sh -c "'$cusemuctl' --socket '$sb_ctl' list --json | python3 -c '
import json, sys
s = json.load(sys.stdin)[\"sandbox\"]
assert s[\"seccomp\"] == \"enforce\" and s[\"capabilities\"] == [] and s[\"uid\"] == 0, s
assert s[\"proc_helper\"][\"pid\"] > 0 and s[\"proc_helper\"][\"capabilities\"] == [\"cap_sys_ptrace\"], s'"
else
	not_ok "cusemud starts with fioc, rtc, watchdog and slow devices"; diag <"$work/sb-root.log"
fi
root_helper=$(helper_of "$daemon_pid")
stop_daemon TERM
status=$?
check "SIGTERM: the sandboxed daemon exits 0 (exit $status)" test "$status" = 0
check "... and its /proc helper ends with it" wait_for 5 is_dead "${root_helper:-0}"
check "... and removes its nodes" wait_for 5 is_gone /dev/sb-fioc
if grep -qiE "warning|error|critical" "$work/sb-root.log"; then
	not_ok "the sandboxed daemon logged no warning or error"; diag <"$work/sb-root.log"
else
	ok "the sandboxed daemon logged no warning or error"
fi

# --- user= in the configuration file: every id switched, no capability,
# the EEPROM file saved as that user in a directory it owns
mkdir "$sb_pub/eeprom"
chown $sb_user "$sb_pub/eeprom"
eeprom=$sb_pub/eeprom/eeprom.bin
python3 -c 'import sys; sys.stdout.buffer.write(bytes(256))' >"$eeprom"
cat >"$work/sb-user.conf" <<EOF
[daemon]
user=$sb_user
seccomp=enforce

[device i2c-9]
model=i2c
eeprom_file=$eeprom
EOF
start_daemon "$work/sb-user.log" --config "$work/sb-user.conf" --control "$sb_ctl" \
	--device evdev:name=sb-event
if wait_for 15 is_char_node /dev/i2c-9 && wait_for 5 is_char_node /dev/sb-event &&
	wait_for 10 log_has "$work/sb-user.log" "ready:"; then
	echo "# $(grep 'sandbox:' "$work/sb-user.log")"
	check "the start-up log names the user and keeps no capability" \
		log_has "$work/sb-user.log" "capabilities kept: none (every one dropped, in every thread), user $sb_user (uid $sb_uid, gid $sb_gid); /proc helper pid"
	check "user=$sb_user: every thread's Uid is $sb_uid" threads_have "$daemon_pid" Uid "$sb_uid $sb_uid $sb_uid $sb_uid"
	check "... and Gid $sb_gid" threads_have "$daemon_pid" Gid "$sb_gid $sb_gid $sb_gid $sb_gid"
	check_caps "user=$sb_user" "$daemon_pid" $none
	check_helper "user=$sb_user" "$daemon_pid"
	# A root client's /proc/PID/exe is closed to $sb_user: the helper
	# reads it. evdev-client-32 reads before its first ioctl, and a read
	# of 16 bytes is EAGAIN only if the node took it for i386 at open.
	"$clients/evdev-client-32" /dev/sb-event >"$work/evdev-client-32.out" 2>&1
	status=$?
	report_client evdev-client-32 i386 $status
	check "i2cset -y 9 0x50 0x42 0x5a writes the EEPROM" i2cset -y 9 0x50 0x42 0x5a
	got=$(od -An -tx1 -j 0x42 -N 1 "$eeprom" | tr -d ' ')
	check "... the daemon saved the file at once, as $sb_user (byte 0x$got, owner $(stat -c %U "$eeprom"))" \
		test "$got/$(stat -c %U "$eeprom")" = "5a/$sb_user"
	check "cusemuctl list (as root) answers, naming the user" \
		sh -c "'$cusemuctl' --socket '$sb_ctl' list | grep -q 'user $sb_user (uid $sb_uid'"
fi
stop_daemon TERM
status=$?
check "SIGTERM: the daemon running as $sb_user exits 0 (exit $status)" test "$status" = 0
check "... and removes its nodes" wait_for 5 is_gone /dev/i2c-9
if grep -qiE "warning|error|critical" "$work/sb-user.log"; then
	not_ok "the daemon running as $sb_user logged no warning or error"; diag <"$work/sb-user.log"
else
	ok "the daemon running as $sb_user logged no warning or error"
fi
rm -f "$sb_ctl"

# An EEPROM file in a directory the user cannot write: refused at start.
mkdir "$sb_pub/root-only"
"$cusemud" --foreground --user $sb_user --control none \
	--device "i2c:name=i2c-9,eeprom_file=$sb_pub/root-only/eeprom.bin" >"$work/sb-denied.log" 2>&1
status=$?
diag <"$work/sb-denied.log"
check "--user with an EEPROM file $sb_user cannot save: start-up fails (exit $status)" test "$status" = 1
check "... saying that the user must be able to create files there" \
	log_has "$work/sb-denied.log" "that user must be able to create files in the file's directory"
check "... and no node is left" is_gone /dev/i2c-9

# --- a forbidden call under each --seccomp mode. FORBIDDEN_SOCKET (0x5a01)
# opens an AF_INET socket, FORBIDDEN_EXEC (0x5a02) runs execve.

# forbidden NODE CMD: the ioctl's result, 0 or an errno name, in 10 s
forbidden() {
	timeout 10 python3 -c '
import errno, fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
try:
    print(fcntl.ioctl(fd, int(sys.argv[2], 0)))
except OSError as e:
    print(errno.errorcode.get(e.errno, e.errno))
' "$1" "$2" 2>&1 || echo "no answer (status $?)"
}
# audit_check WHAT PID SYSCALL SIG: the kernel logged PID's SYSCALL with SIG
# (kills are logged by default: a kernel that logged none has no audit)
audit_check() {
	if ! dmesg 2>/dev/null | grep -q "audit: type=1326"; then
		ok "$1 # SKIP the kernel logs no seccomp audit records"
		return
	fi
	check "$1" sh -c "dmesg | grep 'type=1326' | grep ' pid=$2 ' | grep -q 'sig=$4 .* syscall=$3 '"
}

for call in 0x5a01:socket:41 0x5a02:execve:59; do
	cmd=${call%%:*} name=${call#*:} nr=${call##*:}
	name=${name%%:*}
	cusemud=$cusemud_test start_daemon "$work/sb-kill.log" --control none --device forbidden:name=sb-forbidden
	if ! wait_for 15 is_char_node /dev/sb-forbidden; then
		not_ok "cusemud-test starts with the forbidden device"; diag <"$work/sb-kill.log"
		stop_daemon TERM
		continue
	fi
	pid=$daemon_pid
	got=$(forbidden /dev/sb-forbidden "$cmd")
	check "enforce: a handler calling $name: the client gets an error, not a hang (got $got)" \
		sh -c "[ '$got' != 0 ] && [ '${got#no answer}' = '$got' ]"
	if wait_for 10 is_dead "$pid"; then
		wait "$pid"
		status=$?
	else
		kill -9 "$pid"
		wait "$pid"
		status="still running after 10 s"
	fi
	daemon_pid=
	check "... the kernel kills the daemon with SIGSYS (exit $status, 128 + 31 wanted)" test "$status" = 159
	check "... and its node disappears" wait_for 5 is_gone /dev/sb-forbidden
	audit_check "... the kernel logs the kill: $name (syscall $nr), signal 31" "$pid" "$nr" 31
done

for mode in log off; do
	cusemud=$cusemud_test start_daemon "$work/sb-$mode.log" --seccomp=$mode --control none \
		--device forbidden:name=sb-forbidden
	if ! wait_for 15 is_char_node /dev/sb-forbidden; then
		not_ok "cusemud-test --seccomp=$mode starts"; diag <"$work/sb-$mode.log"
		stop_daemon TERM
		continue
	fi
	pid=$daemon_pid
	filter=$([ $mode = log ] && echo 2 || echo 0)
	check "$mode: the daemon's Seccomp status is $filter" threads_have "$pid" Seccomp "$filter"
	got=$(forbidden /dev/sb-forbidden 0x5a01)
	check "$mode: the handler's socket(AF_INET) goes through (got $got)" test "$got" = 0
	got=$(forbidden /dev/sb-forbidden 0x5a02)
	check "$mode: so does its execve, of a program that does not exist (got $got)" test "$got" = ENOENT
	check "$mode: the daemon still runs" kill -0 "$pid"
	if [ $mode = log ]; then
		audit_check "log: the kernel logs the socket call (syscall 41) and lets it run (signal 0)" "$pid" 41 0
		audit_check "log: ... and the execve (syscall 59)" "$pid" 59 0
	else
		check "off: the kernel logs nothing of this daemon" sh -c "! dmesg | grep 'type=1326' | grep -q ' pid=$pid '"
	fi
	stop_daemon TERM
	status=$?
	check "$mode: SIGTERM, exit 0 (exit $status)" test "$status" = 0
done

# --- detached (no --foreground): logs go to syslog, under the filter. With
# no syslog daemon here (the VM), a listener on /dev/log reads them.
syslog_pid=
if [ ! -e /dev/log ]; then
	python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("/dev/log")
print("listening", flush=True)
while True:
    print(s.recv(4096).decode(errors="replace"), flush=True)
' >"$work/syslog.out" 2>&1 &
	syslog_pid=$!
	wait_for 5 grep -q listening "$work/syslog.out"
fi
timeout 60 "$cusemud" --control none --device fioc:name=sb-bg --device rtc:name=sb-bg-rtc \
	>"$work/sb-bg.out" 2>&1
status=$?
check "detached: cusemud returns 0 once its nodes exist (exit $status)" test "$status" = 0
check "... its start-up lines, the sandbox's among them, on the caller's stderr" \
	sh -c "grep -q 'sandbox: seccomp enforce' '$work/sb-bg.out' && grep -q 'ready:' '$work/sb-bg.out'"
# The daemon, not its /proc helper (which has the same command line).
bg_pid=
for p in /proc/[0-9]*; do
	if [ "$(readlink "$p/exe")" = "$cusemud" ] && grep -qa sb-bg-rtc "$p/cmdline" &&
		[ "$(cat "$p/comm")" != cusemud-proc ]; then
		bg_pid=${p#/proc/}
	fi
done
if [ -n "$bg_pid" ]; then
	check "detached: it runs under the filter" threads_have "$bg_pid" Seccomp 2
	check "detached: the rtc's timer thread came along (hwclock waits for its update interrupt)" \
		timeout 10 hwclock --rtc=/dev/sb-bg-rtc --show --utc --noadjfile
	check "detached: fioc serves" "$clients/cuse_client-64" /dev/sb-bg s
	bg_helper=$(helper_of "$bg_pid")
	check "detached: its /proc helper is its child (pid ${bg_helper:-none})" test -n "$bg_helper"
	kill -TERM "$bg_pid"
	check "detached: SIGTERM ends it" wait_for 20 is_dead "$bg_pid"
	[ -z "$bg_helper" ] || check "... and its /proc helper" wait_for 5 is_dead "$bg_helper"
	check "... and removes its nodes" wait_for 5 is_gone /dev/sb-bg
else
	not_ok "detached: the daemon is found running"; diag <"$work/sb-bg.out"
fi
if [ -n "$syslog_pid" ]; then
	diag <"$work/syslog.out"
	check "detached: syslog gets what it logs once ready (the stop), under the filter" \
		grep -q "cusemud\[$bg_pid\]: stopping" "$work/syslog.out"
	kill "$syslog_pid" 2>/dev/null
	wait "$syslog_pid" 2>/dev/null
	rm -f /dev/log
fi

# --- the control socket lets in root and the control group only, by the
# socket file's mode and by SO_PEERCRED behind it
ctl_group=daemon
start_daemon "$work/sb-ctl.log" --control "$sb_ctl" --control-group $ctl_group \
	--device fioc:name=sb-ctl
if wait_for 15 is_char_node /dev/sb-ctl && wait_for 5 test -S "$sb_ctl"; then
	cp "$cusemuctl" "$sb_pub/cusemuctl"
	as_stranger=(setpriv "--reuid=$sb_uid" "--regid=$sb_gid" --clear-groups "$sb_pub/cusemuctl" --socket "$sb_ctl")
	check "the socket is 0660, group $ctl_group" test "$(stat -c %a/%G "$sb_ctl")" = "660/$ctl_group"
	"${as_stranger[@]}" list >"$work/sb-stranger.out" 2>&1
	status=$?
	check "$sb_user, not in $ctl_group, cannot connect: the file's mode (exit $status: $(head -n 1 "$work/sb-stranger.out"))" \
		test "$status" != 0
	chmod 0666 "$sb_ctl"
	"${as_stranger[@]}" list >"$work/sb-stranger.out" 2>&1
	status=$?
	check "with the mode opened up, SO_PEERCRED refuses $sb_user (exit $status: $(head -n 1 "$work/sb-stranger.out"))" \
		sh -c "[ $status != 0 ] && grep -q 'permission denied: only root (or group $ctl_group) may use the control socket' '$work/sb-stranger.out'"
	check "the daemon logs the refusal" log_has "$work/sb-ctl.log" "control: refused pid"
	check "$sb_user with $ctl_group as a supplementary group is let in (SO_PEERGROUPS)" \
		setpriv "--reuid=$sb_uid" "--regid=$sb_gid" "--groups=$(getent group $ctl_group | cut -d: -f3)" \
			"$sb_pub/cusemuctl" --socket "$sb_ctl" list
	check "$sb_user with $ctl_group as its group is let in (SO_PEERCRED)" \
		setpriv "--reuid=$sb_uid" "--regid=$ctl_group" --clear-groups "$sb_pub/cusemuctl" --socket "$sb_ctl" list
else
	not_ok "cusemud starts with --control-group $ctl_group"; diag <"$work/sb-ctl.log"
fi
stop_daemon TERM
rm -rf "$sb_pub"
