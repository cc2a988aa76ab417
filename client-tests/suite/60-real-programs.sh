# Unmodified Debian programs against cusemu's nodes, as x86_64 and as i386
# builds: util-linux hwclock on the rtc model, wdctl on the watchdog model.
# The i386 builds come from client-tests/fetch-i386 (run by setup).
# Sourced by client-tests/integration.

hwclock64() { /sbin/hwclock "$@"; }
hwclock32() { "$here/run-i386" usr/sbin/hwclock "$@"; }
wdctl64() { /usr/bin/wdctl "$@"; }
wdctl32() { "$here/run-i386" usr/bin/wdctl "$@"; }

# Seconds since boot, which setting the clock does not move.
uptime_s() { cut -d. -f1 /proc/uptime; }
# runs_on_from SHOWN SINCE: SHOWN (hwclock's output) is the time set,
# 2030-01-02 03:04:05, run on by no more than the seconds since SINCE (an
# uptime_s before the --set), however slow the programs ran.
runs_on_from() {
	local shown set ran
	shown=$(date -u -d "$1" +%s 2>/dev/null) || return 1
	set=$(date -u -d '2030-01-02 03:04:05' +%s)
	ran=$(($(uptime_s) - $2 + 1))
	echo "$((shown - set)) s after the time set, $ran s since --set began"
	[ "$((shown - set))" -ge -1 ] && [ "$((shown - set))" -le "$ran" ]
}

start_daemon "$work/real.log" --device rtc:name=rtc-real \
	--device watchdog:name=watchdog-real,identity=cusemu-wdt,timeout=42
if wait_for 15 is_char_node /dev/rtc-real && wait_for 5 is_char_node /dev/watchdog-real; then
	for abi in 64 32; do
		arch=$([ $abi = 32 ] && echo i386 || echo x86_64)
		hw=hwclock$abi
		opts=(--rtc=/dev/rtc-real --utc --noadjfile)

		# Emulated time starts at the host's: --show prints it.
		shown=$($hw "${opts[@]}" --show 2>&1)
		now=$(date -u +%s)
		then=$(date -u -d "$shown" +%s 2>/dev/null || echo 0)
		check "hwclock ($arch) --show reads the emulated clock: $shown" \
			test "$((now - then))" -ge -5 -a "$((now - then))" -le 5

		$hw "${opts[@]}" --show --verbose >"$work/hw.out" 2>&1
		check "hwclock ($arch) waits for the update interrupt, not its busy loop" \
			sh -c "grep -q 'got clock tick' '$work/hw.out' && ! grep -q 'Waiting in loop' '$work/hw.out'"
		grep -E 'tick|RTC_UIE|Using' "$work/hw.out" | diag

		host_before=$(date -u +%s)
		set_at=$(uptime_s)
		check "hwclock ($arch) --set --date sets the emulated clock" \
			$hw "${opts[@]}" --set --date='2030-01-02 03:04:05'
		shown=$($hw "${opts[@]}" --show 2>&1)
		check "hwclock ($arch) --show reads back the new time: $shown" \
			runs_on_from "$shown" "$set_at"
		check "... and the host's clock did not move" \
			test "$(($(date -u +%Y) ))" -lt 2030 -a "$(date -u +%s)" -ge "$host_before"
		# The chip keeps its own time: setting the system clock a year
		# ahead (the VM's, put back right after) does not move it.
		host_now=$(date -u +%s)
		date -u -s "@$((host_now + 366 * 86400))" >/dev/null
		shown=$($hw "${opts[@]}" --show 2>&1)
		date -u -s "@$((host_now + 1))" >/dev/null
		check "date -s a year ahead leaves the RTC where it was: $shown" \
			runs_on_from "$shown" "$set_at"
		# Back to the host's time for the next ABI.
		$hw "${opts[@]}" --set --date="$(date -u "+%F %T")" >/dev/null 2>&1

		wd=wdctl$abi
		$wd /dev/watchdog-real >"$work/wd.out" 2>&1
		status=$?
		diag <"$work/wd.out"
		check "wdctl ($arch) exits 0" test "$status" = 0
		check "wdctl ($arch) prints the configured identity" grep -qE '^Identity: +cusemu-wdt' "$work/wd.out"
		check "wdctl ($arch) prints the configured timeout" grep -qE '^Timeout: +42 seconds' "$work/wd.out"
		check "wdctl ($arch) prints the time left" grep -qE '^Timeleft: +(4[0-2]|3[0-9]) seconds' "$work/wd.out"
		check "wdctl ($arch) closes with the magic 'V': the watchdog is stopped" \
			sh -c "! grep -q 'did not stop' '$work/real.log'"
	done
else
	not_ok "cusemud starts with an rtc and a watchdog"; diag <"$work/real.log"
fi
stop_daemon TERM
