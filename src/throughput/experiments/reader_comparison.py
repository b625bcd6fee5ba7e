"""Reader comparison (seed 000, "ROOT file reading": Table 1 and Figure 1).

The pT (for the real HZZ files, the x momentum Px) of one particle collection
is read by every reader, one process per reader group and input set:

* C++ (kernel ``read_branch``, one program, ``--methods``): a columnar reader
  (only the value branch and its counter, no objects: the seed's "FemtoCode
  ROOT reader"), ROOT's bulk I/O, TTreeReader, TTree::Draw, RDataFrame on one
  thread, a CMSSW-like reader that reads every attribute of the collection and
  builds a ``std::vector<Particle>`` per event, and RNTupleReader on the
  RNTuple copy;
* uproot (today's non-C++ implementation, as root4j was) and the same values
  as a deflate-compressed Numpy file (the seed's baseline), in Python
  (``python -m throughput.experiments.reader_comparison read``);
* a Java reader, laurelin from Maven Central (kernels/reader_comparison/java):
  root4j is not published there and cannot parse ROOT 6 files;
* ROOT's own ``rootreadspeed`` on the same branches, the reference the C++
  readers are held against.

Every reader reports items, events, the exact checksum of
kernels/reader_comparison/pass.hpp (sum mod 2^64 of a 64-bit mix of each
value's float32 bit pattern: order-independent), wall and CPU time, and a
sample every ``sample_every`` items. All readers of the same files and branch
must agree on items and checksum (``check_agreement``); a disagreement fails
the run. Files are warm (pre-read, checked resident with mincore) unless the
run is labelled cold (posix_fadvise DONTNEED, checked absent).

Units: kHz = 10^3 events per second per process (the seed's unit); MHz of
items = 10^6 values per second; MB = 10^6 bytes.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .. import REPO, harness, provenance, references, seeds
from ..results import atomic_path, measure_once

# --- the study's vocabulary ----------------------------------------------------------------------

COLLECTIONS = ("Photon", "Electron", "Muon", "Tau", "Jet", "FatJet")
HZZ_COLLECTIONS = ("Jet", "Muon", "Electron", "Photon")
CPP_METHODS = ("columnar", "bulk", "ttreereader", "draw", "rdataframe", "cmssw", "rntuple")
TREE_CPP_METHODS = CPP_METHODS[:-1]  # the C++ readers of the TTree (rootreadspeed's file)
PYTHON_READERS = ("uproot", "numpy")
READERS = CPP_METHODS + ("uproot", "laurelin", "numpy")
LABELS = {
    "columnar": "C++ columnar", "bulk": "C++ bulk I/O", "ttreereader": "TTreeReader", "draw": "TTree::Draw",
    "rdataframe": "RDataFrame (1 thread)", "cmssw": "CMSSW-like (all attributes, objects)",
    "rntuple": "RNTupleReader", "uproot": "uproot", "laurelin": "Java (laurelin)", "numpy": "Numpy file",
    "rootreadspeed": "rootreadspeed",
}
COMPRESSIONS = ("none", "ZLIB", "LZ4", "ZSTD", "LZMA")
LAYOUTS = {
    # layout: (tree, value attribute, collections)
    "nanoaod": ("Events", "pt", COLLECTIONS),
    "aod": ("Events", "pt", COLLECTIONS),
    "hzz": ("events", "Px", HZZ_COLLECTIONS),
}
GOLDEN = 0x9E3779B97F4A7C15
AOD_BYTES_PER_EVENT_ESTIMATE = {"none": 16700, "ZLIB": 11100, "LZ4": 12500, "ZSTD": 10800, "LZMA": 9700}
NANOAOD_BYTES_PER_EVENT_ESTIMATE = {"none": 4550, "ZLIB": 1880, "LZ4": 2370, "ZSTD": 1900, "LZMA": 1590}

# Seed 000 (figures in throughput.seeds): Table 1, events per millisecond per process (kHz),
# and the data it read; root4j's slowdown against C++; the FemtoCode reader against Numpy.
SEED_TABLE1 = seeds.READER_TABLE1
SEED_JAVA_SLOWDOWN = seeds.READER_JAVA_SLOWDOWN
SEED_NUMPY_SHORTFALL = seeds.READER_NUMPY_SHORTFALL
NUMPY_TARGET = 0.95           # our target: columnar >= 95% of the Numpy baseline's rate per value


class ReaderError(RuntimeError):
    """A Python reader could not read a file or branch (the message names both)."""


class ReaderFailed(harness.KernelError):
    """A reader process stopped with an error (exit code, exception, timeout) on an
    input: a row of the tables ("failed: ..." or "cannot read: ..."), not a crash
    of the paper. A reader that ran and disagrees is not this: that fails the job."""

    def __init__(self, message: str, error: str):
        super().__init__(message)
        self.error = error  # the reader's own error text (its stderr)


# Errors that mean "this reader has no support for this input's compression",
# recognised in the reader's own error text, with the reason the tables give.
# Found by trying (tests/test_reader_comparison.py): laurelin 1.0.1 has no ZSTD
# decompressor, and parses every basket as compressed.
CANNOT_READ_SIGNATURES = {
    "laurelin": [
        ("Unable to determine compression algorithm", "no {compression} codec"),
        ("Read an inappropriate number", "uncompressed baskets"),
    ],
}


def classify_failure(reader: str, compression: str, error: str) -> tuple[str, str]:
    """("cannot_read", the reason) when the reader's own error says it lacks
    support for this input; else ("failed", the first line of its error)."""
    for signature, reason in CANNOT_READ_SIGNATURES.get(reader, []):
        if signature in error:
            return "cannot_read", reason.format(compression=compression)
    lines = [line for line in error.strip().splitlines() if line.strip()]
    return "failed", lines[0] if lines else "no error message"


def failure_summary(message: str) -> str:
    """A table cell's short form of a reader's error: its exception's name (the
    part after the reader's 'failed:', without Java's package), else the text."""
    text = message.rsplit("failed: ", 1)[-1]
    text = text.split(":", 1)[0].strip() if "Exception" in text or "Error" in text else text
    text = text.rsplit(".", 1)[-1] if text.startswith(("java.", "org.", "edu.")) else text
    return text if len(text) <= 40 else text[:39] + "…"


# --- the checksum (pass.hpp's definition) ---------------------------------------------------------

def _mix_sum_numpy(bits: np.ndarray) -> int:
    total = 0
    for start in range(0, bits.size, 1 << 20):
        h = (bits[start:start + (1 << 20)].astype(np.uint64) + np.uint64(1)) * np.uint64(GOLDEN)
        h ^= h >> np.uint64(32)
        total = (total + int(h.sum(dtype=np.uint64))) % 2**64
    return total


try:  # fused into one loop with numba, as the C++ readers do it per value
    import numba

    @numba.njit(cache=True, nogil=True)
    def _mix_sum_numba(bits):
        total = np.uint64(0)
        one, golden, shift = np.uint64(1), np.uint64(GOLDEN), np.uint64(32)
        for b in bits:
            h = (np.uint64(b) + one) * golden
            total += h ^ (h >> shift)
        return total
except ImportError:  # pragma: no cover - numba is in the pinned environment
    _mix_sum_numba = None


def checksum(values: np.ndarray) -> int:
    """The readers' checksum of float32 `values` (an int in [0, 2^64))."""
    values = np.ascontiguousarray(values)
    if values.dtype != np.float32:
        raise TypeError(f"the readers compare float32 values, got {values.dtype}")
    bits = values.view(np.uint32)
    return int(_mix_sum_numba(bits)) if _mix_sum_numba is not None else _mix_sum_numpy(bits)


def hex_checksum(value: int) -> str:
    return f"{value % 2**64:016x}"


# --- inputs --------------------------------------------------------------------------------------

def branch_name(layout: str, collection: str) -> str:
    return f"{collection}_{LAYOUTS[layout][1]}"


def tree_name(layout: str) -> str:
    return LAYOUTS[layout][0]


def collection_of(branch: str) -> str:
    return branch.split("_", 1)[0]


def real_layout(name: str) -> str:
    """Layout of a real file in ../shared/data by its name."""
    return "hzz" if name.startswith("uproot-HZZ") else "nanoaod"


def compression_name(setting: int) -> str:
    """ROOT's compression setting (algorithm*100 + level; < 100: old-style ZLIB) as a name."""
    if setting % 100 == 0:
        return "none"
    return {0: "ZLIB", 1: "ZLIB", 2: "LZMA", 4: "LZ4", 5: "ZSTD"}.get(setting // 100, f"algorithm {setting // 100}")


def file_compression(path: str | os.PathLike) -> str:
    """Compression of a ROOT file, from fCompress in its header (ROOT's documented layout)."""
    import struct

    with open(path, "rb") as stream:
        header = stream.read(45)
    if len(header) < 45 or header[:4] != b"root":
        raise ReaderError(f"{path}: not a ROOT file (no 'root' magic in its header)")
    version = struct.unpack(">i", header[4:8])[0]
    offset = 41 if version > 1000000 else 33
    return compression_name(struct.unpack(">i", header[offset:offset + 4])[0])


def make_aod_like(output: str | os.PathLike, events: int, compression: str, level: int, seed: int,
                  progress: bool = True) -> dict[str, Any]:
    """Write `events` AOD-like events (kernel make_aod_like); return its validation record."""
    from tqdm.auto import tqdm

    if compression not in COMPRESSIONS:
        raise ValueError(f"unknown compression {compression!r} (one of {', '.join(COMPRESSIONS)})")
    Path(output).parent.mkdir(parents=True, exist_ok=True)
    with tqdm(total=events, desc=Path(output).name, unit="event", disable=not progress) as bar:
        run = harness.run_kernel("make_aod_like", {
            "output": output, "events": events, "compression": compression,
            "level": 0 if compression == "none" else level, "seed": seed,
        }, on_progress=lambda record: bar.update(record["done"] - bar.n))
    references.record(output, tree_name("aod"), [branch_name("aod", c) for c in COLLECTIONS])
    return run.validation


def make_rntuple_copy(source: str | os.PathLike, output: str | os.PathLike, compression: str, level: int,
                      tree: str = "Events") -> dict[str, Any]:
    """The same events as an RNTuple (kernel tree_to_rntuple, ROOT's RNTupleImporter)."""
    Path(output).parent.mkdir(parents=True, exist_ok=True)
    return harness.run_kernel("tree_to_rntuple", {
        "source": source, "output": output, "tree": tree, "compression": compression,
        "level": 0 if compression == "none" else max(level, 1),
    }).validation


def make_numpy_copy(source: str | os.PathLike, output: str | os.PathLike, tree: str,
                    branches: list[str] | None = None) -> dict[str, Any]:
    """The values of every (jagged) float branch named `<collection>_<attr>` of the
    layout as flat float32 arrays in a deflate-compressed .npz (np.savez_compressed),
    with the number of events; written atomically. Returns what was written."""
    import awkward as ak
    import uproot

    with uproot.open(source) as f:
        if tree not in f:
            raise ReaderError(f"file {source}: no tree '{tree}'")
        t = f[tree]
        missing = [b for b in branches or [] if b not in t]
        if missing:
            raise ReaderError(f"file {source}: no branch {', '.join(missing)} in tree '{tree}'")
        arrays = {b: np.asarray(ak.flatten(t[b].array(library="ak"), axis=None), dtype=np.float32)
                  for b in branches}
        arrays["__events__"] = np.array([t.num_entries], dtype=np.int64)
    with atomic_path(output) as temporary:
        with open(temporary, "wb") as stream:
            np.savez_compressed(stream, **arrays)
    return {"events": int(arrays["__events__"][0]), "branches": sorted(b for b in arrays if b != "__events__"),
            "checksums": {b: hex_checksum(checksum(v)) for b, v in arrays.items() if b != "__events__"}}


def page_cache(files: list[str], mode: str) -> dict[str, Any]:
    """Bring `files` to `mode` (warm, cold) or report (status) with the page_cache kernel."""
    return harness.run_kernel("page_cache", {"mode": mode, "files": ",".join(map(str, files))}).validation


# --- the Python readers (run as their own process, like the C++ and Java ones) ---------------------

class _CachePrep:
    """warm: each file pre-read and checked resident before it is opened (time left
    out of the pass); cold: every file evicted and checked absent before the pass."""

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
        self.cpu = time.process_time() - self.cpu0 - self.prep.cpu
        if not self.samples or self.samples[-1][0] != self.items:
            self.samples.append((self.items, self.events, self.wall))


def _check_exists(path: str, branch: str) -> None:
    if not os.path.isfile(path):
        raise ReaderError(f"cannot open file {path}, branch {branch}: no such file")


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
                interpretation = str(b.interpretation)
                if interpretation not in ("AsJagged(AsDtype('>f4'))", "AsDtype('>f4')"):
                    raise ReaderError(f"{where}: not a float32 branch ({interpretation})")
                p.open_s += time.perf_counter() - t0
                # Baskets in groups of about sample_every values (4 bytes each),
                # one uproot call per group: the rate is sampled as often as asked
                # without one call per basket.
                start = done = 0
                for k in range(b.num_baskets):
                    done += b.basket_uncompressed_bytes(k)
                    stop = b.basket_entry_start_stop(k)[1]
                    if done < 4 * p.every and k + 1 < b.num_baskets:
                        continue
                    array = b.array(entry_start=start, entry_stop=stop, library="ak")
                    p.add(np.asarray(ak.flatten(array, axis=None), dtype=np.float32), stop - start)
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
        if values.dtype != np.float32:
            raise ReaderError(f"{where}: not float32 ({values.dtype})")
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
    parser.add_argument("--cache", default="warm")
    parser.add_argument("--sample-every", type=int, default=100000)
    parser.add_argument("--page-cache-tool", default=None)
    parser.add_argument("--corrupt-for-test", type=int, default=0)
    args = parser.parse_args(argv)
    if args.reps < 1 or args.warmup < 0 or args.sample_every < 1:
        raise ReaderError("--reps must be >= 1, --warmup >= 0 and --sample-every >= 1")
    files, branches = args.files.split(","), args.branches.split(",")
    if "" in files or "" in branches:
        raise ReaderError(f"--files and --branches must not have empty elements: {args.files!r}, {args.branches!r}")
    prep = _CachePrep(args.cache, args.page_cache_tool or str(harness.kernel_path("page_cache")))
    read = _PYTHON_READ[args.reader]
    checksum(np.zeros(2, np.float32))  # compile (or load) the checksum before any timing
    reference: dict[str, tuple[int, int, int]] = {}
    disagreements = 0
    for rep in range(args.warmup + args.reps):
        for branch in branches:
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
            _json(record="timing", kernel=f"{args.reader}_reader", method=args.reader, branch=branch,
                  rep=rep - args.warmup, warmup=rep < args.warmup, order=0, wall_s=p.wall, cpu_s=p.cpu,
                  open_s=p.open_s, events=p.events, items=p.items, checksum=hex_checksum(p.checksum),
                  files=len(files), cache=args.cache, prep_s=prep.wall, residency=prep.residency)
            for items, events, wall in p.samples:
                _json(record="sample", method=args.reader, branch=branch, rep=rep - args.warmup, items=items,
                      events=events, wall_s=wall)
    for branch, (items, events, value) in reference.items():
        _json(record="result", branch=branch, items=items, events=events, checksum=hex_checksum(value))
    _json(record="validation", kernel=f"{args.reader}_reader", ok=disagreements == 0, disagreements=disagreements,
          checksum=hex_checksum(next(iter(reference.values()))[2]))
    return 0 if disagreements == 0 else 3


# --- running any reader process ---------------------------------------------------------------------

def run_json_process(argv: list[str], label: str, timeout_s: float | None = None) -> dict[str, list[dict]]:
    """Run a reader printing JSON lines; return its records by type.

    Raises ReaderFailed when the reader stops with an error (non-zero exit,
    timeout, cannot be started), KernelError (naming the command and quoting
    stderr) for a missing or repeated validation record or a failed validation
    (passes of a reader that ran disagree)."""
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, env=harness.pinned_env())
    except subprocess.TimeoutExpired as error:
        raise ReaderFailed(f"{label}: did not finish within {timeout_s} s",
                           f"did not finish within {timeout_s} s") from error
    except OSError as error:
        raise ReaderFailed(f"{label}: cannot run {argv[0]}: {error}", f"cannot run {argv[0]}: {error}") from error
    message = proc.stderr.strip()
    records: dict[str, list[dict]] = {}
    for number, line in enumerate(proc.stdout.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise harness.KernelError(f"{label}: line {number} is not JSON: {line!r}") from error
        records.setdefault(record.get("record", "?"), []).append(record)
    validations = records.get("validation", [])
    # A reader that ran and whose passes disagree fails the job, whatever its exit code.
    if any(not v.get("ok") for v in validations):
        raise harness.KernelError(f"{label}: validation failed: {validations[0]}; {message}")
    if proc.returncode != 0:
        # the reader's own words, without the program's "name: error: " prefix
        error = "\n".join(line.split(": error: ", 1)[-1] for line in message.splitlines()) or f"exit {proc.returncode}"
        raise ReaderFailed(f"{label} exited with {proc.returncode}: {message}", error)
    if len(validations) != 1:
        raise harness.KernelError(f"{label}: expected exactly one validation record, got {len(validations)}")
    return records


def java_dir() -> Path:
    """Where the Java reader is built: $THROUGHPUT_JAVA_DIR, else beside the kernels' build."""
    return Path(os.environ.get("THROUGHPUT_JAVA_DIR", harness.kernels_dir().parent.parent / "java" / "reader_comparison"))


def java_available() -> str | None:
    """None if Java and Maven are there, else the reason the Java reader cannot run."""
    missing = [tool for tool in ("java", "mvn") if shutil.which(tool) is None]
    return f"not measured here: {' and '.join(missing)} not installed" if missing else None


def build_java_reader(target: str | os.PathLike | None = None) -> Path:
    """Build the laurelin reader with Maven (offline first, reusing the local
    repository under $XDG_CACHE_HOME/m2), unless it is already built; return the jar."""
    target = Path(target) if target else java_dir()
    jar = target / "laurelin-reader.jar"
    source = REPO / "kernels" / "reader_comparison" / "java"
    newest = max(p.stat().st_mtime for p in source.rglob("*") if p.is_file())
    if jar.exists() and jar.stat().st_mtime >= newest:
        return jar
    reason = java_available()
    if reason:
        raise harness.KernelError(f"cannot build the Java reader: {reason}")
    cache = Path(os.environ.get("XDG_CACHE_HOME", REPO / ".cache")) / "m2"
    base = ["mvn", "-q", "package", f"-Dmaven.repo.local={cache}", f"-Drc.build.dir={target.resolve()}"]
    for argv in (base[:2] + ["-o"] + base[2:], base):  # offline first, then from Maven Central
        proc = subprocess.run(argv, cwd=source, capture_output=True, text=True)
        if proc.returncode == 0 and jar.exists():
            jar.touch()
            return jar
    raise harness.KernelError(f"building the Java reader failed ({' '.join(base)} in {source}): "
                              f"{(proc.stdout + proc.stderr)[-2000:]}")


def rootreadspeed_path() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("ROOT")
    if spec is None or not spec.submodule_search_locations:
        raise harness.KernelError("rootreadspeed: the ROOT Python package is not installed")
    path = Path(list(spec.submodule_search_locations)[0]) / "bin" / "rootreadspeed"
    if not path.is_file():
        raise harness.KernelError(f"rootreadspeed is not in the ROOT wheel ({path} missing)")
    return path


def parse_rootreadspeed(text: str) -> dict[str, float]:
    """Real and CPU time and bytes from rootreadspeed's report."""
    values = {}
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        words = rest.split()
        if key.strip() in ("Real time", "CPU time") and words:
            values["wall_s" if key.strip() == "Real time" else "cpu_s"] = float(words[0])
        elif key.strip() in ("Uncompressed data read", "Compressed data read") and words:
            values["bytes_uncompressed" if key.startswith("Uncompressed") else "bytes_compressed"] = float(words[0])
    if set(values) != {"wall_s", "cpu_s", "bytes_uncompressed", "bytes_compressed"}:
        raise harness.KernelError(f"rootreadspeed: cannot read its report:\n{text[-1500:]}")
    return values


ROOTREADSPEED_COPIES = 5  # files listed once and this many times; the difference gives one pass


def run_rootreadspeed(files: list[str], tree: str, branch: str, counter: str | None, cache: str,
                      passes: int, warmup: int) -> pd.DataFrame:
    """rootreadspeed on the value branch and its counter (files brought to `cache`
    first). Its own timer includes ROOT's start-up (about 0.2 s), which would
    dominate small inputs: each pass runs it with the files listed once and
    ROOTREADSPEED_COPIES times, and one pass over the files (opening included)
    is the difference divided by ROOTREADSPEED_COPIES - 1."""
    def once(listed: list[str]) -> dict[str, float]:
        page_cache(files, cache)
        argv = [str(rootreadspeed_path()), "--files", *listed, "--trees", tree,
                "--branches", branch, *([counter] if counter else []), "--threads", "0"]
        proc = subprocess.run(argv, capture_output=True, text=True, env=harness.pinned_env())
        if proc.returncode != 0:
            raise harness.KernelError(f"rootreadspeed on {files[0]} branch {branch} exited with {proc.returncode}: "
                                      f"{(proc.stdout + proc.stderr)[-1500:]}")
        return parse_rootreadspeed(proc.stdout)

    rows = []
    for index in range(warmup + passes):
        single, multiple = once(files), once(files * ROOTREADSPEED_COPIES)
        per_pass = {k: (multiple[k] - single[k]) / (ROOTREADSPEED_COPIES - 1) for k in single}
        if per_pass["wall_s"] <= 0:
            per_pass["wall_s"] = float("nan")  # below the tool's resolution: not a rate
        rows.append({"record": "timing", "method": "rootreadspeed", "branch": branch, "rep": index - warmup,
                     "warmup": index < warmup, "order": 0, **per_pass, "open_s": float("nan"),
                     "wall_single_s": single["wall_s"], "wall_multiple_s": multiple["wall_s"],
                     "files": len(files), "cache": cache})
    return pd.DataFrame(rows)


def counter_of(path: str, tree: str, branch: str) -> str | None:
    """The counter branch of a jagged leaf-list branch (None for a flat one)."""
    import uproot

    with uproot.open(path) as f:
        leaf = f[tree][branch].member("fLeaves")[0]
        count = leaf.member("fLeafCount")
        return None if count is None else count.member("fName")


def collection_attributes(path: str, tree: str, branches: list[str]) -> dict[str, int]:
    """Per branch: the branches of its collection (those sharing its counter), itself included."""
    import uproot

    with uproot.open(path) as f:
        t = f[tree]
        by_counter: dict[str | None, int] = {}
        counter_of_branch = {}
        for b in t.branches:
            leaves = b.member("fLeaves")
            count = leaves[0].member("fLeafCount") if len(leaves) == 1 else None
            name = None if count is None else count.member("fName")
            counter_of_branch[b.name] = name
            if name is not None:
                by_counter[name] = by_counter.get(name, 0) + 1
        return {branch: by_counter.get(counter_of_branch[branch], 1) if counter_of_branch[branch] else 1
                for branch in branches}


# --- configuration -------------------------------------------------------------------------------

def check_config(section: dict[str, Any], available_memory: int, problems: list[str]) -> None:
    """Names and sizes that fit (see throughput.config.validate): collections
    known, real files present, generated data fitting on disk."""
    for key in ("cold_collections", "scan_collections"):
        unknown = [c for c in section[key] if c not in section["collections"]]
        if unknown:
            problems.append(f"config key 'reader_comparison.{key}' = {section[key]!r}: {', '.join(unknown)} "
                            f"not in reader_comparison.collections {section['collections']!r}")
    if section["timeline_collection"] not in section["collections"]:
        problems.append(f"config key 'reader_comparison.timeline_collection' = {section['timeline_collection']!r}: "
                        f"not in reader_comparison.collections {section['collections']!r}")
    import skhep_testdata

    for name in section["real_files"]:
        if name not in skhep_testdata.known_files:
            problems.append(f"config key 'reader_comparison.real_files': {name!r} is not a file of "
                            f"scikit-hep-testdata (where the real files come from)")
    # Generated data: TTree files and their RNTuple copies (about the same size).
    need = 2 * (section["nanoaod_events"] * NANOAOD_BYTES_PER_EVENT_ESTIMATE["ZLIB"]
                + section["aod_events"] * AOD_BYTES_PER_EVENT_ESTIMATE["ZLIB"]
                + sum(section["scan_events"] * NANOAOD_BYTES_PER_EVENT_ESTIMATE[c]
                      for c in section["compression_scan"]))
    free = shutil.disk_usage(Path(".").resolve()).free
    if need > 0.8 * free:
        problems.append(f"config key 'reader_comparison': nanoaod_events, aod_events and scan_events need about "
                        f"{need / 1e9:.1f} GB of generated files, {free / 1e9:.1f} GB free in {Path('.').resolve()}")


def file_count(events: int, per_file: int) -> int:
    return max(1, math.ceil(events / per_file))


# --- planning and measuring ----------------------------------------------------------------------

def plan(params: dict[str, Any], inputs: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Every process to run: one per input set, cache state and reader group.

    `inputs` maps a set name to {"role": main|scan|real, "layout", "compression",
    "root": [...], "rntuple": [...], "numpy": [...]}."""
    readers = list(params["readers"])
    cpp = [m for m in CPP_METHODS if m in readers]
    runs = []
    for name, spec in inputs.items():
        layout = spec["layout"]
        available = LAYOUTS[layout][2]
        if spec["role"] == "main":
            wanted = [(c, "warm") for c in params["collections"]] + [(c, "cold") for c in params["cold_collections"]]
        elif spec["role"] == "scan":
            wanted = [(c, "warm") for c in params["scan_collections"]]
        else:
            wanted = [(c, "warm") for c in (params["collections"] if layout != "hzz" else HZZ_COLLECTIONS)]
        for cache in ("warm", "cold"):
            collections = [c for c, state in wanted if state == cache and c in available]
            # the figure's collection first, so each process reads it first (JIT and warm-up visible)
            collections.sort(key=lambda c: (c != params["timeline_collection"], COLLECTIONS.index(c)
                                            if c in COLLECTIONS else 0))
            if not collections:
                continue
            branches = [branch_name(layout, c) for c in collections]
            base = {"set": name, "role": spec["role"], "layout": layout, "compression": spec["compression"],
                    "cache": cache, "branches": branches}
            methods = [m for m in cpp if m != "rntuple" or spec.get("rntuple")]
            if methods:
                runs.append({**base, "group": "cpp", "methods": methods})
            for group in ("uproot", "numpy", "laurelin"):
                if group in readers and (group != "numpy" or spec.get("numpy")):
                    runs.append({**base, "group": group, "methods": [group]})
            if params["rootreadspeed"] and spec["role"] != "real" and cache == "warm":
                runs.append({**base, "group": "rootreadspeed", "methods": ["rootreadspeed"]})
    return runs


def run_name(run: dict[str, Any]) -> str:
    return f"{run['set'].replace('/', '_')}_{run['cache']}_{run['group']}"


def _identity(paths: list[str]) -> list[list[Any]]:
    """Name and size of each input file: a regenerated input of another size is measured again."""
    return [[Path(p).name, Path(p).stat().st_size if Path(p).exists() else None] for p in paths]


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _records_frame(records: dict[str, list[dict]]) -> pd.DataFrame:
    frames = [pd.DataFrame(records.get(kind, [])) for kind in ("timing", "sample")]
    frame = pd.concat([f for f in frames if not f.empty], ignore_index=True)
    return frame


def _measure(run: dict[str, Any], spec: dict[str, Any], params: dict[str, Any]) -> tuple[pd.DataFrame, dict]:
    common = {"files": ",".join(spec["root"]), "tree": tree_name(run["layout"]), "branches": ",".join(run["branches"]),
              "reps": params["repetitions"], "warmup": params["warmup"], "cache": run["cache"],
              "sample-every": params["sample_every"]}
    build_info = None
    label = f"{run['group']} reader on {run['set']} ({run['cache']})"
    load = os.getloadavg()[0]  # other work on the machine shows in wall time: recorded with the run
    try:
        if run["group"] == "cpp":
            args = {**common, "methods": ",".join(run["methods"])}
            if "rntuple" in run["methods"]:
                args["rntuple-files"] = ",".join(spec["rntuple"])
            argv = [str(harness.kernel_path("read_branch"))] + [x for k, v in args.items() for x in (f"--{k}", str(v))]
            records = run_json_process(argv, label)
            build_info = harness.build_info("read_branch")
            frame = _records_frame(records)
        elif run["group"] in PYTHON_READERS:
            files = spec["numpy"] if run["group"] == "numpy" else spec["root"]
            args = {**common, "files": ",".join(files), "reader": run["group"],
                    "page-cache-tool": str(harness.kernel_path("page_cache"))}
            argv = [sys.executable, "-m", "throughput.experiments.reader_comparison", "read"]
            argv += [x for k, v in args.items() for x in (f"--{k}", str(v))]
            frame = _records_frame(run_json_process(argv, label))
        elif run["group"] == "laurelin":
            reason = java_available()
            if reason is None:
                try:
                    jar = build_java_reader()
                except harness.KernelError as error:  # e.g. Maven Central out of reach on a fresh host
                    reason = f"not measured here: {error}"
            if reason:
                frame = pd.DataFrame([{"record": "not_measured", "method": "laurelin", "branch": b, "message": reason}
                                      for b in run["branches"]])
            else:
                args = {**common, "page-cache-tool": str(harness.kernel_path("page_cache"))}
                argv = ["java", "-jar", str(jar)] + [x for k, v in args.items() for x in (f"--{k}", str(v))]
                frame = _records_frame(run_json_process(argv, label))
        else:
            frames = [run_rootreadspeed(spec["root"], tree_name(run["layout"]), branch,
                                        counter_of(spec["root"][0], tree_name(run["layout"]), branch), run["cache"],
                                        params["repetitions"], params["warmup"]) for branch in run["branches"]]
            frame = pd.concat(frames, ignore_index=True)
    except ReaderFailed as error:
        # every method of the process failed with it (the C++ group runs several)
        kind, reason = classify_failure(run["group"], run["compression"], error.error)
        frame = pd.DataFrame([{"record": kind, "method": method, "branch": b, "message": reason}
                              for method in run["methods"] for b in run["branches"]])
    frame = frame.assign(**{k: run[k] for k in ("set", "role", "layout", "compression", "cache", "group")},
                         load_1min=load)
    frame["reader"] = frame["method"]
    if "rep" in frame:  # sample rows belong to the pass of their rep
        frame["warmup"] = frame["rep"] < 0
    frame["collection"] = frame["branch"].map(collection_of)
    return frame, provenance.capture(params, cache_state=run["cache"], build_info=build_info)


def _version_key(run: dict[str, Any]) -> dict[str, Any]:
    if run["group"] == "cpp":
        return {"binary_sha256": _sha256(harness.kernel_path("read_branch"))}
    if run["group"] == "laurelin":
        source = REPO / "kernels" / "reader_comparison" / "java"
        return {"java_sources": hashlib.sha256(b"".join(p.read_bytes() for p in sorted(source.rglob("*"))
                                                        if p.is_file())).hexdigest(),
                "java": java_available() or shutil.which("java"),
                "jar_built": (java_dir() / "laurelin-reader.jar").exists()}
    if run["group"] == "rootreadspeed":
        return {"root": provenance.package_versions()["root"]}
    return {"uproot": provenance.package_versions()["uproot"], "numpy": provenance.package_versions()["numpy"],
            "reader_source": _sha256(Path(__file__))}


def measure(params: dict[str, Any], inputs: dict[str, dict[str, Any]], raw_dir: str | Path,
            progress: bool = True) -> pd.DataFrame:
    """Run (or reuse, when stored with the same parameters and inputs) every run of `plan`."""
    from tqdm.auto import tqdm

    raw_dir = Path(raw_dir)
    frames = []
    runs = plan(params, inputs)
    # A missing input is bad input, not a reader's failure: stop before any run.
    missing = sorted({path for run in runs for key in ("root", "rntuple", "numpy")
                      for path in inputs[run["set"]].get(key, []) if not Path(path).is_file()})
    if missing:
        raise harness.KernelError(f"reader comparison: input files missing: {', '.join(missing)}")
    for run in tqdm(runs, desc="reader comparison", unit="run", disable=not progress):
        spec = inputs[run["set"]]
        key = {**{k: params[k] for k in ("repetitions", "warmup", "sample_every")}, **run,
               "inputs": _identity(spec["root"] + spec.get("rntuple", []) + spec.get("numpy", [])),
               **_version_key(run)}
        frames.append(measure_once(raw_dir / f"{run_name(run)}.parquet", key,
                                   lambda run=run, spec=spec: _measure(run, spec, params)))
    return pd.concat(frames, ignore_index=True)


# --- validation ----------------------------------------------------------------------------------

def check_agreement(frame: pd.DataFrame) -> pd.DataFrame:
    """Every pass of every reader of the same files and branch must give the same
    items, events and checksum (rootreadspeed reports none and is left out).
    Returns one row per (layout, compression, set's files, branch) with the agreed
    values; raises AssertionError naming the readers that disagree."""
    timing = frame[(frame["record"] == "timing") & frame["checksum"].notna()]
    rows, problems = [], []
    for (data, branch), group in timing.groupby([timing["set"], "branch"]):
        seen = group.groupby("reader")[["items", "events", "checksum"]].agg(lambda s: sorted(set(s)))
        distinct = {(tuple(r["items"]), tuple(r["events"]), tuple(r["checksum"])) for _, r in seen.iterrows()}
        if len(distinct) != 1 or any(len(v) != 1 for v in next(iter(distinct))):
            detail = "; ".join(f"{reader}: {r['items']} items, {r['events']} events, checksum {r['checksum']}"
                               for reader, r in seen.iterrows())
            problems.append(f"readers disagree on {data} branch {branch}: {detail}")
            continue
        first = group.iloc[0]
        rows.append({"set": data, "branch": branch, "items": int(first["items"]), "events": int(first["events"]),
                     "checksum": first["checksum"], "readers": len(seen)})
    if problems:
        raise AssertionError("\n".join(problems))
    return pd.DataFrame(rows)


def check_references(agreed: pd.DataFrame, inputs: dict[str, dict[str, Any]]) -> pd.DataFrame:
    """What the readers agreed on must be what each input holds: its reference
    values, taken when the file was made (a real file: when first registered),
    kept outside it (throughput.references). Readers that all read the same
    damaged bytes agree with each other, not with this. Returns the rows
    compared; raises AssertionError naming each input set, branch and file."""
    rows, problems = [], []
    for _, row in agreed.iterrows():
        spec = inputs[row["set"]]
        if spec["role"] == "real":  # registered once, the first time the study reads it
            for path in spec["root"]:
                references.register(path, tree_name(spec["layout"]), [branch_name(spec["layout"], c)
                                                                     for c in LAYOUTS[spec["layout"]][2]])
        want = references.expected(spec["root"], row["branch"])
        got = {"entries": int(row["events"]), "items": int(row["items"]), "checksum": row["checksum"]}
        if got != want:
            problems.append(f"readers of {row['set']} branch {row['branch']} agree on {got}, but the files "
                            f"({', '.join(spec['root'])}) held {want} when they were made: damaged input?")
        rows.append({"set": row["set"], "branch": row["branch"], **want, "matches": got == want})
    if problems:
        raise AssertionError("\n".join(problems))
    return pd.DataFrame(rows)


# --- summaries -----------------------------------------------------------------------------------

def summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Median (min, max) over the measured passes per set, cache, reader and branch,
    with kHz (events/s/1e3 per process), MHz of values, ns per value, MB/s of
    compressed and uncompressed bytes; rootreadspeed gets events and items from
    the other readers of the same files."""
    timing = frame[(frame["record"] == "timing") & ~frame["warmup"].astype(bool)].copy()
    by = ["set", "role", "layout", "compression", "cache", "reader", "collection", "branch"]
    table = (timing.groupby(by, sort=False)
             .agg(wall_s=("wall_s", "median"), wall_min=("wall_s", "min"), wall_max=("wall_s", "max"),
                  cpu_s=("cpu_s", "median"), open_s=("open_s", "median"), events=("events", "max"),
                  items=("items", "max"), bytes_compressed=("bytes_compressed", "max"),
                  bytes_uncompressed=("bytes_uncompressed", "max"), files=("files", "max"),
                  load_1min=("load_1min", "mean"), passes=("wall_s", "count"))
             .reset_index())
    # rootreadspeed reports no values: its events and items are those every other reader agreed on.
    counts = table.groupby(["set", "branch"])[["events", "items"]].transform("max")
    table[["events", "items"]] = table[["events", "items"]].fillna(counts)
    return _rates(table)


def _rates(table: pd.DataFrame) -> pd.DataFrame:
    """Rates of whole passes ("with opening") and of their reading part (wall
    time minus the time spent opening files; rootreadspeed has no such split)."""
    table = table.copy()
    table["read_s"] = table["wall_s"] - table["open_s"].fillna(0)
    table["khz"] = table["events"] / table["wall_s"] / 1e3
    table["khz_min"] = table["events"] / table["wall_max"] / 1e3
    table["khz_max"] = table["events"] / table["wall_min"] / 1e3
    table["khz_read"] = table["events"] / table["read_s"] / 1e3
    table["mhz_items"] = table["items"] / table["wall_s"] / 1e6
    table["mhz_items_read"] = table["items"] / table["read_s"] / 1e6
    table["ns_per_item_read"] = table["read_s"] / table["items"] * 1e9
    table["mb_s_compressed"] = table["bytes_compressed"] / table["read_s"] / 1e6
    table["mb_s_uncompressed"] = table["bytes_uncompressed"] / table["read_s"] / 1e6
    return table


UNREAD_RECORDS = {"cannot_read": "cannot read", "failed": "failed", "not_measured": "not measured"}


def cannot_read(frame: pd.DataFrame) -> pd.DataFrame:
    """Readers that could not read an input (by design or by an error), or were
    not measured, with the reason."""
    columns = ["set", "layout", "compression", "cache", "reader", "branch", "record", "message"]
    if "message" not in frame:
        return pd.DataFrame(columns=columns)
    return frame[frame["record"].isin(list(UNREAD_RECORDS))][columns]


def failures_frame(unreadable: pd.DataFrame) -> pd.DataFrame:
    """One row per reader and input it could not read, with the reader's whole reason."""
    columns = ["reader", "input", "cache", "outcome", "reason"]
    if unreadable.empty:
        return pd.DataFrame([["every reader", "every input", "both", "read", "--"]], columns=columns)
    rows = unreadable.drop_duplicates(["set", "cache", "reader", "record", "message"])
    # the input and branch have their own columns: not repeated from the reader's message
    reasons = [re.sub(r"^file \S+ (\([^)]*\) )?.*?branch \S+: ", "", m) for m in rows["message"]]
    return pd.DataFrame({"reader": [LABELS[r] for r in rows["reader"]],
                         "input": [escape_name(s) for s in rows["set"]], "cache": list(rows["cache"]),
                         "outcome": [UNREAD_RECORDS[r] for r in rows["record"]],
                         "reason": [_escape(m) for m in reasons]}, columns=columns)


def _escape(text: str) -> str:
    from .. import paper

    return paper.escape(text)


def numpy_bytes(paths: list[str], branch: str) -> tuple[int, int]:
    """Compressed and uncompressed size of one array in Numpy files."""
    compressed = uncompressed = 0
    for path in paths:
        with zipfile.ZipFile(path) as archive:
            info = archive.getinfo(f"{branch}.npy")
            compressed += info.compress_size
            uncompressed += info.file_size
    return compressed, uncompressed


def value_branch_bytes(paths: list[str], tree: str, branch: str) -> tuple[int, int]:
    """Compressed and uncompressed bytes of one branch (what uproot and laurelin read)."""
    import uproot

    compressed = uncompressed = 0
    for path in paths:
        with uproot.open(path) as f:
            b = f[tree][branch]
            compressed += b.compressed_bytes
            uncompressed += b.uncompressed_bytes
    return compressed, uncompressed


def fill_bytes(table: pd.DataFrame, inputs: dict[str, dict[str, Any]]) -> pd.DataFrame:
    """Bytes for the readers whose process does not report them (uproot, laurelin, Numpy)."""
    table = table.copy()
    for index, row in table[table["bytes_compressed"].isna()].iterrows():
        spec = inputs[row["set"]]
        if row["reader"] == "numpy":
            compressed, uncompressed = numpy_bytes(spec["numpy"], row["branch"])
        else:
            compressed, uncompressed = value_branch_bytes(spec["root"], tree_name(row["layout"]), row["branch"])
        table.loc[index, ["bytes_compressed", "bytes_uncompressed"]] = [compressed, uncompressed]
    return _rates(table)


def _rate(table: pd.DataFrame, set_name: str, cache: str, reader: str, branch: str, column: str) -> float:
    row = table[(table["set"] == set_name) & (table["cache"] == cache) & (table["reader"] == reader)
                & (table["branch"] == branch)]
    return float(row[column].iloc[0]) if len(row) == 1 else float("nan")


def ratios(table: pd.DataFrame) -> pd.DataFrame:
    """Each reader's reading rate per value against the columnar C++ reader and
    the Numpy baseline, and its whole-pass rate against rootreadspeed's (which
    has no opening/reading split), on the same files and branch, in the same run."""
    out = table.copy()
    for reference, column in (("columnar", "mhz_items_read"), ("numpy", "mhz_items_read"),
                              ("rootreadspeed", "mhz_items")):
        out[f"vs_{reference}"] = [
            row[column] / _rate(table, row["set"], row["cache"], reference, row["branch"], column)
            for _, row in table.iterrows()]
    return out


def targets(table: pd.DataFrame, set_name: str, branch: str) -> dict[str, Any]:
    """The issue's targets, measured in one run: the columnar reader's reading
    rate per value >= 95% of the Numpy baseline's, and the fastest C++ TTree
    reader's whole-pass rate >= rootreadspeed's on the same branch."""
    rate = lambda reader, column="mhz_items_read": _rate(table, set_name, "warm", reader, branch, column)  # noqa: E731
    cpp = {m: rate(m, "mhz_items") for m in TREE_CPP_METHODS}
    cpp = {m: v for m, v in cpp.items() if not math.isnan(v)}
    fastest = max(cpp, key=cpp.get) if cpp else None
    numpy_ratio = rate("columnar") / rate("numpy")
    numpy_ratio_with_open = rate("columnar", "mhz_items") / rate("numpy", "mhz_items")
    rrs_ratio = cpp[fastest] / rate("rootreadspeed", "mhz_items") if fastest else float("nan")
    return {"set": set_name, "branch": branch,
            "columnar_mhz": rate("columnar"), "numpy_mhz": rate("numpy"), "numpy_ratio": numpy_ratio,
            "numpy_ratio_with_open": numpy_ratio_with_open,
            "numpy_met": bool(numpy_ratio >= NUMPY_TARGET), "fastest_cpp": fastest,
            "fastest_cpp_mhz": cpp.get(fastest, float("nan")), "rootreadspeed_mhz": rate("rootreadspeed", "mhz_items"),
            "rootreadspeed_ratio": rrs_ratio, "rootreadspeed_met": bool(rrs_ratio >= 1.0),
            "columnar_ns_per_item": _rate(table, set_name, "warm", "columnar", branch, "ns_per_item_read"),
            "numpy_ns_per_item": _rate(table, set_name, "warm", "numpy", branch, "ns_per_item_read"),
            "per_event": _rate(table, set_name, "warm", "columnar", branch, "items")
            / _rate(table, set_name, "warm", "columnar", branch, "events"),
            "columnar_open_share": _rate(table, set_name, "warm", "columnar", branch, "open_s")
            / _rate(table, set_name, "warm", "columnar", branch, "wall_s")}


def timeline(frame: pd.DataFrame, set_name: str, branch: str, readers: tuple[str, ...] = ("columnar", "uproot",
                                                                                            "laurelin")) -> pd.DataFrame:
    """ns per value between consecutive samples, against the values read since the
    process started (all passes of that reader in order, warm-up included)."""
    samples = frame[(frame["record"] == "sample") & (frame["set"] == set_name) & (frame["branch"] == branch)
                    & (frame["cache"] == "warm") & frame["reader"].isin(readers)]
    rows = []
    for reader, group in samples.groupby("reader", sort=False):
        offset = 0
        for rep, passes in group.groupby("rep", sort=True):
            passes = passes.sort_values("items")
            items = passes["items"].to_numpy(float)
            wall = passes["wall_s"].to_numpy(float)
            previous_items = np.concatenate([[0.0], items[:-1]])
            previous_wall = np.concatenate([[0.0], wall[:-1]])
            for i, w, pi, pw in zip(items, wall, previous_items, previous_wall):
                if i > pi:
                    rows.append({"reader": reader, "rep": rep, "warmup": rep < 0, "items": offset + i,
                                 "ns_per_item": (w - pw) / (i - pi) * 1e9})
            offset += items[-1] if len(items) else 0
    return pd.DataFrame(rows)


def collection_shapes(inputs: dict[str, dict[str, Any]], agreed: pd.DataFrame, set_name: str) -> pd.DataFrame:
    """Particles per event and attributes per collection in one input set."""
    spec = inputs[set_name]
    part = agreed[agreed["set"] == set_name]
    counts = collection_attributes(spec["root"][0], tree_name(spec["layout"]), list(part["branch"]))
    rows = [{"collection": collection_of(row["branch"]), "branch": row["branch"],
             "per_event": row["items"] / row["events"], "attributes": counts[row["branch"]]}
            for _, row in part.iterrows()]
    return pd.DataFrame(rows).set_index("collection")


# --- tables for the paper (cells as LaTeX strings) -----------------------------------------------

def _num(value: float, digits: int = 3) -> str:
    from .. import paper

    return paper.number(value, digits) if value == value and math.isfinite(value) else "--"


def _readers_present(table: pd.DataFrame, extra: tuple[str, ...] = ("rootreadspeed",)) -> list[str]:
    present = set(table["reader"])
    return [r for r in READERS + extra if r in present]


def _cell(table: pd.DataFrame, unreadable: pd.DataFrame, set_name: str, cache: str, reader: str, branch: str,
          column: str) -> str:
    """One rate as a table cell; where the reader could not read this input, the
    outcome and its short reason ("failed: ...", "cannot read: ..."; the whole
    reason is in the failures table)."""
    match = unreadable[(unreadable["set"] == set_name) & (unreadable["reader"] == reader)
                       & (unreadable["branch"] == branch) & (unreadable["cache"] == cache)]
    if len(match):
        kind, message = match["record"].iloc[0], match["message"].iloc[0]
        if kind == "not_measured":
            return "not measured"
        return _escape(f"{UNREAD_RECORDS[kind]}: {failure_summary(message)}")
    return _num(_rate(table, set_name, cache, reader, branch, column))


def table1_frame(table: pd.DataFrame, unreadable: pd.DataFrame, shapes: pd.DataFrame, set_name: str,
                 layout: str) -> pd.DataFrame:
    """Seed 000's Table 1 beside ours: kHz per process (events per ms, reading
    only) per particle type for every reader, one input set, warm cache."""
    collections = [c for c in COLLECTIONS if c in shapes.index]
    header = {c: SEED_TABLE1.loc[c, "particle"] for c in collections}
    rows = [
        {"": "particles per event, seed", **{header[c]: _num(SEED_TABLE1.loc[c, "per_event"], 2) for c in collections}},
        {"": "particles per event, here", **{header[c]: _num(shapes.loc[c, "per_event"], 2) for c in collections}},
        {"": "attributes, seed", **{header[c]: str(SEED_TABLE1.loc[c, "attributes"]) for c in collections}},
        {"": "attributes, here", **{header[c]: str(int(shapes.loc[c, "attributes"])) for c in collections}},
        {"": "CMSSW EDAnalyzer (seed)", **{header[c]: _num(SEED_TABLE1.loc[c, "cmssw"]) for c in collections}},
        {"": "TTree::Draw (seed)", **{header[c]: _num(SEED_TABLE1.loc[c, "draw"]) for c in collections}},
        {"": "FemtoCode reader (seed)", **{header[c]: _num(SEED_TABLE1.loc[c, "femtocode"]) for c in collections}},
    ]
    for reader in _readers_present(table[table["set"] == set_name]):
        column = "khz" if reader == "rootreadspeed" else "khz_read"
        label = LABELS[reader] + (" (with opening)" if reader == "rootreadspeed" else "")
        rows.append({"": label, **{header[c]: _cell(table, unreadable, set_name, "warm", reader,
                                                    branch_name(layout, c), column) for c in collections}})
    return pd.DataFrame(rows)


def ratio_frame(rated: pd.DataFrame, sets: list[str], collection: str) -> pd.DataFrame:
    """Per reader and input set, one collection: reading rate, its ratios to the
    columnar reader and Numpy, whole-pass ratio to rootreadspeed, MB/s
    compressed and not."""
    rows = []
    for set_name in sets:
        part = rated[(rated["set"] == set_name) & (rated["cache"] == "warm") & (rated["collection"] == collection)]
        for reader in _readers_present(part):
            row = part[part["reader"] == reader].iloc[0]
            rows.append({"input": escape_name(set_name), "reader": LABELS[reader],
                         "kHz": _num(row["khz_read"]), "kHz with opening": _num(row["khz"]),
                         "M values/s": _num(row["mhz_items_read"]),
                         "/ columnar": _num(row["vs_columnar"], 2), "/ Numpy": _num(row["vs_numpy"], 2),
                         "/ rootreadspeed": _num(row["vs_rootreadspeed"], 2),
                         "MB/s compr.": _num(row["mb_s_compressed"]),
                         "MB/s uncompr.": _num(row["mb_s_uncompressed"])})
    return pd.DataFrame(rows)


def escape_name(text: str) -> str:
    """An input set's name as the tables show it: "AOD-like, ZLIB", "HZZ (real), LZ4"."""
    from .. import paper

    kind, _, rest = text.partition("/")
    if kind in ("aod", "nanoaod"):
        return paper.escape(f"{'AOD' if kind == 'aod' else 'NanoAOD'}-like, {rest}")
    return paper.escape(text)


def compression_frame(table: pd.DataFrame, unreadable: pd.DataFrame, inputs: dict[str, dict[str, Any]],
                      collection: str) -> pd.DataFrame:
    """NanoAOD-like files in every compression: reading rate (kHz) of one collection per reader."""
    branch = branch_name("nanoaod", collection)
    sets = {spec["compression"]: name for name, spec in inputs.items()
            if spec["layout"] == "nanoaod" and spec["role"] in ("main", "scan")}
    order = [c for c in COMPRESSIONS if c in sets]
    part = table[table["set"].isin(sets.values())]
    rows = []
    for reader in _readers_present(part):
        column = "khz" if reader == "rootreadspeed" else "khz_read"
        rows.append({"reader": LABELS[reader], **{c: _cell(table, unreadable, sets[c], "warm", reader, branch, column)
                                                  for c in order}})
    return pd.DataFrame(rows)


def real_frame(table: pd.DataFrame, unreadable: pd.DataFrame, inputs: dict[str, dict[str, Any]]) -> pd.DataFrame:
    """The real files: reading rate (kHz) per reader for each file (HZZ: jets' Px; NanoAOD: jets' pT)."""
    sets = [name for name, spec in inputs.items() if spec["role"] == "real"]
    columns = {}
    for name in sets:
        spec = inputs[name]
        label = ("HZZ " if spec["layout"] == "hzz" else "NanoAOD ") + spec["compression"]
        if label in columns.values():
            label += " (" + Path(spec["root"][0]).stem.replace("uproot-HZZ", "").strip("-") + ")"
        columns[name] = label
    part = table[table["set"].isin(sets)]
    present = set(part["reader"]) | set(unreadable[unreadable["set"].isin(sets)]["reader"])
    rows = []
    for reader in [r for r in READERS if r in present]:
        rows.append({"reader": LABELS[reader], **{
            columns[name]: _cell(table, unreadable, name, "warm", reader, branch_name(inputs[name]["layout"], "Jet"),
                                 "khz_read") for name in sets}})
    return pd.DataFrame(rows)


def cold_frame(table: pd.DataFrame, sets: list[str], collection: str | None) -> pd.DataFrame:
    """Warm against cold page cache for one collection (whole passes, opening
    included: a cold open reads from the device)."""
    rows = []
    for set_name in sets:
        part = table[(table["set"] == set_name) & (table["collection"] == collection)]
        for reader in _readers_present(part, extra=()):
            branch = part["branch"].iloc[0]
            warm = _rate(table, set_name, "warm", reader, branch, "khz")
            cold = _rate(table, set_name, "cold", reader, branch, "khz")
            if math.isnan(cold):
                continue
            rows.append({"input": escape_name(set_name), "reader": LABELS[reader], "warm kHz": _num(warm),
                         "cold kHz": _num(cold), "cold / warm": _num(cold / warm, 2)})
    if not rows:
        rows.append({"input": "no cold-cache runs", "reader": "", "warm kHz": "", "cold kHz": "", "cold / warm": ""})
    return pd.DataFrame(rows)


def open_frame(table: pd.DataFrame, sets: list[str]) -> pd.DataFrame:
    """Milliseconds to open one file and find the branch, per reader (median over branches and passes)."""
    rows = []
    for set_name in sets:
        part = table[(table["set"] == set_name) & (table["cache"] == "warm") & (table["reader"] != "rootreadspeed")]
        for reader in _readers_present(part, extra=()):
            r = part[part["reader"] == reader]
            per_file = (r["open_s"] / r["files"]).median() * 1e3
            rows.append({"input": escape_name(set_name), "reader": LABELS[reader], "ms per file": _num(per_file),
                         "share of the pass": _num((r["open_s"] / r["wall_s"]).median(), 2)})
    return pd.DataFrame(rows)


# --- figures and numbers for the paper ------------------------------------------------------------

TIMELINE_READERS = ("columnar", "uproot", "laurelin")
COLORS = {reader: f"tab:{c}" for reader, c in zip(READERS + ("rootreadspeed",), (
    "blue", "cyan", "green", "olive", "purple", "brown", "pink", "orange", "red", "gray", "black"))}
BYTES_PER_VALUE = 4  # float32, decompressed


def plot_timeline(ax, line: pd.DataFrame) -> None:
    """Figure 1's analogue: ns per value against values read since the process
    started, warm-up pass hollow; right axis MB/s of decompressed values."""
    colors = COLORS
    for reader in [r for r in TIMELINE_READERS if r in set(line["reader"])]:
        part = line[line["reader"] == reader].sort_values("items")
        ax.plot(part["items"], part["ns_per_item"], "-", color=colors[reader], alpha=0.5, lw=1)
        for warm, style in ((True, "none"), (False, colors[reader])):
            sel = part[part["warmup"] == warm]
            ax.plot(sel["items"], sel["ns_per_item"], "o", ms=4, color=colors[reader], markerfacecolor=style,
                    label=f"{LABELS[reader]}{' (warm-up pass)' if warm else ''}")
    ax.set_yscale("log")
    ax.set_xlabel("values read since the process started")
    ax.set_ylabel("ns per value")
    right = ax.secondary_yaxis("right", functions=(lambda ns: BYTES_PER_VALUE * 1e3 / np.maximum(ns, 1e-9),
                                                   lambda mb: BYTES_PER_VALUE * 1e3 / np.maximum(mb, 1e-9)))
    right.set_ylabel("MB/s of decompressed values")
    ax.legend(fontsize="xx-small", ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.14))


def plot_table1(ax, table: pd.DataFrame, set_name: str, layout: str) -> None:
    """Table 1 as bars: reading rate (kHz, log) per particle type and reader; the seed's three columns as markers."""
    part = table[(table["set"] == set_name) & (table["cache"] == "warm")]
    collections = [c for c in COLLECTIONS if c in set(part["collection"])]
    readers = [r for r in READERS if r in set(part["reader"])]
    width = 0.8 / max(1, len(readers))
    for i, reader in enumerate(readers):
        values = [_rate(table, set_name, "warm", reader, branch_name(layout, c), "khz_read") for c in collections]
        ax.bar(np.arange(len(collections)) + (i - (len(readers) - 1) / 2) * width, values, width,
               label=LABELS[reader], color=COLORS[reader])
    for column, marker in (("cmssw", "v"), ("draw", "s"), ("femtocode", "^")):
        ax.plot(range(len(collections)), [SEED_TABLE1.loc[c, column] for c in collections], marker, color="k",
                ms=7, markerfacecolor="none", label={"cmssw": "seed: CMSSW", "draw": "seed: TTree::Draw",
                                                     "femtocode": "seed: FemtoCode reader"}[column])
    ax.set_xticks(range(len(collections)), [SEED_TABLE1.loc[c, "particle"] for c in collections],
                  fontsize="small")
    ax.set_yscale("log")
    ax.set_ylabel("kHz per process (reading)")


def warmup_factor(line: pd.DataFrame, reader: str) -> float:
    """Median ns per value in the warm-up pass over that in the last pass (JIT and warm-up)."""
    part = line[line["reader"] == reader]
    if part.empty or not part["warmup"].any():
        return float("nan")
    last = part["rep"].max()
    return float(part[part["warmup"]]["ns_per_item"].median() / part[part["rep"] == last]["ns_per_item"].median())


def _verdict_numpy(goal: dict[str, Any], bulk_ratio: float, load: float) -> str:
    """The numpy target's outcome, and where the gap lies as far as this run's
    numbers tell: the bulk reader has no per-event calls, so comparing the two
    separates per-event costs from per-basket ones."""
    if goal["numpy_ratio"] != goal["numpy_ratio"]:
        return "could not be compared: the columnar reader or the Numpy baseline was not run"
    if goal["numpy_met"]:
        return "reaches it"
    text = (f"does not reach it. The Numpy file is one deflate stream decompressed in one call into one "
            f"array; the columnar reader decompresses the branch basket by basket and makes two "
            f"TBranch::GetEntry calls per event. ")
    if bulk_ratio == bulk_ratio and bulk_ratio >= NUMPY_TARGET:
        text += (f"ROOT's bulk I/O, with no per-event calls, reaches {bulk_ratio:.2f} of the Numpy rate: "
                 f"the gap is the per-event calls, {goal['per_event']:.1f} values per event here, a cost "
                 f"spread thinner the more values an event holds")
    else:
        text += (f"ROOT's bulk I/O, with no per-event calls, reaches {bulk_ratio:.2f} of the Numpy rate: "
                 f"most of the gap is therefore in reading and decompressing the baskets (each a few tens of "
                 f"kB with its own key and buffer) rather than in the per-event calls")
    if load > 1.5:
        text += f"; the machine was also busy (mean load {load:.1f})"
    return text


def _verdict_rootreadspeed(goals: dict[str, dict[str, Any]]) -> str:
    """The rootreadspeed target's outcome over the layouts measured ({label: targets(...)})."""
    goals = {label: goal for label, goal in goals.items() if goal["rootreadspeed_ratio"] == goal["rootreadspeed_ratio"]}
    if not goals:
        return "could not be compared with rootreadspeed, which was not run"
    met = [label for label, goal in goals.items() if goal["rootreadspeed_met"]]
    missed = [label for label, goal in goals.items() if not goal["rootreadspeed_met"]]
    if not missed:
        return "is at least as fast as ROOT's own tool"
    where = f"on the {' and '.join(missed)} files"
    if met:
        where += f" (it is at least as fast on the {' and '.join(met)} ones)"
    return (f"is slower than ROOT's own tool {where}. Possible reasons, not separated here: rootreadspeed does "
            f"nothing with the values it reads, while our readers compute the checksum of every value and sample "
            f"the rate; and its time per pass is the difference of two runs of the tool, noisy when a pass takes "
            f"only milliseconds")


def macros(params: dict[str, Any], table: pd.DataFrame, rated: pd.DataFrame, unreadable: pd.DataFrame,
           inputs: dict[str, dict[str, Any]], line: pd.DataFrame, compiler: str) -> dict[str, str]:
    """Every number the paper section quotes, named Rc...; measured, never typed."""
    from .. import paper

    compression = params["compression"]
    aod, nano = f"aod/{compression}", f"nanoaod/{compression}"
    branch = lambda layout: branch_name(layout, params["timeline_collection"])  # noqa: E731
    goal_aod = targets(table, aod, branch("aod"))
    goal_nano = targets(table, nano, branch("nanoaod"))

    def ratio(set_name, layout, reader, reference="columnar", column="mhz_items_read"):
        return _rate(table, set_name, "warm", reader, branch(layout), column) / _rate(
            table, set_name, "warm", reference, branch(layout), column)

    def open_ms(set_name, reader):
        r = table[(table["set"] == set_name) & (table["cache"] == "warm") & (table["reader"] == reader)]
        return float((r["open_s"] / r["files"]).median() * 1e3) if len(r) else float("nan")

    draw = {c: _rate(table, aod, "warm", "draw", branch_name("aod", c), "khz_read") for c in COLLECTIONS}
    others = [v for c, v in draw.items() if c != "Muon" and not math.isnan(v)]
    draw_muon = draw["Muon"] / float(np.median(others)) if others else float("nan")
    cold = table[(table["cache"] == "cold") & (table["set"] == nano) & (table["reader"] == "columnar")]
    cold_ratio = (_rate(table, nano, "cold", "columnar", branch("nanoaod"), "khz")
                  / _rate(table, nano, "warm", "columnar", branch("nanoaod"), "khz")) if len(cold) else float("nan")
    cannot = unreadable[(unreadable["reader"] == "laurelin") & (unreadable["record"] == "cannot_read")]
    cannot_list = [("uncompressed" if c == "none" else f"{c}-compressed")
                   for c in sorted(set(cannot["compression"]), key=lambda c: COMPRESSIONS.index(c)
                                   if c in COMPRESSIONS else 9)]
    n = lambda v, d=3: _num(v, d)  # noqa: E731
    scans = [v["compression"] for v in inputs.values() if v["role"] == "scan"]
    scan_events = max([float(table[table["set"] == k]["events"].max()) for k, v in inputs.items()
                       if v["role"] == "scan"], default=0)
    scan_sentence = (f"NanoAOD-like files in {', '.join(scans)} ({scan_events:.0f} events each)" if scans
                     else "no other compression in this run")
    hzz = [("uncompressed" if v["compression"] == "none" else v["compression"])
           for v in inputs.values() if v["role"] == "real" and v["layout"] == "hzz"]
    nano_real = any(v["role"] == "real" and v["layout"] == "nanoaod" for v in inputs.values())
    real_parts = ([f"the HZZ file ({', '.join(hzz)})"] if hzz else []) + (["the real NanoAOD file"] if nano_real else [])
    real_sentence = " and ".join(real_parts) if real_parts else "none in this run"
    files = lambda name: len(inputs[name]["root"]) if name in inputs else 0  # noqa: E731
    events = lambda name: float(table[table["set"] == name]["events"].max())  # noqa: E731
    real_events = {}  # layout -> events read (every compression of the HZZ file holds the same events)
    for name, spec in inputs.items():
        if spec["role"] == "real" and (table["set"] == name).any():
            real_events.setdefault(spec["layout"], events(name))
    real_caption = ", ".join(f"{'HZZ' if layout == 'hzz' else 'NanoAOD'} {n(v)} events"
                             for layout, v in real_events.items()) or "none in this run"

    def branches(name):  # branches of the set's first file, counted in the file
        if name not in inputs:
            return "--"
        import uproot
        with uproot.open(inputs[name]["root"][0]) as f:
            return n(len(f[tree_name(inputs[name]["layout"])].keys()))

    # Does the CMSSW-like reader's slowdown follow the attributes it reads? Rank correlation
    # over the particle types of the AOD-like files, attributes counted in the file.
    slowdown = {c: _rate(table, aod, "warm", "columnar", branch_name("aod", c), "khz_read")
                / _rate(table, aod, "warm", "cmssw", branch_name("aod", c), "khz_read") for c in COLLECTIONS}
    slowdown = {c: v for c, v in slowdown.items() if not math.isnan(v)}
    if len(slowdown) < 3 or aod not in inputs:
        attributes_verdict = "too few particle types were read to compare the gap with their numbers of attributes"
    else:
        counts = collection_attributes(inputs[aod]["root"][0], tree_name("aod"),
                                       [branch_name("aod", c) for c in slowdown])
        # Spearman's rank correlation as Pearson's on ranks (pandas' method="spearman" needs scipy)
        rho = pd.Series(list(slowdown.values())).rank().corr(
            pd.Series([counts[branch_name("aod", c)] for c in slowdown]).rank())
        follows = "grows" if rho >= 0.5 else "does not grow"
        attributes_verdict = (f"over the {len(slowdown)} particle types the gap {follows} with the number of "
                              f"attributes read (rank correlation {rho:.2f})" if not math.isnan(rho) else
                              "the particle types read have the same number of attributes, so the gap cannot be "
                              "compared with it")
    cmssw_slowdown = 1 / ratio(aod, "aod", "cmssw")
    return {
        "RcNumpyTarget": n(100 * NUMPY_TARGET),
        "RcColumnarVerdict": ("is still faster than" if cmssw_slowdown > 1 else "is no longer faster than")
        if not math.isnan(cmssw_slowdown) else "could not be compared here with",
        "RcAttributesVerdict": paper.escape(attributes_verdict),
        "RcNanoBranches": branches(nano), "RcAodBranches": branches(aod),
        "RcRealEvents": real_caption,
        "RcCompression": paper.escape(compression),
        # events as read (the workflow's NanoAOD-like files hold datasets.events_per_file events each)
        "RcNanoEvents": n(events(nano)), "RcNanoFiles": str(files(nano)),
        "RcAodEvents": n(events(aod)), "RcAodFiles": str(files(aod)),

        "RcScanSentence": paper.escape(scan_sentence),
        "RcRealFiles": paper.escape(real_sentence),
        "RcRepetitions": str(params["repetitions"]), "RcWarmup": str(params["warmup"]),
        "RcSampleEvery": n(params["sample_every"]),
        "RcTimelineCollection": paper.escape(SEED_TABLE1.loc[params["timeline_collection"], "particle"]),
        "RcCompiler": paper.escape(compiler),
        "RcLoad": n(float(table["load_1min"].mean()), 2),
        "RcNumpyRatioAod": n(goal_aod["numpy_ratio"], 2), "RcNumpyRatioNano": n(goal_nano["numpy_ratio"], 2),
        "RcNumpyRatioWithOpenAod": n(goal_aod["numpy_ratio_with_open"], 2),
        "RcNumpyVerdict": paper.escape(_verdict_numpy(
            goal_aod, _rate(table, aod, "warm", "bulk", branch("aod"), "mhz_items_read") / goal_aod["numpy_mhz"],
            float(table["load_1min"].mean()))),
        "RcColumnarNsAod": n(goal_aod["columnar_ns_per_item"]), "RcNumpyNsAod": n(goal_aod["numpy_ns_per_item"]),
        "RcFastestCpp": paper.escape(LABELS.get(goal_aod["fastest_cpp"], "none")),
        "RcRrsRatioAod": n(goal_aod["rootreadspeed_ratio"], 2),
        "RcFastestCppNano": paper.escape(LABELS.get(goal_nano["fastest_cpp"], "none")),
        "RcRrsRatioNano": n(goal_nano["rootreadspeed_ratio"], 2),
        "RcRrsVerdict": paper.escape(_verdict_rootreadspeed({"AOD-like": goal_aod, "NanoAOD-like": goal_nano})),
        "RcJavaVsCpp": n(1 / ratio(aod, "aod", "laurelin"), 2),
        "RcUprootVsCpp": n(1 / ratio(aod, "aod", "uproot"), 2),
        "RcCmsswVsColumnar": n(1 / ratio(aod, "aod", "cmssw"), 3),
        "RcDrawVsColumnar": n(1 / ratio(aod, "aod", "draw"), 2),
        "RcDrawMuon": n(draw_muon, 2),
        "RcRdfVsColumnar": n(1 / ratio(aod, "aod", "rdataframe"), 2),
        "RcRntupleVsColumnar": n(ratio(aod, "aod", "rntuple"), 2),
        "RcBulkVsColumnar": n(ratio(aod, "aod", "bulk"), 2),
        "RcOpenColumnarMs": n(open_ms(nano, "columnar")), "RcOpenUprootMs": n(open_ms(nano, "uproot")),
        "RcOpenLaurelinMs": n(open_ms(nano, "laurelin")), "RcOpenNumpyMs": n(open_ms(nano, "numpy")),
        "RcColdColumnar": n(cold_ratio, 2),
        "RcLaurelinCannot": paper.escape(" and ".join(cannot_list) if cannot_list else "no compression here"),
        "RcJavaWarmup": n(warmup_factor(line, "laurelin"), 2),
        "RcCppWarmup": n(warmup_factor(line, "columnar"), 2),
    }


def residency_macros(frame: pd.DataFrame) -> dict[str, str]:
    """The lowest resident fraction any warm pass started from, and the
    threshold it had to reach (config key warm_min_resident)."""
    warm = frame[(frame["record"] == "timing") & (frame["cache"] == "warm")]
    lowest = warm["residency"].min() if "residency" in warm else float("nan")
    threshold = float(os.environ.get(provenance.WARM_MIN_RESIDENT_ENV, provenance.DEFAULT_WARM_MIN_RESIDENT))
    return {"RcWarmResidencyLowest": _num(100 * lowest, 4), "RcWarmMinResident": _num(100 * threshold, 4)}


# --- inputs for a standalone notebook run ----------------------------------------------------------

def prepare_inputs(params: dict[str, Any], datasets_section: dict[str, Any], data_dir: str | Path,
                   progress: bool = True) -> dict[str, dict[str, Any]]:
    """Generate (or reuse) every input the parameters ask for under `data_dir`:
    NanoAOD-like and AOD-like files with their RNTuple and Numpy copies, the
    compression scan, and copies of the real files. Snakemake makes the same
    files through its rules (workflow/rules/reader_comparison.smk)."""
    from .. import datasets

    data_dir = Path(data_dir)
    compression = params["compression"]
    per_file = datasets_section["events_per_file"]
    inputs: dict[str, dict[str, Any]] = {}

    def add(name, role, layout, compression, roots, make, copies_dir):
        for index, path in enumerate(roots):
            if not Path(path).exists():
                make(path, index)
        rntuples = [str(Path(copies_dir) / (Path(p).stem + ".ntuple.root")) for p in roots]
        for root, copy in zip(roots, rntuples):
            if not Path(copy).exists():
                make_rntuple_copy(root, copy, compression, datasets.level(datasets_section, compression)
                                  if compression != "none" else 0, tree_name(layout))
        numpys = [str(Path(copies_dir) / (Path(p).stem + ".npz")) for p in roots]
        branches = [branch_name(layout, c) for c in LAYOUTS[layout][2]]
        for root, copy in zip(roots, numpys):
            if not Path(copy).exists():
                make_numpy_copy(root, copy, tree_name(layout), branches)
        inputs[name] = {"role": role, "layout": layout, "compression": compression, "root": [str(p) for p in roots],
                        "rntuple": rntuples, "numpy": numpys}

    def nanoaod(events, compression, role):
        count = file_count(events, per_file)
        sizes = [min(per_file, events - k * per_file) for k in range(count)]
        roots = [data_dir / "nanoaod" / compression / f"part{k}.root" for k in range(count)]
        add(f"nanoaod/{compression}", role, "nanoaod", compression, [str(r) for r in roots],
            lambda path, k: datasets.make_nanoaod_like(path, sizes[k], compression, datasets_section, index=k,
                                                       progress=progress),
            data_dir / "nanoaod" / compression)

    nanoaod(params["nanoaod_events"], compression, "main")
    aod_count = file_count(params["aod_events"], params["aod_events_per_file"])
    aod_sizes = [min(params["aod_events_per_file"], params["aod_events"] - k * params["aod_events_per_file"])
                 for k in range(aod_count)]
    add(f"aod/{compression}", "main", "aod", compression,
        [str(data_dir / "aod" / compression / f"part{k}.root") for k in range(aod_count)],
        lambda path, k: make_aod_like(path, aod_sizes[k], compression, datasets.level(datasets_section, compression)
                                      if compression != "none" else 0, datasets_section["seed"] + k, progress),
        data_dir / "aod" / compression)
    for other in params["compression_scan"]:
        if other != compression:
            nanoaod(params["scan_events"], other, "scan")
    for name in params["real_files"]:
        source = datasets.real_file(name, datasets_section)
        stem = Path(name).stem
        layout = real_layout(stem)
        add(f"real/{stem}", "real", layout, file_compression(source), [str(source)], lambda path, k: None,
            data_dir / "real")
    return inputs


# --- command line ---------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    """Entry points for the workflow's rules and the reader processes."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:
        print("usage: python -m throughput.experiments.reader_comparison "
              "{read,make-aod,make-numpy,make-rntuple,build-java} ...", file=sys.stderr)
        return 2
    command, rest = argv[0], argv[1:]
    try:
        if command == "read":
            return read_main(rest)
        import argparse

        parser = argparse.ArgumentParser(prog=f"reader_comparison {command}")
        if command == "make-aod":
            parser.add_argument("output")
            parser.add_argument("--events", type=int, required=True)
            parser.add_argument("--compression", required=True, choices=COMPRESSIONS)
            parser.add_argument("--level", type=int, default=1)
            parser.add_argument("--seed", type=int, default=1)
            a = parser.parse_args(rest)
            make_aod_like(a.output, a.events, a.compression, a.level, a.seed)
        elif command == "make-numpy":
            parser.add_argument("source")
            parser.add_argument("output")
            parser.add_argument("--layout", required=True, choices=sorted(LAYOUTS))
            a = parser.parse_args(rest)
            make_numpy_copy(a.source, a.output, tree_name(a.layout),
                            [branch_name(a.layout, c) for c in LAYOUTS[a.layout][2]])
        elif command == "make-rntuple":
            parser.add_argument("source")
            parser.add_argument("output")
            parser.add_argument("--layout", required=True, choices=sorted(LAYOUTS))
            parser.add_argument("--compression", required=True, choices=COMPRESSIONS)
            parser.add_argument("--level", type=int, default=1)
            a = parser.parse_args(rest)
            make_rntuple_copy(a.source, a.output, a.compression, a.level, tree_name(a.layout))
        elif command == "build-java":
            parser.add_argument("target")
            a = parser.parse_args(rest)
            build_java_reader(a.target)
        else:
            print(f"unknown command {command!r}", file=sys.stderr)
            return 2
    except (ReaderError, harness.KernelError) as error:
        print(f"reader_comparison {command}: error: {error}", file=sys.stderr)
        return 2
    except Exception as error:  # a reader's unexpected exception: one line, its failure row's reason
        if command != "read":
            raise
        print(f"reader_comparison {command}: error: {type(error).__name__}: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
