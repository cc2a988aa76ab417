# Debian's i2c-tools (i2cdetect, i2cget, i2cset, i2cdump, i2ctransfer) on the
# i2c model's buses, as x86_64 and as i386 builds: the chips they find, the
# EEPROM and LM75 registers they read and write, I2C_RDWR transfers with a
# repeated start, the EEPROM kept in a file, and the round trips per call.
# The i386 builds come from client-tests/fetch-i386 (run by setup).
# Sourced by client-tests/integration.

i2c_ctl=$work/i2c-control

# i2c ABI TOOL ARG...: an i2c-tools program, the host's (64) or the i386 build (32)
i2c() {
	local abi=$1 tool=$2
	shift 2
	if [ "$abi" = 64 ]; then
		"/usr/sbin/$tool" "$@"
	else
		"$here/run-i386" "usr/sbin/$tool" "$@"
	fi
}

# dump_summary FILE: an i2cdump grid as the number of cells, then every cell
# that is not ff as OFFSET=VALUE, e.g. "256 cells, 10=ab 20=01"
dump_summary() {
	awk '/^[0-9a-f]0: / {
		for (j = 0; j < 16; j++) {
			cell = $(j + 2)
			if (cell != "ff")
				other = other sprintf(" %s%x=%s", substr($0, 1, 1), j, cell)
			cells++
		}
	}
	END { printf "%d cells,%s\n", cells, other }' "$1"
}

# i2c_stat DEVICE COMMAND ABI FIELD: calls or retries from cusemuctl stats --json
i2c_stat() {
	"$cusemuctl" --socket "$i2c_ctl" stats --json | python3 -c '
import json, sys
dev, cmd, abi, field = sys.argv[1:]
for d in json.load(sys.stdin)["devices"]:
    if d["name"] != dev:
        continue
    for c in d["stats"]["commands"]:
        if c["name"] == cmd and c["abi"] == abi:
            print(c[field])
            sys.exit(0)
print(0)' "$@"
}
i2c_reset() { "$cusemuctl" --socket "$i2c_ctl" reset >/dev/null; }

# hold_address NODE ADDRESS: a process that keeps NODE open with ADDRESS
# claimed through I2C_SLAVE (0x0703) until it is killed; sets holder_pid.
hold_address() {
	python3 -c '
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR)
fcntl.ioctl(fd, 0x0703, int(sys.argv[2], 0))
print("holding", flush=True)
time.sleep(120)
' "$1" "$2" >"$work/holder.out" 2>&1 &
	holder_pid=$!
}
holding() { grep -qsx holding "$work/holder.out"; }
# lm75_word ABI REGISTER SHOWN WHAT: i2cget reads the LM75 word register as SHOWN
lm75_word() {
	local got
	got=$(i2c "$1" i2cget -y 7 0x48 "$2" w 2>&1)
	check "i2cget ($arch) -y 7 0x48 $2 w: the LM75 reads $4 as $3 (got $got)" test "$got" = "$3"
}
detects() { # detects ABI BUS EXPECTED: i2cdetect's grid shows exactly EXPECTED
	i2c "$1" i2cdetect -y "$2" >"$work/detect-poll.out" 2>&1 &&
		[ "$(detected "$work/detect-poll.out")" = "$3" ]
}

for abi in 64 32; do
	arch=$([ $abi = 32 ] && echo i386 || echo x86_64)
	rdwr_abi=$([ $abi = 32 ] && echo compat || echo native)
	log=$work/i2c-$abi.log

	# Bus 7 with the default chips (EEPROM at 0x50, LM75 at 0x48), bus 8
	# with one EEPROM at 0x51 and an LM75 at 0x4c that a kernel driver
	# is bound to; both EEPROMs start erased.
	start_daemon "$log" --control "$i2c_ctl" \
		--device i2c:name=i2c-7 \
		--device i2c:name=i2c-8,chips=eeprom@0x51+lm75@0x4c:bound
	if ! wait_for 15 is_char_node /dev/i2c-7 || ! wait_for 5 is_char_node /dev/i2c-8; then
		not_ok "cusemud creates /dev/i2c-7 and /dev/i2c-8 ($arch run)"; diag <"$log"
		stop_daemon TERM
		continue
	fi

	# --- i2cdetect: exactly the configured chips, UU for a claimed address
	i2c $abi i2cdetect -y 7 >"$work/detect.out" 2>&1
	status=$?
	echo "# i2cdetect ($arch) -y 7:"
	diag <"$work/detect.out"
	found=$(detected "$work/detect.out")
	check "i2cdetect ($arch) -y 7 exits 0" test "$status" = 0
	check "i2cdetect ($arch) -y 7 finds the default chips at 48 and 50, nothing else (found: $found)" \
		test "$found" = "48 50"
	i2c $abi i2cdetect -y 8 >"$work/detect.out" 2>&1
	status=$?
	echo "# i2cdetect ($arch) -y 8:"
	diag <"$work/detect.out"
	found=$(detected "$work/detect.out")
	check "i2cdetect ($arch) -y 8 finds the EEPROM at 51 and UU at 4c, the bound LM75 (found: $found)" \
		test "$status/$found" = "0/4c:UU 51"
	got=$(i2c $abi i2cget -y 8 0x4c 1 b 2>&1)
	check "i2cget ($arch) -y 8 0x4c, bound to a driver, fails: Device or resource busy (got $got)" \
		sh -c "echo '$got' | grep -q 'Device or resource busy'"
	got=$(i2c $abi i2cget -f -y 8 0x4c 1 b 2>&1)
	check "i2cget -f ($arch) -y 8 0x4c reaches it with I2C_SLAVE_FORCE (got $got)" \
		test "$got" = 0x00

	hold_address /dev/i2c-7 0x50
	if wait_for 10 holding; then
		i2c $abi i2cdetect -y 7 >"$work/detect.out" 2>&1
		status=$?
		echo "# i2cdetect ($arch) -y 7, another process holding 0x50:"
		diag <"$work/detect.out"
		found=$(detected "$work/detect.out")
		check "i2cdetect ($arch) still finds the EEPROM at 50 while another process has it with I2C_SLAVE, as with the kernel (found: $found)" \
			test "$status/$found" = "0/48 50"
		# Two programs on one chip, each with its own I2C_SLAVE.
		i2c $abi i2cget -y 7 0x50 0x00 b >"$work/get-a.out" 2>&1 &
		get_a=$!
		i2c $abi i2cget -y 7 0x50 0x01 b >"$work/get-b.out" 2>&1
		status=$?
		wait "$get_a"
		check "two i2cget ($arch) processes on 0x50 at once both succeed, beside the holder" \
			sh -c "[ $? = 0 ] && [ $status = 0 ] && grep -qx '0x..' '$work/get-a.out' && grep -qx '0x..' '$work/get-b.out'"
	else
		not_ok "a process opens /dev/i2c-7 and claims 0x50 with I2C_SLAVE"; diag <"$work/holder.out"
	fi
	kill "$holder_pid" 2>/dev/null
	wait "$holder_pid" 2>/dev/null
	# The node's release reaches the daemon after the process is gone.
	check "once that process exits, i2cdetect ($arch) finds the same chips" \
		wait_for 10 detects $abi 7 "48 50"

	# --- byte writes and reads with i2cset and i2cget
	check "i2cset ($arch) -y 7 0x50 0x10 0xab writes the EEPROM byte at 0x10" \
		i2c $abi i2cset -y 7 0x50 0x10 0xab
	got=$(i2c $abi i2cget -y 7 0x50 0x10 2>&1)
	check "i2cget ($arch) -y 7 0x50 0x10 reads it back: $got" test "$got" = 0xab

	# --- the LM75's registers: words are big-endian on the wire, so i2cget
	# prints them byte-swapped (80 C = 0x5000 is shown as 0x0050)
	lm75_word $abi 0x00 0x0019 "the temperature, 25.0 C"
	lm75_word $abi 0x02 0x004b "Thyst, 75 C"
	lm75_word $abi 0x03 0x0050 "Tos, 80 C"
	got=$(i2c $abi i2cget -y 7 0x48 0x01 2>&1)
	check "i2cget ($arch) -y 7 0x48 0x01: the LM75's configuration is 0x00 after reset (got $got)" \
		test "$got" = 0x00
	check "i2cset ($arch) -y 7 0x48 0x01 0x02 writes the LM75's configuration" \
		i2c $abi i2cset -y 7 0x48 0x01 0x02
	got=$(i2c $abi i2cget -y 7 0x48 0x01 2>&1)
	check "i2cget ($arch) -y 7 0x48 0x01 reads back the new configuration: $got" test "$got" = 0x02

	# --- I2C_RDWR: a page write, then a random read (write the offset,
	# repeated start, read 4 bytes) in one call
	check "i2ctransfer ($arch) -y 7 w5@0x50 0x20 0x01 0x02 0x03 0x04 writes four bytes as one page write" \
		i2c $abi i2ctransfer -y 7 w5@0x50 0x20 0x01 0x02 0x03 0x04
	got=$(i2c $abi i2ctransfer -y 7 w1@0x50 0x20 r4 2>&1)
	check "i2ctransfer ($arch) -y 7 w1@0x50 0x20 r4: two messages with a repeated start read them back: $got" \
		test "$got" = "0x01 0x02 0x03 0x04"

	# --- i2cdump: the whole EEPROM as written so far, erased 0xff elsewhere
	i2c $abi i2cdump -y 7 0x50 b >"$work/dump.out" 2>&1
	status=$?
	got=$(dump_summary "$work/dump.out")
	check "i2cdump ($arch) -y 7 0x50 b shows the 256 bytes: ab at 0x10, 01 02 03 04 at 0x20, ff elsewhere ($got)" \
		test "$status/$got" = "0/256 cells, 10=ab 20=01 21=02 22=03 23=04"
	[ "$status/$got" = "0/256 cells, 10=ab 20=01 21=02 22=03 23=04" ] || diag <"$work/dump.out"

	# --- round trips per I2C_RDWR call: the same for 1 message and for 42,
	# the most i2ctransfer sends in one call
	i2c_reset
	i2c $abi i2ctransfer -y 7 r1@0x50 >"$work/rdwr1.out" 2>&1
	s1=$?
	calls1=$(i2c_stat i2c-7 I2C_RDWR "$rdwr_abi" calls)
	retries1=$(i2c_stat i2c-7 I2C_RDWR "$rdwr_abi" retries)
	# Set the EEPROM's address counter to 0x1e: the 42 reads that follow
	# continue from there without an offset of their own.
	i2c $abi i2ctransfer -y 7 w1@0x50 0x1e >/dev/null 2>&1
	i2c_reset
	msgs=(r1@0x50)
	for ((i = 1; i < 42; i++)); do msgs+=(r1); done
	i2c $abi i2ctransfer -y 7 "${msgs[@]}" >"$work/rdwr42.out" 2>&1
	s42=$?
	calls42=$(i2c_stat i2c-7 I2C_RDWR "$rdwr_abi" calls)
	retries42=$(i2c_stat i2c-7 I2C_RDWR "$rdwr_abi" retries)
	check "i2ctransfer ($arch) with 1 and with 42 read messages exits 0" test "$s1/$s42" = 0/0
	check "i2ctransfer ($arch) with 42 messages prints 42 reads" test "$(grep -c '^0x' "$work/rdwr42.out")" = 42
	got=$(head -n 8 "$work/rdwr42.out" | paste -sd' ')
	check "... current-address reads from 0x1e on: $got ..." \
		test "$got" = "0xff 0xff 0x01 0x02 0x03 0x04 0xff 0xff"
	check "cusemuctl stats counts one $rdwr_abi I2C_RDWR call for each ($calls1 and $calls42)" \
		test "$calls1/$calls42" = 1/1
	check "I2C_RDWR ($arch) takes as many round trips for 42 messages as for 1 (retries per call: $retries1 for 1 message, $retries42 for 42)" \
		test "$retries1" = "$retries42" -a "$calls1" = 1

	# --- still serving after all of that
	got=$(i2c $abi i2cget -y 7 0x50 0x10 2>&1)
	check "after all that, i2cget ($arch) still reads 0x10: $got" test "$got" = 0xab
	stop_daemon TERM
	status=$?
	check "SIGTERM: cusemud exits 0 ($arch run, exit $status)" test "$status" = 0
	if grep -qiE "warning|error|critical" "$log"; then
		not_ok "the i2c daemon logged no warning or error ($arch run)"; diag <"$log"
	else
		ok "the i2c daemon logged no warning or error ($arch run)"
	fi

	# --- eeprom_file: loaded at start, holding what was written once the
	# daemon has stopped. It starts as the bytes 00 01 ... ff, so every
	# cell says where it is.
	file=$work/eeprom-$abi.bin
	python3 -c 'import sys; sys.stdout.buffer.write(bytes(range(256)))' >"$file"
	cp "$file" "$work/eeprom-before.bin"
	value=$([ $abi = 32 ] && echo 0xa5 || echo 0x5a)
	log=$work/i2c-file-$abi.log
	start_daemon "$log" --control none --device "i2c:name=i2c-7,eeprom_file=$file"
	if wait_for 15 is_char_node /dev/i2c-7; then
		got=$(i2c $abi i2cget -y 7 0x50 0x42 2>&1)
		check "eeprom_file: i2cget ($arch) reads the file's byte at 0x42: $got" test "$got" = 0x42
		check "i2cset ($arch) -y 7 0x50 0x42 $value writes over it" i2c $abi i2cset -y 7 0x50 0x42 "$value"
		stop_daemon TERM
		status=$?
		check "SIGTERM: cusemud with an EEPROM file exits 0 ($arch run, exit $status)" test "$status" = 0
		size=$(wc -c <"$file")
		check "the EEPROM file has 256 bytes after shutdown ($arch run, has $size)" test "$size" = 256
		got=$(od -An -tx1 -j 0x42 -N 1 "$file" | tr -d ' ')
		check "... the byte at 0x42 is the one i2cset wrote ($got)" test "0x$got" = "$value"
		changed=$(cmp -l "$work/eeprom-before.bin" "$file" | wc -l)
		check "... and no other byte changed ($changed byte differs)" test "$changed" = 1
		start_daemon "$log.again" --control none --device "i2c:name=i2c-7,eeprom_file=$file"
		if wait_for 15 is_char_node /dev/i2c-7; then
			got=$(i2c $abi i2cget -y 7 0x50 0x42 2>&1)
			check "after a restart, i2cget ($arch) reads back $value from the file: $got" test "$got" = "$value"
		else
			not_ok "cusemud starts again with eeprom_file=$file"; diag <"$log.again"
		fi
		stop_daemon TERM
		if cat "$log" "$log.again" | grep -qiE "warning|error|critical"; then
			not_ok "the daemons with an EEPROM file logged no warning or error ($arch run)"
			cat "$log" "$log.again" | diag
		else
			ok "the daemons with an EEPROM file logged no warning or error ($arch run)"
		fi
	else
		not_ok "cusemud starts with eeprom_file=$file"; diag <"$log"
		stop_daemon TERM
	fi
done

# --- i2c-client in both ABIs, each on a bus of its own with the default
# chips: what i2c-tools cannot send (bad pointers, message counts and
# lengths at the edges, a second opener)
start_daemon "$work/i2c-client.log" --control none \
	--device i2c:name=i2c-10 --device i2c:name=i2c-11
if wait_for 15 is_char_node /dev/i2c-10 && wait_for 5 is_char_node /dev/i2c-11; then
	client_pair i2c-client /dev/i2c-10 /dev/i2c-11
else
	not_ok "cusemud starts with two i2c buses for i2c-client"; diag <"$work/i2c-client.log"
fi
stop_daemon TERM

# --- a full disk: the EEPROM's saves fail (each a warning, tried again
# after the next write), then so does the last one at shutdown: the log
# names the file and the bytes lost, and the exit status is 1.
full=$(mktemp -d /tmp/cusemu-full.XXXXXX)
if mount -t tmpfs -o size=64k tmpfs "$full" 2>"$work/full.err"; then
	start_daemon "$work/i2c-full.log" --control none \
		--device "i2c:name=i2c-12,eeprom_file=$full/eeprom.bin"
	if wait_for 15 is_char_node /dev/i2c-12; then
		# Fill the file system, leaving no room for a save.
		dd if=/dev/zero of="$full/filler" bs=4k 2>/dev/null
		i2c 64 i2cset -y 12 0x50 0x10 0xab >/dev/null 2>&1
		i2c 64 i2cset -y 12 0x50 0x11 0xcd >/dev/null 2>&1
		check "a save to a full disk is a warning naming why" \
			wait_for 5 grep -q "cannot save its contents.*No space left on device" "$work/i2c-full.log"
		stop_daemon TERM
		status=$?
		check "the last save failing too, cusemud exits 1 (exit $status)" test "$status" = 1
		check "... and its log names the file and the 2 bytes lost" \
			grep -q "lost data: eeprom@0x50: 2 bytes written since its last save are not in $full/eeprom.bin" "$work/i2c-full.log"
		grep -E "lost|exit status" "$work/i2c-full.log" | diag
	else
		not_ok "cusemud starts with an EEPROM file on a small tmpfs"; diag <"$work/i2c-full.log"
		stop_daemon TERM
	fi
	umount "$full"
else
	ok "a full disk loses no EEPROM write silently # SKIP no tmpfs mount here: $(cat "$work/full.err")"
fi
rmdir "$full"
