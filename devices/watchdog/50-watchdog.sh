# The watchdog model: wd-client in both ABIs, the real 64-bit wdctl, the
# magic close, nowayout, and emulated pretimeouts and expiries as the log,
# wdctl and cusemuctl's statistics show them.
# Sourced by client-tests/integration.

wd_ctl=$work/wd-control
wd_log=$work/wd.log
wd_identity="cusemu test dog"

# wd_event DEVICE EVENT: how often the device counted the event
wd_event() {
	"$cusemuctl" --socket "$wd_ctl" stats --json | python3 -c '
import json, sys
dev, event = sys.argv[1:]
for d in json.load(sys.stdin)["devices"]:
    if d["name"] == dev:
        print(d["stats"]["events"].get(event, 0))
        sys.exit(0)
print("no-device")' "$@"
}

# wd_flag NODE FLAG: "STATUS BOOT-STATUS" of one flag row of wdctl's table
wd_flag() {
	/usr/bin/wdctl --flags-only --noheadings --raw \
		--output FLAG,STATUS,BOOT-STATUS "$1" | awk -v f="$2" '$1 == f { print $2, $3 }'
}

wd_logged() { grep -q "$1" "$wd_log"; }

# Every check of wd-client prints the answer it judged ("# = ..."): the
# module's at the end are compared with the daemon's.
export CUSEMU_TAP_ANSWERS=1

start_daemon "$wd_log" --control "$wd_ctl" \
	--device "watchdog:name=watchdog-emu,timeout=30,identity=$wd_identity,firmware_version=0x2a" \
	--device watchdog:name=wd-client64,temp=120 \
	--device watchdog:name=wd-client32 \
	--device watchdog:name=wd-nowayout,timeout=2,pretimeout=1,nowayout=true
if ! { wait_for 15 is_char_node /dev/watchdog-emu && wait_for 5 is_char_node /dev/wd-client64 &&
	wait_for 5 is_char_node /dev/wd-client32 && wait_for 5 is_char_node /dev/wd-nowayout; }; then
	not_ok "cusemud starts with four watchdog devices"; diag <"$wd_log"
	stop_daemon TERM
else
	ok "cusemud starts with four watchdog devices"

	# The clients sleep through their expiry checks: run them meanwhile.
	"$clients/wd-client-64" --temp 120 /dev/wd-client64 >"$work/wd-client-64.out" 2>&1 &
	wd_pid64=$!
	"$clients/wd-client-32" /dev/wd-client32 >"$work/wd-client-32.out" 2>&1 &
	wd_pid32=$!

	# --- the real wdctl: it reads, then closes with the magic 'V'
	/usr/bin/wdctl /dev/watchdog-emu >"$work/wdctl.out" 2>&1
	status=$?
	diag <"$work/wdctl.out"
	check "wdctl exits 0" test "$status" = 0
	check "wdctl prints the configured identity and firmware version" \
		grep -qxE "Identity: +$wd_identity \[version 2a\]" "$work/wdctl.out"
	check "wdctl prints the configured timeout" grep -qxE 'Timeout: +30 seconds' "$work/wdctl.out"
	check "wdctl prints the time left, the whole timeout after its open" \
		grep -qxE 'Timeleft: +(30|29|28) seconds' "$work/wdctl.out"
	check "wdctl prints the pretimeout" grep -qxE 'Pre-timeout: +0 seconds' "$work/wdctl.out"
	for flag in KEEPALIVEPING MAGICCLOSE PRETIMEOUT SETTIMEOUT CARDRESET; do
		check "wdctl lists the flag $flag" grep -qE "^$flag " "$work/wdctl.out"
	done
	check "... CARDRESET boot status 0: no emulated reset yet" \
		test "$(wd_flag /dev/watchdog-emu CARDRESET)" = "0 0"
	check "wdctl's magic close stops it: the daemon logs no 'did not stop'" \
		sh -c "! grep -q 'watchdog-emu: watchdog did not stop' '$wd_log'"

	# Stopped, a watchdog with a 2 s timeout outlives 3 s without pings.
	/usr/bin/wdctl --settimeout 2 /dev/watchdog-emu >"$work/wdctl-s.out" 2>&1
	status=$?
	check "wdctl --settimeout 2 exits 0" test "$status" = 0
	check "... and says so" grep -q "Timeout has been set to 2 seconds" "$work/wdctl-s.out"
	check "... and reads it back" grep -qxE 'Timeout: +2 seconds' "$work/wdctl-s.out"
	sleep 3
	/usr/bin/wdctl /dev/watchdog-emu >"$work/wdctl2.out" 2>&1
	check "3 s later wdctl still shows timeout 2: no reset brought back 30" \
		grep -qxE 'Timeout: +2 seconds' "$work/wdctl2.out"
	check "... and CARDRESET boot status 0" \
		test "$(wd_flag /dev/watchdog-emu CARDRESET)" = "0 0"
	check "... and cusemuctl counts no expiry for watchdog-emu" \
		test "$(wd_event watchdog-emu expired)" = 0

	# --- nowayout: wdctl's 'V' cannot stop it; it runs into the pretimeout
	# and the emulated reset.
	/usr/bin/wdctl /dev/wd-nowayout >"$work/wdctl-nwo.out" 2>&1
	status=$?
	diag <"$work/wdctl-nwo.out"
	check "wdctl on a nowayout watchdog exits 0" test "$status" = 0
	check "... prints its pretimeout" grep -qxE 'Pre-timeout: +1 second' "$work/wdctl-nwo.out"
	check "the daemon logs the kernel's 'nowayout prevents watchdog being stopped!'" \
		wd_logged "wd-nowayout: nowayout prevents watchdog being stopped!"
	check "... and 'watchdog did not stop!'" wd_logged "wd-nowayout: watchdog did not stop!"
	check "the pretimeout passes: the daemon logs it" \
		wait_for 5 wd_logged "wd-nowayout: pretimeout event"
	check "the timeout expires: the daemon logs an emulated reset" \
		wait_for 5 wd_logged "wd-nowayout: timeout expired: emulated reset"
	check "cusemuctl counts one pretimeout and one expiry for wd-nowayout" \
		test "$(wd_event wd-nowayout pretimeout)/$(wd_event wd-nowayout expired)" = 1/1
	check "wdctl shows CARDRESET in the boot status after the reset" \
		test "$(wd_flag /dev/wd-nowayout CARDRESET | cut -d' ' -f2)" = 1
	grep "wd-nowayout" "$wd_log" | diag

	# --- wd-client in both ABIs, each on its own node
	wait $wd_pid64; status64=$?
	wait $wd_pid32; status32=$?
	report_client wd-client-64 x86_64 $status64
	report_client wd-client-32 i386 $status32
	check "cusemuctl counts wd-client-64's expiry" test "$(wd_event wd-client64 expired)" = 1
	check "cusemuctl counts wd-client-32's expiry" test "$(wd_event wd-client32 expired)" = 1

	# A running watchdog held open does not hold up the shutdown.
	exec 7>/dev/watchdog-emu
	stop_daemon TERM
	status=$?
	exec 7>&-
	check "SIGTERM with a running watchdog held open: cusemud exits 0 (exit $status)" \
		test "$status" = 0
	check "... and removes the nodes" wait_for 5 is_gone /dev/watchdog-emu
	if grep -qiE "warning|error" "$wd_log"; then
		not_ok "the daemon logged no warning or error"; diag <"$wd_log"
	else
		ok "the daemon logged no warning or error"
	fi
fi

# --- the same model as a kernel module: cusemu_watchdog.ko, which sdk-example
# built from devices/watchdog/watchdog.c with cusemu-kmod. wd-client in
# each ABI on a module loaded afresh with its node's keys, every answer the
# daemon's; wdctl of both ABIs reads the card through the ioctls and the
# files of the misc device's directory, and closes with the magic 'V'.
ko=$build/sdk-example/watchdog-kmod/cusemu_watchdog.ko
check "sdk-example built cusemu_watchdog.ko" test -f "$ko"
dmesg_before=$(dmesg | wc -l)
# wd_module KEYS...: loaded afresh with KEYS, its node there.
wd_module() {
	rmmod cusemu_watchdog 2>/dev/null
	insmod "$ko" name=wd-kmod "$@" 2>"$work/insmod.err" && wait_for 10 is_char_node /dev/wd-kmod
}
for abi in 64 32; do
	if [ $abi = 64 ]; then arch=x86_64 keys=(temp=120) args=(--temp 120); else arch=i386 keys=() args=(); fi
	if ! wd_module "${keys[@]}"; then
		not_ok "insmod cusemu_watchdog.ko ${keys[*]} serves /dev/wd-kmod (for wd-client-$abi)"
		diag <"$work/insmod.err"
		continue
	fi
	ok "insmod cusemu_watchdog.ko ${keys[*]} serves /dev/wd-kmod (for wd-client-$abi)"
	module_client "wd-client-$abi" "$arch" \
		"$clients/wd-client-$abi" "${args[@]}" /dev/wd-kmod
done
# (the kernel takes a value with spaces in double quotes)
if wd_module "identity=\"$wd_identity\"" firmware_version=42 timeout=30; then
	wdctl_mark=$(dmesg | wc -l)
	for abi in 64 32; do
		if [ $abi = 64 ]; then wdctl=(/usr/bin/wdctl); else wdctl=("$here/run-i386" usr/bin/wdctl); fi
		"${wdctl[@]}" /dev/wd-kmod >"$work/kmod-wdctl-$abi.out" 2>&1
		status=$?
		check "module: wdctl ($abi) exits 0" test "$status" = 0
		# What the daemon's node showed, but the node's path and the time left.
		same_card() { grep -vE '^(Device|Timeleft):' "$1"; }
		check "module: wdctl ($abi) shows the card as cusemud's node showed it" \
			diff <(same_card "$work/wdctl.out") <(same_card "$work/kmod-wdctl-$abi.out")
		check "module: wdctl ($abi) prints the time left, the whole timeout after its open" \
			grep -qxE 'Timeleft: +(30|29|28) seconds' "$work/kmod-wdctl-$abi.out"
		diag <"$work/kmod-wdctl-$abi.out"
	done
	check "module: wdctl's magic close stopped it: the kernel logs no 'did not stop'" \
		sh -c "! dmesg | tail -n +$((wdctl_mark + 1)) | grep -q 'wd-kmod: watchdog did not stop'"
	check "module: the card's files are in its directory (/sys/dev/char/MAJOR:MINOR/identity)" \
		sh -c "test \"\$(cat /sys/dev/char/\$(stat -c %Hr:%Lr /dev/wd-kmod)/identity)\" = '$wd_identity'"
else
	not_ok "insmod cusemu_watchdog.ko identity=... firmware_version=42 timeout=30 serves /dev/wd-kmod"
	diag <"$work/insmod.err"
fi
check "rmmod cusemu_watchdog removes /dev/wd-kmod and the module" \
	sh -c 'rmmod cusemu_watchdog && ! grep -q "^cusemu_watchdog " /proc/modules && for i in $(seq 50); do [ -e /dev/wd-kmod ] || exit 0; sleep 0.1; done; exit 1'
kmod_log_clean "$dmesg_before" \
	'model watchdog serves /dev/wd-kmod|wd-kmod: (watchdog did not stop|timeout expired|pretimeout event|nowayout prevents)'
