"""Writing, measuring: every run planned,
the media directories, the write_bench kernel run (or a stored run reused), and the
check that all writers read back the same entries.

The runs that ratios compare (every writer, thread count, compression and
medium of one workload: seed 001 and 003 compare writers, speed-ups compare
thread counts, seed 003 compressions and media) form one group, measured
interleaved through the generic loop (throughput.core.experiment): one pass of
each run in turn, each pass a kernel process of its own with its own warm-up.
Writers cannot share one process: ROOT's implicit multi-threading, once enabled
for the TTree writer, changes what the others do. ROOT + IMT's one-thread run
on the data products is also written uncompressed (uncompressed_reference), for
seed 001's time in compression only."""
from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from ...core import experiment, harness, noise, provenance
from ...core.results import input_identity, kernel_sha256
from ...setup.config import thread_counts
from .spec import filesystem_type

KERNEL = "write_bench"
READER = "read_simple"
COMPRESSIONS = ("none", "LZ4", "ZLIB", "ZSTD", "LZMA")
MEDIA = ("disk", "tmpfs", "memory", "slow")
EVENT_METHODS = ("root_imt", "simple", "rntuple")
OBJECT_METHODS = ("root_imt", "simple_root", "simple")
LABELS = {"tbuffermerger": "TBufferMerger", "rntuple": "RNTupleParallelWriter", "root_imt": "TTree + IMT",
          "simple": "simple format", "simple_root": "simple format, ROOT-serialized"}
SHORT = {"tbuffermerger": "TBM", "rntuple": "RNTuple", "root_imt": "TTree + IMT", "simple": "simple",
         "simple_root": "simple (ROOT ser.)"}
# The workloads (the kernel's --workload): seed 003's random doubles, seed 001's comparison on
# NanoAOD-like events, and on AOD-like data products (std::vector<aod::Type>, kernels/writing/aod_products.hpp).
PART_LABELS = {"random": "random doubles", "events": "NanoAOD-like", "objects": "MiniAOD-like products"}
MEDIUM_LABELS = {"disk": "disk", "tmpfs": "tmpfs", "memory": "memory", "slow": "slow (throttled disk)"}


# ---- what is measured ----------------------------------------------------------------------

def level(params: dict[str, Any], compression: str) -> int:
    return 0 if compression == "none" else params["levels"][compression]


# The writers whose one-thread runs writing.setup_parts repeats at twice the entries (`scale` 2),
# in the same rounds: a fixed cost per pass (creating the file, the tree and its branches, the
# last flush, closing) is then 2 T(N) - T(2N) in each round. One thread only, where the fixed
# cost weighs most and the seed's speed-ups start (every thread count took the default run
# minutes over its budget); random doubles uncompressed only, likewise.
SETUP_METHODS = {"random": ("tbuffermerger", "rntuple"), "events": ("root_imt", "simple"),
                 "objects": ("root_imt", "simple_root")}


def _with_setup_runs(runs: list[dict[str, Any]], params: dict[str, Any]) -> list[dict[str, Any]]:
    doubled = []
    for run in runs:
        doubled.append({**run, "scale": 1})
        if (run["part"] in params["setup_parts"] and run["method"] in SETUP_METHODS[run["part"]]
                and run["threads"] == 1 and not uncompressed_reference(run, params)
                and (run["part"] != "random" or run["compression"] == "none")):
            doubled.append({**run, "scale": 2})
    return doubled


def plan(params: dict[str, Any]) -> list[dict[str, Any]]:
    """Every run of the experiment, in the order they are measured; `scale` 2: a set-up run,
    twice the entries of its scale-1 run (SETUP_METHODS)."""
    counts = thread_counts(params["max_threads"])
    runs = [{"part": "random", "method": method, "medium": medium, "compression": compression,
             "level": level(params, compression), "threads": t}
            for medium in params["media"] for compression in params["random_compressions"]
            for method in params["random_methods"] for t in counts]
    compression = params["event_compression"]
    runs += [{"part": "events", "method": method, "medium": medium, "compression": compression,
              "level": level(params, compression), "threads": t}
             for medium in params["event_media"] for method in params["event_methods"] for t in counts]
    runs += [{"part": "objects", "method": method, "medium": medium, "compression": compression,
              "level": level(params, compression), "threads": t}
             for medium in params["event_media"] for method in params["object_methods"] for t in counts
             if params["object_events"]]
    # seed 001's "time in compression" and "serialization still sequential" on the data products:
    # ROOT + IMT's runs at one thread and at the most also uncompressed, in the same rounds
    # (analysis.compression_share, analysis.uncompressed_speedup; left out of every other figure)
    if params["object_events"] and "root_imt" in params["object_methods"] and compression != "none":
        runs += [{"part": "objects", "method": "root_imt", "medium": target_medium(params), "compression": "none",
                  "level": 0, "threads": t} for t in sorted({1, counts[-1]})]
    return _with_setup_runs(runs, params)


def target_medium(params: dict[str, Any]) -> str:
    """The medium the seed-001 comparison is shown for: tmpfs (the target's), else the first one measured."""
    return "tmpfs" if "tmpfs" in params["event_media"] else params["event_media"][0]


def uncompressed_reference(run: Mapping[str, Any], params: dict[str, Any]) -> bool:
    """Whether `run` (a planned run, or a row of its passes) is one of the uncompressed ROOT + IMT
    runs that only seed 001's compression share and uncompressed speed-up use (plan): a seed-001
    workload written otherwise than writing.event_compression."""
    return run["part"] != "random" and run["compression"] != params["event_compression"]


def run_name(run: dict[str, Any]) -> str:
    scale = "" if run.get("scale", 1) == 1 else f"_x{run['scale']}"
    return f"{run['part']}_{run['method']}_{run['medium']}_{run['compression']}_t{run['threads']}{scale}"


def medium_dirs(params: dict[str, Any], results_dir: str | os.PathLike) -> dict[str, str]:
    """Where each medium writes: disk_dir (or results_dir/scratch) for disk and slow, tmpfs_dir for tmpfs."""
    disk = Path(params["disk_dir"]) if params["disk_dir"] else Path(results_dir) / "scratch"
    disk.mkdir(parents=True, exist_ok=True)
    return {"disk": str(disk.resolve()), "slow": str(disk.resolve()), "tmpfs": params["tmpfs_dir"], "memory": ""}


def disk_fit(dirs: dict[str, str], params: dict[str, Any]) -> dict[str, str]:
    """What the disk medium is on this machine (a tmpfs or overlay 'disk' is not a disk): `state`
    notmeasured (neither disk nor slow among the media), fsync (each pass ends with fsync) or
    nofsync (the page cache absorbs the writes), and the `filesystem` of the disk directory
    (n/a where not measured). The paper words each state (paper/sections/writing.tex)."""
    if not set(params["media"] + params["event_media"]) & {"disk", "slow"}:
        return {"state": "notmeasured", "filesystem": "n/a"}
    return {"state": "fsync" if params["fsync"] else "nofsync", "filesystem": filesystem_type(dirs["disk"])}


def kernel_args(run: dict[str, Any], params: dict[str, Any], dirs: dict[str, str],
                inputs: list[str], aod_inputs: list[str] = ()) -> dict[str, Any]:
    args = {"workload": run["part"], "method": run["method"], "threads": run["threads"],
            "compression": run["compression"], "level": max(1, run["level"]),
            "flush-mb": params["flush_mb"] if run["part"] == "random" else 0,  # events: each format's default
            "medium": run["medium"], "dir": dirs[run["medium"]], "slow-mb-s": params["slow_mb_s"],
            "fsync": int(params["fsync"]), "reps": params["repetitions"], "warmup": params["warmup"]}
    scale = run.get("scale", 1)
    if run["part"] == "random":
        args.update({"mb": params["random_mb"] * scale, "random-branches": params["random_branches"], "seed": 1})
    elif run["part"] == "objects":
        if not aod_inputs:
            raise ValueError("the data-products benchmark (writing.object_events > 0) needs the flat AOD-like file "
                             "(parameter aod_files)")
        args.update({"inputs": ",".join(str(p) for p in aod_inputs), "events": params["object_events"] * scale,
                     "branches": "*"})
    else:
        if not inputs:
            raise ValueError("the events benchmark needs NanoAOD-like input files (parameter input_files)")
        args.update({"inputs": ",".join(str(p) for p in inputs), "events": params["events"] * scale,
                     "branches": ",".join(params["event_branches"])})
    return args


# Keys that only one workload uses: a change to one does not re-measure the others.
ONLY = {"random": ("media", "random_mb", "random_branches", "random_compressions", "random_methods", "flush_mb"),
        "events": ("events", "event_branches", "event_methods"),
        "objects": ("object_events", "object_methods")}
SEED001_KEYS = ("event_media", "event_compression")  # the two seed-001 workloads share these


def relevant(params: dict[str, Any], part: str) -> dict[str, Any]:
    """The parameters a run of `part` depends on (its identity for reuse)."""
    other = {key for p, keys in ONLY.items() if p != part for key in keys}
    if part == "random":
        other |= set(SEED001_KEYS)
    return {k: v for k, v in params.items() if k not in other}


def _measure_pass(run: dict[str, Any], params: dict[str, Any], dirs: dict[str, str], inputs: list[str],
                  aod_inputs: list[str], settings: noise.Settings) -> tuple[pd.DataFrame, dict[str, Any]]:
    """One round of `run` in a kernel process of its own: after its warm-up passes,
    settings.samples_per_process samples, each writing as many times as reach
    settings.min_sample_s of writing (its row's `loops`; wall_s and cpu_s their sum), a sample
    written again while its writers waited too long for a CPU (settings.sample_retakes: its
    row's `run_delay_s`, `sample_retakes`)."""
    result = harness.run_kernel(KERNEL, {**kernel_args(run, params, dirs, inputs, aod_inputs),
                                         "reps": settings.samples_per_process, "min-sample-s": settings.min_sample_s,
                                         **settings.sample_retakes.kernel_args()})
    frame = result.timings.rename(columns={"workload": "part"}).assign(scale=run.get("scale", 1))
    v = result.validation
    # checksum, column_checksums, read_entries: per sample that read its output back (the process's
    # first and last pass: the kernel's records; "" and -1 on the others)
    frame = frame.assign(source_checksum=v["source_checksum"], baseline_rss_bytes=v["baseline_rss_bytes"],
                         columns=v["columns"], loaded_events=v["loaded_events"], lz4_version=v["lz4_version"])
    return frame, provenance.capture(params, cache_state="n/a (written outputs; each is removed after its pass, the first and last read back)",
                                     build_info=result.build_info)


def groups(params: dict[str, Any]) -> list[experiment.Group]:
    """The runs of `plan` that ratios compare: every writer, thread count, compression and medium
    of one workload (so that one compression's time over another's, and one medium's over another's,
    pair by round, as seed 003's LZMA against ZLIB and LZ4 and its media: analysis.compression_costs,
    analysis.media_ratio)."""
    grouped: dict[str, list[dict[str, Any]]] = {}
    for run in plan(params):
        grouped.setdefault(run["part"], []).append({**run, "name": run_name(run)})
    return [experiment.Group(part, runs) for part, runs in grouped.items()]


def measure_runs(params: dict[str, Any], raw_dir: str | os.PathLike, dirs: dict[str, str],
                 inputs: list[str] | None = None, noise_settings: noise.Settings | None = None,
                 progress: bool = True, aod_inputs: list[str] | None = None) -> pd.DataFrame:
    """Run (or reuse, when already stored with the same parameters, binary and
    inputs on this machine) every run of `plan`, interleaved within each group of
    `groups`; return all passes with rates. `inputs`: the NanoAOD-like files;
    `aod_inputs`: the flat AOD-like file(s) the data products are built from."""
    inputs = [str(Path(p).resolve()) for p in (inputs or [])]
    aod_inputs = [str(Path(p).resolve()) for p in (aod_inputs or [])]
    binary = kernel_sha256(harness.kernel_path(KERNEL))
    fingerprints = {"random": None, "events": input_identity(inputs), "objects": input_identity(aod_inputs)}

    def key_of(run: dict[str, Any]) -> dict[str, Any]:
        return {**relevant(params, run["part"]), **run, "binary_sha256": binary, "dir": dirs[run["medium"]],
                "inputs": fingerprints[run["part"]]}

    settings = noise_settings or noise.Settings()
    frame = experiment.measure_interleaved(
        groups(params), raw_dir, key_of,
        lambda run, _round: _measure_pass(run, params, dirs, inputs, aod_inputs, settings),
        params["repetitions"], settings, desc="writing", progress=progress)
    return with_rates(frame)


def with_rates(frame: pd.DataFrame) -> pd.DataFrame:
    """Add the write time and CPU time of one pass (`pass_s`, `pass_cpu_s`: a sample's over its
    `loops`), MB/s (uncompressed), written MB/s (file bytes), entries/s and memory above the
    baseline."""
    frame = frame.copy()
    frame["pass_s"] = experiment.time_per_pass(frame)
    frame["pass_cpu_s"] = frame["cpu_s"] * frame["pass_s"] / frame["wall_s"]  # over the same passes
    frame["mb_s"] = frame["raw_bytes"] / frame["pass_s"] / 1e6
    frame["written_mb_s"] = frame["file_bytes"] / frame["pass_s"] / 1e6
    frame["entries_s"] = frame["entries"] / frame["pass_s"]
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
    """Every pass read back (each process's first and last: the kernel's rows with column
    checksums) of every writer, medium, compression and thread count of one workload (and scale)
    read back from its own output the same column checksums, whose digest (recomputed here, with
    the entries read back) is the digest of the source's entries."""
    keys = ["method", "medium", "compression", "threads", "rep"]
    read = frame["column_checksums"].fillna("") != ""
    processes = [key for key in ("run", "round") if key in frame]
    if processes:  # stored runs: every process (round) read at least one output back
        unread = read.groupby([frame[key] for key in processes]).any()
        if not unread.all():
            raise AssertionError(f"these rounds read no output back: {list(unread[~unread].index)}")
    frame = frame[read]
    # a set-up run (scale 2) writes other entries than its workload's others: checked among its own
    scales = frame["scale"].fillna(1) if "scale" in frame else pd.Series(1, index=frame.index)
    for (part, scale), group in frame.groupby(["part", scales]):
        part = part if scale == 1 else f"{part} (x{scale:g})"
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
