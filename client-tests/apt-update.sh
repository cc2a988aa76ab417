# shellcheck shell=bash
# Sourced by client-tests/setup and client-tests/fetch-i386: apt-get update
# that outlives a mirror in the middle of a sync.
#
# apt_update NAME CHECK...: runs apt-get update, up to 3 times
# $CUSEMU_APT_PAUSE seconds apart (default 10). A mirror mid-sync fails one
# index now and then ("File has unexpected size ... Mirror sync in
# progress?"): a failed run still does when CHECK (a command or function)
# says the lists the caller needs arrived. Messages start with "NAME: ".
# Returns 0 when apt-get update succeeded or CHECK holds, else 1.
apt_update() {
	local name=$1 try
	shift
	for try in 1 2 3; do
		apt-get update >&2 && return 0
		if "$@"; then
			echo "$name: warning: apt-get update failed for some index;" \
				"going on with the lists it got" >&2
			return 0
		fi
		[ "$try" = 3 ] && break
		echo "$name: apt-get update failed; trying again in ${CUSEMU_APT_PAUSE:-10} s" >&2
		sleep "${CUSEMU_APT_PAUSE:-10}"
	done
	return 1
}
