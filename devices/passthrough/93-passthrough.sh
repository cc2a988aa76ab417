# passthrough in front of cusemu's own nodes, served by a second cusemud:
# hwclock, i2cdump and evtest, x86_64 and i386 builds, print through the
# passthrough what they print on the node behind it (an i386 program's
# calls go through the 32-bit entry, so the node sees a 32-bit caller); and
# the compat shim: an i386 client of a device without compat_ioctl gets
# ENOTTY from it directly and its answer through passthrough with
# layouts= its header. Sourced by client-tests/integration.

pt_src=$(cd "$here/.." && pwd)
pt_ctl=$work/pt-inner-control
pt_hw() { # pt_hw ABI ARG...
	local abi=$1
	shift
	if [ "$abi" = 64 ]; then /sbin/hwclock "$@"; else "$here/run-i386" usr/sbin/hwclock "$@"; fi
}
pt_i2c() { # pt_i2c ABI TOOL ARG...
	local abi=$1 tool=$2
	shift 2
	if [ "$abi" = 64 ]; then "/usr/sbin/$tool" "$@"; else "$here/run-i386" "usr/sbin/$tool" "$@"; fi
}
pt_evtest() { # pt_evtest ABI ARG...
	local abi=$1
	shift
	if [ "$abi" = 64 ]; then /usr/bin/evtest "$@"; else "$here/run-i386" usr/bin/evtest "$@"; fi
}
# evtest's description of a device: everything before it starts reading.
pt_evtest_header() { timeout 5 cat "$1" | sed '/^Testing/,$d'; }

start_daemon "$work/pt-inner.log" --control "$pt_ctl" \
	--device rtc:name=rtc-inner --device i2c:name=i2c-40 \
	--device evdev:name=event-inner \
	--device probe:name=probe-nocompat,methods=unlocked_ioctl
inner_pid=$daemon_pid
if wait_for 15 is_char_node /dev/rtc-inner && wait_for 5 is_char_node /dev/i2c-40 &&
	wait_for 5 is_char_node /dev/event-inner && wait_for 5 is_char_node /dev/probe-nocompat; then
	"$cusemud" --foreground \
		--device passthrough:name=rtc-pt,path=/dev/rtc-inner,like=rtc \
		--device passthrough:name=i2c-41,path=/dev/i2c-40,like=i2c \
		--device passthrough:name=event-pt,path=/dev/event-inner,like=evdev \
		--device "passthrough:name=probe-pt,path=/dev/probe-nocompat,like=none,layouts=$pt_src/include/cusemu/abi/probe.h" \
		>"$work/pt-outer.log" 2>&1 &
	outer_pid=$!
	if wait_for 30 is_char_node /dev/rtc-pt && wait_for 5 is_char_node /dev/probe-pt; then
		ok "a second cusemud serves passthrough nodes in front of the first one's"
		for abi in 64 32; do
			arch=$([ $abi = 32 ] && echo i386 || echo x86_64)
			opts=(--utc --noadjfile --show)
			# The second reading comes after the first by what the two
			# runs took (each waits for a tick; an i386 start in a busy
			# VM takes seconds), and a second for the tick.
			began=$(date +%s)
			direct=$(pt_hw $abi --rtc=/dev/rtc-inner "${opts[@]}" 2>&1)
			through=$(pt_hw $abi --rtc=/dev/rtc-pt "${opts[@]}" 2>&1)
			took=$(($(date +%s) - began))
			d=$(date -u -d "$direct" +%s 2>/dev/null || echo 0)
			t=$(date -u -d "$through" +%s 2>/dev/null || echo 100000)
			check "hwclock ($arch) --show through the passthrough ($through) reads the clock behind it ($direct, ${took} s apart at most)" \
				test "$((t - d))" -ge 0 -a "$((t - d))" -le "$((took + 1))"

			pt_i2c $abi i2cdump -y 40 0x50 b >"$work/pt-dump-direct.out" 2>&1
			pt_i2c $abi i2cdump -y 41 0x50 b >"$work/pt-dump-pt.out" 2>&1
			check "i2cdump ($arch) -y 41 0x50 through the passthrough prints what -y 40 prints" \
				cmp "$work/pt-dump-direct.out" "$work/pt-dump-pt.out"
			pt_i2c $abi i2ctransfer -y 40 w1@0x50 0x10 r8 >"$work/pt-xfer-direct.out" 2>&1
			pt_i2c $abi i2ctransfer -y 41 w1@0x50 0x10 r8 >"$work/pt-xfer-pt.out" 2>&1
			check "i2ctransfer ($arch) (I2C_RDWR, two messages) through the passthrough reads what it reads directly: $(cat "$work/pt-xfer-pt.out")" \
				cmp "$work/pt-xfer-direct.out" "$work/pt-xfer-pt.out"

			pt_evtest $abi /dev/event-inner >"$work/pt-ev-direct.out" 2>&1 &
			ev1=$!
			pt_evtest $abi /dev/event-pt >"$work/pt-ev-pt.out" 2>&1 &
			ev2=$!
			wait_for 10 grep -q '^Testing' "$work/pt-ev-pt.out"
			wait_for 10 grep -q '^Testing' "$work/pt-ev-direct.out"
			"$cusemuctl" --socket "$pt_ctl" inject event-inner EV_KEY KEY_A 1 >/dev/null 2>&1
			wait_for 10 grep -q 'KEY_A.*value 1' "$work/pt-ev-pt.out"
			kill $ev1 $ev2 2>/dev/null
			wait $ev1 $ev2 2>/dev/null
			check "evtest ($arch) describes the device through the passthrough as directly" \
				cmp <(pt_evtest_header "$work/pt-ev-direct.out" | grep -v '^Input device name\|^Input driver') \
				<(pt_evtest_header "$work/pt-ev-pt.out" | grep -v '^Input device name\|^Input driver')
			check "evtest ($arch) reads an injected key through the passthrough ($( [ $abi = 32 ] && echo 16 || echo 24)-byte events)" \
				grep -q 'type 1 (EV_KEY), code 30 (KEY_A), value 1' "$work/pt-ev-pt.out"

			direct=$("$clients/probe-client-$abi" /dev/probe-nocompat who 2>&1)
			through=$("$clients/probe-client-$abi" /dev/probe-pt who 2>&1)
			if [ $abi = 32 ]; then
				check "probe-client (i386) who on a device without compat_ioctl: $direct" \
					test "$direct" = "errno=ENOTTY"
				check "... and through the passthrough's compat shim, the native method: $through" \
					test "$through" = "method=unlocked_ioctl big_lock_depth=0 compat=0"
			else
				check "probe-client (x86_64) who, directly and through the passthrough: $through" \
					test "$through" = "$direct"
			fi
		done
		check "the log says once that PROBE_WHO from i386 was converted by the shim" \
			test "$(grep -c 'i386 PROBE_WHO (0x80045002): converted to x86_64 0x80085002' "$work/pt-outer.log")" = 1
		check "the log says an i386 RTC_RD_TIME went to the driver's compat_ioctl" \
			grep -q 'i386 RTC_RD_TIME .*: the driver.s compat_ioctl, through the 32-bit entry' "$work/pt-outer.log"
		check "the sandbox of the passthrough daemon allows its calls (it is still running)" kill -0 "$outer_pid"
		kill -TERM "$outer_pid"
		wait_for 20 is_dead "$outer_pid"
		wait "$outer_pid"
		check "the passthrough daemon stops cleanly" test $? = 0
	else
		not_ok "a second cusemud serves passthrough nodes in front of the first one's"
		kill "$outer_pid" 2>/dev/null
	fi
	diag <"$work/pt-outer.log"
	stop_daemon TERM
	check "the daemon behind the passthrough stops cleanly" test $? = 0
else
	not_ok "cusemud creates the nodes the passthrough stands in front of"
	diag <"$work/pt-inner.log"
	stop_daemon KILL
fi
