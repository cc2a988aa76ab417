# The FUSE transport (cusemud --fuse DIR) in the VM, where i386 programs
# run: client-tests/host-fuse, whose checks are re-emitted here. The same
# script runs on the host as the test fuse-host, where it needs no root and
# no VM. Sourced by client-tests/integration.

# udev would make /dev/fuse usable by everyone, as Debian's rules do.
chmod 0666 /dev/fuse
"$here/host-fuse" "$build" >"$work/fuse.out" 2>&1
status=$?
while IFS= read -r line; do
	case $line in
	"ok "*"# SKIP"*) n=$((n + 1)); echo "ok $n - fuse: ${line#ok * - }" ;;
	"ok "*) ok "fuse: ${line#ok * - }" ;;
	"not ok "*) not_ok "fuse: ${line#not ok * - }" ;;
	"1.."*) ;;
	*) echo "# fuse: $line" ;;
	esac
done <"$work/fuse.out"
[ "$status" -eq 0 ] && ok "host-fuse exits 0" || not_ok "host-fuse exits 0 (got $status)"
check "i386 programs ran over FUSE, none skipped" \
	sh -c "! grep -q 'SKIP' '$work/fuse.out'"
