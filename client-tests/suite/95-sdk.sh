# The model SDK end to end: examples/sensorhub, built out of the tree
# against an installed cusemu (client-tests/sdk-example, before the VM),
# loaded with --plugin and served to its x86_64 and i386 clients, the i386
# info struct translated by its compat row. Sourced by client-tests/integration.

sdk=$build/sdk-example/build
# Root loads plugins only from places nobody else can write: not /tmp.
sdk_dir=$(mktemp -d /run/cusemu-sdk.XXXXXX)
sdk_ctl=$work/sdk.sock
cp "$sdk/sensorhub.so" "$sdk_dir/" 2>/dev/null
chmod 0644 "$sdk_dir/sensorhub.so" 2>/dev/null
check "the SDK example was built (meson test sdk-example)" test -f "$sdk_dir/sensorhub.so"

start_daemon "$work/sdk.log" --plugin "$sdk_dir/sensorhub.so" \
	--device sensorhub:name=hub0,channels=3 --control "$sdk_ctl"
if wait_for 15 is_char_node /dev/hub0; then
	ok "cusemud --plugin sensorhub.so serves /dev/hub0"
	# A tracer decoding the payloads by the example's header, meanwhile.
	"$cusemuctl" --socket "$sdk_ctl" trace --header "$here/../examples/sensorhub/sensorhub.h" \
		hub0 >"$work/hub-trace.txt" 2>"$work/hub-trace.err" &
	tracer=$!
	wait_for 10 grep -q tracing "$work/hub-trace.err"
	for abi in 64 32; do
		"$sdk/sensorhub-client-$abi" /dev/hub0 >"$work/sensorhub-client-$abi.out" 2>&1
		report_client "sensorhub-client-$abi" "$(arch_of $abi)" $?
	done
	# Both clients' files released: their last lines are in.
	wait_for 5 sh -c "[ \$(grep -c 'release(' '$work/hub-trace.txt') -ge 2 ]"
	kill "$tracer"; wait "$tracer" 2>/dev/null
	for abi in x86_64 i386; do
		if [ $abi = x86_64 ]; then number=0x8028bc01 size=40; else number=0x8024bc01 size=36; fi
		check "cusemuctl trace --header sensorhub.h hub0 decodes SENSORHUB_IOC_INFO for $abi, member by member" \
			grep -E "hub0 [0-9]+ sensorhub-clien ioctl\(SENSORHUB_IOC_INFO $number, $abi, $size bytes\) in \{\} out \{version=65536, serial=[0-9]+, channels=3, rate_hz=[0-9]+, name=\"[a-z0-9]+\"\}( round trips 1)? = 0 <" "$work/hub-trace.txt"
	done
	check "the trace shows the round trip of an unrestricted ioctl" \
		grep -Eq "SENSORHUB_IOC_INFO .* round trips 1 = 0" "$work/hub-trace.txt"
	[ -s "$work/hub-trace.txt" ] || diag <"$work/hub-trace.err"
	check "cusemuctl list names the plugin the model came from" \
		sh -c "'$cusemuctl' --socket '$sdk_ctl' list | grep -q '^hub0 .*model sensorhub .* from $sdk_dir/sensorhub.so'"
	check "cusemuctl list shows every model, the plugin's with its file" \
		sh -c "'$cusemuctl' --socket '$sdk_ctl' list | grep -q '^models: fioc, .*, sensorhub (from $sdk_dir/sensorhub.so)'"
	"$cusemuctl" --socket "$sdk_ctl" list --json >"$work/sdk-list.json" 2>&1
	check "cusemuctl list --json gives every model's origin and the device's" \
		python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
origin = {m["name"]: m["origin"] for m in d["models"]}
assert origin["sensorhub"] == sys.argv[2] and origin["fioc"] == "built-in", origin
assert [x["origin"] for x in d["devices"]] == [sys.argv[2]], d["devices"]
' "$work/sdk-list.json" "$sdk_dir/sensorhub.so"
	check "the i386 info command was served by the compat row" \
		sh -c "'$cusemuctl' --socket '$sdk_ctl' stats | grep -q 'SENSORHUB_IOC_INFO32'"
else
	not_ok "cusemud --plugin sensorhub.so serves /dev/hub0"
	diag <"$work/sdk.log"
fi
[ -z "$daemon_pid" ] || stop_daemon TERM
check "the daemon's log has no warning" bash -c "! grep -iE 'warning|critical' '$work/sdk.log'"

# The README tour's step 4 as written there: its daemon line, run as a
# reader runs it (detached; cusemud found on PATH) in a copy of the
# example's build/, then its client line, which must print no "not ok".
# The copy sits in a directory of root's under a sticky one that anyone
# may write, as a build under /var/tmp does: that is safe, and loads.
# tests/test-docs checks that the lines exist and that every copy of the
# sensorhub device in the docs is the tour's.
readme=$here/../README.md
tour_start=$(grep -m 1 '^cusemud --plugin build/sensorhub.so ' "$readme")
tour_clients=$(grep -m 1 '^build/sensorhub-client-64 ' "$readme")
check "README.md's tour starts sensorhub and runs its clients (step 4)" \
	test -n "$tour_start" -a -n "$tour_clients"
tour_sticky=$(mktemp -d /tmp/cusemu-sticky.XXXXXX)
chmod 1777 "$tour_sticky"
tour_dir=$tour_sticky/tour
mkdir -m 0755 "$tour_dir" "$tour_dir/build"
cp "$sdk/sensorhub.so" "$sdk/sensorhub-client-64" "$sdk/sensorhub-client-32" \
	"$tour_dir/build/" 2>/dev/null
chmod 0644 "$tour_dir/build/sensorhub.so" 2>/dev/null
tour_before=" $(pidof cusemud) "
(cd "$tour_dir" && PATH=$build/daemon:$PATH && eval "$tour_start") \
	>"$work/tour.log" 2>&1
status=$?
tour_pid=
for pid in $(pidof cusemud); do
	case $tour_before in *" $pid "*) ;; *) tour_pid=$pid ;; esac
done
if [ "$status" = 0 ] && is_char_node /dev/hub0; then
	ok "the tour's line returns once /dev/hub0 exists: $tour_start"
	ok "... with the plugin in root's directory under a sticky one anyone may write"
	(cd "$tour_dir" && bash -ec "$tour_clients") >"$work/tour.out" 2>&1
	status=$?
	check "the tour's clients exit 0: $tour_clients" test "$status" = 0
	check "... and print no 'not ok'" bash -c "! grep -q '^not ok' '$work/tour.out'"
	[ "$status" = 0 ] || diag <"$work/tour.out"
else
	not_ok "the tour's line returns once /dev/hub0 exists (exit $status): $tour_start"
	diag <"$work/tour.log"
fi
if [ -n "$tour_pid" ]; then
	kill -TERM "$tour_pid"
	wait_for 20 is_dead "$tour_pid" || kill -9 "$tour_pid"
fi
check "the tour's daemon is gone with its node" wait_for 10 is_gone /dev/hub0
rm -rf "$tour_sticky"

# A plugin that anyone may write is refused, and no node appears.
chmod 0666 "$sdk_dir/sensorhub.so"
"$cusemud" --foreground --plugin "$sdk_dir/sensorhub.so" \
	--device sensorhub:name=hub1 >"$work/sdk-bad.log" 2>&1
check "a plugin others can write stops the start (exit 1)" test $? = 1
check "the refusal names the file and what to do" \
	grep -q "refused: $sdk_dir/sensorhub.so is writable by anyone (mode 0666); make it writable by its owner alone" "$work/sdk-bad.log"
check "no node was created" test ! -e /dev/hub1
rm -rf "$sdk_dir"

# The same model as a kernel module (sdk-example built sensorhub.ko with
# the SDK's cusemu-kmod, against this kernel's headers): its clients pass
# against the module's node as against cusemud's, every answer the same
# (the "# = ..." lines: each call's result, errno and values), and rmmod
# leaves nothing. Then docs/kernel-module.md's loop, as written there.
ko=$sdk/sensorhub.ko
check "sdk-example built sensorhub.ko" test -f "$ko"
check "no node named hub0 is left before the module's" wait_for 10 is_gone /dev/hub0
dmesg_before=$(dmesg | wc -l)
if insmod "$ko" channels=3 2>"$work/insmod.err" && wait_for 10 is_char_node /dev/hub0; then
	ok "insmod sensorhub.ko channels=3: the module serves /dev/hub0"
	check "... a misc device (major 10)" sh -c "[ \"\$(stat -c %t /dev/hub0)\" = a ]"
	for abi in 64 32; do
		module_client "sensorhub-client-$abi" "$(arch_of $abi)" \
			"$sdk/sensorhub-client-$abi" /dev/hub0
	done
	check "rmmod sensorhub" rmmod sensorhub
	check "... removes /dev/hub0" wait_for 10 is_gone /dev/hub0
	check "... and the module" sh -c "! grep -q '^sensorhub ' /proc/modules"
	check "a value out of a key's range fails the load, said in the kernel's log: channels=9" \
		sh -c "! insmod '$ko' channels=9 2>/dev/null && dmesg | grep -q 'hub0: channels=9: must be 1 to 8' &&
			! grep -q '^sensorhub ' /proc/modules && [ ! -e /dev/hub0 ]"
else
	not_ok "insmod sensorhub.ko channels=3: the module serves /dev/hub0"
	diag <"$work/insmod.err"
	dmesg | tail -n 20 | diag
fi
kmod_log_clean "$dmesg_before" 'model sensorhub serves /dev/hub0|hub0: channels=9: must be 1 to 8'

# docs/kernel-module.md's loop, its lines as written, in a shell that
# stops at the first that fails: the SDK where pkg-config finds it, and a
# home of its own.
loop=$(sed -n '/^<!-- kernel-module: the loop/,/^```$/p' "$here/../docs/kernel-module.md" |
	sed '1,2d;$d')
check "docs/kernel-module.md has the loop, from cp to rmmod" \
	sh -c "printf '%s\n' \"\$1\" | head -n 1 | grep -q '^cp -r examples/sensorhub ' &&
		printf '%s\n' \"\$1\" | tail -n 1 | grep -q '^rmmod sensorhub$'" _ "$loop"
# The sanitizers' run builds nothing here that the plain run does not: the
# loop is meson and kbuild in the VM, and its daemon-free clients.
if [ -n "${ASAN_OPTIONS:-}" ]; then
	ok "the loop runs as written # SKIP run in the build without AddressSanitizer"
else
	loop_home=$(mktemp -d /root/kmod-loop.XXXXXX)
	(cd "$here/.." && HOME=$loop_home \
		PKG_CONFIG_PATH=$(dirname "$(find "$build/sdk-example/root" -name cusemu-1.pc -print -quit)") \
		PATH=$build/sdk-example/root/usr/local/bin:$PATH bash -e -c "$loop") >"$work/kmod-loop.out" 2>&1
	status=$?
	check "the loop runs as written: meson builds sensorhub.ko, insmod, both clients pass, rmmod (exit $status)" \
		test "$status" = 0
	check "... and no client printed 'not ok'" sh -c "! grep -q '^not ok' '$work/kmod-loop.out'"
	[ "$status" = 0 ] || tail -n 30 "$work/kmod-loop.out" | diag
	rmmod sensorhub 2>/dev/null
	rm -rf "$loop_home"
fi
