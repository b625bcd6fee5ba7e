"""The Python readers whose speed is measured: uproot and the Numpy baseline,
each run as its own process (the ``read`` command, ``python -m
throughput.experiments.reader_comparison read``, the same options and JSON lines as
the C++ kernel read_branch; the experiment forks it: processes.run_python_reader), and
the checksum every reader computes per value (pass.hpp's definition)."""
from __future__ import annotations

import ctypes
import json
import math
import mmap
import os
import subprocess
import sys
import time
import zipfile
import zlib
from typing import Any

import numpy as np

from ...core import harness
from ...inputs.checksums import NUMERIC_KINDS, checksum, hex_checksum  # noqa: F401 (the readers' names)
from .spec import ReaderError
from .vocabulary import PYTHON_READERS


# --- the Python readers (run as their own process, like the C++ and Java ones) ---------------------

_LIBC = ctypes.CDLL(None, use_errno=True)
_LIBC.mmap.restype = ctypes.c_void_p
_LIBC.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
_LIBC.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
_LIBC.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
_MAP_FAILED = ctypes.c_void_p(-1).value


def fully_resident(path: str) -> bool:
    """Whether every page of `path` is in the page cache (mincore(2) on a read-only mapping): the
    page_cache kernel's own first check, made here without starting it. A fast reader's calibrated
    sample repeats a pass of 1 ms dozens of times, and starting the kernel before each file of each
    pass cost 3-5 ms, more than the reading it times (issue 44). False where it cannot tell (an
    empty or unmappable file), so the kernel decides."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        size = os.fstat(fd).st_size
        if size == 0:
            return False
        address = _LIBC.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
        if address in (None, _MAP_FAILED):
            return False
        try:
            pages = (size + mmap.PAGESIZE - 1) // mmap.PAGESIZE
            vector = (ctypes.c_ubyte * pages)()
            if _LIBC.mincore(address, size, vector) != 0:
                return False
            return all(byte & 1 for byte in bytes(vector))
        finally:
            _LIBC.munmap(address, size)
    finally:
        os.close(fd)


class _CachePrep:
    """warm: each file pre-read and checked resident before it is opened (time left
    out of the pass; the page_cache kernel reads it, only where a page is missing:
    fully_resident); cold: every file evicted and checked absent before the pass."""

    def __init__(self, mode: str, tool: str):
        if mode not in ("warm", "cold"):
            raise ReaderError(f"--cache must be 'warm' or 'cold', got {mode!r}")
        self.mode, self.tool, self.wall, self.cpu = mode, tool, 0.0, 0.0
        self.residency = 1.0  # warm: the smallest resident fraction seen; cold: the largest

    def _run(self, mode: str, files: list[str]) -> None:
        proc = subprocess.run([self.tool, "--mode", mode, "--files", ",".join(files)], capture_output=True, text=True)
        if proc.returncode != 0:
            raise ReaderError(f"page_cache --mode {mode} failed on {','.join(files)}: {proc.stderr.strip()}")
        validation = [r for r in harness.json_lines(proc.stdout, "page_cache") if r.get("record") == "validation"][0]
        if mode == "warm":
            self.residency = min(self.residency, validation["lowest_fraction"])
        else:
            self.residency = max(self.residency, validation["highest_fraction"])

    def start_pass(self, files: list[str]) -> None:
        self.wall = self.cpu = 0.0
        self.residency = 1.0 if self.mode == "warm" else 0.0
        if self.mode == "cold":
            self._run("cold", files)

    def before_file(self, path: str) -> None:
        if self.mode == "warm":
            w0, c0 = time.perf_counter(), time.process_time()
            if not fully_resident(path):  # the kernel would only have checked it (page_cache.hpp: warm)
                self._run("warm", [path])
            self.cpu += time.process_time() - c0
            self.wall += time.perf_counter() - w0


class _Pass:
    def __init__(self, every: int, prep: _CachePrep):
        self.every, self.next, self.prep = every, every, prep
        self.checksum = self.items = self.events = 0
        self.open_s = 0.0
        self.samples: list[tuple[int, int, float]] = []

    def start(self) -> None:
        self.wall0, self.cpu0 = time.perf_counter(), time.process_time()

    def add(self, values: np.ndarray, events: int) -> None:
        self.checksum = (self.checksum + checksum(values)) % 2**64
        self.items += int(values.size)
        self.events += int(events)
        if self.items >= self.next:
            self._sample()

    def _sample(self) -> None:
        self.samples.append((self.items, self.events, time.perf_counter() - self.wall0 - self.prep.wall))
        while self.next <= self.items:
            self.next += self.every

    def stop(self) -> None:
        self.wall = time.perf_counter() - self.wall0 - self.prep.wall
        self.prep_s, self.residency = self.prep.wall, self.prep.residency
        self.cpu = time.process_time() - self.cpu0 - self.prep.cpu
        if not self.samples or self.samples[-1][0] != self.items:
            self.samples.append((self.items, self.events, self.wall))


def _check_exists(path: str, branch: str) -> None:
    if not os.path.isfile(path):
        raise ReaderError(f"cannot open file {path}, branch {branch}: no such file")


def numeric_dtype(interpretation: Any) -> np.dtype | None:
    """The native-endian dtype of the values of a branch uproot interprets as numbers
    (flat, fixed arrays or jagged), or None for anything else."""
    from uproot.interpretation.jagged import AsJagged
    from uproot.interpretation.numerical import AsDtype

    if isinstance(interpretation, AsJagged):
        interpretation = interpretation.content
    if type(interpretation) is not AsDtype:  # not its subclasses (AsDtypeInPlace ...), nor AsStrings, objects
        return None
    dtype = interpretation.to_dtype.base.newbyteorder("=")
    return dtype if dtype.kind in NUMERIC_KINDS else None


def _read_uproot(files: list[str], tree: str, branch: str, p: _Pass, prep: _CachePrep) -> None:
    import awkward as ak
    import uproot

    for path in files:
        _check_exists(path, branch)
        prep.before_file(path)
        where = f"file {path}, branch {branch}"
        t0 = time.perf_counter()
        try:
            with uproot.open(path, array_cache=None, object_cache=None) as f:
                if tree not in f:
                    raise ReaderError(f"{where}: no tree '{tree}' in the file")
                t = f[tree]
                if branch not in t:
                    raise ReaderError(f"{where}: no such branch in tree '{tree}'")
                b = t[branch]
                dtype = numeric_dtype(b.interpretation)
                if dtype is None:
                    raise ReaderError(f"{where}: not a branch of numbers ({b.interpretation})")
                p.open_s += time.perf_counter() - t0
                # Baskets in groups of about sample_every values, one uproot call per
                # group: the rate is sampled as often as asked without one call per basket.
                start = done = 0
                for k in range(b.num_baskets):
                    done += b.basket_uncompressed_bytes(k)
                    stop = b.basket_entry_start_stop(k)[1]
                    if done < dtype.itemsize * p.every and k + 1 < b.num_baskets:
                        continue
                    array = b.array(entry_start=start, entry_stop=stop, library="ak")
                    p.add(np.asarray(ak.flatten(array, axis=None), dtype=dtype), stop - start)
                    start, done = stop, 0
                if start != t.num_entries:
                    raise ReaderError(f"{where}: baskets end at entry {start}, the tree has {t.num_entries}")
        except ReaderError:
            raise
        except Exception as error:  # uproot raises many kinds on damaged files
            raise ReaderError(f"{where}: uproot failed: {type(error).__name__}: {error}") from error


def _read_numpy(files: list[str], tree: str, branch: str, p: _Pass, prep: _CachePrep) -> None:
    for path in files:
        _check_exists(path, branch)
        prep.before_file(path)
        where = f"file {path}, branch {branch}"
        t0 = time.perf_counter()
        try:
            with np.load(path, allow_pickle=False) as archive:
                if branch not in archive.files:
                    raise ReaderError(f"{where}: no such array in the Numpy file")
                p.open_s += time.perf_counter() - t0
                values = archive[branch]
                events = int(archive["__events__"][0])
        except ReaderError:
            raise
        except (zipfile.BadZipFile, zlib.error, ValueError, OSError, EOFError, KeyError) as error:
            raise ReaderError(f"{where}: cannot read the Numpy file: {type(error).__name__}: {error}") from error
        if values.dtype.kind not in NUMERIC_KINDS:
            raise ReaderError(f"{where}: not numbers ({values.dtype})")
        p.add(values, events)


_PYTHON_READ = {"uproot": _read_uproot, "numpy": _read_numpy}


def _json(**record: Any) -> None:
    print(json.dumps(record), flush=True)


def read_main(argv: list[str]) -> int:
    """python -m throughput.experiments.reader_comparison read --reader uproot|numpy ...

    The same options and JSON lines as the C++ kernel read_branch."""
    import argparse

    parser = argparse.ArgumentParser(prog="reader_comparison read")
    parser.add_argument("--reader", required=True, choices=PYTHON_READERS)
    parser.add_argument("--files", required=True)
    parser.add_argument("--tree", default="Events")
    parser.add_argument("--branches", required=True)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--min-sample-s", type=float, default=0.0)
    parser.add_argument("--max-sample-s", type=float, default=0.0)
    parser.add_argument("--max-run-delay-share", type=float, default=0.0)
    parser.add_argument("--max-sample-retakes", type=int, default=0)
    parser.add_argument("--cache", default="warm")
    parser.add_argument("--sample-every", type=int, default=100000)
    parser.add_argument("--page-cache-tool", default=None)
    parser.add_argument("--corrupt-for-test", type=int, default=0)
    args = parser.parse_args(argv)
    if args.reps < 1 or args.warmup < 0 or args.sample_every < 1 or args.min_sample_s < 0 or args.max_sample_s < 0:
        raise ReaderError("--reps must be >= 1, --warmup >= 0, --sample-every >= 1 and --min-sample-s and "
                          "--max-sample-s >= 0")
    try:
        retakes = harness.Retakes(args.max_run_delay_share, args.max_sample_retakes)
    except ValueError as error:
        raise ReaderError(f"--max-run-delay-share and --max-sample-retakes: {error}") from error
    files, branches = args.files.split(","), args.branches.split(",")
    if "" in files or "" in branches:
        raise ReaderError(f"--files and --branches must not have empty elements: {args.files!r}, {args.branches!r}")
    prep = _CachePrep(args.cache, args.page_cache_tool or str(harness.kernel_path("page_cache")))
    read = _PYTHON_READ[args.reader]
    checksum(np.zeros(2, np.float32))  # compile (or load) the checksum before any timing
    reference: dict[str, tuple[int, int, int]] = {}
    disagreements = 0

    def read_once(rep: int, branch: str) -> _Pass:
        """One pass over `branch`, checked against its first pass."""
        nonlocal disagreements
        prep.start_pass(files)
        p = _Pass(args.sample_every, prep)
        p.start()
        read(files, args.tree, branch, p, prep)
        p.stop()
        if args.corrupt_for_test:
            p.checksum ^= 1  # a deliberately wrong reader, for the tests
        now = (p.items, p.events, p.checksum)
        if reference.setdefault(branch, now) != now:
            disagreements += 1
            print(f"reader_comparison {args.reader}: pass {rep} disagrees on {branch}", file=sys.stderr)
        return p

    # each sample repeats its pass until its reading time reaches --min-sample-s, as read_branch's
    calibrations = {branch: harness.Calibration(args.warmup, args.min_sample_s, args.max_sample_s)
                    for branch in branches}
    for rep in range(args.warmup + args.reps):
        for branch in branches:
            loops = calibrations[branch].loops(rep)
            for retake in range(retakes.max_retakes + 1):  # taken again while it waited too long for a CPU
                delay0, started = harness.run_delay_seconds(), time.perf_counter()
                passes = [read_once(rep, branch) for _ in range(loops)]
                delay, spent = harness.run_delay_seconds() - delay0, time.perf_counter() - started
                if rep < args.warmup or not retakes.disturbed(delay, spent):
                    break
            wall, cpu = sum(p.wall for p in passes), sum(p.cpu for p in passes)
            opening = sum(p.open_s for p in passes)
            calibrations[branch].update(rep, loops, wall - opening, spent)
            first = passes[0]  # its rate samples, items and checksum stand for the sample's
            _json(record="timing", kernel=f"{args.reader}_reader", method=args.reader, branch=branch,
                  rep=rep - args.warmup, warmup=rep < args.warmup, order=0, wall_s=wall / loops, cpu_s=cpu / loops,
                  open_s=opening / loops, loops=loops, sample_s=wall - opening,
                  run_delay_s=-1.0 if math.isnan(delay) else delay, sample_retakes=retake, events=first.events,
                  items=first.items,
                  checksum=hex_checksum(first.checksum), files=len(files), cache=args.cache,
                  prep_s=sum(p.prep_s for p in passes) / loops,
                  # the furthest any pass of the sample started from its cache state
                  residency=(min if args.cache == "warm" else max)(p.residency for p in passes))
            for items, events, wall_s in first.samples:
                _json(record="sample", method=args.reader, branch=branch, rep=rep - args.warmup, items=items,
                      events=events, wall_s=wall_s)
    for branch, (items, events, value) in reference.items():
        _json(record="result", branch=branch, items=items, events=events, checksum=hex_checksum(value))
    _json(record="validation", kernel=f"{args.reader}_reader", ok=disagreements == 0, disagreements=disagreements,
          checksum=hex_checksum(next(iter(reference.values()))[2]))
    return 0 if disagreements == 0 else 3
