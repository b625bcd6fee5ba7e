"""Writing (seeds 001 and 003): TBufferMerger, ROOT + IMT, a simple per-event format, RNTuple.

Two benchmarks, one kernel (kernels/writing/write_bench):

* "random" (seed 003, "TBufferMerger performance benchmarks revisited"):
  N threads write uniform random doubles with ROOT::TBufferMerger (each
  thread fills its own TTree and hands its buffers over at every flush) and,
  beside it, with ROOT::RNTupleParallelWriter (one fill context per thread),
  per compression algorithm and output medium (disk, tmpfs, memory, and a
  disk throttled to a set rate: a medium slower than the producers).
* "events" (seed 001, "Thread scaling of different output methods"):
  NanoAOD-like events, read into memory first, written by a TTree with LZ4
  and implicit multi-threading, by a simple format of our own (each event
  serialized and LZ4-compressed on its own by N threads, appended as a
  length-prefixed record), and by RNTupleParallelWriter.

Every pass's output is read back and every column's checksum and the entry
count compared with what was written (a difference fails the kernel). Each
pass's record carries what was read back from its own output (every column's
checksum, the entry count and their digest); check_agreement compares those
across all writers of one workload and against the digest of the source's
entries, recomputing the digest from the column checksums.

Units: MB = 10^6 bytes, MB/s = 10^6 bytes per second of *uncompressed* data
written ("written MB/s" counts the file's bytes); peak memory is the
process's peak resident set size during a pass, reported above the RSS it had
once the entries were in memory and before the first pass ("baseline").
"""
from __future__ import annotations

import hashlib
import math
import os
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import psutil
from tqdm.auto import tqdm

from .. import harness, provenance, seeds
from ..config import MEMORY_SHARE, thread_counts, usable_cores
from ..results import measure_once

KERNEL = "write_bench"
READER = "read_simple"
COMPRESSIONS = ("none", "LZ4", "ZLIB", "ZSTD", "LZMA")
MEDIA = ("disk", "tmpfs", "memory", "slow")
RANDOM_METHODS = ("tbuffermerger", "rntuple")
EVENT_METHODS = ("root_imt", "simple", "rntuple")
LABELS = {"tbuffermerger": "TBufferMerger", "rntuple": "RNTupleParallelWriter", "root_imt": "TTree + IMT",
          "simple": "simple format"}
SHORT = {"tbuffermerger": "TBM", "rntuple": "RNTuple", "root_imt": "TTree + IMT", "simple": "simple"}
MEDIUM_LABELS = {"disk": "disk", "tmpfs": "tmpfs", "memory": "memory", "slow": "slow (throttled disk)"}

# Seed 001 (CMS, output to /dev/null; figures in throughput.seeds): how many times faster
# the simple format was than ROOT (LZ4 + IMT), at 1 and at SEED001_THREADS threads, and how
# many times larger its files were.
SEED001 = seeds.WRITE_SEED001
SEED001_THREADS = seeds.WRITE_THREADS
# Seed 003 (ROOT team, Intel Core i7-7820X, 8 cores, ROOT 6.12/6.14; about 1 GB
# of random doubles on HDD, NVMe SSD and DRAM): its runtime and speed-up
# figures did not survive text extraction; what it concluded did, and is set
# against what we measure (seed003_claims).

# Uncompressed bytes of one NanoAOD-like event with all 947 branches (measured
# here: 3125 on 5000 events); used only to check memory and disk before running.
EVENT_BYTES_ESTIMATE = 3200
PROCESS_BYTES = 300 * 10**6  # ROOT's libraries and the kernel itself (about 210 MB measured here)
THREAD_BYTES = 40 * 10**6    # a TTree's basket buffers for every branch, per writing thread
EFFICIENCY_TARGET = 0.85     # the simple format's parallel efficiency at 2 threads on tmpfs with LZ4


# ---- configuration -------------------------------------------------------------------------

def filesystem_type(path: str | os.PathLike) -> str:
    """The type of the file system holding `path` (the mount with the longest matching prefix)."""
    real = os.path.realpath(path)
    best, fstype = "", "unknown"
    for part in psutil.disk_partitions(all=True):  # later mounts shadow earlier ones at the same point
        mount = part.mountpoint
        inside = mount == "/" or real == mount or real.startswith(mount.rstrip("/") + "/")
        if inside and len(mount) >= len(best):
            best, fstype = mount, part.fstype
    return fstype


def _largest_file(section: dict[str, Any]) -> float:
    return max(section["random_mb"] * 1e6, 2.0 * section["events"] * EVENT_BYTES_ESTIMATE) * 1.2


def check_config(section: dict[str, Any], available_memory: int, problems: list[str]) -> None:
    """Fit this section to the machine (see throughput.config.validate): threads to
    the usable cores; the tmpfs directory must be a writable tmpfs with room for one
    output; a given disk directory must be writable (or makeable) with room for one;
    memory must hold the events, an in-memory output and every thread's buffers."""
    from ..config import directory_problem

    cores = usable_cores()
    if section["max_threads"] is not None and section["max_threads"] > cores:
        section["max_threads"] = cores  # null stays null (every core; resolve_threads)
    threads = section["max_threads"] or cores
    used = set(section["media"]) | set(section["event_media"])
    largest = _largest_file(section)
    if "tmpfs" in used:
        tmpfs = Path(section["tmpfs_dir"])
        problem = directory_problem("writing.tmpfs_dir", tmpfs)
        if problem:
            problems.append(problem)
        elif filesystem_type(tmpfs) != "tmpfs":
            problems.append(f"config key 'writing.tmpfs_dir' = {section['tmpfs_dir']!r}: is on "
                            f"{filesystem_type(tmpfs)}, not on a tmpfs")
        elif shutil.disk_usage(tmpfs).free < largest:
            problems.append(f"config key 'writing.tmpfs_dir' = {section['tmpfs_dir']!r}: "
                            f"{shutil.disk_usage(tmpfs).free / 1e6:.0f} MB free, one output needs about "
                            f"{largest / 1e6:.0f} MB (lower writing.random_mb or writing.events)")
    if section["disk_dir"] is not None and used & {"disk", "slow"}:
        disk = Path(section["disk_dir"])
        # medium_dirs makes it when missing, so its parent must take it
        problem = directory_problem("writing.disk_dir", disk, create=True)
        free = None if problem else shutil.disk_usage(disk if disk.is_dir() else disk.parent).free
        if problem:
            problems.append(problem)
        elif free < largest:
            problems.append(f"config key 'writing.disk_dir' = {section['disk_dir']!r}: "
                            f"{free / 1e6:.0f} MB free, one output needs about {largest / 1e6:.0f} MB")
    events_bytes = section["events"] * EVENT_BYTES_ESTIMATE
    # The events in memory, and as much again in RNTuple's page buffers (its default
    # clusters, 128 MiB per fill context, can hold them all); one in-memory output;
    # every thread's basket buffers and flushed data.
    need = (PROCESS_BYTES + 2 * events_bytes + largest
            + threads * (THREAD_BYTES + 3 * section["flush_mb"] * 1e6))
    budget = MEMORY_SHARE * available_memory
    if need > budget:
        problems.append(f"config key 'writing.events' = {section['events']} / 'writing.random_mb' = "
                        f"{section['random_mb']}: a writing run needs about {need / 1e9:.1f} GB of memory "
                        f"(events in memory, an in-memory output, {threads} threads' buffers), "
                        f"only {budget / 1e9:.1f} GB may be used ({MEMORY_SHARE:.0%} of {available_memory / 1e9:.1f} "
                        f"GB available)")


def resolve_threads(params: dict[str, Any]) -> dict[str, Any]:
    """`params` with max_threads null replaced by the usable cores."""
    return {**params, "max_threads": params["max_threads"] or usable_cores()}


# ---- what is measured ----------------------------------------------------------------------

def level(params: dict[str, Any], compression: str) -> int:
    return 0 if compression == "none" else params["levels"][compression]


def plan(params: dict[str, Any]) -> list[dict[str, Any]]:
    """Every run of the experiment, in the order they are measured."""
    counts = thread_counts(params["max_threads"])
    runs = [{"part": "random", "method": method, "medium": medium, "compression": compression,
             "level": level(params, compression), "threads": t}
            for medium in params["media"] for compression in params["random_compressions"]
            for method in params["random_methods"] for t in counts]
    compression = params["event_compression"]
    runs += [{"part": "events", "method": method, "medium": medium, "compression": compression,
              "level": level(params, compression), "threads": t}
             for medium in params["event_media"] for method in params["event_methods"] for t in counts]
    return runs


def run_name(run: dict[str, Any]) -> str:
    return f"{run['part']}_{run['method']}_{run['medium']}_{run['compression']}_t{run['threads']}"


def medium_dirs(params: dict[str, Any], results_dir: str | os.PathLike) -> dict[str, str]:
    """Where each medium writes: disk_dir (or results_dir/scratch) for disk and slow, tmpfs_dir for tmpfs."""
    disk = Path(params["disk_dir"]) if params["disk_dir"] else Path(results_dir) / "scratch"
    disk.mkdir(parents=True, exist_ok=True)
    return {"disk": str(disk.resolve()), "slow": str(disk.resolve()), "tmpfs": params["tmpfs_dir"], "memory": ""}


def kernel_args(run: dict[str, Any], params: dict[str, Any], dirs: dict[str, str],
                inputs: list[str]) -> dict[str, Any]:
    args = {"workload": run["part"], "method": run["method"], "threads": run["threads"],
            "compression": run["compression"], "level": max(1, run["level"]),
            "flush-mb": params["flush_mb"] if run["part"] == "random" else 0,  # events: each format's default
            "medium": run["medium"], "dir": dirs[run["medium"]], "slow-mb-s": params["slow_mb_s"],
            "fsync": int(params["fsync"]), "reps": params["repetitions"], "warmup": params["warmup"]}
    if run["part"] == "random":
        args.update({"mb": params["random_mb"], "random-branches": params["random_branches"], "seed": 1})
    else:
        if not inputs:
            raise ValueError("the events benchmark needs NanoAOD-like input files (parameter input_files)")
        args.update({"inputs": ",".join(str(p) for p in inputs), "events": params["events"],
                     "branches": ",".join(params["event_branches"])})
    return args


# Keys that only one of the two benchmarks uses: a change to one does not re-measure the other.
RANDOM_ONLY = ("media", "random_mb", "random_branches", "random_compressions", "random_methods", "flush_mb")
EVENTS_ONLY = ("event_media", "events", "event_branches", "event_compression", "event_methods")


def relevant(params: dict[str, Any], part: str) -> dict[str, Any]:
    """The parameters a run of `part` depends on (its identity for reuse)."""
    other = EVENTS_ONLY if part == "random" else RANDOM_ONLY
    return {k: v for k, v in params.items() if k not in other}


def _sha256(path: str | os.PathLike) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _measure(run: dict[str, Any], params: dict[str, Any], dirs: dict[str, str],
             inputs: list[str]) -> tuple[pd.DataFrame, dict[str, Any]]:
    load = os.getloadavg()[0]  # other work on the machine skews the timings: kept beside them
    result = harness.run_kernel(KERNEL, kernel_args(run, params, dirs, inputs))
    frame = result.timings.rename(columns={"workload": "part"}).assign(load_1min_before=load)
    v = result.validation
    # checksum, column_checksums, read_entries: per pass, read back from its output (the kernel's records)
    frame = frame.assign(source_checksum=v["source_checksum"], baseline_rss_bytes=v["baseline_rss_bytes"],
                         columns=v["columns"], loaded_events=v["loaded_events"], lz4_version=v["lz4_version"])
    return frame, provenance.capture(params, cache_state="n/a (written outputs; each is removed after its read-back)",
                                     build_info=result.build_info)


def measure(params: dict[str, Any], raw_dir: str | os.PathLike, dirs: dict[str, str],
            inputs: list[str] | None = None, progress: bool = True) -> pd.DataFrame:
    """Run (or reuse, when already stored with the same parameters, binary and
    inputs) every run of `plan`; return all passes with rates."""
    raw_dir = Path(raw_dir)
    inputs = [str(Path(p).resolve()) for p in (inputs or [])]
    binary = _sha256(harness.kernel_path(KERNEL))
    fingerprints = {Path(p).name: _sha256(p) for p in inputs}
    frames = []
    for run in tqdm(plan(params), desc="writing", unit="run", disable=not progress):
        key = {**relevant(params, run["part"]), **run, "binary_sha256": binary, "dir": dirs[run["medium"]],
               "inputs": fingerprints if run["part"] == "events" else None}
        frames.append(measure_once(raw_dir / f"{run_name(run)}.parquet", key,
                                   lambda run=run: _measure(run, params, dirs, inputs)))
    return with_rates(pd.concat(frames, ignore_index=True))


def with_rates(frame: pd.DataFrame) -> pd.DataFrame:
    """Add MB/s (uncompressed), written MB/s (file bytes), entries/s and memory above the baseline."""
    frame = frame.copy()
    frame["mb_s"] = frame["raw_bytes"] / frame["wall_s"] / 1e6
    frame["written_mb_s"] = frame["file_bytes"] / frame["wall_s"] / 1e6
    frame["entries_s"] = frame["entries"] / frame["wall_s"]
    frame["rss_over_baseline_mb"] = (frame["peak_rss_bytes"] - frame["baseline_rss_bytes"]) / 1e6
    return frame


MASK64 = (1 << 64) - 1


def _mix64(z: int) -> int:
    """splitmix64's finaliser, as kernels/writing/schema.hpp's mix64."""
    z = (z + 0x9E3779B97F4A7C15) & MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


def digest(column_checksums: str, entries: int) -> str:
    """The kernel's one-value digest (schema.hpp's Checksums::digest) of comma-separated
    16-hex-digit column checksums over `entries` entries."""
    d = _mix64(int(entries))
    for column in column_checksums.split(","):
        d = _mix64(d ^ int(column, 16))
    return f"{d:016x}"


def check_agreement(frame: pd.DataFrame) -> None:
    """Every pass of every writer, medium, compression and thread count of one workload
    read back from its own output the same column checksums, whose digest (recomputed
    here, with the entries read back) is the digest of the source's entries."""
    keys = ["method", "medium", "compression", "threads", "rep"]
    for part, group in frame.groupby("part"):
        sources = sorted(group["source_checksum"].unique())
        if len(sources) != 1:
            raise AssertionError(f"the {part} workload's writers were given different entries: "
                                 f"source checksums {sources}")
        source = sources[0]
        columns = group["column_checksums"].value_counts().index[0]  # the most common read-back
        recomputed = [digest(c, e) for c, e in zip(group["column_checksums"], group["read_entries"])]
        bad = group[(group["checksum"] != source) | (pd.Series(recomputed, index=group.index) != source)
                    | (group["column_checksums"] != columns)]
        if len(bad):
            reference = columns.split(",")
            lines = []
            for (_, row), again in zip(bad.iterrows(), [digest(c, e) for c, e in
                                                        zip(bad["column_checksums"], bad["read_entries"])]):
                got = row["column_checksums"].split(",")
                first = next((i for i, (a, b) in enumerate(zip(got, reference)) if a != b),
                             min(len(got), len(reference)) if len(got) != len(reference) else None)
                lines.append(f"  {', '.join(f'{k}={row[k]}' for k in keys)}: read back {row['checksum']} "
                             f"(recomputed from its columns: {again}), {row['read_entries']} entries"
                             + (f", first differing column #{first}" if first is not None else ""))
            raise AssertionError(f"writers disagree on the {part} workload: {len(bad)} of {len(group)} passes "
                                 f"read back other than the source's checksum {source}:\n" + "\n".join(lines))


# ---- summaries -----------------------------------------------------------------------------

GROUP = ["part", "method", "medium", "compression"]


def summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Median (min, max) per run, warm-up excluded; speed-up against the same run at 1 thread."""
    measured = frame[~frame["warmup"]]
    table = (measured.groupby(GROUP + ["threads"], sort=False)
             .agg(wall_s=("wall_s", "median"), wall_min=("wall_s", "min"), wall_max=("wall_s", "max"),
                  cpu_s=("cpu_s", "median"), mb_s=("mb_s", "median"), written_mb_s=("written_mb_s", "median"),
                  entries_s=("entries_s", "median"), file_bytes=("file_bytes", "median"),
                  peak_rss_mb=("peak_rss_bytes", lambda s: s.max() / 1e6),
                  rss_over_baseline_mb=("rss_over_baseline_mb", "max"),
                  entries=("entries", "first"), raw_bytes=("raw_bytes", "first"), passes=("wall_s", "count"))
             .reset_index())
    single = table[table["threads"] == 1].set_index(GROUP)["wall_s"]
    keys = pd.MultiIndex.from_frame(table[GROUP])
    table["speedup"] = single.reindex(keys).to_numpy() / table["wall_s"]
    table["efficiency"] = table["speedup"] / table["threads"]
    table["cores_busy"] = table["cpu_s"] / table["wall_s"]
    return table


def _at(table: pd.DataFrame, **where: Any) -> pd.DataFrame:
    rows = table
    for key, value in where.items():
        rows = rows[rows[key] == value]
    return rows


def one(table: pd.DataFrame, **where: Any) -> pd.Series | None:
    """The single row matching `where`, or None if that run was not measured."""
    rows = _at(table, **where)
    if len(rows) > 1:
        raise KeyError(f"{len(rows)} rows match {where}")
    return rows.iloc[0] if len(rows) else None


def versus(table: pd.DataFrame, part: str, reference: str) -> pd.DataFrame:
    """Each method of `part` against `reference` on the same medium, compression and threads:
    how many times faster (reference time / method time) and how many times larger its file."""
    rows = table[table["part"] == part].copy()
    ref = rows[rows["method"] == reference].set_index(["medium", "compression", "threads"])
    keys = pd.MultiIndex.from_frame(rows[["medium", "compression", "threads"]])
    rows["faster"] = ref["wall_s"].reindex(keys).to_numpy() / rows["wall_s"].to_numpy()
    rows["size_ratio"] = rows["file_bytes"].to_numpy() / ref["file_bytes"].reindex(keys).to_numpy()
    return rows


def target_medium(params: dict[str, Any]) -> str:
    """The medium the seed-001 comparison is shown for: tmpfs (the target's), else the first one measured."""
    return "tmpfs" if "tmpfs" in params["event_media"] else params["event_media"][0]


def seed001_rows(table: pd.DataFrame, params: dict[str, Any]) -> pd.DataFrame:
    """The seed's three formats and our methods: times faster than ROOT at 1 and at the most threads, size ratio."""
    medium, top = target_medium(params), params["max_threads"]
    rows = [{"who": f"seed, {r.format}", "faster_1": r.faster_1, "faster_n": r.faster_32, "threads_n": SEED001_THREADS,
             "size_ratio": r.size_ratio} for r in SEED001.itertuples()]
    if "root_imt" in params["event_methods"]:
        ours = versus(table, "events", "root_imt")
        for method in [m for m in params["event_methods"] if m != "root_imt"]:
            first, last = (one(ours, method=method, medium=medium, threads=t) for t in (1, top))
            rows.append({"who": f"this run, {LABELS[method]}", "faster_1": first["faster"], "faster_n": last["faster"],
                         "threads_n": top, "size_ratio": first["size_ratio"]})
    return pd.DataFrame(rows)


def efficiency_target(table: pd.DataFrame, params: dict[str, Any]) -> dict[str, Any]:
    """The simple format's parallel efficiency at 2 threads on tmpfs with LZ4 (target: at least 85%)."""
    reason = None
    if "simple" not in params["event_methods"]:
        reason = "the simple format is not among writing.event_methods"
    elif "tmpfs" not in params["event_media"]:
        reason = "tmpfs is not among writing.event_media"
    elif params["event_compression"] != "LZ4":
        reason = "writing.event_compression is not LZ4"
    elif params["max_threads"] < 2:
        reason = f"only {params['max_threads']} thread could be used"
    if reason:
        return {"measured": False, "reason": reason, "efficiency": float("nan"), "met": False}
    row = one(table, part="events", method="simple", medium="tmpfs", threads=2)
    return {"measured": True, "reason": "", "efficiency": float(row["efficiency"]),
            "met": bool(row["efficiency"] >= EFFICIENCY_TARGET)}


def seed003_claims(table: pd.DataFrame, params: dict[str, Any]) -> pd.DataFrame:
    """Seed 003's conclusions, each with what this run measured and whether it still holds."""
    top = params["max_threads"]
    random = table[(table["part"] == "random") & (table["method"] == "tbuffermerger")]
    fast_medium = next((m for m in ("tmpfs", "memory", "disk") if m in params["media"]), params["media"][0])
    rows = []

    def row(claim: str, evidence: str, verdict: str) -> None:
        rows.append({"claim": claim, "this_run": evidence, "verdict": verdict})

    # 1. Scaling is good when the work is CPU-bound (LZMA), not when it is I/O-bound.
    speedups = {c: one(random, medium=fast_medium, compression=c, threads=top) for c in params["random_compressions"]}
    speedups = {c: r["speedup"] for c, r in speedups.items() if r is not None}
    claim = "scales well when not I/O bound, as with LZMA"
    if top < 2 or "LZMA" not in speedups or len(speedups) < 2:
        row(claim, "not measured here", "n/a")
    else:
        best = max(speedups, key=speedups.get)
        evidence = ", ".join(f"{c} {v:.2f}x" for c, v in speedups.items()) + f" at {top} threads ({fast_medium})"
        row(claim, evidence, "holds" if best == "LZMA" else f"does not hold: {best} scales best")
    # 2. LZMA costs far more time than ZLIB and LZ4.
    claim = "ZLIB and LZ4 take much less time than LZMA"
    times = {c: one(random, medium=fast_medium, compression=c, threads=1) for c in ("LZMA", "ZLIB", "LZ4")}
    if any(r is None for r in times.values()):
        row(claim, "not measured here", "n/a")
    else:
        a, b = times["LZMA"]["wall_s"] / times["ZLIB"]["wall_s"], times["LZMA"]["wall_s"] / times["LZ4"]["wall_s"]
        row(claim, f"LZMA takes {a:.1f}x ZLIB's and {b:.1f}x LZ4's time (1 thread, {fast_medium})",
            "holds" if min(a, b) >= 2 else "does not hold")
    # 3. A slow medium saturates with a few threads when not CPU-bound.
    claim = "saturates any medium with a few threads when not CPU bound"
    slow = one(random, medium="slow", compression="none", threads=top) if "none" in params["random_compressions"] else None
    if slow is None:
        row(claim, "not measured here (needs the slow medium and no compression)", "n/a")
    else:
        share = slow["written_mb_s"] / params["slow_mb_s"]
        row(claim, f"{slow['written_mb_s']:.0f} of {params['slow_mb_s']:.0f} MB/s on the slow medium at {top} threads",
            "holds" if share >= 0.8 else f"does not hold ({share:.0%} of the medium's rate)")
    # 4. Back-pressure: memory grows when the medium cannot keep up.
    claim = "no back-pressure: memory grows when the medium cannot keep up"
    compression = "none" if "none" in params["random_compressions"] else params["random_compressions"][0]
    slow_row = one(random, medium="slow", compression=compression, threads=top)
    fast_row = one(random, medium=fast_medium, compression=compression, threads=top)
    if slow_row is None or fast_row is None or fast_medium == "slow":
        row(claim, "not measured here (needs the slow medium and a fast one)", "n/a")
    else:
        a, b = slow_row["rss_over_baseline_mb"], fast_row["rss_over_baseline_mb"]
        grows = a > 1.5 * b + 16
        row(claim, f"peak memory above baseline {a:.0f} MB (slow) vs {b:.0f} MB ({fast_medium}), {compression}, "
                   f"{top} threads", "holds" if grows else "no longer holds: writers block instead")
    return pd.DataFrame(rows)


def disk_note(dirs: dict[str, str], params: dict[str, Any]) -> str:
    """What the disk medium is on this machine (a tmpfs or overlay 'disk' is not a disk)."""
    if not set(params["media"] + params["event_media"]) & {"disk", "slow"}:
        return "the disk medium was not measured"
    kind = filesystem_type(dirs["disk"])
    sync = "each pass ends with fsync" if params["fsync"] else "passes end without fsync (the page cache absorbs the writes)"
    return f"the disk directory is on {kind}; {sync}"


# ---- figures -------------------------------------------------------------------------------

def _panels(n: int, width: float = 6.0, height: float = 5.0, columns: int = 2):
    """n panels, at most `columns` per row; returns the figure and the used axes."""
    import matplotlib.pyplot as plt
    columns = min(n, columns)
    rows = math.ceil(n / columns)
    fig, axes = plt.subplots(rows, columns, figsize=(width * columns, height * rows), squeeze=False,
                             constrained_layout=True)
    axes = axes.ravel()
    for ax in axes[n:]:
        ax.set_visible(False)
    return fig, axes[:n]


def _legend_below(fig, ax, columns: int) -> None:
    """One legend for all panels, under them."""
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=columns, fontsize="small", frameon=False)


def figure_random(table: pd.DataFrame, value: str, ylabel: str, params: dict[str, Any], ideal: bool = False):
    """One panel per medium: `value` against threads, a colour per compression,
    TBufferMerger solid and RNTupleParallelWriter dashed (medians, min-max bars for runtime)."""
    rows = table[table["part"] == "random"]
    fig, axes = _panels(len(params["media"]))
    counts = thread_counts(params["max_threads"])
    colours = dict(zip(COMPRESSIONS, ["C0", "C1", "C2", "C3", "C4"]))
    for ax, medium in zip(axes, params["media"]):
        for (method, compression), group in rows[rows["medium"] == medium].groupby(["method", "compression"], sort=False):
            group = group.sort_values("threads")
            style = "-" if method == "tbuffermerger" else "--"
            label = f"{compression}, {'TBufferMerger' if method == 'tbuffermerger' else 'RNTuple'}"
            if value == "wall_s":
                ax.errorbar(group["threads"], group[value], yerr=[group[value] - group["wall_min"],
                            group["wall_max"] - group[value]], linestyle=style, marker="o",
                            color=colours[compression], label=label)
            else:
                ax.plot(group["threads"], group[value], linestyle=style, marker="o", color=colours[compression],
                        label=label)
        if ideal:
            ax.plot(counts, counts, color="grey", linestyle=":", label="ideal")
        ax.set(title=MEDIUM_LABELS[medium], xlabel="threads", ylabel=ylabel, xticks=counts)
        if value == "wall_s":
            ax.set_yscale("log")  # LZMA takes ten times longer than the rest
        else:
            ax.set_ylim(bottom=0)
    _legend_below(fig, axes[0], columns=min(4, len(params["random_compressions"]) + (1 if ideal else 0)))
    return fig


def figure_memory(table: pd.DataFrame, params: dict[str, Any]):
    """Peak memory above the baseline against threads: one panel per random-workload method,
    a line per medium (the median over compressions, min-max as bars)."""
    rows = table[table["part"] == "random"]
    fig, axes = _panels(len(params["random_methods"]))
    counts = thread_counts(params["max_threads"])
    for ax, method in zip(axes, params["random_methods"]):
        for medium in params["media"]:
            group = (rows[(rows["method"] == method) & (rows["medium"] == medium)].groupby("threads")
                     ["rss_over_baseline_mb"].agg(["median", "min", "max"]).reset_index())
            ax.errorbar(group["threads"], group["median"], yerr=[group["median"] - group["min"],
                        group["max"] - group["median"]], marker="o", label=MEDIUM_LABELS[medium])
        ax.set(title=LABELS[method], xlabel="threads", ylabel="peak memory [MB]", xticks=counts)
        ax.set_ylim(bottom=0)
    _legend_below(fig, axes[0], columns=len(params["media"]))
    return fig


def figure_events(table: pd.DataFrame, params: dict[str, Any]):
    """Output methods: events/s against threads (left, one line style per medium) and
    parallel efficiency (right), a colour per method."""
    rows = table[table["part"] == "events"]
    fig, (left, right) = _panels(2, width=6.5)
    counts = thread_counts(params["max_threads"])
    styles = dict(zip(MEDIA, ["-.", "-", ":", "--"]))
    colours = dict(zip(EVENT_METHODS, ["C0", "C1", "C2"]))
    for (method, medium), group in rows.groupby(["method", "medium"], sort=False):
        group = group.sort_values("threads")
        label = f"{LABELS[method]}, {medium}"
        left.plot(group["threads"], group["entries_s"], linestyle=styles[medium], marker="o",
                  color=colours[method], label=label)
        right.plot(group["threads"], group["efficiency"], linestyle=styles[medium], marker="o",
                   color=colours[method], label=label)
    right.axhline(EFFICIENCY_TARGET, color="grey", linestyle=":", label="target (simple, 2 threads)")
    left.set(xlabel="threads", ylabel="events / s", xticks=counts, yscale="log")
    right.set(xlabel="threads", ylabel="parallel efficiency", xticks=counts, ylim=(0, 1.2))
    _legend_below(fig, right, columns=3)
    return fig


# ---- tables and numbers for the paper ------------------------------------------------------

def _num(value: float, digits: int = 3) -> str:
    from .. import paper
    return paper.number(value, digits) if value is not None and math.isfinite(value) else "n/a"


def random_table(table: pd.DataFrame, params: dict[str, Any]) -> pd.DataFrame:
    """Seed 003 per medium, compression and writer: seconds at 1 and at the most threads
    (medians), speed-up, uncompressed MB/s and peak memory above baseline at the most
    threads, and the file size."""
    top = params["max_threads"]
    rows = []
    for medium in params["media"]:
        for compression in params["random_compressions"]:
            for method in params["random_methods"]:
                first = one(table, part="random", method=method, medium=medium, compression=compression, threads=1)
                last = one(table, part="random", method=method, medium=medium, compression=compression, threads=top)
                rows.append({"medium": medium, "compression": compression,
                             "writer": SHORT[method],
                             "1 thread [s]": _num(first["wall_s"]), f"{top} threads [s]": _num(last["wall_s"]),
                             "speed-up": _num(last["speedup"], 2), "MB/s": _num(last["mb_s"]),
                             "file MB": _num(last["file_bytes"] / 1e6), "peak MB": _num(last["rss_over_baseline_mb"])})
    return pd.DataFrame(rows)


def events_table(table: pd.DataFrame, params: dict[str, Any]) -> pd.DataFrame:
    """Seed 001 per medium, method and thread count: events/s, MB/s, speed-up, parallel
    efficiency, file size and its ratio to ROOT's, peak memory above baseline."""
    ours = versus(table, "events", "root_imt") if "root_imt" in params["event_methods"] else table.assign(size_ratio=math.nan)
    rows = []
    for medium in params["event_media"]:
        for method in params["event_methods"]:
            for t in thread_counts(params["max_threads"]):
                r = one(ours, part="events", method=method, medium=medium, threads=t)
                rows.append({"medium": medium, "method": SHORT[method], "threads": str(t),
                             "events/s": _num(r["entries_s"]), "MB/s": _num(r["mb_s"]),
                             "speed-up": _num(r["speedup"], 2), "efficiency": _num(r["efficiency"], 2),
                             "file MB": _num(r["file_bytes"] / 1e6), "size ratio": _num(r["size_ratio"], 3),
                             "peak MB": _num(r["rss_over_baseline_mb"])})
    return pd.DataFrame(rows)


def seed001_table(table: pd.DataFrame, params: dict[str, Any]) -> pd.DataFrame:
    rows = seed001_rows(table, params)
    return pd.DataFrame({
        "": rows["who"],
        "faster, 1 thread": [_num(v, 3) for v in rows["faster_1"]],
        "faster, N threads": [_num(v, 3) for v in rows["faster_n"]],
        "N": rows["threads_n"].astype(str),
        "size ratio": [_num(v, 3) for v in rows["size_ratio"]],
    })


def macros(table: pd.DataFrame, params: dict[str, Any], frame: pd.DataFrame, dirs: dict[str, str],
           max_threads_requested: int | None, compiler: str) -> dict[str, str]:
    """Every number the paper's writing section quotes (names: letters only, prefix Wrt)."""
    from .. import paper
    top, medium = params["max_threads"], target_medium(params)
    goal = efficiency_target(table, params)
    values = {
        "WrtRandomMB": _num(params["random_mb"]), "WrtRandomBranches": ("one double branch" if params["random_branches"] == 1
                              else f"{params['random_branches']} double branches"),
        "WrtEvents": _num(params["events"]), "WrtMaxThreads": str(top),
        "WrtMaxThreadsRequested": str(max_threads_requested or top),
        "WrtRepetitions": str(params["repetitions"]), "WrtWarmup": str(params["warmup"]),
        "WrtSlowMBs": _num(params["slow_mb_s"]), "WrtFlushMB": _num(params["flush_mb"]),
        "WrtDiskNote": paper.escape(disk_note(dirs, params)), "WrtCompiler": paper.escape(compiler),
        "WrtTargetMedium": medium, "WrtEffTarget": _num(EFFICIENCY_TARGET * 100, 2),
        "WrtRssMethod": paper.escape(frame["rss_method"].iloc[0]),
        "WrtLZFourVersion": paper.escape(frame["lz4_version"].iloc[0]),
    }
    load = frame.groupby(["part", "method", "medium", "compression", "threads"])["load_1min_before"].first()
    values["WrtLoadMedian"] = _num(load.median(), 2)
    values["WrtLoadMax"] = _num(load.max(), 2)
    events = frame[frame["part"] == "events"]
    values["WrtColumns"] = str(int(events["columns"].iloc[0])) if len(events) else "n/a"
    values["WrtEventBytes"] = _num(events["raw_bytes"].iloc[0] / events["entries"].iloc[0]) if len(events) else "n/a"
    ours = versus(table, "events", "root_imt") if "root_imt" in params["event_methods"] else None
    for method, name in (("simple", "Simple"), ("rntuple", "Rntuple")):
        rows = {t: (one(ours, method=method, medium=medium, threads=t) if ours is not None else None) for t in (1, top)}
        values[f"Wrt{name}FasterOne"] = _num(rows[1]["faster"]) if rows[1] is not None else "n/a"
        values[f"Wrt{name}FasterN"] = _num(rows[top]["faster"]) if rows[top] is not None else "n/a"
        values[f"Wrt{name}SizeRatio"] = _num(rows[1]["size_ratio"]) if rows[1] is not None else "n/a"
    for method, name in (("root_imt", "Imt"), ("simple", "Simple"), ("rntuple", "Rntuple")):
        row = one(table, part="events", method=method, medium=medium, threads=top)
        values[f"Wrt{name}Speedup"] = _num(row["speedup"], 2) if row is not None else "n/a"
        values[f"Wrt{name}EventsPerSecond"] = _num(row["entries_s"]) if row is not None else "n/a"
    values["WrtSimpleEffTwo"] = _num(goal["efficiency"] * 100, 3) if goal["measured"] else "n/a"
    values["WrtTargetResult"] = (rf"at {values['WrtSimpleEffTwo']}\% it {'meets' if goal['met'] else 'misses'} it"
                                 if goal["measured"] else paper.escape(f"it was not measured here ({goal['reason']})"))
    random = table[(table["part"] == "random") & (table["threads"] == top)]
    tbm = random[random["method"] == "tbuffermerger"].set_index(["medium", "compression"])["wall_s"]
    ntuple = random[random["method"] == "rntuple"].set_index(["medium", "compression"])["wall_s"]
    ratio = (tbm / ntuple).dropna()
    values["WrtRntupleVsTbmMedian"] = _num(ratio.median()) if len(ratio) else "n/a"
    values["WrtRntupleVsTbmMin"] = _num(ratio.min()) if len(ratio) else "n/a"
    values["WrtRntupleVsTbmMax"] = _num(ratio.max()) if len(ratio) else "n/a"
    peaks = random.groupby("method")["rss_over_baseline_mb"].max()
    values["WrtTbmPeakMB"] = _num(peaks.get("tbuffermerger", math.nan))
    values["WrtRntuplePeakMB"] = _num(peaks.get("rntuple", math.nan))
    claims = seed003_claims(table, params)
    values["WrtBackPressureVerdict"] = paper.escape(claims["verdict"].iloc[3]) if len(claims) > 3 else "n/a"
    return values
