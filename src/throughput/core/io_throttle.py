"""Reads throttled at the block device, so that an experiment can be I/O-limited on purpose.

A cgroup v1 `blkio` group limits the read rate of its processes on one disk
(blkio.throttle.read_bps_device); the kernel enforces it below the page cache, so it limits
what a process reads from the device (a cold read), not what the page cache serves. Buffered
and O_DIRECT reads are both limited (tried here: a cold buffered read of 100 MB ran at 20.0 MB/s
under a 20 MB/s limit, 660 MB/s without). A process joins the group itself, between fork and
exec (`join`, a Popen preexec_fn), so nothing it reads before it runs is limited and nothing
else on the machine is. The kernel lets about one throttle slice's worth (a tenth of a second
at the limit) through at once after the group was idle, so only reads much larger than that
run at the limit: what an experiment reads under it is measured, not assumed (the RDataFrame
rate model checks its throttled raw read's rate against the limit: io_rate_model.BURST_SHARE).

Only cgroup v1 is used: it is what these machines mount (../shared/DESIGN.md). On a machine
with cgroup v2 only, or without the rights to make a group, `problem` says why and the
experiment reports the throttled variant as not measured.
"""
from __future__ import annotations

import os
from pathlib import Path

BLKIO = Path("/sys/fs/cgroup/blkio")


def disk_of(path: str | os.PathLike) -> str:
    """'major:minor' of the whole disk that holds `path` (the throttle takes disks, not
    partitions). Raises ValueError where no block device holds it (tmpfs, overlay, NFS)."""
    device = os.stat(path).st_dev
    number = f"{os.major(device)}:{os.minor(device)}"
    sysfs = Path("/sys/dev/block") / number
    if os.major(device) == 0 or not sysfs.exists():
        raise ValueError(f"{path} is not on a block device (device {number}: a virtual file system)")
    if (sysfs / "partition").exists():  # a partition: its parent directory is the disk
        number = (sysfs.resolve().parent / "dev").read_text().strip()
    return number


def problem(path: str | os.PathLike) -> str | None:
    """Why reads of `path` cannot be throttled here (None: they can)."""
    if not (BLKIO / "blkio.throttle.read_bps_device").exists():
        return f"cgroup v1 blkio throttling is not mounted at {BLKIO}"
    if not os.access(BLKIO, os.W_OK):
        return f"no right to make a cgroup in {BLKIO} (it needs root)"
    try:
        disk_of(path)
    except (OSError, ValueError) as error:
        return str(error)
    return None


class ReadThrottle:
    """`with ReadThrottle(path, bytes_per_s) as throttle:` a blkio group whose processes read
    the disk holding `path` at most `bytes_per_s`; start a process in it with
    `subprocess.Popen(..., preexec_fn=throttle.join)`. The group is removed on exit (its
    remaining processes moved back to the root group first); `device_bytes_read` then holds what
    its processes read from the disk (what shows that they ran in it, and read from the device).
    A run killed inside the block leaves its group behind, empty and so limiting nothing; it is
    named for that run's pid, and `rmdir` removes it. Nothing removes others' groups on its own:
    blkio is the host's, and an empty group of a live run elsewhere looks the same."""

    def __init__(self, path: str | os.PathLike, bytes_per_s: int):
        if bytes_per_s < 1:
            raise ValueError(f"a read throttle needs a positive rate, got {bytes_per_s} bytes/s")
        why = problem(path)
        if why:
            raise RuntimeError(f"cannot throttle reads of {path}: {why}")
        self.disk, self.bytes_per_s = disk_of(path), int(bytes_per_s)
        self.group = BLKIO / f"throughput-read-{os.getpid()}-{id(self):x}"
        self.device_bytes_read = 0

    def __enter__(self) -> "ReadThrottle":
        self.group.mkdir()
        (self.group / "blkio.throttle.read_bps_device").write_text(f"{self.disk} {self.bytes_per_s}\n")
        self._procs = os.fsencode(self.group / "cgroup.procs")
        return self

    def join(self) -> None:
        """Move the calling process into the group (writing 0 to cgroup.procs names the caller):
        a preexec_fn, so the child joins between fork and exec."""
        fd = os.open(self._procs, os.O_WRONLY)
        try:
            os.write(fd, b"0")
        finally:
            os.close(fd)

    def limit(self) -> str:
        """What the kernel holds for the group (its read_bps_device line)."""
        return (self.group / "blkio.throttle.read_bps_device").read_text().strip()

    def bytes_read(self) -> int:
        """Bytes the group's processes have read from the disk so far (blkio.throttle.io_service_bytes)."""
        for line in (self.group / "blkio.throttle.io_service_bytes").read_text().splitlines():
            fields = line.split()
            if fields[:2] == [self.disk, "Read"]:
                return int(fields[2])
        return 0

    def __exit__(self, *exc) -> None:
        self.device_bytes_read = self.bytes_read()
        for pid in (self.group / "cgroup.procs").read_text().split():
            try:
                (BLKIO / "cgroup.procs").write_text(pid)
            except OSError:
                pass  # it ended meanwhile
        self.group.rmdir()
