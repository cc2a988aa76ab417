# record=FILE over CUSE: fioc-client and hwclock of both ABIs against
# recorded nodes, every call one whole JSON line with its ABI, its bytes
# uncut and, for an ioctl served by retries, its round trips; then a daemon
# killed by SIGKILL while clients call it leaves only whole lines.
# Sourced by client-tests/integration.

start_daemon "$work/record.log" --device fioc:name=fioc-rec,max_size=64K,record="$work/fioc.jsonl" \
	--device rtc:name=rtc-rec,record="$work/rtc.jsonl"
if wait_for 15 is_char_node /dev/rtc-rec; then
	ok "cusemud records /dev/fioc-rec and /dev/rtc-rec"
	client_pair fioc-client /dev/fioc-rec /dev/fioc-rec
	check "hwclock (x86_64) on the recorded rtc" /sbin/hwclock --rtc=/dev/rtc-rec -r
	check "hwclock (i386) on the recorded rtc" "$here/run-i386" usr/sbin/hwclock --rtc=/dev/rtc-rec -r
	stop_daemon TERM
	check "the recordings: a header, one whole JSON line per call, each ABI named" python3 -c '
import json, sys
work = sys.argv[1]
def load(name):
    lines = [json.loads(l) for l in open(work + "/" + name)]
    return lines[0], lines[1:]
head, fioc = load("fioc.jsonl")
assert head["nodes"] == ["fioc-rec"] and head["record"]["model"] == "fioc", head
assert head["record"]["kernel"] == "modern", head
for comm, abi, sfx, size in (("fioc-client-64", "x86_64", "", 8), ("fioc-client-32", "i386", "32", 4)):
    calls = [l for l in fioc if l["comm"] == comm]
    assert {"open", "ioctl", "read", "write"} <= {l["op"] for l in calls}, comm
    assert all(l["abi"] == abi for l in calls), comm
    gets = [l for l in calls if l.get("name") == "FIOC_GET_SIZE" + sfx and l["result"] == 0]
    assert gets and gets[0]["out"][0]["len"] == size, gets[:1]
    # FIOC_READ takes a retry for its buffer: one line, its round trips in it.
    rd = [l for l in calls if l.get("name") == "FIOC_READ" and l["result"] is not None]
    assert rd and all(l["round_trips"] >= 1 for l in rd), rd[:1]
assert not any("cut" in json.dumps(l) for l in fioc)
print("longest data:", max(len(l.get("data", "")) // 2 for l in fioc), "bytes")
head, rtc = load("rtc.jsonl")
rd = [l for l in rtc if l.get("name") == "RTC_RD_TIME"]
assert {l["abi"] for l in rd} == {"x86_64", "i386"}, rd
assert all(l["out"][0]["len"] == 36 and l["result"] == 0 for l in rd), rd
print(len(fioc), "fioc lines,", len(rtc), "rtc lines")' "$work"
	diag <"$work/out"
else
	not_ok "cusemud records /dev/fioc-rec and /dev/rtc-rec"; diag <"$work/record.log"
	stop_daemon TERM
fi

start_daemon "$work/record-kill.log" --device fioc:name=fioc-kill,record="$work/kill.jsonl"
if wait_for 15 is_char_node /dev/fioc-kill; then
	python3 -c '
import fcntl, os, sys, threading
def run():
    try:
        fd = os.open(sys.argv[1], os.O_RDWR)
        while True:
            fcntl.ioctl(fd, 0x40084501, (1000).to_bytes(8, "little"))  # FIOC_SET_SIZE
            os.write(fd, os.urandom(3000))
            fcntl.ioctl(fd, 0x40084501, (0).to_bytes(8, "little"))
    except OSError:
        pass
ts = [threading.Thread(target=run) for _ in range(2)]
for t in ts: t.start()
for t in ts: t.join()' /dev/fioc-kill >/dev/null 2>&1 &
	callers=$!
	for _ in $(seq 200); do [ "$(wc -l <"$work/kill.jsonl")" -gt 100 ] && break; sleep 0.05; done
	kill -KILL "$daemon_pid"; wait "$daemon_pid" 2>/dev/null; daemon_pid=
	wait "$callers"
	check "SIGKILL mid-run: every line of the recording is whole JSON" python3 -c '
import json, sys
text = open(sys.argv[1]).read()
assert text.endswith("\n"), "a partial line at the end"
lines = [json.loads(l) for l in text.splitlines()]
assert lines[0]["record"]["model"] == "fioc"
ops = [l["op"] for l in lines[1:]]
assert len(ops) > 50 and "ioctl" in ops and "write" in ops, len(ops)
print(len(ops), "whole lines")' "$work/kill.jsonl"
	diag <"$work/out"
else
	not_ok "cusemud records /dev/fioc-kill"; diag <"$work/record-kill.log"
	stop_daemon TERM
fi
