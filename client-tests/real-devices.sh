# shellcheck shell=bash
# real-devices.sh: sourced, not run. Functions that print the path of a node
# the kernel's own driver serves, as in a VM started with
# client-tests/vm-run --real-devices, or nothing and status 1 when there is
# none:
#   real_rtc                 the CMOS clock under rtc_cmos: /dev/rtcN
#   real_i2c_piix4           the PIIX4's SMBus under i2c-piix4 and i2c-dev: /dev/i2c-N
#                            (i2c-tools take the bus number: ${path##*-})
#   real_kbd_event           the i8042's keyboard under atkbd and evdev: /dev/input/eventN
#   real_watchdog IDENTITY...  the first watchdog whose identity is one of IDENTITY:
#                            "Software Watchdog" (softdog), "i6300ESB timer" (i6300esb)
#   real_devices_vm          succeeds in a VM that vm-run --real-devices started
# They read sysfs: /sys/class/{rtc,i2c-dev,input,watchdog}.

real_devices_vm() { grep -qw 'cusemu_real_devices=1' /proc/cmdline 2>/dev/null; }

# real_node_named CLASSDIR ATTR DEVDIR VALUE...: /DEVDIR/NAME of the first
# entry NAME of CLASSDIR whose file ATTR reads as one of VALUE, if that node
# is a character device
real_node_named() {
	local dir=$1 attr=$2 devdir=$3 entry value want
	shift 3
	for entry in "$dir"/*; do
		[ -c "$devdir/${entry##*/}" ] || continue
		[ -r "$entry/$attr" ] || continue
		value=$(cat "$entry/$attr" 2>/dev/null) || continue
		for want in "$@"; do
			if [ "$value" = "$want" ]; then
				echo "$devdir/${entry##*/}"
				return 0
			fi
		done
	done
	return 1
}

real_rtc() {
	local entry value
	for entry in /sys/class/rtc/rtc*; do
		value=$(cat "$entry/name" 2>/dev/null) || continue
		# "rtc_cmos 00:04" since 5.x; "rtc_cmos" before
		case $value in rtc_cmos | "rtc_cmos "*) ;; *) continue ;; esac
		[ -c "/dev/${entry##*/}" ] || continue
		echo "/dev/${entry##*/}"
		return 0
	done
	return 1
}

real_i2c_piix4() {
	local entry value
	for entry in /sys/class/i2c-dev/i2c-*; do
		value=$(cat "$entry/name" 2>/dev/null) || continue
		# "SMBus PIIX4 adapter at 0700"; an SB800 has "... port N at ..."
		case $value in "SMBus PIIX4 adapter at "*) ;; *) continue ;; esac
		[ -c "/dev/${entry##*/}" ] || continue
		echo "/dev/${entry##*/}"
		return 0
	done
	return 1
}

real_kbd_event() {
	real_node_named /sys/class/input device/name /dev/input "AT Translated Set 2 keyboard"
}

real_watchdog() {
	[ $# -gt 0 ] || { echo "real_watchdog: which IDENTITY?" >&2; return 2; }
	real_node_named /sys/class/watchdog identity /dev "$@"
}
