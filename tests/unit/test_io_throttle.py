"""io_throttle: a cold read in the group runs at the limit, a read outside it does not, a warm
read is not limited, and a file on no block device is named as the reason it cannot be done."""
from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from throughput.core import io_throttle

READ = ("import os, sys, time\n"
        "fd = os.open(sys.argv[1], os.O_RDONLY)\n"
        "os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED) if sys.argv[2] == 'cold' else None\n"
        "start, n = time.monotonic(), 0\n"
        "while chunk := os.read(fd, 1 << 20):\n"
        "    n += len(chunk)\n"
        "print(n / (time.monotonic() - start))\n")


def _rate(path, cache, preexec=None) -> float:
    out = subprocess.run([sys.executable, "-c", READ, str(path), cache], capture_output=True, text=True,
                         check=True, preexec_fn=preexec)
    return float(out.stdout)


@pytest.fixture
def data_file(tmp_path):
    why = io_throttle.problem(tmp_path)
    if why:
        pytest.skip(f"reads cannot be throttled here: {why}")
    path = tmp_path / "data.bin"
    path.write_bytes(os.urandom(16 << 20))
    os.sync()  # written back, so that dropping it from the page cache leaves it on the device only
    return path


def test_a_cold_read_in_the_group_runs_at_the_limit_and_others_do_not(data_file):
    limit = 8_000_000
    with io_throttle.ReadThrottle(data_file, limit) as throttle:
        assert throttle.limit() == f"{throttle.disk} {limit}"
        throttled = _rate(data_file, "cold", throttle.join)
        outside = _rate(data_file, "cold")
        warm = _rate(data_file, "warm", throttle.join)  # the page cache holds it: not limited
    assert 0.8 * limit < throttled < 1.2 * limit
    assert throttle.device_bytes_read >= data_file.stat().st_size  # the cold read, once
    assert outside > 2 * limit and warm > 2 * limit
    assert not throttle.group.exists()


def test_the_group_is_removed_even_with_a_process_still_in_it(data_file):
    with io_throttle.ReadThrottle(data_file, 1_000_000) as throttle:
        sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"], preexec_fn=throttle.join)
        time.sleep(0.2)
    assert not throttle.group.exists()
    sleeper.kill()
    sleeper.wait()


def test_a_file_on_no_block_device_is_named(tmp_path):
    assert "not on a block device" in (io_throttle.problem("/proc/self/status") or "")
    with pytest.raises(ValueError, match="positive rate"):
        io_throttle.ReadThrottle(tmp_path, 0)
