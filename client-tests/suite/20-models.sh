# Every cell of the kernel-model table, with x86_64 and i386 clients: the
# method that served the call, whether the big lock was held, the errno of
# "not mine", the global ioctl32 table's log lines and its one command space.
# Sourced by client-tests/integration.

# Each line: model, probe device (all: every method; ioctl: a legacy driver
# with only ->ioctl), client ABI, probe-client operation, expected output.
model_cells='
2.6.10   all    64 report      method=ioctl big_lock_depth=1 compat=0
2.6.10   all    64 unknown     errno=ENOTTY
2.6.10   all    32 report      method=ioctl big_lock_depth=1 compat=1
2.6.10   all    32 who         method=ioctl32 handler big_lock_depth=1 compat=1
2.6.10   all    32 native-only errno=EINVAL
2.6.10   all    32 unknown     errno=EINVAL
unlocked all    64 report      method=unlocked_ioctl big_lock_depth=0 compat=0
unlocked all    64 unknown     errno=ENOTTY
unlocked ioctl  64 report      method=ioctl big_lock_depth=1 compat=0
unlocked all    32 report      method=unlocked_ioctl big_lock_depth=0 compat=1
unlocked ioctl  32 report      method=ioctl big_lock_depth=1 compat=1
unlocked all    32 who         method=ioctl32 handler big_lock_depth=1 compat=1
unlocked all    32 native-only errno=EINVAL
unlocked all    32 unknown     errno=EINVAL
split    all    64 report      method=ioctl_native big_lock_depth=0 compat=0
split    all    64 unknown     errno=ENOTTY
split    all    32 report      method=ioctl_compat big_lock_depth=0 compat=1
split    all    32 who         method=ioctl_compat big_lock_depth=0 compat=1
split    all    32 native-only errno=EINVAL
split    all    32 unknown     errno=EINVAL
split    ioctl  64 report      method=ioctl big_lock_depth=1 compat=0
split    ioctl  32 report      method=ioctl big_lock_depth=1 compat=1
split    ioctl  32 who         method=ioctl32 handler big_lock_depth=1 compat=1
2.6.11   all    64 report      method=unlocked_ioctl big_lock_depth=0 compat=0
2.6.11   all    64 unknown     errno=EINVAL
2.6.11   ioctl  64 report      method=ioctl big_lock_depth=1 compat=0
2.6.11   all    32 report      method=compat_ioctl big_lock_depth=0 compat=1
2.6.11   all    32 who         method=compat_ioctl big_lock_depth=0 compat=1
2.6.11   all    32 native-only errno=EINVAL
2.6.11   all    32 unknown     errno=EINVAL
2.6.11   ioctl  32 report      method=ioctl big_lock_depth=1 compat=1
2.6.11   ioctl  32 who         method=ioctl32 handler big_lock_depth=1 compat=1
modern   all    64 report      method=unlocked_ioctl big_lock_depth=0 compat=0
modern   all    64 who         method=unlocked_ioctl big_lock_depth=0 compat=0
modern   all    64 unknown     errno=ENOTTY
modern   all    32 report      method=compat_ioctl big_lock_depth=0 compat=1
modern   all    32 who         method=compat_ioctl big_lock_depth=0 compat=1
modern   all    32 native-only errno=ENOTTY
modern   all    32 unknown     errno=ENOTTY
modern   ioctl  64 report      errno=ENOTTY
modern   ioctl  32 report      errno=ENOTTY
'

# The unknown-command line, as fs/compat.c printed it.
unknown_line="ioctl32\(probe-client-32:[0-9]+\): Unknown cmd fd\(3\) cmd\(80105003\)\{t:'P';sz:16\} arg\([0-9a-f]{8}\) on /dev/probe-all"

for model in 2.6.10 unlocked split 2.6.11 modern; do
	log=$work/model-$model.log
	# fioc first: it registers FIOC_READ before probe can claim the number.
	start_daemon "$log" --model "$model" --device fioc:name=fioc-$model \
		--device probe:name=probe-all --device probe:name=probe-ioctl,methods=ioctl
	if ! wait_for 15 is_char_node /dev/probe-ioctl; then
		not_ok "$model: cusemud starts"; diag <"$log"; continue
	fi
	while read -r m dev abi op expected; do
		[ "$m" = "$model" ] || continue
		got=$("$clients/probe-client-$abi" "/dev/probe-$dev" "$op" 2>&1)
		check "$model: probe ($dev) $op from an $([ "$abi" = 32 ] && echo i386 || echo x86_64) client: $expected (got $got)" \
			test "$got" = "$expected"
	done <<<"$model_cells"
	if [ "$model" = modern ]; then
		check "$model: no global table, so no ioctl32 log line" \
			sh -c "! grep -q 'ioctl32(' '$log'"
	else
		check "$model: an unknown 32-bit command is logged as the kernel did" \
			grep -qE "$unknown_line" "$log"
	fi
	# libfuse's unmodified example client, i386 build, under every model
	cc=$clients/cuse_client-32
	printf 'model %s' "$model" >"$work/in"
	check "$model: cuse_client-32 is served: write" sh -c "'$cc' /dev/fioc-$model w 32 <'$work/in'"
	check "$model: cuse_client-32 is served: read back" \
		test "$("$cc" "/dev/fioc-$model" r 32 2>/dev/null)" = "model $model"
	stop_daemon TERM
	status=$?
	check "$model: cusemud stops with exit 0 (exit $status)" test "$status" = 0
done

# Two models claiming one 32-bit command: the first registered keeps it.
log=$work/dup.log
start_daemon "$log" --model 2.6.10 --device probe:name=claims --device fioc:name=loses
if wait_for 15 is_char_node /dev/loses; then
	check "duplicate 32-bit command: the kernel's registration error is logged" \
		grep -q "Trying to register duplicated ioctl32 handler 4502" "$log"
	check "... and the start-up log says which device lost which command to which" \
		grep -q "/dev/loses (fioc) lost FIOC_READ (00004502) in the global ioctl32 table to /dev/claims (probe)" "$log"
	printf 'lost' >"$work/in"
	"$clients/cuse_client-64" /dev/loses w 4 <"$work/in" 2>/dev/null
	if "$clients/cuse_client-32" /dev/loses r 4 >"$work/out" 2>&1; then
		not_ok "... so an i386 FIOC_READ on the loser fails"
	else
		ok "... so an i386 FIOC_READ on the loser fails ($(tr '\n' ' ' <"$work/out"))"
	fi
	check "... and the daemon says why" grep -q "not run on /dev/loses, a fioc device" "$log"
	check "... while the x86_64 FIOC_READ works" \
		test "$("$clients/cuse_client-64" /dev/loses r 4 2>/dev/null)" = lost
	check "... and the winner serves the number on its own node" \
		test "$("$clients/probe-client-32" /dev/claims claim-fioc-read)" = \
			"method=ioctl32 handler big_lock_depth=1 compat=1"
else
	not_ok "cusemud starts with two models claiming one command"; diag <"$log"
fi
stop_daemon TERM
