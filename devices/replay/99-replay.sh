# The replay model with real programs: hwclock and i2cdump are recorded
# (record=) on the rtc and i2c models, then run again against replay:file=
# of those recordings, with no device behind it: they print the same. hwclock is recorded as an x86_64 program and replayed to
# both ABIs (its commands have one layout); i2cdump, whose I2C_SMBUS layout
# differs, is recorded and replayed in both. Then an unmatched call, with
# and without strict=true.
# Sourced by client-tests/integration.

replay_ctl=$work/replay-control
hwclock_abi() { if [ "$1" = 64 ]; then /sbin/hwclock "${@:2}"; else "$here/run-i386" usr/sbin/hwclock "${@:2}"; fi; }
i2cdump_abi() { if [ "$1" = 64 ]; then /usr/sbin/i2cdump "${@:2}"; else "$here/run-i386" usr/sbin/i2cdump "${@:2}"; fi; }
rtc_opts=(--rtc=/dev/rtc-rec --utc --noadjfile --show --verbose)

# read_time FILE: the time hwclock --verbose read from the clock. What it
# prints last is that time less how long hwclock ran before it read it
# (its wait for the clock's tick, up to a second, which a replay does not
# wait): that line may differ by a second.
read_time() { grep -m 1 '^Time read from Hardware Clock' "$1"; }

start_daemon "$work/replay-rec.log" \
	--device "rtc:name=rtc-rec,time=2031-02-03 04:05:06,record=$work/rtc.json" \
	--device "i2c:name=i2c-5,record=$work/i2c.json"
if wait_for 15 is_char_node /dev/rtc-rec && wait_for 5 is_char_node /dev/i2c-5; then
	# Recorded too, and replayed to nobody: a replay need not use every line.
	# They begin as i2cdump does (I2C_FUNCS, I2C_SLAVE): its replay must
	# not take them for its own run.
	/usr/sbin/i2cset -y 5 0x50 0x10 0xab && /usr/sbin/i2cset -y 5 0x50 0x21 0x5a
	/sbin/hwclock "${rtc_opts[@]}" >"$work/hw-rec.out" 2>&1
	/usr/sbin/i2cdump -y 5 0x50 >"$work/dump-rec-64.out" 2>&1
	"$here/run-i386" usr/sbin/i2cdump -y 5 0x50 >"$work/dump-rec-32.out" 2>&1
	stop_daemon TERM
	check "hwclock (x86_64) read the recorded clock: $(read_time "$work/hw-rec.out")" \
		grep -q '^Time read from Hardware Clock: 2031/02/03 04:05:' "$work/hw-rec.out"
	check "i2cdump (both ABIs) read the recorded EEPROM" \
		sh -c "grep -q '^10: ab' '$work/dump-rec-64.out' && cmp '$work/dump-rec-64.out' '$work/dump-rec-32.out'"
	lines=$(($(wc -l <"$work/rtc.json") + $(wc -l <"$work/i2c.json")))
	check "the recordings hold their calls ($lines lines), under record='s header" \
		sh -c "[ $lines -gt 500 ] && head -n 1 '$work/i2c.json' | grep -q '\"record\":{\"model\":\"i2c\"'"
else
	not_ok "cusemud creates /dev/rtc-rec and /dev/i2c-5 to record"; diag <"$work/replay-rec.log"
	stop_daemon TERM
fi

# The replay: the node names come from the recordings; strict, so that a
# call the recordings miss would fail the run.
start_daemon "$work/replay.log" --control "$replay_ctl" \
	--device "replay:file=$work/rtc.json,strict=true" \
	--device "replay:file=$work/i2c.json,strict=true"
if wait_for 15 is_char_node /dev/rtc-rec && wait_for 5 is_char_node /dev/i2c-5; then
	for abi in 64 32; do
		arch=$([ $abi = 32 ] && echo i386 || echo x86_64)
		hwclock_abi $abi "${rtc_opts[@]}" >"$work/hw-play.out" 2>&1
		f0=$failed
		check "hwclock ($arch) on the replay reads the recorded time: $(read_time "$work/hw-play.out")" \
			test "$(read_time "$work/hw-play.out")" = "$(read_time "$work/hw-rec.out")"
		[ "$failed" = "$f0" ] || cut -c1-400 "$work/rtc.json" | diag
		i2cdump_abi $abi -y 5 0x50 >"$work/dump-play.out" 2>&1
		f0=$failed
		check "i2cdump ($arch) -y 5 0x50 on the replay prints what it printed on the device" \
			cmp "$work/dump-play.out" "$work/dump-rec-$abi.out"
		[ "$failed" = "$f0" ] || { grep -m 3 'not in' "$work/replay.log"
			grep -m 3 I2C_SMBUS "$work/i2c.json" | cut -c1-600; } | diag
		if [ $abi = 32 ]; then
			got=$(grep -c "I2C_SMBUS" "$work/replay.log")
			check "... answered from the i386 lines of the recording, no call missed ($got log lines)" \
				test "$got" = 0
		fi
	done
	"$cusemuctl" --socket "$replay_ctl" device i2c-5 status >"$work/status.out" 2>&1
	check "cusemuctl device i2c-5 status: $(tr '\n' ' ' <"$work/status.out")" \
		grep -qx 'unmatched: 0' "$work/status.out"
	stop_daemon TERM
	status=$?
	check "the strict replay that answered every call exits 0 (got $status)" test $status = 0
else
	not_ok "cusemud serves the recordings on /dev/rtc-rec and /dev/i2c-5"; diag <"$work/replay.log"
	stop_daemon TERM
fi

# A call the recording lacks (RTC_AIE_ON): ENOTTY and one log line naming
# it and the nearest recorded command; strict, EIO and exit status 1.
for strict in false true; do
	start_daemon "$work/replay-miss.log" \
		--device "replay:file=$work/rtc.json,name=rtc-miss,strict=$strict"
	if ! wait_for 15 is_char_node /dev/rtc-miss; then
		not_ok "cusemud serves /dev/rtc-miss (strict=$strict)"; diag <"$work/replay-miss.log"
		stop_daemon TERM; continue
	fi
	got=$(python3 -c '
import errno, fcntl, os
fd = os.open("/dev/rtc-miss", os.O_RDONLY)
try:
    fcntl.ioctl(fd, 0x7001)
    print("0")
except OSError as e:
    print(errno.errorcode[e.errno])' 2>&1)
	stop_daemon TERM
	status=$?
	if [ $strict = false ]; then
		check "an unmatched RTC_AIE_ON gets ENOTTY (got $got)" test "$got" = ENOTTY
		check "... and the log names it and the nearest recorded command" \
			grep -q 'rtc-miss: not in .*: ioctl 0x00007001 from x86_64, arg 0x0; nearest recorded command: 0x00007003 RTC_UIE_ON' "$work/replay-miss.log"
		check "... and the daemon exits 0 (got $status)" test $status = 0
	else
		check "strict=true: an unmatched RTC_AIE_ON gets EIO (got $got)" test "$got" = EIO
		check "... and the daemon exits 1 (got $status)" test $status = 1
	fi
	grep 'not in' "$work/replay-miss.log" | diag
done

# Across ABIs by a header's two layouts: PROBE_WHO's unsigned long, recorded
# from an x86_64 probe-client, answers an i386 one (whose command is
# numbered and sized otherwise) with layouts= the header, strict.
probe_h=$(cd "$here/.." && pwd)/include/cusemu/abi/probe.h
start_daemon "$work/replay-who.log" --device "probe:name=probe-rec,record=$work/who.json"
if wait_for 15 is_char_node /dev/probe-rec; then
	recorded=$("$clients/probe-client-64" /dev/probe-rec who 2>&1)
	stop_daemon TERM
	start_daemon "$work/replay-who.log" \
		--device "replay:file=$work/who.json,layouts=$probe_h,strict=true"
	if wait_for 15 is_char_node /dev/probe-rec; then
		got=$("$clients/probe-client-32" /dev/probe-rec who 2>&1)
		stop_daemon TERM
		status=$?
		check "probe-client (i386) who on the replay of an x86_64 recording, layouts= its header: $got" \
			test "$got" = "$recorded"
		check "... every call answered: the strict replay exits 0 (got $status)" test $status = 0
		check "... and the log says how many calls answer the other ABI" \
			grep -q 'calls also answer the other ABI, converted by the layouts of' "$work/replay-who.log"
	else
		not_ok "cusemud replays who.json with layouts="; diag <"$work/replay-who.log"
		stop_daemon TERM
	fi
else
	not_ok "cusemud serves /dev/probe-rec to record"; diag <"$work/replay-who.log"
	stop_daemon TERM
fi
