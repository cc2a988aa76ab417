# What cusemu-abicheck --model finds, as a caller meets it: a model whose
# compat table marks WRONG_INFO compatible though its struct is 12 bytes
# on i386 and 16 on x86_64 (tests/abicheck/wrong-model.c). The i386 caller
# gets ENOTTY, and the daemon's log names the command, both sizes and the
# tool, once. Sourced by client-tests/integration.

wrong_dir=$(mktemp -d /run/cusemu-wrong.XXXXXX)
cp "$build/tests/abicheck-wrong.so" "$wrong_dir/" 2>/dev/null
chmod 0644 "$wrong_dir/abicheck-wrong.so" 2>/dev/null
start_daemon "$work/wrong.log" --plugin "$wrong_dir/abicheck-wrong.so" \
	--device wrong:name=wrong0
if wait_for 15 is_char_node /dev/wrong0; then
	ok "cusemud --plugin abicheck-wrong.so serves /dev/wrong0"
	for abi in 64 32; do
		"$clients/wrong-client-$abi" /dev/wrong0 >"$work/wrong-$abi.out" 2>&1
		while IFS= read -r line; do
			case $line in
			"ok "*) ok "wrong-client-$abi: ${line#ok * - }" ;;
			"not ok "*) not_ok "wrong-client-$abi: ${line#not ok * - }" ;;
			esac
		done <"$work/wrong-$abi.out"
	done
else
	not_ok "cusemud --plugin abicheck-wrong.so serves /dev/wrong0"
	diag <"$work/wrong.log"
fi
[ -z "$daemon_pid" ] || stop_daemon TERM
check "the log names the i386 command, the native row and both sizes" \
	grep -q "a 32-bit caller's 800c5901 has no compat row, but native WRONG_INFO (80105901) has its type, number and direction with 16 bytes against the caller's 12" "$work/wrong.log"
check "the log says to run cusemu-abicheck on the plugin's file" \
	grep -q "run cusemu-abicheck --model $wrong_dir/abicheck-wrong.so on the model's header" "$work/wrong.log"
check "the hint is logged once for two calls" \
	test "$(grep -c 'has no compat row' "$work/wrong.log")" = 1
check "a command that is served gets no hint (WRONG_RIGHT)" \
	bash -c "! grep -q '80045903' '$work/wrong.log'"
rm -rf "$wrong_dir"
