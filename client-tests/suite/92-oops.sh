# A model's bug costs its device, not the daemon: one daemon with fioc, rtc
# and the plugin tests/plugins/buggy.so, whose handler dereferences NULL.
# The x86_64 and the i386 caller each oops one buggy device and get EIO;
# the log has one report each naming the plugin, the command, the ABI and
# the faulting function with file:line; fioc and rtc then answer
# cuse_client and hwclock in both ABIs; cusemuctl list shows the taint;
# the rebuilt plugin (buggy-fixed.so moved into place) comes back with
# cusemuctl reload, and a file opened before gets ENODEV. A handler's result
# no reply can carry (-ERESTARTSYS, an errno above 511) still answers its
# caller, in both ABIs. A handler that returns holding the big lock gets
# the kernel's report, and fioc under the same lock answers after it.
# Sourced by client-tests/integration.

oops_dir=$(mktemp -d /run/cusemu-oops.XXXXXX)
oops_ctl=$work/oops.sock
buggy64=$clients/buggy-client-64
buggy32=$clients/buggy-client-32
cp "$build/tests/buggy.so" "$oops_dir/buggy.so"
chmod 0644 "$oops_dir/buggy.so"

oops_hwclock64() { /sbin/hwclock "$@"; }
oops_hwclock32() { "$here/run-i386" usr/sbin/hwclock "$@"; }

# report_for NODE: the lines of the oops report that names NODE
report_for() {
	awk -v dev="Device: $1," '
		/^cusemud: (BUG:|divide error|invalid opcode)/ { n = 0; delete r }
		{ r[n++] = $0 }
		index($0, dev) { hit = 1 }
		/---\[ end trace \]---/ { if (hit) for (i = 0; i < n; i++) print r[i]; hit = 0 }
	' "$work/oops.log"
}

# The daemon's own oops guard: the devices keep their model in the daemon
# (isolation=none); client-tests/host-isolation runs bugs in a model host.
start_daemon "$work/oops.log" --plugin "$oops_dir/buggy.so" \
	--device buggy:name=bug0,isolation=none --device buggy:name=bug1,isolation=none \
	--device buggy:name=bug2,kernel=2.6.10,isolation=none --device fioc:name=fioc-oops,kernel=2.6.10 \
	--device rtc:name=rtc-oops --control "$oops_ctl"
if wait_for 15 is_char_node /dev/bug0 && wait_for 5 is_char_node /dev/rtc-oops; then
	ok "cusemud serves fioc, rtc and the buggy plugin's devices"
	check "BUGGY_IOC_INFO answers before any bug" grep -q '^info: 0 version=1' <("$buggy64" /dev/bug0 info)
	# A file opened before the reload, held open through it.
	mkfifo "$work/oops.fifo"
	"$buggy32" /dev/bug0 hold info <"$work/oops.fifo" >"$work/held.out" 2>&1 &
	holder=$!
	exec 8>"$work/oops.fifo"
	wait_for 5 grep -q opened "$work/held.out"

	check "x86_64: BUGGY_IOC_NULL on bug0 fails with EIO, not a dead daemon" \
		grep -q '^null: -1 EIO' <("$buggy64" /dev/bug0 null)
	check "i386: BUGGY_IOC_NULL on bug1 fails with EIO" \
		grep -q '^null: -1 EIO' <("$buggy32" /dev/bug1 null)
	check "the daemon still runs" kill -0 "$daemon_pid"
	check "bug0 is fenced: the next call gets EIO too" \
		grep -q '^open: -1 EIO' <("$buggy64" /dev/bug0 info)
	for pair in bug0:x86_64 bug1:i386; do
		node=${pair%:*} abi=${pair#*:}
		report_for "$node" >"$work/report-$node"
		check "one oops report for $node" test "$(grep -c 'BUG: NULL pointer dereference' "$work/report-$node")" = 1
		check "... it names the plugin file" grep -q "Device: $node, model buggy (from $oops_dir/buggy.so)" "$work/report-$node"
		check "... the command, its number and the $abi ABI" \
			grep -q "Call: ioctl BUGGY_IOC_NULL (0x00004202) from an $abi caller, pid [0-9]* (buggy-client-" "$work/report-$node"
		check "... the faulting function with file:line" \
			grep -qE '^cusemud: RIP: buggy_null_deref\+0x[0-9a-f]+/0x[0-9a-f]+ \[buggy.so\] buggy.c:[0-9]+$' "$work/report-$node"
		check "... a call trace through the dispatcher" grep -q 'cusemu_dispatch+' "$work/report-$node"
		check "... and says the device is fenced" grep -q "$node is fenced: every call on it fails with EIO" "$work/report-$node"
	done
	# Before the fault below fences bug2; the fault then needs the lock.
	check "a 2.6.10 handler that returns holding the big lock answers" \
		grep -q '^locked-return: 0' <("$buggy64" /dev/bug2 locked-return)
	check "... with the report of a lock held when returning to user space" \
		sh -c "grep -q '^cusemud: WARNING: lock held when returning to user space!' '$work/oops.log' &&
			grep -q '^cusemud: Call: ioctl BUGGY_IOC_LOCKED_RETURN (0x00004208) from an x86_64 caller' '$work/oops.log'"
	check "the big lock held by a faulting handler is let go (2.6.10)" \
		grep -q '^locked-null: -1 EIO' <("$buggy64" /dev/bug2 locked-null)
	for abi in 64 32; do
		arch=$([ $abi = 32 ] && echo i386 || echo x86_64)
		cc=$clients/cuse_client-$abi
		check "cuse_client-$abi: fioc under 2.6.10 still answers after the oopses" \
			timeout 10 "$cc" /dev/fioc-oops s 7
		check "cuse_client-$abi: its size reads back" test "$(timeout 10 "$cc" /dev/fioc-oops s)" = 7
		shown=$(oops_hwclock$abi --rtc=/dev/rtc-oops --utc --noadjfile --show 2>&1)
		check "hwclock ($arch) reads rtc after the oopses: $shown" grep -qE '^[0-9]{4}-[0-9]{2}-[0-9]{2} ' <<<"$shown"
	done
	"$cusemuctl" --socket "$oops_ctl" list >"$work/oops-list" 2>&1
	check "cusemuctl list shows the taint" grep -q '^tainted: D (3 oops(es), 0 soft lockup(s))' "$work/oops-list"
	check "... and each fenced device with its report" \
		sh -c "grep -q '^bug0 .*FENCED (oops)' '$work/oops-list' && grep -q '^bug1 .*FENCED (oops)' '$work/oops-list' && grep -q '^    BUG: NULL pointer dereference' '$work/oops-list' && ! grep -q '^rtc-oops .*FENCED' '$work/oops-list'"
	"$cusemuctl" --socket "$oops_ctl" list --json >"$work/oops-list.json" 2>&1
	check "cusemuctl list --json: tainted, and each device's state and oops" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["tainted"] == "D" and d["oopses"] == 3, d["tainted"]
state = {x["name"]: x["state"] for x in d["devices"]}
assert state["bug0"] == "fenced" and state["rtc-oops"] == "serving", state
assert "buggy_null_deref" in [x for x in d["devices"] if x["name"] == "bug1"][0]["oops"]
' "$work/oops-list.json"

	# The model's author rebuilds it: a new file at the plugin's path.
	cp "$build/tests/buggy-fixed.so" "$oops_dir/buggy.so.new"
	mv "$oops_dir/buggy.so.new" "$oops_dir/buggy.so"
	"$cusemuctl" --socket "$oops_ctl" reload bug0 >"$work/reload.out" 2>&1
	status=$?
	diag <"$work/reload.out"
	check "cusemuctl reload bug0 loads the rebuilt plugin" \
		sh -c "test $status = 0 && grep -q 'reloaded: a fresh buggy from the rebuilt $oops_dir/buggy.so' '$work/reload.out'"
	check "the node stayed where it was" is_char_node /dev/bug0
	for abi in 64 32; do
		check "buggy-client-$abi: the reloaded bug0 runs the fixed code (version 2)" \
			grep -q '^info: 0 version=2' <("$clients/buggy-client-$abi" /dev/bug0 info)
		check "buggy-client-$abi: BUGGY_IOC_NULL now returns 0" \
			grep -q '^null: 0' <("$clients/buggy-client-$abi" /dev/bug0 null)
	done
	(echo go >&8) 2>/dev/null
	exec 8>&-
	wait "$holder"
	check "a file opened before the reload gets ENODEV" grep -q '^info: -1 ENODEV' "$work/held.out"
	check "bug1 is still fenced (reload is per device)" \
		grep -q '^open: -1 EIO' <("$buggy64" /dev/bug1 info)
	"$cusemuctl" --socket "$oops_ctl" list >"$work/oops-list" 2>&1
	check "after the reload bug0 serves, the taint stays" \
		sh -c "grep -q '^tainted: D' '$work/oops-list' && ! grep -q '^bug0 .*FENCED' '$work/oops-list'"
	# A plugin that no longer loads leaves the device as it was.
	echo 'not an ELF file' >"$oops_dir/buggy.so.new"
	chmod 0644 "$oops_dir/buggy.so.new"
	mv "$oops_dir/buggy.so.new" "$oops_dir/buggy.so"
	"$cusemuctl" --socket "$oops_ctl" reload bug0 >"$work/reload.out" 2>&1
	status=$?
	check "a reload of a plugin that does not load fails, and says why" \
		sh -c "test $status = 1 && grep -q 'not reloaded, it serves as before: plugin $oops_dir/buggy.so refused: not a shared object' '$work/reload.out'"
	check "... and the device serves as before" \
		grep -q '^info: 0 version=2' <("$buggy32" /dev/bug0 info)
	# The kernel refuses a reply whose errno is above 511: its caller
	# would wait in D state, deaf to SIGKILL.
	for abi in 64 32; do
		check "buggy-client-$abi: a handler's -ERESTARTSYS is answered EINTR" \
			grep -q '^return: -1 EINTR' <(timeout 10 "$clients/buggy-client-$abi" /dev/bug0 return -512)
		check "buggy-client-$abi: a handler's -600 is answered EIO" \
			grep -q '^return: -1 EIO' <(timeout 10 "$clients/buggy-client-$abi" /dev/bug0 return -600)
	done
	check "... with a log line naming the device and the command" \
		grep -q 'bug0: BUGGY_IOC_RETURN returned -600, not an errno the kernel takes; the caller gets EIO' "$work/oops.log"
else
	not_ok "cusemud serves fioc, rtc and the buggy plugin's devices"
fi
[ -z "$daemon_pid" ] || stop_daemon TERM
check "the daemon with oopsed devices stops with status 0" test "$?" = 0
diag <"$work/oops.log" | grep -v '^#  ' | tail -n 40 >"$work/oops.tail"
grep -q 'seccomp\|Bad system call' "$work/oops.tail" && diag <"$work/oops.tail"

# panic_on_oops: the report, then the daemon ends and its nodes with it.
cp "$build/tests/buggy.so" "$oops_dir/panic.so"
chmod 0644 "$oops_dir/panic.so"
start_daemon "$work/panic.log" --plugin "$oops_dir/panic.so" --panic-on-oops \
	--device buggy:name=bug-panic,isolation=none --device fioc:name=fioc-panic --control none
if wait_for 15 is_char_node /dev/bug-panic; then
	"$buggy32" /dev/bug-panic div 0 >/dev/null 2>&1
	wait_for 10 is_dead "$daemon_pid"
	wait "$daemon_pid"
	status=$?
	daemon_pid=
	check "--panic-on-oops: the daemon exits with status 3" test "$status" = 3
	check "... after one report" grep -q '^cusemud: divide error' "$work/panic.log"
	check "... and its nodes are gone" sh -c "! test -e /dev/fioc-panic && ! test -e /dev/bug-panic"
else
	not_ok "cusemud --panic-on-oops serves its devices"
	diag <"$work/panic.log"
fi
rm -rf "$oops_dir"
