# Debian's evtest on the evdev model's nodes, as x86_64 and as i386 builds:
# the device information it queries (name, ID, supported events: atkbd's
# keys), the
# events cusemuctl injects and replays as evtest reads them (24-byte
# struct input_event for x86_64, 16-byte for i386), the key state of
# evtest --query, events written by evemu-event and libevdev (an LED lit),
# and the errors of bad injections.
# The i386 build comes from client-tests/fetch-i386 (run by setup).
# Sourced by client-tests/integration.

ev_ctl=$work/evdev-control
ev_kbd=/dev/event-kbd
ev_mouse=/dev/event-mouse

# evtest ABI ARG...: the host's evtest (64) or the i386 build (32)
evtest() {
	local abi=$1
	shift
	if [ "$abi" = 64 ]; then
		/usr/bin/evtest "$@"
	else
		"$here/run-i386" usr/bin/evtest "$@"
	fi
}

# ev_inject NODE TYPE CODE VALUE...: cusemuctl inject, output in $work/inject.out
ev_inject() { "$cusemuctl" --socket "$ev_ctl" inject "$@" >"$work/inject.out" 2>&1; }

# ev_start ABI NODE OUT: evtest reading NODE until it is killed; sets ev_pid
ev_start() {
	evtest "$1" "$2" >"$3" 2>&1 &
	ev_pid=$!
}
ev_stop() {
	kill "$ev_pid" 2>/dev/null
	wait "$ev_pid" 2>/dev/null
	ev_pid=
}
# ev_has FILE TEXT: FILE has a line holding TEXT
ev_has() { grep -qF -- "$2" "$1"; }
# ev_events FILE: the event lines of an evtest output, without their times
ev_events() { sed -n 's/^Event: time [0-9.]*, //p' "$1"; }
# ev_seen FILE COUNT TEXT: COUNT event lines holding TEXT (or more)
ev_seen() { [ "$(ev_events "$1" | grep -cF -- "$3")" -ge "$2" ]; }
syn='-------------- SYN_REPORT ------------'

start_daemon "$work/evdev.log" --control "$ev_ctl" \
	--device evdev:name=event-kbd,device_name=cusemu-test-keyboard,bustype=0x03,vendor=0x1234,product=0x5678,version=0x0111 \
	--device evdev:name=event-mouse,profile=mouse,device_name=cusemu-test-mouse
if wait_for 15 is_char_node "$ev_kbd" && wait_for 5 is_char_node "$ev_mouse"; then
	for abi in 64 32; do
		arch=$([ $abi = 32 ] && echo i386 || echo x86_64)
		out=$work/evtest-$abi.out

		# The keyboard: what evtest finds, then a key press and release.
		ev_start $abi "$ev_kbd" "$out"
		if wait_for 10 ev_has "$out" "Testing ... (interrupt to exit)"; then
			ok "evtest ($arch) $ev_kbd reaches 'Testing ... (interrupt to exit)'"
		else
			not_ok "evtest ($arch) $ev_kbd reaches 'Testing ... (interrupt to exit)'"
			diag <"$out"
		fi
		grep -E '^Input|^  Event type|Event code (1|2|30|42|0) |[Rr]epeat|Value' "$out" | diag
		check "evtest ($arch) reads the device name" \
			grep -qx 'Input device name: "cusemu-test-keyboard"' "$out"
		check "evtest ($arch) reads bus, vendor, product and version" \
			grep -qx 'Input device ID: bus 0x3 vendor 0x1234 product 0x5678 version 0x111' "$out"
		check "evtest ($arch) reads the driver version" \
			grep -qE '^Input driver version is [0-9]+\.[0-9]+\.[0-9]+$' "$out"
		for t in '0 (EV_SYN)' '1 (EV_KEY)' '4 (EV_MSC)' '17 (EV_LED)'; do
			check "evtest ($arch): the keyboard supports event type $t" \
				grep -qxF "  Event type $t" "$out"
		done
		for c in '30 (KEY_A)' '2 (KEY_1)' '42 (KEY_LEFTSHIFT)' '0 (LED_NUML)'; do
			check "evtest ($arch): the keyboard supports event code $c" \
				grep -qxF -e "    Event code $c" -e "    Event code $c state 0" "$out"
		done
		# atkbd's keys: 145, the PC's right-hand modifiers, Windows and
		# menu keys, keypad Enter, Pause and media keys among them.
		for c in '97 (KEY_RIGHTCTRL)' '100 (KEY_RIGHTALT)' '125 (KEY_LEFTMETA)' \
			'127 (KEY_COMPOSE)' '96 (KEY_KPENTER)' '119 (KEY_PAUSE)' '86 (KEY_102ND)' \
			'113 (KEY_MUTE)'; do
			check "evtest ($arch): the keyboard supports event code $c" \
				grep -qxF -e "    Event code $c" -e "    Event code $c state 0" "$out"
		done
		nkeys=$(awk '/^  Event type 1 /{k=1;next} /^  Event type/{k=0} k && /^    Event code/{n++} END{print n+0}' "$out")
		check "evtest ($arch): the keyboard has atkbd's 145 keys (got $nkeys)" test "$nkeys" = 145
		# evtest lists EV_REP apart, with EVIOCGREP's delay and period.
		check "evtest ($arch): the keyboard has key repeat (EV_REP)" \
			sh -c "grep -qx 'Key repeat handling:' '$out' && grep -qxF '  Repeat type 20 (EV_REP)' '$out'"
		check "evtest ($arch): the keyboard has no EV_REL" \
			sh -c "! grep -q '(EV_REL)' '$out'"

		check "cusemuctl inject $ev_kbd EV_KEY KEY_A 1 exits 0" ev_inject "$ev_kbd" EV_KEY KEY_A 1
		check "evtest ($arch) prints the press" \
			wait_for 5 ev_seen "$out" 1 'type 1 (EV_KEY), code 30 (KEY_A), value 1'
		check "cusemuctl inject $ev_kbd EV_KEY KEY_A 0 exits 0" ev_inject "$ev_kbd" EV_KEY KEY_A 0
		check "evtest ($arch) prints the release" \
			wait_for 5 ev_seen "$out" 1 'type 1 (EV_KEY), code 30 (KEY_A), value 0'
		check "evtest ($arch) prints a SYN_REPORT after each" \
			wait_for 5 ev_seen "$out" 2 "$syn"
		ev_events "$out" | diag
		# Only these four events, in order: nothing torn or misread.
		check "evtest ($arch) reads press, SYN_REPORT, release, SYN_REPORT and nothing else" \
			diff <(printf '%s\n' 'type 1 (EV_KEY), code 30 (KEY_A), value 1' "$syn" \
				'type 1 (EV_KEY), code 30 (KEY_A), value 0' "$syn") <(ev_events "$out")
		# The event's time, in the ABI's struct timeval, is now.
		stamp=$(sed -n 's/^Event: time \([0-9]*\)\..*/\1/p' "$out" | head -n 1)
		now=$(date +%s)
		check "evtest ($arch) reads event times of now: ${stamp:-none} (now $now)" \
			test "${stamp:-0}" -ge $((now - 30)) -a "${stamp:-0}" -le $((now + 5))

		# A replay: two groups, 0.2 s apart, one SYN_REPORT each.
		printf '%s\n' '# shift+b, held for 0.2 s' \
			'0.0 EV_KEY KEY_LEFTSHIFT 1' '0.0 EV_KEY KEY_B 1' '' \
			'0.2 EV_KEY KEY_B 0' '0.2 EV_KEY KEY_LEFTSHIFT 0' >"$work/replay.ev"
		"$cusemuctl" --socket "$ev_ctl" replay "$ev_kbd" "$work/replay.ev" >"$work/replay.out" 2>&1
		status=$?
		check "cusemuctl replay exits 0" test "$status" = 0
		check "cusemuctl replay says: $(cat "$work/replay.out")" \
			grep -qx 'replayed 4 events in 2 groups' "$work/replay.out"
		check "evtest ($arch) reads the replayed groups" wait_for 5 ev_seen "$out" 4 "$syn"
		check "... each group in one frame, in order" \
			diff <(printf '%s\n' 'type 1 (EV_KEY), code 42 (KEY_LEFTSHIFT), value 1' \
				'type 1 (EV_KEY), code 48 (KEY_B), value 1' "$syn" \
				'type 1 (EV_KEY), code 48 (KEY_B), value 0' \
				'type 1 (EV_KEY), code 42 (KEY_LEFTSHIFT), value 0' "$syn") \
			<(ev_events "$out" | tail -n +5)
		gap=$(awk -F'[ ,]+' '/^Event: time/ && /KEY_B/ { t[n++] = $3 }
			END { if (n == 2) printf "%.3f", t[1] - t[0]; else print "none" }' "$out")
		check "evtest ($arch): the second group comes 0.2 s after the first (gap $gap s)" \
			awk -v g="$gap" 'BEGIN { exit !(g != "none" && g >= 0.15 && g < 1.5) }'
		ev_stop

		# evtest --query: 10 while the key is down, 0 once it is up.
		ev_inject "$ev_kbd" EV_KEY KEY_A 1
		evtest $abi --query "$ev_kbd" EV_KEY KEY_A >"$work/query.out" 2>&1
		status=$?
		check "evtest ($arch) --query EV_KEY KEY_A exits 10 while the key is held (got $status)" \
			test "$status" = 10
		ev_inject "$ev_kbd" EV_KEY KEY_A 0
		evtest $abi --query "$ev_kbd" EV_KEY KEY_A >"$work/query.out" 2>&1
		status=$?
		check "evtest ($arch) --query EV_KEY KEY_A exits 0 once it is released (got $status)" \
			test "$status" = 0
		diag <"$work/query.out"

		# The mouse: relative motion, negative values too.
		out=$work/evtest-mouse-$abi.out
		ev_start $abi "$ev_mouse" "$out"
		check "evtest ($arch) $ev_mouse reaches 'Testing'" \
			wait_for 10 ev_has "$out" "Testing ... (interrupt to exit)"
		check "evtest ($arch) reads the mouse's name" \
			grep -qx 'Input device name: "cusemu-test-mouse"' "$out"
		check "evtest ($arch): the mouse supports EV_REL REL_X" \
			sh -c "grep -qx '  Event type 2 (EV_REL)' '$out' && grep -qx '    Event code 0 (REL_X)' '$out'"
		check "evtest ($arch): the mouse has BTN_LEFT and no KEY_A" \
			sh -c "grep -qE '^    Event code 272 \(BTN_LEFT\)' '$out' && ! grep -q '(KEY_A)' '$out'"
		check "cusemuctl inject $ev_mouse EV_REL REL_X 5 EV_REL REL_Y -3 exits 0" \
			ev_inject "$ev_mouse" EV_REL REL_X 5 EV_REL REL_Y -3
		check "evtest ($arch) prints REL_X 5" \
			wait_for 5 ev_seen "$out" 1 'type 2 (EV_REL), code 0 (REL_X), value 5'
		check "evtest ($arch) prints REL_Y -3" \
			wait_for 5 ev_seen "$out" 1 'type 2 (EV_REL), code 1 (REL_Y), value -3'
		wait_for 5 ev_seen "$out" 1 "$syn"
		ev_events "$out" | diag
		check "... in one frame, and nothing else" \
			diff <(printf '%s\n' 'type 2 (EV_REL), code 0 (REL_X), value 5' \
				'type 2 (EV_REL), code 1 (REL_Y), value -3' "$syn") <(ev_events "$out")
		ev_stop
	done

	# Programs that write events (input_inject_event): evemu-event sends
	# a key, libevdev lights an LED (libinput sets keyboard LEDs so).
	for abi in 64 32; do
		arch=$([ $abi = 32 ] && echo i386 || echo x86_64)
		out=$work/evtest-write-$abi.out
		ev_start 64 "$ev_kbd" "$out"
		wait_for 10 ev_has "$out" "Testing ... (interrupt to exit)"
		if [ $abi = 64 ]; then
			evemu_event() { /usr/bin/evemu-event "$@"; }
			tweak() { /usr/bin/libevdev-tweak-device "$@"; }
		else
			evemu_event() { "$here/run-i386" usr/bin/evemu-event "$@"; }
			tweak() { "$here/run-i386" usr/bin/libevdev-tweak-device "$@"; }
		fi
		check "evemu-event ($arch) writes KEY_C 1 with a SYN_REPORT (exit 0)" \
			evemu_event "$ev_kbd" --type EV_KEY --code KEY_C --value 1 --sync
		check "... and a reader sees it" \
			wait_for 5 ev_seen "$out" 1 'type 1 (EV_KEY), code 46 (KEY_C), value 1'
		check "evemu-event ($arch) writes KEY_C 0" \
			evemu_event "$ev_kbd" --type EV_KEY --code KEY_C --value 0 --sync
		check "... and EVIOCGKEY has KEY_C up again (evtest --query exits 0)" \
			/usr/bin/evtest --query "$ev_kbd" EV_KEY KEY_C
		# An autorepeat of a key not held passes, and holds nothing.
		check "evemu-event ($arch) writes KEY_D 2 (autorepeat) with a SYN_REPORT" \
			evemu_event "$ev_kbd" --type EV_KEY --code KEY_D --value 2 --sync
		check "... and a reader sees it, though KEY_D is not held" \
			wait_for 5 ev_seen "$out" 1 'type 1 (EV_KEY), code 32 (KEY_D), value 2'
		check "... and EVIOCGKEY has KEY_D up (evtest --query exits 0)" \
			/usr/bin/evtest --query "$ev_kbd" EV_KEY KEY_D
		check "libevdev-tweak-device ($arch) --led LED_CAPSL --on (exit 0)" \
			tweak --led LED_CAPSL --on "$ev_kbd"
		/usr/bin/evtest --query "$ev_kbd" EV_LED LED_CAPSL
		status=$?
		check "... and EVIOCGLED reports Caps Lock lit (evtest --query exits 10, got $status)" \
			test "$status" = 10
		check "... and a reader sees the LED event" \
			wait_for 5 ev_seen "$out" 1 'type 17 (EV_LED), code 1 (LED_CAPSL), value 1'
		check "libevdev-tweak-device ($arch) --led LED_CAPSL --off" \
			tweak --led LED_CAPSL --off "$ev_kbd"
		check "... and it is dark again" /usr/bin/evtest --query "$ev_kbd" EV_LED LED_CAPSL
		ev_stop
	done
	check "a write shorter than one event fails with EINVAL" \
		python3 -c '
import errno, os, sys
fd = os.open(sys.argv[1], os.O_WRONLY)
try:
    os.write(fd, bytes(23))
except OSError as e:
    sys.exit(0 if e.errno == errno.EINVAL else 1)
sys.exit(1)' "$ev_kbd"

	# Bad injections: an error from cusemuctl, and no event reaches a reader.
	out=$work/evtest-bad.out
	ev_start 64 "$ev_kbd" "$out"
	wait_for 10 ev_has "$out" "Testing ... (interrupt to exit)"
	for bad in "$ev_kbd EV_KEY KEY_NOSUCH 1" "$ev_kbd EV_REL REL_X 1" \
		"$ev_kbd EV_BOGUS 0 1" "$ev_kbd EV_KEY KEY_A" "$ev_mouse EV_KEY KEY_A 1" \
		"/dev/event-none EV_KEY KEY_A 1"; do
		# shellcheck disable=SC2086 # the words of $bad
		ev_inject $bad
		status=$?
		echo "inject $bad: status $status: $(cat "$work/inject.out")" | diag
		check "cusemuctl inject $bad fails with exit 1 and a message" \
			sh -c "[ $status = 1 ] && grep -q '^cusemuctl: ..' '$work/inject.out'"
	done
	printf '%s\n' '0.0 EV_KEY KEY_C 1' '0.1 EV_KEY KEY_C' '0.2 EV_KEY KEY_C 0' >"$work/bad.ev"
	"$cusemuctl" --socket "$ev_ctl" replay "$ev_kbd" "$work/bad.ev" >"$work/replay.out" 2>&1
	status=$?
	diag <"$work/replay.out"
	check "cusemuctl replay of a malformed line fails with exit 1, naming line 2" \
		sh -c "[ $status = 1 ] && grep -q '^cusemuctl: .*bad.ev:2: ' '$work/replay.out'"
	check "a good injection after them is read" ev_inject "$ev_kbd" EV_KEY KEY_D 1 EV_KEY KEY_D 0
	wait_for 5 ev_seen "$out" 1 "$syn"
	check "... and is the only thing evtest read" \
		diff <(printf '%s\n' 'type 1 (EV_KEY), code 32 (KEY_D), value 1' \
			'type 1 (EV_KEY), code 32 (KEY_D), value 0' "$syn") <(ev_events "$out")
	ev_stop
	"$cusemuctl" --socket "$ev_ctl" stats | grep -E '^device|^command|EVIOC' | diag
else
	not_ok "cusemud starts with two evdev devices"; diag <"$work/evdev.log"
fi
stop_daemon TERM

# --- evdev-client in both ABIs: the ioctl and read() rules evtest leaves out
start_daemon "$work/evdev-client.log" --device evdev:name=event-c64 --device evdev:name=event-c32
if wait_for 15 is_char_node /dev/event-c64 && wait_for 5 is_char_node /dev/event-c32; then
	client_pair evdev-client /dev/event-c64 /dev/event-c32
else
	not_ok "cusemud starts with two evdev devices for evdev-client"; diag <"$work/evdev-client.log"
fi
stop_daemon TERM
