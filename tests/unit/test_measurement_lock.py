"""The machine-wide measurement lock and the clean-up of killed jobs' temporaries."""
from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import time

import pytest

from throughput.core import measurement_lock, provenance

HOLD = """
import sys, time
from throughput.core import measurement_lock
with measurement_lock.held("test holder"):
    print("held", flush=True)
    time.sleep(float(sys.argv[1]))
"""


@pytest.fixture
def lock_file(tmp_path, monkeypatch):
    path = tmp_path / "measure.lock"
    monkeypatch.setenv(measurement_lock.LOCK_ENV, str(path))
    return path


def _holder(seconds: float) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(seconds)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_a_second_measurement_waits_and_says_what_holds_the_lock(lock_file, capsys):
    holder = _holder(2.0)
    start = time.monotonic()
    with measurement_lock.held("second") as line:
        waited = time.monotonic() - start
        assert "held" in line and "second" in line
        record = provenance.capture({}, cache_state="n/a")["measurement_lock"]
        assert record == line
    holder.wait(timeout=10)
    assert waited > 1.0, "the second measurement did not wait for the first"
    err = capsys.readouterr().err
    assert f"pid {holder.pid}" in err and "test holder" in err


def test_a_killed_holder_leaves_no_stale_lock(lock_file, capsys):
    holder = _holder(60.0)
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait(timeout=10)
    with measurement_lock.held("after kill -9") as line:
        assert "(waited 0 s)" in line
    assert "waiting for it" not in capsys.readouterr().err  # taken at once, not after the holder's 60 s


def test_provenance_says_when_the_lock_was_not_held(lock_file):
    assert provenance.capture({}, cache_state="n/a")["measurement_lock"].startswith("not held")


def test_stale_temporaries_of_dead_jobs_are_removed_live_ones_kept(tmp_path):
    output = tmp_path / "results" / "x.ipynb"
    output.parent.mkdir(parents=True)
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = output.parent / f".x.tmp-{dead.pid}.ipynb"
    live = output.parent / f".x.tmp-{os.getpid()}.ipynb"
    other = output.parent / f".y.tmp-{dead.pid}.ipynb"
    for path in (stale, live, other):
        path.write_text("{}")
    assert measurement_lock.remove_stale_temporaries(output) == [stale]
    assert not stale.exists() and live.exists() and other.exists()


def test_the_suite_holds_the_machines_lock_and_its_processes_take_their_own():
    """tests/conftest.py: while the suite runs, the machine's lock is held (a `make paper` beside it
    waits), and this process's measurements take a lock of its own, not held yet."""
    assert measurement_lock.lock_path() != measurement_lock.DEFAULT_LOCK
    assert str(os.getpid()) in measurement_lock.lock_path().name
    assert measurement_lock.HELD_ENV not in os.environ
    # flock(2) locks belong to an open file, so a second opening conflicts even in the suite's own process
    with open(measurement_lock.DEFAULT_LOCK) as machine, pytest.raises(BlockingIOError):
        fcntl.flock(machine, fcntl.LOCK_EX | fcntl.LOCK_NB)
