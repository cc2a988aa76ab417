# SPDX-License-Identifier: MIT
"""cusemu's emulated devices at their /dev paths, around a test.

The helper of cusemu-run(1) for test suites, with the standard library
alone. Devices starts cusemu-run with a small server as its command, and
runs what it is asked inside the namespace, where /dev/rtc0,
/dev/input/event0... are cusemud's devices and /sys shows them:

    import cusemu_run

    def test_clock():
        with cusemu_run.Devices("rtc") as devices:
            result = devices.run(["hwclock", "-r"])
            assert result.returncode == 0, result.stderr

    @cusemu_run.with_devices("rtc", "evdev")
    def test_inside():
        # The whole body runs in the namespace, in a process of its own.
        with open("/sys/class/rtc/rtc0/name") as f:
            assert f.read() == "cusemu rtc0\\n"

As a pytest fixture:

    @pytest.fixture
    def devices():
        with cusemu_run.Devices("rtc", "evdev") as d:
            yield d

Nothing outlives the with block: cusemu-run ends the daemon, the mounts
and every process it started when its server's input closes.
"""
import functools
import json
import os
import shutil
import subprocess
import sys

__all__ = ["Devices", "Error", "with_devices"]

# The server cusemu-run runs: a request per line on standard input, an
# answer per line on standard output. Each request runs in a process of
# its own, so that the server survives what it runs.
_SERVER = r"""
import json, subprocess, sys
out = sys.stdout
print(json.dumps({"ready": True}), file=out, flush=True)
for line in sys.stdin:
    req = json.loads(line)
    if "call" in req:
        argv = [sys.executable, "-c", req["snippet"]] + req["call"]
    else:
        argv = req["argv"]
    try:
        p = subprocess.run(argv, input=req.get("input"), capture_output=True,
                           text=True, env=req.get("env"), timeout=req.get("timeout"))
        ans = {"returncode": p.returncode, "stdout": p.stdout, "stderr": p.stderr}
    except (OSError, subprocess.TimeoutExpired) as e:
        ans = {"returncode": 127 if isinstance(e, FileNotFoundError) else 124,
               "stdout": "", "stderr": str(e)}
    print(json.dumps(ans), file=out, flush=True)
"""

# A test function, found again by module and name inside: the decorated
# function's original (functools.wraps keeps it as __wrapped__).
_CALL = r"""
import importlib, sys, traceback
module, name = sys.argv[1], sys.argv[2]
fn = importlib.import_module(module)
for part in name.split("."):
    fn = getattr(fn, part)
fn = getattr(fn, "__wrapped__", fn)
try:
    fn()
except BaseException:
    traceback.print_exc()
    sys.exit(1)
"""


class Error(Exception):
    """cusemu-run could not start the devices, or ended: its message."""


class Devices:
    """cusemu-run with these devices, and a server inside it.

    devices: device specifications, as cusemu-run --device takes them
    ("rtc", "i2c:chips=eeprom@50"); none: the daemon's default devices.
    config, plugins, model: cusemu-run's --config, --plugin, --model.
    program: the cusemu-run to run (default: $CUSEMU_RUN, else the one on
    $PATH).
    """

    def __init__(self, *devices, config=None, plugins=(), model=None,
                 program=None):
        self.argv = [program or os.environ.get("CUSEMU_RUN")
                     or shutil.which("cusemu-run") or "cusemu-run", "-q"]
        for d in devices:
            self.argv += ["--device", d]
        if config:
            self.argv += ["--config", config]
        for p in plugins:
            self.argv += ["--plugin", p]
        if model:
            self.argv += ["--model", model]
        self.argv += ["--", sys.executable, "-c", _SERVER]
        self._proc = None

    def __enter__(self):
        self._proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True)
        if self._answer() != {"ready": True}:
            raise Error("cusemu-run did not start: " + self._ended())
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        """Ends cusemu-run and what it started; its exit status."""
        if not self._proc:
            return None
        self._proc.stdin.close()
        status = self._proc.wait()
        self._proc.stdout.close()
        self._proc.stderr.close()
        self._proc = None
        return status

    def _ended(self):
        self._proc.stdin.close()
        status = self._proc.wait()
        return "status %d: %s" % (status, self._proc.stderr.read().strip())

    def _answer(self):
        line = self._proc.stdout.readline()
        return json.loads(line) if line else None

    def _ask(self, request):
        if not self._proc:
            raise Error("the devices are not started (use a with block)")
        self._proc.stdin.write(json.dumps(request) + "\n")
        self._proc.stdin.flush()
        answer = self._answer()
        if answer is None:
            raise Error("cusemu-run ended: " + self._ended())
        return answer

    def run(self, argv, input=None, env=None, timeout=None):
        """Runs argv in the namespace, as the user; a
        subprocess.CompletedProcess with its status and text output."""
        a = self._ask({"argv": list(argv), "input": input, "env": env,
                       "timeout": timeout})
        return subprocess.CompletedProcess(list(argv), a["returncode"],
                                           a["stdout"], a["stderr"])

    def call(self, fn, timeout=None):
        """Calls fn() in a process of its own in the namespace: fn must be
        importable by its module and qualified name, and take no argument.
        An exception in it raises AssertionError here, with its traceback.
        """
        env = dict(os.environ,
                   PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
        a = self._ask({"call": [fn.__module__, fn.__qualname__],
                       "snippet": _CALL, "env": env, "timeout": timeout})
        sys.stdout.write(a["stdout"])
        if a["returncode"] != 0:
            raise AssertionError("%s failed in cusemu-run:\n%s"
                                 % (fn.__qualname__, a["stderr"]))
        sys.stderr.write(a["stderr"])


def with_devices(*devices, **options):
    """Decorator: the test function runs in the namespace of Devices(
    *devices, **options), in a process of its own (see Devices.call)."""
    def wrap(fn):
        @functools.wraps(fn)
        def run_inside():
            with Devices(*devices, **options) as d:
                d.call(fn)
        return run_inside
    return wrap
