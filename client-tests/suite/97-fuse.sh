# The FUSE transport (cusemud --fuse DIR) in the VM, where i386 programs
# run: client-tests/host-fuse, then client-tests/host-run (cusemu-run as
# nobody: the static busybox, the i386 builds of the real programs and the
# i386 clients under it), whose checks are re-emitted here. The same
# scripts run on the host as the tests fuse-host and host-run, where they
# need no root and no VM. Sourced by client-tests/integration.

# udev would make /dev/fuse usable by everyone, as Debian's rules do.
chmod 0666 /dev/fuse

# reemit SCRIPT PREFIX: SCRIPT's checks as this section's, PREFIX before
# each; then that it exits 0 and skipped nothing (i386 runs here).
reemit() {
	local script=$1 prefix=$2 status line
	"$here/$script" "$build" >"$work/$prefix.out" 2>&1
	status=$?
	while IFS= read -r line; do
		case $line in
		"ok "*"# SKIP"*) n=$((n + 1)); echo "ok $n - $prefix: ${line#ok * - }" ;;
		"ok "*) ok "$prefix: ${line#ok * - }" ;;
		"not ok "*) not_ok "$prefix: ${line#not ok * - }" ;;
		"1.."*) ;;
		*) echo "# $prefix: $line" ;;
		esac
	done <"$work/$prefix.out"
	[ "$status" -eq 0 ] && ok "$script exits 0" || not_ok "$script exits 0 (got $status)"
	check "$script: i386 programs ran, none skipped" \
		sh -c "! grep -q 'SKIP' '$work/$prefix.out'"
}

reemit host-fuse fuse
reemit host-run run
