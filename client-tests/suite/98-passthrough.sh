# Unmodified Debian programs on the nodes the kernel's own drivers serve, as
# x86_64 and as i386 builds: util-linux hwclock on the CMOS clock
# (rtc_cmos), evtest on the AT keyboard (atkbd, evdev), i2c-tools on the
# PIIX4's SMBus and its SPD EEPROMs (i2c-piix4, i2c-dev), wdctl on softdog
# and on an i6300esb. client-tests/with-cuse boots its VM with
# vm-run --real-devices for these; client-tests/real-devices.sh finds them.
#
# run_real_programs runs every program against the nodes it is given and
# keeps what each printed in $work, so that the same programs can be run
# against other nodes for the same devices and the outputs compared
# (rp_normal, rp_same, rp_clock_agrees), e.g.
#   run_real_programs pt rtc=/dev/rtc-pt wd:softdog=/dev/wd-pt
#   check "..." rp_same real-wdctl-softdog 64 pt-wdctl-softdog 64
#   check "..." rp_clock_agrees real-hwclock 32 pt-hwclock 32
# The i386 builds come from client-tests/fetch-i386 (run by setup).
# Sourced by client-tests/integration.

# shellcheck source=../real-devices.sh
. "$here/real-devices.sh"

# rp_cmd ABI PROGRAM: sets rp_argv to the command that runs a real program,
# the host's (64) or the i386 build (32)
rp_cmd() {
	local path
	case $2 in
	hwclock) path=usr/sbin/hwclock ;;
	evtest | wdctl) path=usr/bin/$2 ;;
	i2c*) path=usr/sbin/$2 ;;
	*) echo "rp_cmd: unknown program $2" >&2; return 127 ;;
	esac
	# The host's merged /usr has them all there.
	if [ "$1" = 64 ]; then rp_argv=("/$path"); else rp_argv=("$here/run-i386" "$path"); fi
}

# rp_file NAME ABI EXT: where run_real_programs keeps one output of NAME
# (PREFIX-PROGRAM, e.g. real-hwclock): $work/NAME-ABI.EXT, EXT one of out
# (stdout), err (stderr), status, when (the system clock before and after,
# seconds since the epoch)
rp_file() { echo "$work/$1-$2.$3"; }

# rp_save NAME ABI PROGRAM ARG...: run it (see rp_cmd), at most 30 s,
# keeping its output
rp_save() {
	local name=$1 abi=$2
	shift 2
	rp_cmd "$abi" "$1" || return
	shift
	date -u +%s.%N >"$(rp_file "$name" "$abi" when)"
	timeout -k 5 30 "${rp_argv[@]}" "$@" \
		>"$(rp_file "$name" "$abi" out)" 2>"$(rp_file "$name" "$abi" err)"
	echo $? >"$(rp_file "$name" "$abi" status)"
	date -u +%s.%N >>"$(rp_file "$name" "$abi" when)"
}

# rp_evtest NAME ABI NODE: evtest's header (what it finds out about the
# device, up to "Testing ... (interrupt to exit)"), then it is stopped with
# SIGTERM: status 0 when it got that far and stopped, else what it exited
# with (124 when it hung)
rp_evtest() {
	local name=$1 abi=$2 node=$3 out pid status
	out=$(rp_file "$name" "$abi" out)
	rp_cmd "$abi" evtest
	date -u +%s.%N >"$(rp_file "$name" "$abi" when)"
	timeout -k 5 30 "${rp_argv[@]}" "$node" \
		>"$out.all" 2>"$(rp_file "$name" "$abi" err)" &
	pid=$!
	if wait_for 20 grep -q '^Testing \.\.\. (interrupt to exit)' "$out.all"; then
		kill -TERM "$pid"
		wait "$pid"
		status=$?
		# Killed by the signal (evtest 1.35 does not catch it), or stopped on it.
		case $status in 0 | 143) status=0 ;; esac
	else
		kill "$pid" 2>/dev/null
		wait "$pid"
		status=124
	fi
	echo "$status" >"$(rp_file "$name" "$abi" status)"
	sed '/^Testing \.\.\. (interrupt to exit)/q' "$out.all" >"$out"
	date -u +%s.%N >>"$(rp_file "$name" "$abi" when)"
}

# run_real_programs PREFIX KIND=NODE...: each program for KIND on NODE, in
# both ABIs (x86_64 first), its outputs kept under the name PREFIX-PROGRAM
# (see rp_file). KIND is
#   rtc       hwclock --show --rtc=NODE                          PREFIX-hwclock
#   kbd       evtest NODE, its header                            PREFIX-evtest
#   i2c       NODE is /dev/i2c-N; i2cdetect -y N                 PREFIX-i2cdetect
#             i2cdetect -F N (the adapter's functionality)       PREFIX-i2cfuncs
#             i2cdump -y N 0x50 b                                PREFIX-i2cdump
#             i2cget -y N 0x50 0x00 b                            PREFIX-i2cget
#             i2ctransfer -y N w1@0x50 0x00 r16                  PREFIX-i2ctransfer
#   wd:TAG    wdctl NODE                                         PREFIX-wdctl-TAG
run_real_programs() {
	local prefix=$1 spec kind node abi bus
	shift
	for spec in "$@"; do
		kind=${spec%%=*} node=${spec#*=}
		for abi in 64 32; do
			case $kind in
			rtc) rp_save "$prefix-hwclock" $abi hwclock --show --rtc="$node" ;;
			kbd) rp_evtest "$prefix-evtest" $abi "$node" ;;
			i2c)
				bus=${node##*/i2c-}
				rp_save "$prefix-i2cdetect" $abi i2cdetect -y "$bus"
				rp_save "$prefix-i2cfuncs" $abi i2cdetect -F "$bus"
				rp_save "$prefix-i2cdump" $abi i2cdump -y "$bus" 0x50 b
				rp_save "$prefix-i2cget" $abi i2cget -y "$bus" 0x50 0x00 b
				rp_save "$prefix-i2ctransfer" $abi \
					i2ctransfer -y "$bus" w1@0x50 0x00 r16
				;;
			wd:*) rp_save "$prefix-wdctl-${kind#wd:}" $abi wdctl "$node" ;;
			*) echo "run_real_programs: unknown kind $kind" >&2; return 2 ;;
			esac
		done
	done
}

# run_ptcalls PREFIX KIND=NODE...: ptcalls-client (the calls whose answers
# depend on what the driver copies in and out) in both ABIs on each rtc, kbd
# and i2c NODE, its lines kept as a program's under PREFIX-ptcalls-KIND
run_ptcalls() {
	local prefix=$1 spec kind name abi
	shift
	for spec in "$@"; do
		kind=${spec%%=*}
		case $kind in rtc) name=rtc ;; kbd) name=evdev ;; i2c) name=i2c ;; *) continue ;; esac
		for abi in 64 32; do
			date -u +%s.%N >"$(rp_file "$prefix-ptcalls-$kind" $abi when)"
			timeout -k 5 30 "$clients/ptcalls-client-$abi" "$name" "${spec#*=}" \
				>"$(rp_file "$prefix-ptcalls-$kind" $abi out)" \
				2>"$(rp_file "$prefix-ptcalls-$kind" $abi err)"
			echo $? >"$(rp_file "$prefix-ptcalls-$kind" $abi status)"
		done
	done
}

# rp_normal NAME ABI: the kept output of NAME (PREFIX-PROGRAM) with what
# legitimately differs between runs and between nodes for one device taken
# out: hwclock's time of day (its date stays; rp_clock_agrees compares the
# time), wdctl's device path and time left, i2cdetect's and i2cdump's bus
# number, and the status as a last line
rp_normal() {
	local name=$1 abi=$2 out
	out=$(rp_file "$name" "$abi" out)
	case ${name##*/} in
	*-hwclock)
		sed -E 's/^([0-9]{4}-[0-9]{2}-[0-9]{2}) [0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?/\1 HH:MM:SS.ffffff/' "$out" ;;
	*-wdctl-*)
		sed -E -e 's|^(Device: +).*|\1NODE|' -e 's/^(Timeleft: +)[0-9]+/\1N/' "$out" ;;
	*-i2cfuncs)
		sed -E 's/^(Functionalities implemented by ).*:$/\1BUS:/' "$out" ;;
	*) cat "$out" ;;
	esac
	echo "status $(cat "$(rp_file "$name" "$abi" status)")"
}

# rp_same NAME_A ABI_A NAME_B ABI_B: the two normalized outputs are equal;
# prints their differences when not
rp_same() {
	diff <(rp_normal "$1" "$2") <(rp_normal "$3" "$4") >"$work/rp-diff" && return 0
	cat "$work/rp-diff"
	return 1
}

# rp_clock_window NAME ABI: the least and the most the clock hwclock showed
# can be ahead of the system clock, in whole seconds: what it printed less
# the system clock after and before it ran (a loaded machine stretches a
# run, an i386 one's start most of all)
rp_clock_window() {
	local shown when
	shown=$(date -u -d "$(head -n 1 "$(rp_file "$1" "$2" out)")" +%s 2>/dev/null) || return 1
	[ -n "$shown" ] || return 1
	when=$(rp_file "$1" "$2" when)
	echo "$((shown - $(sed -n 2p "$when" | cut -d. -f1) - 1)) $((shown - $(head -n 1 "$when" | cut -d. -f1)))"
}

# rp_clock_agrees NAME_A ABI_A NAME_B ABI_B [SECONDS]: the two hwclock runs
# show the same clock: the offsets each run allows (rp_clock_window) meet,
# within SECONDS (2)
rp_clock_agrees() {
	local slack=${5:-2} a b
	a=$(rp_clock_window "$1" "$2") && b=$(rp_clock_window "$3" "$4") || return 1
	set -- $a $b
	echo "offsets: $1..$2 s and $3..$4 s"
	[ "$1" -le $(($4 + slack)) ] && [ "$3" -le $(($2 + slack)) ]
}

# rp_ok NAME ABI: the program exited 0
rp_ok() { [ "$(cat "$(rp_file "$1" "$2" status)")" = 0 ]; }
rp_out_has() { grep -qE -- "$3" "$(rp_file "$1" "$2" out)"; }
# rp_diag NAME ABI: its output and errors as TAP comments
rp_diag() { cat "$(rp_file "$1" "$2" out)" "$(rp_file "$1" "$2" err)" | diag; }

# rp_detected NAME ABI: the occupied cells of its i2cdetect grid (detected)
rp_detected() { detected "$(rp_file "$1" "$2" out)"; }

# watchdog_did_not_stop NODE: how often the kernel logged that NODE was
# closed without the magic 'V'
watchdog_did_not_stop() { dmesg 2>/dev/null | grep -c "${1##*/}: watchdog did not stop" || true; }

# rp_find KIND WHAT FUNCTION ARG...: the node FUNCTION prints, added to
# rp_nodes as KIND=NODE and kept in rp_node_KIND
rp_find() {
	local kind=$1 what=$2 node
	shift 2
	if node=$("$@"); then
		ok "the kernel serves $what at $node"
		rp_nodes+=("$kind=$node")
		eval "rp_node_${kind//[^a-z0-9]/_}=\$node"
	else
		not_ok "the kernel serves $what"
	fi
}

# Only where vm-run --real-devices made the devices: wdctl starts a
# watchdog, and a host's own may have nowayout set.
if ! real_devices_vm; then
	ok "the kernel's own devices # SKIP not in a VM started by client-tests/vm-run --real-devices"
	return 0
fi

# --- the nodes
rp_nodes=()
rp_node_rtc='' rp_node_kbd='' rp_node_i2c=''
rp_find rtc "the CMOS clock (rtc_cmos)" real_rtc
rp_find kbd "the AT keyboard (atkbd)" real_kbd_event
rp_find i2c "the PIIX4 SMBus (i2c-piix4)" real_i2c_piix4
rp_find wd:softdog "softdog" real_watchdog "Software Watchdog"
rp_find wd:i6300esb "the i6300esb" real_watchdog "i6300ESB timer"
if [ ${#rp_nodes[@]} -gt 0 ]; then
	echo "# real nodes: ${rp_nodes[*]}"
fi

rp_wd_before=()
for spec in ${rp_nodes[@]+"${rp_nodes[@]}"}; do
	case $spec in wd:*) rp_wd_before+=("$(watchdog_did_not_stop "${spec#*=}")") ;; esac
done

run_real_programs real ${rp_nodes[@]+"${rp_nodes[@]}"}

# --- hwclock
if [ -n "$rp_node_rtc" ]; then
	for abi in 64 32; do
		arch=$([ $abi = 32 ] && echo i386 || echo x86_64)
		rp_diag real-hwclock $abi
		check "hwclock ($arch) --show --rtc=$rp_node_rtc exits 0" rp_ok real-hwclock $abi
		check "... and prints a date and time: $(head -n 1 "$(rp_file real-hwclock $abi out)")" \
			rp_out_has real-hwclock $abi '^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?[+-][0-9]{2}:[0-9]{2}$'
		read -r lo hi <<<"$(rp_clock_window real-hwclock $abi || echo none none)"
		check "... the system clock's time, within 5 s (the CMOS clock is $lo to $hi s ahead)" \
			test "$lo" != none -a "$lo" -le 5 -a "$hi" -ge -5
	done
	check "hwclock prints the same date in both ABIs" rp_same real-hwclock 64 real-hwclock 32
	check "... and the same time, within 2 s" rp_clock_agrees real-hwclock 64 real-hwclock 32
fi

# --- evtest
if [ -n "$rp_node_kbd" ]; then
	for abi in 64 32; do
		arch=$([ $abi = 32 ] && echo i386 || echo x86_64)
		grep -E '^Input|^  Event type' "$(rp_file real-evtest $abi out)" | diag
		check "evtest ($arch) $rp_node_kbd reaches 'Testing ... (interrupt to exit)' and stops on SIGTERM" \
			rp_ok real-evtest $abi
		check "... and names the AT keyboard" \
			rp_out_has real-evtest $abi '^Input device name: "AT Translated Set 2 keyboard"$'
		check "... an i8042 one (bus 0x11, BUS_I8042)" \
			rp_out_has real-evtest $abi '^Input device ID: bus 0x11 '
		check "... with keys (KEY_A), LEDs (LED_NUML) and autorepeat" sh -c "
			grep -qxF '    Event code 30 (KEY_A)' '$(rp_file real-evtest $abi out)' &&
			grep -qxE '    Event code 0 \(LED_NUML\)( state [01])?' '$(rp_file real-evtest $abi out)' &&
			grep -qxF '  Repeat type 20 (EV_REP)' '$(rp_file real-evtest $abi out)'"
	done
	check "evtest prints the same header in both ABIs" rp_same real-evtest 64 real-evtest 32
fi

# --- i2c-tools
if [ -n "$rp_node_i2c" ]; then
	bus=${rp_node_i2c##*/i2c-}
	for abi in 64 32; do
		arch=$([ $abi = 32 ] && echo i386 || echo x86_64)
		echo "# i2cdetect ($arch) -y $bus:"
		rp_diag real-i2cdetect $abi
		found=$(rp_detected real-i2cdetect $abi)
		check "i2cdetect ($arch) -y $bus exits 0" rp_ok real-i2cdetect $abi
		check "... and finds the machine's 8 SPD EEPROMs at 50..57, nothing else (found: $found)" \
			test "$found" = "50 51 52 53 54 55 56 57"
		check "i2cdetect ($arch) -F $bus: SMBus byte reads, no plain I2C" sh -c "
			grep -qE '^SMBus Read Byte +yes$' '$(rp_file real-i2cfuncs $abi out)' &&
			grep -qE '^I2C +no$' '$(rp_file real-i2cfuncs $abi out)'"
		cells=$(grep -cE '^[0-9a-f]0: ' "$(rp_file real-i2cdump $abi out)")
		check "i2cdump ($arch) -y $bus 0x50 b exits 0 and shows 16 rows ($cells)" \
			sh -c "[ $(cat "$(rp_file real-i2cdump $abi status)") = 0 ] && [ $cells = 16 ]"
		got=$(cat "$(rp_file real-i2cget $abi out)")
		check "i2cget ($arch) -y $bus 0x50 0x00 b reads a byte: $got" \
			sh -c "[ $(cat "$(rp_file real-i2cget $abi status)") = 0 ] && echo '$got' | grep -qx '0x[0-9a-f][0-9a-f]'"
		# I2C_RDWR needs I2C_FUNC_I2C, which an SMBus-only adapter such as
		# the PIIX4 does not have: i2ctransfer refuses before any ioctl.
		rp_diag real-i2ctransfer $abi
		if grep -qE '^I2C +yes$' "$(rp_file real-i2cfuncs $abi out)"; then
			check "i2ctransfer ($arch) -y $bus w1@0x50 0x00 r16 reads 16 bytes" sh -c "
				[ $(cat "$(rp_file real-i2ctransfer $abi status)") = 0 ] &&
				[ \$(wc -w <'$(rp_file real-i2ctransfer $abi out)') = 16 ]"
		else
			check "i2ctransfer ($arch) -y $bus w1@0x50 0x00 r16 fails: the adapter has no plain I2C transfers" sh -c "
				[ $(cat "$(rp_file real-i2ctransfer $abi status)") != 0 ] &&
				grep -q 'Adapter does not have I2C transfers capability' '$(rp_file real-i2ctransfer $abi err)'"
		fi
	done
	for prog in i2cdetect i2cfuncs i2cdump i2cget i2ctransfer; do
		check "$prog: the same output in both ABIs" rp_same real-$prog 64 real-$prog 32
	done
	check "i2ctransfer: the same errors in both ABIs" \
		cmp -s "$(rp_file real-i2ctransfer 64 err)" "$(rp_file real-i2ctransfer 32 err)"
fi

# --- what the drivers copy in and out (ptcalls-client), on the real nodes
run_ptcalls real ${rp_nodes[@]+"${rp_nodes[@]}"}
for abi in 64 32; do
	arch=$([ $abi = 32 ] && echo i386 || echo x86_64)
	if [ -n "$rp_node_kbd" ]; then
		rp_diag real-ptcalls-kbd $abi
		check "evdev ($arch): EVIOCGNAME and EVIOCGBIT write what they return, no byte past it" sh -c "
			grep -qxE 'EVIOCGNAME\(256\): [0-9]+; changed past it: 0' '$(rp_file real-ptcalls-kbd $abi out)' &&
			grep -qxE 'EVIOCGBIT\(EV_KEY, 16383\): 96; changed past it: 0' '$(rp_file real-ptcalls-kbd $abi out)'"
		check "evdev ($arch): a name that fits before a hole is read whole; EVIOCSMASK's size is checked before its codes are read" sh -c "
			grep -qxE 'EVIOCGNAME\(16383\) [0-9]+ bytes before a hole: [0-9]+' '$(rp_file real-ptcalls-kbd $abi out)' &&
			grep -qxF 'EVIOCSMASK(EV_KEY) codes_size 10, codes in the hole: -1 EINVAL' '$(rp_file real-ptcalls-kbd $abi out)'"
	fi
	if [ -n "$rp_node_i2c" ]; then
		rp_diag real-ptcalls-i2c $abi
		check "i2c-dev ($arch): 16 reads into 4 shared buffers reach the adapter, which has no I2C transfers (EOPNOTSUPP)" \
			grep -qF 'I2C_RDWR 16 reads of 8189..8192 bytes into 4 buffers: -1 EOPNOTSUPP' "$(rp_file real-ptcalls-i2c $abi out)"
	fi
	if [ -n "$rp_node_rtc" ]; then
		rp_diag real-ptcalls-rtc $abi
		check "rtc ($arch): a command it does not know, running into a hole, is ENOTTY" \
			grep -qF "_IOWR('T', 0x7f, 16383) 64 bytes before a hole: -1 ENOTTY" "$(rp_file real-ptcalls-rtc $abi out)"
	fi
done

# --- wdctl: it opens the watchdog (which starts it), reads it and closes it
# with the magic 'V' (which stops it again)
i=0
for spec in ${rp_nodes[@]+"${rp_nodes[@]}"}; do
	case $spec in wd:*) ;; *) continue ;; esac
	tag=${spec%%=*} tag=${tag#wd:} node=${spec#*=}
	identity=$(cat "/sys/class/watchdog/${node##*/}/identity")
	for abi in 64 32; do
		arch=$([ $abi = 32 ] && echo i386 || echo x86_64)
		rp_diag "real-wdctl-$tag" $abi
		check "wdctl ($arch) $node ($tag) exits 0" rp_ok "real-wdctl-$tag" $abi
		check "... and prints its identity, $identity" \
			rp_out_has "real-wdctl-$tag" $abi "^Identity: +$identity( \[version [0-9]+\])?$"
		check "... and its timeout" rp_out_has "real-wdctl-$tag" $abi '^Timeout: +[0-9]+ seconds$'
	done
	check "wdctl $node ($tag): the same output in both ABIs" \
		rp_same "real-wdctl-$tag" 64 "real-wdctl-$tag" 32
	after=$(watchdog_did_not_stop "$node")
	check "... its magic close stopped it: the kernel logged no 'did not stop' (before: ${rp_wd_before[$i]}, after: $after)" \
		test "$after" = "${rp_wd_before[$i]}"
	if [ -r "/sys/class/watchdog/${node##*/}/state" ]; then
		check "... and its state is inactive" \
			grep -qx inactive "/sys/class/watchdog/${node##*/}/state"
	fi
	i=$((i + 1))
done

# rp_compare PREFIX WHERE TIME_CHECK TIME_REF: every program's PREFIX output
# against what it printed on the kernel's own node, in both ABIs; hwclock's
# time with TIME_CHECK TIME_REF-hwclock ABI PREFIX-hwclock ABI
rp_compare() {
	local prefix=$1 where=$2 abi arch prog spec tag
	for abi in 64 32; do
		arch=$([ $abi = 32 ] && echo i386 || echo x86_64)
		if [ -n "$rp_node_rtc" ]; then
			check "hwclock ($arch) $where prints the date it prints on $rp_node_rtc" \
				rp_same real-hwclock $abi "$prefix-hwclock" $abi
			check "... and the time, within 2 s: $(head -n 1 "$(rp_file "$prefix-hwclock" $abi out)")" \
				"$3" "$4-hwclock" $abi "$prefix-hwclock" $abi
		fi
		if [ -n "$rp_node_kbd" ]; then
			check "evtest ($arch) $where prints the header it prints on $rp_node_kbd" \
				rp_same real-evtest $abi "$prefix-evtest" $abi
		fi
		if [ -n "$rp_node_i2c" ]; then
			for prog in i2cdetect i2cfuncs i2cdump i2cget i2ctransfer; do
				check "$prog ($arch) $where prints what it prints on $rp_node_i2c" \
					rp_same "real-$prog" $abi "$prefix-$prog" $abi
			done
		fi
		for spec in ${rp_nodes[@]+"${rp_nodes[@]}"}; do
			case $spec in wd:*) ;; *) continue ;; esac
			tag=${spec%%=*} tag=${tag#wd:}
			check "wdctl ($arch) $where prints what it prints on ${spec#*=} ($tag)" \
				rp_same "real-wdctl-$tag" $abi "$prefix-wdctl-$tag" $abi
		done
	done
}

# --- the same programs through passthrough nodes in front of these devices,
# each node recorded (record=): they must print what they printed on the
# kernel's own nodes, in both ABIs
pt_args=() pt_specs=() pt_names=()
pt_add() { # pt_add KIND NAME REAL: a passthrough named NAME in front of REAL
	pt_args+=(--device "passthrough:name=$2,path=$3,record=$work/rec-$2.jsonl")
	pt_specs+=("$1=/dev/$2")
	pt_names+=("$2")
}
[ -z "$rp_node_rtc" ] || pt_add rtc rtc-pt "$rp_node_rtc"
[ -z "$rp_node_kbd" ] || pt_add kbd event-pt "$rp_node_kbd"
[ -z "$rp_node_i2c" ] || pt_add i2c i2c-30 "$rp_node_i2c"
for spec in ${rp_nodes[@]+"${rp_nodes[@]}"}; do
	case $spec in wd:*) tag=${spec%%=*} && pt_add "$tag" "wd-${tag#wd:}-pt" "${spec#*=}" ;; esac
done
pt_wd_before=()
for spec in ${rp_nodes[@]+"${rp_nodes[@]}"}; do
	case $spec in wd:*) pt_wd_before+=("$(watchdog_did_not_stop "${spec#*=}")") ;; esac
done

start_daemon "$work/pt-real.log" ${pt_args[@]+"${pt_args[@]}"}
pt_up=1
for name in ${pt_names[@]+"${pt_names[@]}"}; do
	wait_for 20 is_char_node "/dev/$name" || pt_up=
done
if [ -n "$pt_up" ] && [ ${#pt_names[@]} -gt 0 ]; then
	ok "cusemud serves passthrough nodes in front of them: ${pt_names[*]}"
	run_real_programs pt "${pt_specs[@]}"
	rp_compare pt "through the passthrough" rp_clock_agrees real
	i=0
	for spec in ${rp_nodes[@]+"${rp_nodes[@]}"}; do
		case $spec in wd:*) ;; *) continue ;; esac
		after=$(watchdog_did_not_stop "${spec#*=}")
		check "wdctl's magic close went through to ${spec#*=}: no 'did not stop' (before: ${pt_wd_before[$i]}, after: $after)" \
			test "$after" = "${pt_wd_before[$i]}"
		i=$((i + 1))
	done
	check "an i386 call went to a driver's compat_ioctl through the 32-bit entry, said once per command" \
		sh -c "grep -q ': i386 .*: the driver.s compat_ioctl, through the 32-bit entry' '$work/pt-real.log' &&
			! grep ': i386 ' '$work/pt-real.log' | sort | uniq -d | grep -q ."
	stop_daemon TERM
	check "the passthrough daemon stops cleanly" test $? = 0
	for name in "${pt_names[@]}"; do
		check "the recording of $name: a header, then one whole JSON line per call, x86_64 and i386 callers" \
			python3 - "$work/rec-$name.jsonl" <<'PYEOF'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
assert lines[0]["trace"] == "cusemu" and lines[0]["record"]["model"] == "passthrough", lines[0]
calls = lines[1:]
assert {c["op"] for c in calls} >= {"open", "release"}, calls[:3]
abis = {c["abi"] for c in calls if c["op"] == "ioctl"}
assert abis == {"x86_64", "i386"}, abis
assert not any(c.get("cut") for c in calls)
print(len(calls), "calls")
PYEOF
	done
else
	not_ok "cusemud serves passthrough nodes in front of them: ${pt_names[*]}"
	stop_daemon KILL
fi
diag <"$work/pt-real.log"

# --- the recordings replayed (replay:file=, strict), with no device behind
# them: the programs print what they printed on the real devices, in both
# ABIs. Each replay node takes its recorded name (rtc-pt, i2c-30, ...).
# rp_time_near NAME_A ABI NAME_B ABI: hwclock printed times within 2 s of
# each other (a replay answers with the recorded clock, read then)
rp_time_near() {
	local a b
	a=$(date -u -d "$(head -n 1 "$(rp_file "$1" "$2" out)")" +%s 2>/dev/null) &&
		b=$(date -u -d "$(head -n 1 "$(rp_file "$3" "$4" out)")" +%s 2>/dev/null) || return 1
	[ $((a - b)) -le 2 ] && [ $((b - a)) -le 2 ]
}
rp_args=()
for name in ${pt_names[@]+"${pt_names[@]}"}; do
	[ -s "$work/rec-$name.jsonl" ] && rp_args+=(--device "replay:file=$work/rec-$name.jsonl,strict=true")
done
if [ ${#rp_args[@]} -gt 0 ]; then
	start_daemon "$work/replay-real.log" "${rp_args[@]}"
	rp_up=1
	for name in "${pt_names[@]}"; do
		wait_for 20 is_char_node "/dev/$name" || rp_up=
	done
	if [ -n "$rp_up" ]; then
		ok "cusemud replays the recordings, no device behind: ${pt_names[*]}"
		run_real_programs replay "${pt_specs[@]}"
		rp_compare replay "on the replay" rp_time_near pt
		stop_daemon TERM
		check "every call was answered from the recordings: strict replays, the daemon exits 0" test $? = 0
	else
		not_ok "cusemud replays the recordings, no device behind: ${pt_names[*]}"
		stop_daemon KILL
	fi
	grep -E 'warning|unmatched|differs' "$work/replay-real.log" | diag
fi

# --- the same calls through passthrough nodes (not recorded: the replays
# above answer the programs alone): each answers as the driver does, both
# ABIs
pc_args=() pc_specs=() pc_names=()
pc_add() { # pc_add KIND NAME REAL
	pc_args+=(--device "passthrough:name=$2,path=$3")
	pc_specs+=("$1=/dev/$2")
	pc_names+=("$2")
}
[ -z "$rp_node_rtc" ] || pc_add rtc rtc-pc "$rp_node_rtc"
[ -z "$rp_node_kbd" ] || pc_add kbd event-pc "$rp_node_kbd"
[ -z "$rp_node_i2c" ] || pc_add i2c i2c-31 "$rp_node_i2c"
if [ ${#pc_names[@]} -gt 0 ]; then
	start_daemon "$work/pt-calls.log" "${pc_args[@]}"
	pc_up=1
	for name in "${pc_names[@]}"; do
		wait_for 20 is_char_node "/dev/$name" || pc_up=
	done
	if [ -n "$pc_up" ]; then
		run_ptcalls pt "${pc_specs[@]}"
		for spec in "${pc_specs[@]}"; do
			kind=${spec%%=*}
			for abi in 64 32; do
				arch=$([ $abi = 32 ] && echo i386 || echo x86_64)
				check "ptcalls-client ($arch) on ${spec#*=}: every call answers as on the real node" \
					rp_same "real-ptcalls-$kind" $abi "pt-ptcalls-$kind" $abi
			done
		done
		stop_daemon TERM
		check "the daemon of these passthroughs stops cleanly" test $? = 0
	else
		not_ok "cusemud serves passthrough nodes for the calls: ${pc_names[*]}"
		stop_daemon KILL
	fi
	diag <"$work/pt-calls.log"
fi
