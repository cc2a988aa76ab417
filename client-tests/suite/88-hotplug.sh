# Devices added and removed while the daemon runs, in its sandbox:
# cusemuctl add makes a CUSE node as --device would (hwclock on it in both
# ABIs), remove takes it away with a file still open on it; under 2.6.11 a
# removal waits for the i386 call running through the device's ioctl32
# entry, and a duplicate entry refuses the add; a daemon that became
# another user says why it cannot add a node. Sourced by
# client-tests/integration.

hp_ctl=$work/hp.sock
hp() { "$cusemuctl" --control "$hp_ctl" "$@"; }
hp_hwclock64() { /sbin/hwclock --rtc="$1" --utc --noadjfile --show; }
hp_hwclock32() { "$here/run-i386" usr/sbin/hwclock --rtc="$1" --utc --noadjfile --show; }
hp_alive() { kill -0 "$daemon_pid" 2>/dev/null; }
# has_out ERE: the last hp_run's output matches (check writes $work/out).
has_out() { grep -Eq -- "$1" "$work/hp.out"; }
hp_run() { hp "$@" >"$work/hp.out" 2>&1; }

start_daemon "$work/hp.log" --control "$hp_ctl" --device fioc:name=hp-fioc
if wait_for 15 is_char_node /dev/hp-fioc; then
	check "cusemuctl add rtc:name=hp-rtc,mode=0666 in the sandboxed daemon" \
		hp_run add rtc:name=hp-rtc,mode=0666
	check "... says where it serves" has_out "^added /dev/hp-rtc: rtc, kernel model modern"
	check "/dev/hp-rtc is a character node" is_char_node /dev/hp-rtc
	check "... with the mode asked for (0666)" test "$(stat -c %a /dev/hp-rtc)" = 666
	check "... the major of the other node, the next minor" \
		test "$(stat -c %t /dev/hp-rtc)" = "$(stat -c %t /dev/hp-fioc)" -a \
		"$((0x$(stat -c %T /dev/hp-rtc)))" = "$((0x$(stat -c %T /dev/hp-fioc) + 1))"
	for abi in 64 32; do
		arch=$([ $abi = 32 ] && echo i386 || echo x86_64)
		shown=$(hp_hwclock$abi /dev/hp-rtc 2>&1)
		check "hwclock ($arch) --show reads the added rtc: $shown" \
			grep -Eq '^[0-9]{4}-[0-9]{2}-[0-9]{2} ' <<<"$shown"
	done
	if hp_run add fioc:name=hp-rtc; then
		not_ok "adding a node name in use is refused"
	else
		check "adding a node name in use is refused, saying whose" \
			has_out "node name 'hp-rtc' is already used by a rtc device"
	fi
	if hp_run add fioc:name=hp-owned,owner=nobody; then
		not_ok "owner= other than root is refused without CAP_CHOWN"
	else
		check "owner= other than root is refused, saying CAP_CHOWN is gone" \
			has_out "need CAP_CHOWN, which cusemud dropped once it started"
	fi
	check "... and leaves no node behind" is_gone /dev/hp-owned
	# A file open across the removal: the kernel fails its later calls.
	python3 -c '
import errno, fcntl, os, subprocess, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
fcntl.ioctl(fd, 0x80247009, bytes(36))          # RTC_RD_TIME, served
subprocess.run(sys.argv[2:], check=True)
try:
    fcntl.ioctl(fd, 0x80247009, bytes(36))
    print("served after the removal")
except OSError as e:
    print("after the removal:", errno.errorcode[e.errno])
' /dev/hp-rtc "$cusemuctl" --control "$hp_ctl" remove hp-rtc >"$work/hp-open.out" 2>&1
	check "cusemuctl remove hp-rtc with a file open on it" \
		grep -qx "removed /dev/hp-rtc (rtc)" "$work/hp-open.out"
	check "... that file's later ioctl fails ($(tail -n 1 "$work/hp-open.out"))" \
		grep -Eq "^after the removal: E[A-Z]+$" "$work/hp-open.out"
	check "... the node is gone" wait_for 5 is_gone /dev/hp-rtc
	check "... the daemon lives on, its filter allowing what add and remove call" hp_alive
	check "... and the node started with still serves" \
		sh -c "'$clients/cuse_client-64' /dev/hp-fioc s 3 && test \"\$('$clients/cuse_client-32' /dev/hp-fioc s)\" = 3"
	check "the log says it was removed" grep -q "removed /dev/hp-rtc (rtc)" "$work/hp.log"
	check "the same name is added again" hp add rtc:name=hp-rtc
	shown=$(hp_hwclock32 /dev/hp-rtc 2>&1)
	check "... and hwclock (i386) reads it: $shown" \
		grep -Eq '^[0-9]{4}-[0-9]{2}-[0-9]{2} ' <<<"$shown"
	if hp_run remove hp-nothing; then not_ok "removing an unknown node fails"
	else check "removing an unknown node fails, saying so" has_out "no device hp-nothing here"; fi
	stop_daemon TERM
	check "cusemud exits 0 after adds and removes" test $? = 0
	check "... and removes the added node" is_gone /dev/hp-rtc
else
	not_ok "cusemud starts for the hotplug checks"; diag <"$work/hp.log"
	stop_daemon KILL
fi

# 2.6.11: the global ioctl32 table.
start_daemon "$work/hp11.log" --control "$hp_ctl" --model 2.6.11 \
	--plugin "$build/tests/plugtest.so" --device fioc:name=hp-fioc
if wait_for 15 is_char_node /dev/hp-fioc; then
	check "cusemuctl add plugnap: a plugin's model, under 2.6.11" hp add plugnap:name=hp-nap
	check "nap-client-32 on it goes through its ioctl32 entry" \
		"$clients/nap-client-32" /dev/hp-nap 10
	"$clients/nap-client-32" /dev/hp-nap 3000 >"$work/hp-nap.out" 2>&1 &
	hp_napper=$!
	sleep 1
	hp_start=$(date +%s%N)
	check "cusemuctl remove hp-nap while an i386 call naps in its entry" hp remove hp-nap
	hp_took=$((($(date +%s%N) - hp_start) / 1000000))
	wait "$hp_napper"
	check "the removal waited for that call (${hp_took} ms)" test "$hp_took" -ge 1000
	check "... which ended as it would have (ok)" grep -qx ok "$work/hp-nap.out"
	check "the log says unregister_ioctl32_conversion waited on ioctl32_sem" \
		grep -q "unregister_ioctl32_conversion(40045102) waits for the 32-bit calls" "$work/hp11.log"
	check "... and the node is gone" wait_for 5 is_gone /dev/hp-nap
	if hp_run add probe:name=hp-probe,methods=ioctl; then
		not_ok "a device whose 32-bit command is another's in the table is refused"
	else
		check "a device whose 32-bit command is another's in the table is refused" \
			grep -q "PROBE_CLAIM_FIOC_READ (00004502) is already in the global ioctl32 table, registered by /dev/hp-fioc (fioc)" "$work/hp.out"
	fi
	check "... with the kernel's log line" \
		grep -q "Trying to register duplicated ioctl32 handler 4502" "$work/hp11.log"
	check "... and no node" is_gone /dev/hp-probe
	check "fioc's own 32-bit entries still serve" \
		sh -c "test \"\$('$clients/cuse_client-32' /dev/hp-fioc s)\" -ge 0"
	stop_daemon TERM
	check "cusemud (2.6.11) exits 0" test $? = 0
else
	not_ok "cusemud starts under 2.6.11 with the test plugin"; diag <"$work/hp11.log"
	stop_daemon KILL
fi

# A daemon that became another user cannot open /dev/cuse, and says so.
start_daemon "$work/hpu.log" --control "$hp_ctl" --user nobody --device fioc:name=hp-fioc
if wait_for 15 is_char_node /dev/hp-fioc && wait_for 5 grep -q "^cusemud: ready" "$work/hpu.log"; then
	if hp_run add rtc:name=hp-rtc; then
		not_ok "add in a daemon running as nobody is refused"
	else
		check "add in a daemon running as nobody is refused, saying why and what to do" \
			grep -q "since start-up cusemud runs as user nobody (user=), and a new CUSE node needs /dev/cuse" "$work/hp.out"
	fi
	check "... and leaves no node" is_gone /dev/hp-rtc
	stop_daemon TERM
	check "cusemud (as nobody) exits 0" test $? = 0
else
	not_ok "cusemud --user nobody starts"; diag <"$work/hpu.log"
	stop_daemon KILL
fi
