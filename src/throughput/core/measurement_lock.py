"""One measurement at a time on a machine.

Two measurements side by side on 2 cores disturb each other unrecorded: two
Snakemake runs in different directories, a notebook job left running after
Snakemake was killed, `make test` beside `make paper`. Every measuring process
takes this machine-wide lock first (waiting for it, and saying what holds it)
and records in its results that it held it. The test suite holds it from start
to end and gives its workers locks of their own (tests/conftest.py).

The lock is an flock(2) on one file (THROUGHPUT_LOCK_FILE, default in /tmp, so
it is machine-wide): the kernel releases it when its holder exits, however it
exits (kill -9 included), so no stale lock is ever left behind.
"""
from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import json
import os
import socket
import sys
import time
from pathlib import Path
from typing import Iterator

LOCK_ENV = "THROUGHPUT_LOCK_FILE"
HELD_ENV = "THROUGHPUT_MEASUREMENT_LOCK"  # set while held: what provenance records
DEFAULT_LOCK = Path("/tmp/throughput-measurement.lock")


def lock_path() -> Path:
    return Path(os.environ.get(LOCK_ENV, DEFAULT_LOCK))


def _holder(handle) -> str:
    handle.seek(0)
    try:
        info = json.loads(handle.read() or "{}")
    except json.JSONDecodeError:
        return "another process"
    return (f"pid {info.get('pid')} ({info.get('what')}, in {info.get('cwd')}, since {info.get('since')})"
            if info else "another process")


@contextlib.contextmanager
def held(what: str, poll_s: float = 2.0) -> Iterator[str]:
    """Hold the measurement lock for `what`; wait (saying who holds it) when busy.
    Yields, and puts in the environment of this process and its children, a line
    saying that the lock was held and how long the wait was."""
    path = lock_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    try:  # writable by every user of the machine, so that all of them take turns
        descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        os.fchmod(descriptor, 0o666) if os.fstat(descriptor).st_uid == os.getuid() else None
    except PermissionError:  # another user's lock file: flock needs no write access
        descriptor = os.open(path, os.O_RDONLY)
    with os.fdopen(descriptor, "r+" if os.access(path, os.W_OK) else "r") as handle:
        waited = 0.0
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"measurement lock {path} is held by {_holder(handle)}: waiting for it to finish, so that the two "
                  f"measurements do not disturb each other (stop that process to go on now)",
                  file=sys.stderr, flush=True)
            start = time.monotonic()
            fcntl.flock(handle, fcntl.LOCK_EX)
            waited = time.monotonic() - start
            print(f"measurement lock {path} taken after {waited:.0f} s", file=sys.stderr, flush=True)
        since = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
        if handle.writable():  # who holds it, for the message of the next one to wait
            handle.seek(0)
            handle.truncate()
            handle.write(json.dumps({"pid": os.getpid(), "what": what, "cwd": os.getcwd(), "since": since,
                                     "host": socket.gethostname()}))
            handle.flush()
        line = f"held {path} from {since} (waited {waited:.0f} s) for {what}"
        previous = os.environ.get(HELD_ENV)
        os.environ[HELD_ENV] = line
        try:
            yield line
        finally:
            if previous is None:
                os.environ.pop(HELD_ENV, None)
            else:
                os.environ[HELD_ENV] = previous
            if handle.writable():
                handle.seek(0)
                handle.truncate()
                handle.flush()
            fcntl.flock(handle, fcntl.LOCK_UN)


def remove_stale_temporaries(output: Path) -> list[Path]:
    """Remove `.<stem>.tmp-<pid><suffix>` files beside `output` (left by a killed
    job, see results.atomic_path) whose process no longer runs."""
    removed = []
    for path in output.parent.glob(f".{output.stem}.tmp-*{output.suffix}"):
        pid = path.name[len(output.stem) + 6:-len(output.suffix) or None]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            path.unlink(missing_ok=True)
            removed.append(path)
    return removed
