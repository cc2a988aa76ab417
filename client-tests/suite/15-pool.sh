# One worker pool for every node: thousands of devices on a few threads,
# and handlers that wait (evdev reads with no event) do not starve the
# pool. Sourced by client-tests/integration.

# Threads may end while find reads the directory.
thread_count() { find "/proc/$daemon_pid/task" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }
# EVIOCGNAME(64) (_IOC(_IOC_READ, 'E', 0x06, 64)) from a 64-bit process.
evdev_name='import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
print(fcntl.ioctl(fd, 0x80404506, bytes(64)).rstrip(b"\0").decode())'

# --- 64 readers waiting for events that never come, on 2 workers
printf '[daemon]\nthreads=2\n' >"$work/pool.conf"
start_daemon "$work/pool.log" --control "$work/pool.ctl" --config "$work/pool.conf" \
	--device evdev:name=event-pool --device fioc:name=fioc-pool
if wait_for 15 is_char_node /dev/fioc-pool && wait_for 5 grep -q "ready:" "$work/pool.log"; then
	check "threads=2: the log says 2 worker threads" grep -q "ready: 2 device(s), 2 worker threads" "$work/pool.log"
	threads0=$(thread_count)
	readers=()
	for i in $(seq 1 64); do
		dd if=/dev/event-pool of=/dev/null bs=24 count=1 2>/dev/null &
		readers+=($!)
	done
	# Every reader is inside its read once the daemon holds 64 waits.
	wait_for 20 sh -c "[ \$(find /proc/$daemon_pid/task -mindepth 1 -maxdepth 1 2>/dev/null | wc -l) -ge $((threads0 + 64)) ]"
	grown=$(thread_count)
	check "64 blocked evdev readers: the pool grows by a worker each ($threads0 threads, then $grown)" \
		test "$grown" -ge $((threads0 + 64))
	running=$("$cusemuctl" --socket "$work/pool.ctl" list | sed -n 's/^pool: 2 worker threads, \([0-9]*\) running now.*/\1/p')
	check "... cusemuctl list says so (pool: 2 worker threads, ${running:-?} running now)" \
		test "${running:-0}" -ge 66
	name=$(timeout 5 python3 -c "$evdev_name" /dev/event-pool)
	check "... a 65th client's EVIOCGNAME on the same node answers ($name)" test -n "$name"
	check "... and an i386 client's FIOC_SET_SIZE/GET_SIZE on another node" \
		sh -c "timeout 5 '$clients/cuse_client-32' /dev/fioc-pool s 11 && test \"\$(timeout 5 '$clients/cuse_client-32' /dev/fioc-pool s)\" = 11"
	alive=0
	for pid in "${readers[@]}"; do kill -0 "$pid" 2>/dev/null && alive=$((alive + 1)); done
	check "... while the 64 readers still wait ($alive waiting)" test "$alive" = 64
	kill "${readers[@]}" 2>/dev/null
	wait "${readers[@]}" 2>/dev/null
	check "the readers gone, the added workers leave within 15 s (back to $threads0)" \
		wait_for 15 sh -c "[ \$(find /proc/$daemon_pid/task -mindepth 1 -maxdepth 1 2>/dev/null | wc -l) -le $threads0 ]"
else
	not_ok "cusemud serves /dev/event-pool and /dev/fioc-pool"; diag <"$work/pool.log"
fi
stop_daemon TERM
status=$?
check "... and it stops with exit 0 (exit $status)" test "$status" = 0

# --- 4096 devices in one daemon
args=()
for i in $(seq 0 4095); do args+=(--device "fioc:name=f$i"); done
start=$(date +%s%N)
start_daemon "$work/many.log" --control "$work/many.ctl" "${args[@]}"
if wait_for 120 grep -q "ready:" "$work/many.log"; then
	ms=$((($(date +%s%N) - start) / 1000000))
	ok "4096 fioc devices: ready in $ms ms"
	threads=$(thread_count)
	check "... on the pool's 8 workers, the main thread and the soft-lockup watchdog ($threads threads)" test "$threads" -le 10
	check "... cusemuctl list --json: 8 worker threads, 8 running" \
		sh -c "'$cusemuctl' --socket '$work/many.ctl' list --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
sys.exit(not (d[\"pool\"] == {\"threads\": 8, \"running\": 8} and len(d[\"devices\"]) == 4096))'"
	check "... /dev/f0 serves FIOC_SET_SIZE/GET_SIZE, 64-bit" \
		sh -c "'$clients/cuse_client-64' /dev/f0 s 5 && test \"\$('$clients/cuse_client-64' /dev/f0 s)\" = 5"
	check "... /dev/f4095 serves FIOC_SET_SIZE/GET_SIZE, i386" \
		sh -c "'$clients/cuse_client-32' /dev/f4095 s 9 && test \"\$('$clients/cuse_client-32' /dev/f4095 s)\" = 9"
else
	not_ok "4096 fioc devices reach ready"; tail -n 20 "$work/many.log" | diag
fi
stop_daemon TERM
status=$?
check "... and it stops with exit 0 (exit $status)" test "$status" = 0
check "... removing every node" sh -c 'for i in $(seq 0 4095); do test ! -e /dev/f$i || exit 1; done'
