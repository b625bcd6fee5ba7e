"""The I/O rate model (seed 004): Np reader processes (rdf_rate_reader), started together, read
disjoint entry ranges of the same files; the raw read (R_IO) and one reader's phases (R_dec,
R_proc) are runs of their own; R(Np) is fitted with R = R1*Np / (1 + R1/R_IO*(Np-1)) and R1 also
predicted from the separate rates. All of them are measured interleaved, round by round, as one
group. Every rate is in MB/s of file bytes (compressed, as stored)."""
from __future__ import annotations

import contextlib
import json
import math
import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd

from ...core import experiment, harness, intervals, io_throttle, noise, provenance
from ...report import ledger, noise_sentences
from ...setup.config import usable_cores
from ...core.results import input_identity, kernel_sha256
from .analysis import _lstsq_nonnegative
from .spec import counts
from .measuring import KERNELS, _list_file, kernel_args, set_cache


def split_ranges(entries: dict[str, int], files: list[str], processes: int) -> list[list[tuple[int, int, str]]]:
    """Disjoint, contiguous entry ranges of the files (in order) for each of `processes` readers."""
    total = sum(entries[f] for f in files)
    bounds = [round(total * p / processes) for p in range(processes + 1)]
    out: list[list[tuple[int, int, str]]] = []
    for p in range(processes):
        lo, hi, start, segments = bounds[p], bounds[p + 1], 0, []
        for f in files:
            stop = start + entries[f]
            a, b = max(lo, start), min(hi, stop)
            if a < b:
                segments.append((a - start, b - start, f))
            start = stop
        out.append(segments)
    return out


def _ranges_file(segments: list[tuple[int, int, str]], path: Path) -> Path:
    path.write_text("".join(f"{a} {b} {Path(f).resolve()}\n" for a, b, f in segments))
    return path


def run_processes(segments: list[list[tuple[int, int, str]]], cache_bytes: int, primer: str | None = None,
                  timeout_s: float = 3600, preexec: Any = None) -> dict[str, Any]:
    """Start one rdf_rate_reader per segment list, let them all go at once, and return the
    aggregate: wall from the first start to the last end, summed CPU, entries and counters.
    `primer`: a file with the same tree (not one measured) each reader reads one entry of before
    the start, so that what a process does once is not timed (PROOF-Lite's workers live long).
    `preexec`: called in each reader before it starts (io_throttle.ReadThrottle.join)."""
    kernel = str(harness.kernel_path("rdf_rate_reader"))
    with tempfile.TemporaryDirectory(prefix="rdf-rate-") as tmp:
        procs = []
        try:
            for i, segs in enumerate(segments):
                ranges = _ranges_file(segs, Path(tmp) / f"ranges{i}.txt")
                stderr = open(Path(tmp) / f"stderr{i}.txt", "w+")  # noqa: SIM115 (closed below)
                argv = [kernel, "--ranges", str(ranges), "--cache-size", str(cache_bytes), "--barrier", "1"]
                if primer:
                    argv += ["--primer", str(primer)]
                procs.append((subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr,
                                               text=True, env=harness.pinned_env(), preexec_fn=preexec),
                              stderr, argv))
            for proc, stderr, argv in procs:  # wait until every reader is loaded and waiting
                line = proc.stdout.readline()
                if '"ready"' not in line:
                    proc.wait(timeout=60)
                    stderr.seek(0)
                    raise harness.KernelError(f"kernel rdf_rate_reader {' '.join(argv[1:])} exited with "
                                              f"{proc.returncode} before starting: {stderr.read().strip()}")
            for proc, _, _ in procs:
                proc.stdin.write("go\n")
                proc.stdin.flush()
            records = []
            for proc, stderr, argv in procs:
                out, _ = proc.communicate(timeout=timeout_s)
                stderr.seek(0)
                message = stderr.read().strip()
                if proc.returncode != 0:
                    raise harness.KernelError(f"kernel rdf_rate_reader {' '.join(argv[1:])} exited with "
                                              f"{proc.returncode}: {message}")
                lines = [json.loads(x) for x in out.splitlines() if x.strip()]
                validation = [r for r in lines if r["record"] == "validation"]
                if len(validation) != 1 or not validation[0]["ok"]:
                    raise harness.KernelError(f"kernel rdf_rate_reader {' '.join(argv[1:])}: validation failed: "
                                              f"{validation}")
                records.append([r for r in lines if r["record"] == "timing"][0])
        finally:
            for proc, stderr, _ in procs:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
                stderr.close()
    delays = [r["run_delay_s"] for r in records]
    return {"wall_s": max(r["t_end"] for r in records) - min(r["t_start"] for r in records),
            "cpu_s": sum(r["cpu_s"] for r in records), "entries": sum(r["entries"] for r in records),
            # the readers' waits for a CPU, summed and judged over all of them (`threads`): their pass
            # is timed together, from the first start to the last end, so none can be taken again
            # alone (no `sample_retakes`: the method section says so)
            "run_delay_s": sum(delays) if min(delays) >= 0 else -1.0, "threads": len(records),
            "bytes_read": sum(r["bytes_read"] for r in records), "read_calls": sum(r["read_calls"] for r in records),
            "counter_sum": sum(r["counter_sum"] for r in records),
            "slowest_s": max(r["wall_s"] for r in records), "fastest_s": min(r["wall_s"] for r in records)}


def cold_cache_problem(files: list[str], work_dir: Path) -> str | None:
    """Why cold-cache runs cannot be made on this file system (None if eviction works and is checked)."""
    try:
        set_cache(files[:1], "cold", work_dir)
    except harness.KernelError as error:
        return f"the page cache cannot be emptied for {files[0]}: {error}"
    return None


def check_raw_bytes(raw: pd.DataFrame, size_bytes: int) -> None:
    """R_IO is the input files' size over the raw read's time: every pass must have read exactly
    that many bytes (rdf_raw_read checks each file against its size too, and names it)."""
    wrong = raw[raw["bytes"] != size_bytes]
    if len(wrong):
        row = wrong.iloc[0]
        raise AssertionError(f"raw read {row.get('name', '')} pass {row['rep']} ({row['cache']} cache) read "
                             f"{row['bytes']} bytes, the input files' sizes add up to {size_bytes}")


def direct_read_problem(files: list[str]) -> str | None:
    """Why the O_DIRECT rate (past this system's page cache) cannot be read here (None: it can)."""
    try:
        os.close(os.open(files[0], os.O_RDONLY | os.O_DIRECT))
    except OSError as error:
        return f"{files[0]} cannot be opened with O_DIRECT ({error.strerror}: its file system does not support it)"
    return None


# The throttled state (rate_model.throttle_factor): cold files, every reader in a blkio group
# that limits its reads from the device (io_throttle), so that the device saturates on any machine.
THROTTLED = "throttled"
# After an idle time the kernel lets about one throttle slice's worth (a tenth of a second at
# the limit) through at once (io_throttle). A throttled pass must read enough bytes that this
# burst moves its rate by at most this share: the throttled raw read's rate over the limit is
# checked against 1 + BURST_SHARE, by its interval (throttled_check's `burst`).
BURST_SHARE = 0.05


def _evicted_as(cache: str) -> str:
    """The page-cache state a cache state's passes start from (the throttled ones: cold)."""
    return "cold" if cache == THROTTLED else cache


def _joins(cache: str, throttle: io_throttle.ReadThrottle | None):
    """What a process of `cache`'s passes calls before it starts: joining the throttle's group."""
    return throttle.join if cache == THROTTLED else None


def _throttle_columns(cache: str, throttle: io_throttle.ReadThrottle | None) -> dict[str, Any]:
    return {"throttle_bps": throttle.bytes_per_s} if cache == THROTTLED else {}


def _measure_raw(cache, params, files, work, throttle=None, settings=noise.Settings()):
    """One process of rdf_raw_read: its warm-up passes, then one timed sample of as many passes
    as read for settings.min_sample_s (its row's `loops`, each pass's cache state set afresh
    untimed; wall_s their reading), taken again while settings.sample_retakes says it waited too
    long for a CPU."""
    result = harness.run_kernel("rdf_raw_read", {"file-list": _list_file(files, work), "cache": _evicted_as(cache),
                                                 "reps": 1, "warmup": params["warmup"],
                                                 **settings.calibration_kernel_args(),
                                                 **settings.sample_retakes.kernel_args()},
                                preexec=_joins(cache, throttle))
    frame = result.timings.assign(part="raw", name=f"raw_{cache}", cache=cache, checksum=result.validation["checksum"],
                                  **_throttle_columns(cache, throttle))
    check_raw_bytes(frame, sum(Path(f).stat().st_size for f in files))
    return frame, provenance.capture(params, cache_state=cache, build_info=result.build_info)


def _measure_components(round_, params, files, entries, work, primer, retakes=harness.Retakes()):
    """One warm reader of every entry, its phases timed (R_dec, R_proc); warm-up in the first round
    only. Alone, its pass is taken again while `retakes` says it waited too long for a CPU."""
    ranges = _ranges_file(split_ranges(entries, files, 1)[0], work / "components-ranges.txt")
    result = harness.run_kernel("rdf_rate_reader", {
        "ranges": ranges, "cache": "warm", "phase-timing": 1, "cache-size": params["rate_model"]["ttree_cache_bytes"],
        "reps": 1, "warmup": params["warmup"] if round_ == 0 else 0, "primer": primer, **retakes.kernel_args()})
    frame = result.timings.assign(part="components", name="components")
    return frame, provenance.capture(params, cache_state="warm", build_info=result.build_info)


def _measure_rate(run, round_, params, files, entries, work, primer, throttle=None):
    """One timed pass of `run` (a cache state, TTreeCache setting and reader-process count), its
    warm-up passes before it in the first round only. Every pass sets the cache state of every
    file (checked) before the readers start."""
    cache, ttc, processes = run["cache"], run["ttree_cache"], run["processes"]
    cache_bytes = params["rate_model"]["ttree_cache_bytes"] if ttc == "on" else 0
    segments = split_ranges(entries, files, processes)
    warmups = params["warmup"] if round_ == 0 else 0
    rows = []
    for index in range(warmups + 1):
        prepared = set_cache(files, _evicted_as(cache), work)
        result = run_processes(segments, cache_bytes, primer, preexec=_joins(cache, throttle))
        rows.append({**result, "rep": index - warmups, "warmup": index < warmups,
                     "resident_pages": prepared["resident"], "pages": prepared["pages"],
                     **_throttle_columns(cache, throttle)})
    frame = pd.DataFrame(rows).assign(part=run["part"], cache=cache, ttree_cache=ttc, processes=processes,
                                      name=run["name"], **({"compression": run["compression"]} if "compression" in run else {}))
    return frame, provenance.capture(params, cache_state=cache)


def model_runs(states: list[str], raw_caches: list[str], rate: dict[str, Any]) -> list[dict[str, Any]]:
    """Every run of the model, one interleaved group: the raw reads (R_IO: cold, warm and the
    O_DIRECT), one warm reader's phases (R_dec, R_proc) and R(Np) of every cache state x
    TTreeCache setting x process count. R1 predicted from the first two is set beside R(1)
    measured, and the fit compares the process counts: so all are measured round by round."""
    return ([{"name": f"raw_{c}", "part": "raw", "cache": c} for c in raw_caches]
            + [{"name": "components", "part": "components", "cache": "warm"}]
            + [{"name": f"rate_{c}_{t}_np{n}", "part": "rate", "cache": c, "ttree_cache": t, "processes": n}
               for c in states for t in ("on" if on else "off" for on in rate["ttree_cache"])
               for n in counts(rate["max_processes"], rate["process_spacing"])])


# Seed 002's compressions against the storage: the lightest (LZ4: larger files, faster to decompress)
# and the heaviest (LZMA), each read by as many reader processes as the cores from the page cache and
# from the throttled device, in the model's rounds (their time and CPU efficiency: compression_storage)
COMPRESSION_PAIR = ("LZ4", "LZMA")


def compression_runs(states: list[str], compressions: list[str], processes: int) -> list[dict[str, Any]]:
    """The compression pair's runs (none unless both algorithms' files and the throttled state are here)."""
    if not set(COMPRESSION_PAIR) <= set(compressions) or THROTTLED not in states:
        return []
    return [{"name": f"comp_{c}_{cache}", "part": "compression_storage", "compression": c, "cache": cache,
             "ttree_cache": "on", "processes": processes} for c in COMPRESSION_PAIR for cache in ("warm", THROTTLED)]


# Seed 002's "approaching limits of disk array" (an RDataFrame workflow whose CPU load is low
# against the device): one RDataFrame process with ROOT's implicit multithreading on every usable
# core, the section's small analysis (the thread scan's), reading the model's files from the
# throttled device (every event loop from cold) and from the page cache, in the model's rounds.
# Its device rate is set against the throttled raw read of its round (workflow_against_raw_read).
# (Not the lightest workload, one jet column: it takes under a MB a pass from the device in
# scattered pieces, where the requests' latency, not the device's bandwidth, sets the rate.)
WORKFLOW = {"workload": "analysis", "histograms": 0, "method": ""}


def workflow_runs(states: list[str], threads: int) -> list[dict[str, Any]]:
    """The RDataFrame workflow's runs (none unless the throttled state is here)."""
    if THROTTLED not in states:
        return []
    return [{"name": f"workflow_{cache}", "part": "workflow", "cache": cache, "threads": threads, **WORKFLOW}
            for cache in (THROTTLED, "warm")]


def _measure_workflow(run, params, files, pdf_count, work, throttle=None, settings=noise.Settings()):
    """One rdf_bench process of the workflow: its warm-up event loops, then one timed sample, each
    loop from `run`'s cache state set afresh (untimed); what the loops took from the device beside."""
    args = kernel_args(run, params, pdf_count, _list_file(files, work), None, settings)
    result = harness.run_kernel("rdf_bench", {**args, "cache": _evicted_as(run["cache"])},
                                preexec=_joins(run["cache"], throttle))
    v = result.validation
    frame = result.timings.assign(part="workflow", name=run["name"], cache=run["cache"],
                                  read_zip_bytes=v["read_zip_bytes"], content_hash=v["content_hash"],
                                  **_throttle_columns(run["cache"], throttle))
    return frame, provenance.capture(params, cache_state=run["cache"], build_info=result.build_info)


def workflow_rates(workflow: pd.DataFrame | None) -> dict[str, Any] | None:
    """The RDataFrame workflow's rates per round, MB/s: from the throttled device (`device`: the
    bytes its loops took from the device, /proc/self/io, over their time; rounds where the kernel
    could not count them left out) and from the page cache (`from_cache`: the same bytes per loop
    over a warm loop's time, the rate at which the cores would take what the device gave); its
    threads, and what a throttled loop took from the device over what its branches hold
    compressed (`device_over_read`: readahead). None where the workflow was not measured."""
    if workflow is None or not len(workflow):
        return None
    timed = workflow[~workflow["warmup"].astype(bool)]
    throttled, warm = timed[timed["cache"] == THROTTLED], timed[timed["cache"] == "warm"]
    counted = throttled[throttled["device_bytes"] >= 0]
    device_per_loop = counted["device_bytes"] / counted["loops"]
    warm_loop_s = _per_round(warm.assign(loop_s=experiment.time_per_pass(warm)), "loop_s")
    return {"device": _per_round(counted.assign(rate=counted["device_bytes"] / counted["wall_s"] / 1e6), "rate"),
            "from_cache": _per_round(counted.assign(loop_bytes=device_per_loop), "loop_bytes") / warm_loop_s / 1e6,
            "threads": int(timed["threads"].iloc[0]),
            "device_over_read": (float((device_per_loop / counted["read_zip_bytes"]).median())
                                 if len(counted) else math.nan)}


def workflow_against_raw_read(summary: dict[str, Any], rate: str = "device",
                              confidence: float = intervals.CONFIDENCE) -> intervals.Estimate:
    """Seed 002's "RDF reading approaches the limits of the disk array": the workflow's `rate`
    (workflow_rates: "device", from the throttled device; "from_cache", what says whether the cores
    rather than the device held it back, above 1: the cores outrun the device) over the throttled
    raw read of its round, paired round by round; UNKNOWN where either was not measured."""
    workflow, raw = summary["by_round"].get("workflow"), summary["by_round"]["r_io"].get(THROTTLED)
    if workflow is None or raw is None:
        return intervals.UNKNOWN
    return intervals.paired_by_round(workflow[rate].to_dict(), raw.to_dict(), confidence)


def check_model_passes(frames: dict[str, pd.DataFrame], files: list[str]) -> None:
    """What the passes read, compared after they ran: the raw reads the same bytes (their word
    sum) in every cache state; the readers of every R(Np) pass the collection counters summing
    to what one reader of every entry summed."""
    raw = frames["raw"]
    if raw["checksum"].nunique() != 1:
        sums = raw.groupby("cache")["checksum"].unique().to_dict()
        raise AssertionError(f"the raw reads of {len(files)} files read different bytes by cache state: {sums}")
    reference = frames["components"]["counter_sum"].unique()
    if len(reference) != 1:
        raise AssertionError(f"one reader of every entry summed the collection counters to {sorted(reference)} "
                             "in different passes")
    rate = frames["rate"]
    wrong = rate[rate["counter_sum"] != reference[0]] if len(rate) else rate
    if len(wrong):
        row = wrong.iloc[0]
        raise AssertionError(f"{row['processes']} readers ({row['cache']}, TTreeCache {row['ttree_cache']}) summed "
                             f"the collection counters to {row['counter_sum']}, one reader of every entry to "
                             f"{reference[0]}")
    # the workflow fills the same histogram from the same files, from the device or the page cache
    workflow = frames.get("workflow")
    if workflow is not None and len(workflow) and workflow["content_hash"].nunique() != 1:
        hashes = workflow.groupby("cache")["content_hash"].unique().to_dict()
        raise AssertionError(f"the RDataFrame workflow filled different histograms by cache state: {hashes}")
    # the compression pair's files hold the same events: every pass of both sums the same counters
    compression = frames.get("compression_storage")
    if compression is not None and len(compression) and compression["counter_sum"].nunique() != 1:
        sums = compression.groupby(["compression", "cache"])["counter_sum"].unique().to_dict()
        raise AssertionError(f"the readers of the compression pair's files summed different collection counters: {sums}")


def measure_rate_model(params: dict[str, Any], inputs: dict[str, Any], info: dict[str, Any],
                       results_dir: str | Path, primer: str | os.PathLike,
                       noise_settings: noise.Settings | None = None, progress: bool = True) -> dict[str, Any]:
    """R_IO (raw bytes: cold, warm, O_DIRECT and throttled), R_dec and R_proc (one warm reader), and
    R(Np) for every cache state x TTreeCache setting x process count, interleaved as one group
    (model_runs). Returns frames and what was not measured. `primer`: a file with the same tree
    that is not measured (see run_processes)."""
    rate = params["rate_model"]
    primer = str(primer)
    if str(Path(primer).resolve()) in {str(Path(f).resolve()) for f in inputs["rate"]}:
        raise ValueError(f"the primer file {primer} must not be one of the files measured")
    results_dir = Path(results_dir)
    raw, work = results_dir / "raw", results_dir / "work"
    files = inputs["rate"]
    entries = {f: info["entries"][f] for f in files}
    binaries = {k: kernel_sha256(harness.kernel_path(k)) for k in KERNELS}
    # what a stored pass must match; the stopping rule of the claims' extra rounds is not (its looks are
    # stored with their rounds: measure_interleaved)
    base = {"repetitions": params["repetitions"], "warmup": params["warmup"], "inputs": input_identity(files),
            "rate_model": {k: v for k, v in rate.items() if k not in experiment.LOOKS_KEYS}, "binaries": binaries}
    not_measured = {}
    states = list(rate["cache_states"])
    evicting = cold_cache_problem(files, work) if {"cold", THROTTLED} & set(states) else None
    if "cold" in states and evicting:
        not_measured["cold"] = evicting
        states.remove("cold")
    if THROTTLED in states:  # its passes start cold, and its reads are limited below the page cache
        problem = evicting or io_throttle.problem(files[0])
        if problem:
            not_measured[THROTTLED] = f"the throttled reads: {problem}"
            states.remove(THROTTLED)
    caches = ["cold", "warm"] if "cold" in states else ["warm"]
    if "cold" in states:  # the O_DIRECT rate, beside which a cold rate says whether it came from below the page cache
        problem = direct_read_problem(files)
        if problem:
            not_measured["direct"] = f"the O_DIRECT rate: {problem}"
        else:
            caches.append("direct")
    if THROTTLED in states:
        caches.append(THROTTLED)
    compressed = {c: inputs["compression"][c] for c in COMPRESSION_PAIR if c in inputs.get("compression", {})}
    pair = compression_runs(states, list(compressed), usable_cores())
    workflow = workflow_runs(states, usable_cores())
    if pair and any(os.stat(f).st_dev != os.stat(files[0]).st_dev for chosen in compressed.values() for f in chosen):
        # the throttle limits the reads of files[0]'s device only
        not_measured["compression"] = (f"the compression pair's files are not on the throttled device of {files[0]}")
        pair = []
    settings = noise_settings or noise.Settings()
    retakes = settings.sample_retakes  # R(Np)'s readers take none again
    # the throttled state's limit: calibrated, and its group made, at the first throttled pass
    # measured here, so that a run whose passes all come from storage calibrates nothing
    throttle_setting: dict[str, Any] = {"factor": rate["throttle_factor"]}
    throttles: list[io_throttle.ReadThrottle] = []

    with contextlib.ExitStack() as stack:
        def throttle_for(cache: str | None) -> io_throttle.ReadThrottle | None:
            if cache != THROTTLED:
                return None
            if not throttles:
                throttle_setting.update(throttle_rate(rate, files, entries, work, primer))
                throttles.append(stack.enter_context(io_throttle.ReadThrottle(files[0],
                                                                              throttle_setting["bytes_per_s"])))
            return throttles[0]

        def measure_pass(run, round_):
            throttle = throttle_for(run.get("cache"))
            if run["part"] == "compression_storage":
                chosen = compressed[run["compression"]]
                return _measure_rate(run, round_, params, chosen, {f: info["entries"][f] for f in chosen}, work,
                                     primer, throttle)
            if run["part"] == "raw":
                return _measure_raw(run["cache"], params, files, work, throttle, settings)
            if run["part"] == "components":
                return _measure_components(round_, params, files, entries, work, primer, retakes)
            if run["part"] == "workflow":
                return _measure_workflow(run, params, files, info["pdf_count"], work, throttle, settings)
            return _measure_rate(run, round_, params, files, entries, work, primer, throttle)

        group = experiment.Group("I/O rate model", model_runs(states, caches, rate) + pair + workflow)

        def key(run: dict[str, Any]) -> dict[str, Any]:  # what a stored pass of `run` must match
            read = {"inputs": input_identity(compressed[run["compression"]])} if "compression" in run else {}
            return {**base, **read, **{k: v for k, v in run.items() if k != "name"}}
        throttled = throttle_setting if THROTTLED in states else None
        frame = experiment.measure_interleaved(
            [group], raw, key, measure_pass,
            params["repetitions"], settings, desc="I/O rate model", progress=progress,
            deciding=deciding_claims(group, lambda rows: model_frames(rows, files, entries, not_measured, throttled)),
            looks=experiment.Looks.of(rate))
        if throttles:  # what the throttled passes measured here read from the device, in the group
            throttle_setting["device_bytes_read"] = throttles[0].bytes_read()
    frames = model_frames(frame, files, entries, not_measured, throttled)
    check_model_passes(frames, files)
    return frames


def model_frames(frame: pd.DataFrame, files: list[str], entries: dict[str, int], not_measured: dict[str, str],
                 throttle: dict[str, Any] | None) -> dict[str, Any]:
    """The model's rows as rate_summary takes them: one frame per part, without the other parts'
    columns (and their integers back from float), with the files' bytes and events, the usable
    cores, what was not measured and the throttle's setting (None: not throttled)."""
    frames: dict[str, Any] = {part: frame[frame["part"] == part].dropna(axis=1, how="all").reset_index(drop=True)
                              for part in ("raw", "components", "rate", "compression_storage", "workflow")}
    for part, columns in (("components", ["counter_sum"]), ("rate", ["counter_sum", "processes"]),
                          ("compression_storage", ["counter_sum", "processes"])):
        if len(frames[part]):  # no rate runs where no cache state could be set up
            frames[part] = frames[part].astype({c: "int64" for c in columns})
    frames["bytes"] = sum(Path(f).stat().st_size for f in files)
    frames["cores"] = usable_cores()  # process counts above it oversubscribe the cores
    frames["events"] = sum(entries.values())
    frames["not_measured"] = not_measured
    frames["throttle"] = throttle
    return frames


def throttle_rate(rate: dict[str, Any], files: list[str], entries: dict[str, int], work: Path,
                  primer: str) -> dict[str, Any]:
    """The throttled state's read limit: `throttle_factor` times one warm reader's rate of every
    entry (one untimed-by-the-model pass just before the runs; the runs' own R_1 comes later), so
    that the device, not the cores, bounds R(Np) from about Np = throttle_factor on. The passes'
    rows record the limit they ran under (`throttle_bps`)."""
    set_cache(files, "warm", work)
    ranges = _ranges_file(split_ranges(entries, files, 1)[0], work / "throttle-ranges.txt")
    result = harness.run_kernel("rdf_rate_reader", {"ranges": ranges, "cache": "warm",
                                                    "cache-size": rate["ttree_cache_bytes"], "reps": 1, "warmup": 0,
                                                    "primer": primer})
    size = sum(Path(f).stat().st_size for f in files)
    one_reader = size / float(result.timings["wall_s"].iloc[-1])
    return {"factor": rate["throttle_factor"], "one_reader_bytes_per_s": one_reader,
            "bytes_per_s": int(rate["throttle_factor"] * one_reader)}


# ----------------------------------------------------------------------------------------------
# The model, its fit, and the rates from the measurements

def rate_model(np_: Any, r1: float, r_io: float) -> np.ndarray:
    """Seed 004: R = R1*Np / (1 + R1/R_IO*(Np-1))."""
    n = np.asarray(np_, float)
    return r1 * n / (1 + (r1 / r_io) * (n - 1)) if math.isfinite(r_io) else r1 * n


def fit_rate_model(processes: np.ndarray, rates: np.ndarray) -> dict[str, Any]:
    """Fit R1 and R_IO to every timed pass. 1/R = (1/R1)/Np + (1/R_IO)(Np-1)/Np is linear in 1/R1
    and 1/R_IO: weighted (relative) least squares with both >= 0; 1/R_IO = 0 means no saturation
    seen (R_IO unbounded). The uncertainties (one standard deviation) come from the passes' scatter
    about the fit (covariance s^2 (A^T A)^-1 of the weighted design A); where R_IO is unbounded,
    `r_io_lower` is the rate one standard deviation of 1/R_IO above zero allows. `dof` counts the
    process counts beyond the model's two parameters: what tests the curve's shape."""
    n, r = np.asarray(processes, float), np.asarray(rates, float)
    design = np.column_stack([1 / n, (n - 1) / n])
    coef = _lstsq_nonnegative(design, 1 / r, r)
    inv_r1, inv_rio = coef
    distinct = len(np.unique(n))
    weighted = design * r[:, None]
    residual = weighted @ coef - 1  # (1/R_fit - 1/R) * R: relative residuals
    sigma_r1 = sigma_rio = r_io_lower = math.nan
    if len(r) > 2 and distinct >= 2:
        covariance = float(residual @ residual) / (len(r) - 2) * np.linalg.inv(weighted.T @ weighted)
        sigma_inv_r1, sigma_inv_rio = np.sqrt(np.diag(covariance))
        sigma_r1 = sigma_inv_r1 / inv_r1**2 if inv_r1 > 0 else math.nan
        if inv_rio > 0:
            sigma_rio = sigma_inv_rio / inv_rio**2
        elif sigma_inv_rio > 0:
            r_io_lower = 1 / sigma_inv_rio
    return {"r1": 1 / inv_r1 if inv_r1 > 0 else math.inf, "r_io": 1 / inv_rio if inv_rio > 0 else math.inf,
            "r1_sigma": sigma_r1, "r_io_sigma": sigma_rio, "r_io_lower": r_io_lower, "passes": len(r),
            "points": distinct, "dof": distinct - 2, "io_determined": distinct >= 2 and inv_rio > 0}


def largest_residual(processes: np.ndarray, rates: np.ndarray, fit: dict[str, Any]) -> float:
    """How far one round's R(Np) lies from Eq. (1) fitted to it (`fit`: fit_rate_model of the
    same points): the largest relative residual |R_fit / R - 1| over its process counts (seed
    004's "R follows the model over the range measured"). NaN where the fit has no count beyond
    its two parameters to test (fewer than three counts: two points fit exactly) or finds no R_1."""
    if fit["dof"] < 1 or not math.isfinite(fit["r1"]):
        return math.nan
    return float(np.max(np.abs(rate_model(processes, fit["r1"], fit["r_io"]) / np.asarray(rates, float) - 1)))


def off_cpu_share(passes: pd.DataFrame) -> intervals.Estimate:
    """The share of the passes' wall time their process spent off a CPU, 1 - CPU time / wall time,
    each round's median pass one value, as a mean across the rounds with its t interval (a share
    near zero, even a little below it where a clock's resolution shows: an arithmetic mean; one
    round: its value without an interval); UNKNOWN where the passes recorded no CPU time."""
    if "cpu_s" not in passes:
        return intervals.UNKNOWN
    shares = (1 - _per_round(passes, "cpu_s") / _per_round(passes, "wall_s")).dropna()
    return intervals.mean_across(shares.to_numpy()) if len(shares) else intervals.UNKNOWN


def compression_storage(passes: pd.DataFrame | None) -> dict[str, Any] | None:
    """Seed 002's compressions against the storage, from the compression pair's passes (as many
    readers as the cores, compression_runs), each figure paired round by round: LZ4's wall time over
    LZMA's from the page cache and from the throttled device (`lz4_over_lzma`, by cache state), the
    second over the first (`throttled_over_warm`: how much of LZ4's lead a bandwidth-limited device
    takes), each one's CPU efficiency (CPU time over wall time and readers, `efficiency`, by
    compression and cache state; its rounds' values) and, on the throttled device, LZMA's over LZ4's
    (`lzma_over_lz4_efficiency`). None where the pair was not measured."""
    if passes is None or not len(passes):
        return None
    timed = passes[~passes["warmup"].astype(bool)]
    timed = timed.assign(efficiency=timed["cpu_s"] / (timed["wall_s"] * timed["processes"]))
    wall = {key: _per_round(group, "wall_s") for key, group in timed.groupby(["compression", "cache"])}
    efficiency = {key: _per_round(group, "efficiency") for key, group in timed.groupby(["compression", "cache"])}
    lz4, lzma = COMPRESSION_PAIR
    ratio = {cache: wall[(lz4, cache)] / wall[(lzma, cache)] for cache in ("warm", THROTTLED)}
    return {"processes": int(timed["processes"].iloc[0]),
            "lz4_over_lzma": {cache: intervals.paired_by_round(wall[(lz4, cache)].to_dict(), wall[(lzma, cache)].to_dict())
                              for cache in ("warm", THROTTLED)},
            "throttled_over_warm": intervals.paired_by_round(ratio[THROTTLED].to_dict(), ratio["warm"].to_dict()),
            "efficiency": {key: intervals.across_timed(e.dropna().to_numpy()) for key, e in efficiency.items()},
            "lzma_over_lz4_efficiency": intervals.paired_by_round(efficiency[(lzma, THROTTLED)].to_dict(),
                                                                  efficiency[(lz4, THROTTLED)].to_dict())}


def cold_reads_verdict(r_io: dict[str, pd.Series]) -> dict[str, Any] | None:
    """Whether the cold raw reads came from below this system's page cache: is the cold rate nearer (by ratio) the
    O_DIRECT rate or the warm (page-cache) rate? Decided round by round (the three
    raw reads ran in the same rounds): each round's distance from the O_DIRECT rate over its
    distance from the warm rate, a paired ratio whose interval must lie below 1 (reached) or
    above 1 (a cache below this system's, a hypervisor's, served them); otherwise the run does
    not separate the two. A buffered cold read may beat one O_DIRECT stream somewhat (read-ahead
    keeps requests in flight), so distances are ratios either way and no fixed margin is used.
    `state`: reached (nearer the O_DIRECT rate), cache (nearer the warm one) or notseparated, with
    the cold rate over the warm one (`cold_over_warm`: an Estimate, paired by round; over the
    O_DIRECT one: cold_over_direct); the section words each state (report.cold_reads_macros). None
    where the cold or the O_DIRECT read was not measured."""
    if "cold" not in r_io or "direct" not in r_io:
        return None
    cold, direct, warm = r_io["cold"], r_io["direct"], r_io["warm"]
    from_device = np.exp(np.abs(np.log(cold / direct)))
    from_cache = np.exp(np.abs(np.log(warm / cold)))
    nearer = intervals.comparison(intervals.paired_by_round(from_cache.to_dict(), from_device.to_dict()))
    # O_DIRECT skips this system's page cache only: on a virtual machine a host's cache may serve
    # it too, so a cold read near its rate came from below the guest's cache, not shown the device
    return {"state": {"higher": "reached", "lower": "cache"}.get(nearer, "notseparated"),
            "cold_over_warm": intervals.paired_by_round(cold.to_dict(), warm.to_dict())}


def cold_over_direct(r_io: dict[str, pd.Series], confidence: float = intervals.CONFIDENCE) -> intervals.Estimate:
    """The cold raw read's rate over the O_DIRECT one (`r_io`: each cache state's rate per round),
    paired round by round, its interval at `confidence` (seed 004's "T_IO is limited by the I/O
    bandwidth", a figure the model's extra rounds may decide); UNKNOWN where either was not read."""
    if "cold" not in r_io or "direct" not in r_io:
        return intervals.UNKNOWN
    return intervals.paired_by_round(r_io["cold"].to_dict(), r_io["direct"].to_dict(), confidence)


# The three rates that limit one reader, as the paper names them.
LIMITS = {"r_dec": "decompression and deserialisation", "r_proc": "processing", "r_io": "the device (raw read)"}


def slowest_limit(summary: dict[str, Any]) -> str:
    """Which of the three rates limits one reader, decided by their paired per-round ratios (all
    three are computed within each round): one is named only where each other rate is higher by
    an interval that excludes 1; otherwise the rates that no other was shown to be below are
    named as not separated. The raw read is the cold one where measured."""
    r_io = summary["by_round"]["r_io"]
    rates = {"r_dec": summary["by_round"]["r_dec"], "r_proc": summary["by_round"]["r_proc"],
             "r_io": r_io.get("cold", r_io["warm"])}

    def lower(a: str, b: str) -> bool:
        ratio = intervals.paired_by_round(rates[a].to_dict(), rates[b].to_dict())
        return intervals.comparison(ratio) == "lower"

    candidates = [k for k in rates if not any(lower(other, k) for other in rates if other != k)]
    if len(candidates) == 1:
        return LIMITS[candidates[0]]
    return f"not separated between {' and '.join(LIMITS[k] for k in candidates)}"


def saturation(summary: dict[str, Any]) -> tuple[intervals.Estimate, str]:
    """Where Eq. (1) saturates, N_p = R_IO / R_1, from the separately measured rates (cold cache
    where measured), paired round by round, and the cache it is for."""
    cache = "cold" if "cold" in summary["r_io"] and "cold" in summary["r1_predicted"] else "warm"
    by_round = summary["by_round"]
    return (intervals.paired_by_round(by_round["r_io"][cache].to_dict(), by_round["r1_predicted"][cache].to_dict()),
            cache)


def model_check(summary: dict[str, Any], cache: str) -> dict[str, Any] | None:
    """Eq. (1) makes one reader's rate R_1 lower than each rate it is built from (1/R_1 is their
    inverses' sum): is the measured R_1 (one reader, TTreeCache on) below the raw read of the same
    cache, R_dec and R_proc, each by its paired per-round ratio? "holds" where it is below all
    three, "fails" where it is above one of them (`above`: which; that rate, as measured apart,
    is not what limits the reader), else "not separated" (`unseparated`: from which). None where
    one reader with `cache` was not measured."""
    by_round = summary["by_round"]
    if cache not in by_round.get("r1_measured", {}) or cache not in by_round["r_io"]:
        return None
    measured = by_round["r1_measured"][cache].to_dict()
    rates = {"r_io": by_round["r_io"][cache], "r_dec": by_round["r_dec"], "r_proc": by_round["r_proc"]}
    ratios = {k: intervals.paired_by_round(measured, rate.to_dict()) for k, rate in rates.items()}
    above = [k for k, ratio in ratios.items() if intervals.comparison(ratio) == "higher"]
    unseparated = [k for k, ratio in ratios.items() if intervals.comparison(ratio) == "not separated"]
    state = "fails" if above else "not separated" if unseparated else "holds"
    return {"state": state, "above": above, "unseparated": unseparated, "ratios": ratios}


def predicted_over_measured(summary: dict[str, Any], cache: str,
                            confidence: float = intervals.CONFIDENCE) -> intervals.Estimate:
    """Eq. (1) as the seed states it: one reader's rate predicted from R_IO, R_dec and R_proc
    measured apart over its measured rate (one reader, TTreeCache on), paired round by round, its
    interval at `confidence`; UNKNOWN where one reader with `cache` was not measured."""
    by_round = summary["by_round"]
    if cache not in by_round.get("r1_measured", {}) or cache not in by_round["r1_predicted"]:
        return intervals.UNKNOWN
    return intervals.paired_by_round(by_round["r1_predicted"][cache].to_dict(), by_round["r1_measured"][cache].to_dict(),
                                     confidence)


@dataclass(frozen=True)
class DecidingFigure:
    """A figure of the model that decides claims of the ledger: the runs an extra round of it
    measures, and the figure from the model's summary (rate_summary) at a confidence level."""
    runs: tuple[str, ...]
    figure: Callable[[dict[str, Any], float], intervals.Estimate]


def _one_reader_figure(cache: str) -> DecidingFigure:
    """Eq. (1) for one reader of `cache`: the warm raw read and the phases' reader (R_dec, R_proc),
    that cache state's raw read and its one reader."""
    return DecidingFigure(("raw_warm", "components", f"raw_{cache}", f"rate_{cache}_on_np1"),
                          lambda summary, confidence: predicted_over_measured(summary, cache, confidence))


# the ledger's macros that the model's extra rounds may decide
DECIDING_FIGURES = {
    "RdfROnePredOverMeasuredCold": _one_reader_figure("cold"),
    "RdfROnePredOverMeasuredWarm": _one_reader_figure("warm"),
    "RdfColdOverDirect": DecidingFigure(("raw_cold", "raw_direct"),
                                        lambda summary, confidence: cold_over_direct(summary["by_round"]["r_io"],
                                                                                     confidence)),
    "RdfWorkflowOverRawThrottled": DecidingFigure(
        ("raw_throttled", "workflow_throttled"),
        lambda summary, confidence: workflow_against_raw_read(summary, "device", confidence)),
}


def deciding_claims(group: experiment.Group,
                    frames_of: Callable[[pd.DataFrame], dict[str, Any]]) -> list[experiment.Deciding]:
    """The ledger's claims that the model's figures decide (DECIDING_FIGURES), each with the runs
    an extra round of it measures (what those of its figures that this group can make are built
    from) and its judge: the figures at the looks' level (`frames_of`: the model's frames from the
    group's rows), by the claim's rule."""
    names = {run["name"] for run in group.runs}
    machine = ledger.Machine("this machine", usable_cores(), gpu=False)
    deciding = []
    for claim in ledger.deciding("rdataframe", DECIDING_FIGURES):
        macros = claim.measured_by.get("macros") or [claim.measured_by["macro"]]
        wanted = {run for m in macros if set(DECIDING_FIGURES[m].runs) <= names for run in DECIDING_FIGURES[m].runs}
        if not wanted:
            continue  # none of its figures can be made here

        def figures(rows: pd.DataFrame, confidence: float, macros: list[str] = macros) -> dict[str, intervals.Estimate]:
            summary = rate_summary(frames_of(rows))
            return {m: DECIDING_FIGURES[m].figure(summary, confidence) for m in macros}
        deciding.append(experiment.Deciding(claim.id, group.name,
                                            tuple(run for run in group.runs if run["name"] in wanted),
                                            ledger.looks_judge(claim, machine, figures)))
    return deciding


def asymptote_against_raw_read(fit: Any, raw: intervals.Estimate) -> str:
    """Whether the fitted asymptote can be the device's rate R_IO: "below the raw read" where its
    interval (1.96 standard deviations) lies under the raw read's of the same cache (then it is a
    ceiling of the cores or of decompression, not R_IO), "unbounded" where the rate did not bend,
    else "not below the raw read"."""
    if not math.isfinite(fit.r_io):
        return "unbounded"
    spread = 1.96 * fit.r_io_sigma if math.isfinite(fit.r_io_sigma) else math.nan
    asymptote = intervals.Estimate(fit.r_io, fit.r_io - spread, fit.r_io + spread, 0)
    return ("below the raw read" if intervals.unpaired_comparison(asymptote, raw) == "lower"
            else "not below the raw read")


def _per_round(frame: pd.DataFrame, column: str) -> pd.Series:
    """Each round's median `column`: one value per process round (rows from before rounds were
    recorded: each pass its own round)."""
    if "round" not in frame:
        frame = frame.assign(round=range(len(frame)))
    return frame.groupby("round")[column].median()


def _across_rounds(per_round: pd.Series) -> intervals.Estimate:
    """A rate across its rounds with its 95% interval (a round in which a difference of times
    came out non-positive gives no rate, and is left out: intervals.across_timed)."""
    return intervals.across_timed(per_round.dropna().to_numpy())


def samples(frames: dict[str, Any], settings: noise.Settings) -> dict[str, Any]:
    """What delayed the model's timed passes (their run delay, throughput.core.noise), and which were
    taken again for it: the raw reads and the phases' one reader alone, each from its cache state
    set afresh; never the R(Np) readers, whose pass is timed together (run_processes: TogetherState
    together where such passes took their run delay). The numbers and states of
    noise_sentences.samples, worded by paper/wording/noise.tex's \\noisesamples."""
    timed = pd.concat([frames[part] for part in ("raw", "components", "rate", "compression_storage", "workflow")
                       if len(frames.get(part, ()))], ignore_index=True)
    timed = timed[~timed["warmup"].astype(bool)] if "warmup" in timed else timed
    facts = noise_sentences.samples(timed, settings)
    said = facts["SamplesState"] != "uncalibrated" or facts["DelayState"] != "none"
    together = said and "sample_retakes" in timed and timed["sample_retakes"].isna().any()
    return {**facts, "TogetherState": "together" if together else "alone"}


def rate_summary(frames: dict[str, Any], settings: noise.Settings | None = None) -> dict[str, Any]:
    """The model's rates (MB/s of file bytes) from the separate measurements, and its fits; each
    measured R(Np) with the spread of its passes (`cv`), its interval's half-width across rounds
    and whether that is too wide to print as clean (`settings`: the noise limit).

    Every rate is computed within each round (the raw reads and one reader's phases ran in the
    same rounds as R(Np)), then taken across the rounds with its 95% interval (`estimates`:
    throughput.core.intervals.Estimate; `r_io`, `r_dec`, `r_proc`, `r1_predicted` their values)."""
    settings = settings or noise.Settings()
    size = frames["bytes"] / 1e6
    check_raw_bytes(frames["raw"], frames["bytes"])  # the bytes R_IO divides by were the bytes read
    raw = frames["raw"][~frames["raw"]["warmup"].astype(bool)]
    raw = raw.assign(wall_s=experiment.time_per_pass(raw))  # a calibrated sample's passes: one pass's time
    comp = frames["components"][~frames["components"]["warmup"].astype(bool)]
    # T_dec = T_unzip + T_reco (the seed's definition): everything in the warm reader that is
    # neither processing nor bringing the bytes from the page cache (per-event GetEntry, and
    # opening the files and their trees); per round, as every rate here
    raw_by_round = {cache: _per_round(group, "wall_s") for cache, group in raw.groupby("cache")}
    proc_by_round = _per_round(comp, "process_s")
    dec_by_round = _per_round(comp, "wall_s") - proc_by_round - raw_by_round["warm"]
    setup_by_round = _per_round(comp.assign(setup_s=comp["wall_s"] - comp["getentry_s"] - comp["process_s"]), "setup_s")
    r_io = {cache: size / times for cache, times in raw_by_round.items()}
    r_dec, r_proc = size / dec_by_round, size / proc_by_round
    r1_predicted = {cache: 1 / (1 / rate + 1 / r_dec + 1 / r_proc) for cache, rate in r_io.items() if cache != "direct"}
    estimates = {"r_io": {cache: _across_rounds(rate) for cache, rate in r_io.items()},
                 "r_dec": _across_rounds(r_dec), "r_proc": _across_rounds(r_proc),
                 "r1_predicted": {cache: _across_rounds(rate) for cache, rate in r1_predicted.items()}}
    out = {"size_mb": size, "events": frames["events"],
           # opening the files and trees as a share of T_dec, paired round by round
           "setup_share": intervals.paired_by_round(setup_by_round.to_dict(), dec_by_round.to_dict()),
           # the same warm passes split: loading each event (GetEntry: reading from the page cache,
           # decompressing, deserialising) over processing it (seed 000's "histogram filling takes
           # much less than load time"), and the share of their wall time spent off a CPU, waiting
           # (on reads among others: seed 004's "decompression is a pure CPU task")
           "load_over_process": intervals.paired_by_round(_per_round(comp, "getentry_s").to_dict(),
                                                          proc_by_round.to_dict()),
           "off_cpu_share": off_cpu_share(comp),
           "estimates": estimates, "r_io": {c: e.value for c, e in estimates["r_io"].items()},
           "r_dec": estimates["r_dec"].value, "r_proc": estimates["r_proc"].value,
           "r1_predicted": {c: e.value for c, e in estimates["r1_predicted"].items()},
           # processing against the warm raw read, paired: how far below R_IO processing keeps one
           # reader where the cores' scaling is measured (cores_speedup)
           "proc_over_io_warm": intervals.paired_by_round(r_proc.to_dict(), r_io["warm"].to_dict()),
           # each rate per round (what slowest_limit and saturation pair)
           "by_round": {"r_io": r_io, "r_dec": r_dec, "r_proc": r_proc, "r1_predicted": r1_predicted}}
    # which rounds were extra, and for which claim (deciding_claims; report's looks macros)
    rows = pd.concat([frames[part] for part in ("raw", "components", "rate")], ignore_index=True)
    out["looks"] = rows[[c for c in ("round", "look", "extended_for") if c in rows]]
    out["cold_reads"] = cold_reads_verdict(r_io)
    out["compression_storage"] = compression_storage(frames.get("compression_storage"))
    out["by_round"]["workflow"] = workflow_rates(frames.get("workflow"))
    out["samples"] = samples(frames, settings)
    out["r_io_noisy"] = frames["raw"].groupby("cache")["noisy"].any().to_dict()
    out["cores"] = frames["cores"]
    measured = frames["rate"][~frames["rate"]["warmup"].astype(bool)].copy()
    measured["rate_mb_s"] = size / measured["wall_s"]
    measured["khz"] = frames["events"] / measured["wall_s"] / 1e3
    table = (measured.groupby(["cache", "ttree_cache", "processes"], sort=False)
             .agg(rate=("rate_mb_s", "median"), rate_min=("rate_mb_s", "min"), rate_max=("rate_mb_s", "max"),
                  khz=("khz", "median"), cpu_s=("cpu_s", "median"), wall_s=("wall_s", "median"),
                  read_calls=("read_calls", "median"), cv=("wall_s", noise.coefficient_of_variation))
             .reset_index())
    # noisy by the interval across rounds, each round's median process one value (throughput.core.noise)
    keys = ["cache", "ttree_cache", "processes"]
    per_round = measured.groupby([*keys, "round"], sort=False)["wall_s"].median()
    widths = per_round.groupby(level=keys, sort=False).agg(noise.interval_half_width).rename("half_width")
    table = table.merge(widths.reset_index(), on=keys, how="left")
    # each R(Np) across its rounds with its interval (each round's median process one value)
    rates = [_across_rounds(size / per_round.xs(key, level=keys)) for key in table[keys].itertuples(index=False)]
    table["rate"], table["rate_low"], table["rate_high"] = zip(*((r.value, r.low, r.high) for r in rates))
    table["noisy"] = table["half_width"].map(settings.is_noisy)
    table["oversubscribed"] = table["processes"] > frames["cores"]
    # one reader's measured rate per round (TTreeCache on, as the components' reader), what
    # model_check pairs with the rates Eq. (1) is built from
    one_reader = table[(table["ttree_cache"] == "on") & (table["processes"] == 1)]["cache"]
    out["by_round"]["r1_measured"] = {cache: size / per_round.xs((cache, "on", 1), level=keys) for cache in one_reader}
    out["cores_speedup"] = cores_speedup(per_round, frames["cores"])
    out["read_calls_ratio"] = read_calls_ratio(measured)
    out["ttree_cache_sharing"] = ttree_cache_sharing(per_round, frames["cores"])
    fits = []
    # the fits weigh every process count alike: the base rounds only (one reader's extra rounds for
    # Eq. (1)'s claim, deciding_claims, would weigh its count more)
    base = measured[measured["look"].fillna(0) == 0] if "look" in measured else measured
    for (cache, ttc), group in base.groupby(["cache", "ttree_cache"], sort=False):
        group = group[group["processes"] <= fitted_up_to(cache, frames["cores"], group["processes"].max())]
        fit = fit_rate_model(group["processes"].to_numpy(), group["rate_mb_s"].to_numpy())
        one = table[(table["cache"] == cache) & (table["ttree_cache"] == ttc) & (table["processes"] == 1)]
        fits.append({"cache": cache, "ttree_cache": ttc, **fit,
                     **{f"r_np1{end}": float(one[f"rate{end}"].iloc[0]) if len(one) else math.nan
                        for end in ("", "_low", "_high")},
                     "r_np1_noisy": bool(one["noisy"].iloc[0]) if len(one) else False})
    out["table"], out["fits"] = table, pd.DataFrame(fits)
    # the throttled curve fitted round by round, each asymptote paired with its round's raw read
    throttled_passes = measured[(measured["cache"] == THROTTLED) & (measured["ttree_cache"] == "on")]
    rounds = {round_: (passes["processes"].to_numpy(), passes["rate_mb_s"].to_numpy())
              for round_, passes in throttled_passes.groupby("round")}
    fitted = {round_: fit_rate_model(*curve) for round_, curve in rounds.items()}
    out["by_round"]["throttled_asymptote"] = pd.Series({r: fit["r_io"] for r, fit in fitted.items()}, dtype=float)
    out["by_round"]["throttled_residual"] = pd.Series(
        {r: largest_residual(*rounds[r], fitted[r]) for r in rounds}, dtype=float)
    throttled = raw[raw["cache"] == THROTTLED]
    out["throttle"] = ({"factor": frames["throttle"]["factor"],
                        "bytes_per_s": float(throttled["throttle_bps"].median())} if len(throttled) else None)
    out["throttled_check"] = throttled_check(out, settings)
    return out


def cores_speedup(per_round: pd.Series, cores: int, cache: str = "warm") -> tuple[int, intervals.Estimate]:
    """Seed 004's "several processes raise the aggregate rate": the aggregate rate of the most
    reader processes measured that the cores hold (`n`, at most `cores`) over one reader's, warm page
    cache (R_1 far below R_IO, where the model is linear up to the cores) and TTreeCache on, paired
    round by round (every count runs in each round); `per_round` is each round's median pass time
    by (cache, ttree_cache, processes, round). (n, UNKNOWN) where no count from 2 to the cores, or
    one reader, was measured."""
    counts = _counts(per_round, cache, "on")
    n = max((k for k in counts if k <= cores), default=0)
    if n < 2 or 1 not in counts:
        return n, intervals.UNKNOWN
    return n, _rate_ratio(per_round, (cache, "on", n), (cache, "on", 1))


_RUN_KEYS = ["cache", "ttree_cache", "processes"]


def _counts(per_round: pd.Series, cache: str, ttree_cache: str) -> set[int]:
    """The process counts measured in `cache` with `ttree_cache` (per_round: as cores_speedup's)."""
    return {int(n) for c, t, n, _ in per_round.index if (c, t) == (cache, ttree_cache)}


def _rate_ratio(per_round: pd.Series, faster: tuple, slower: tuple) -> intervals.Estimate:
    """The aggregate rate of run `faster` over run `slower` (each (cache, ttree_cache, processes)),
    paired round by round: both read the same bytes, so it is the inverse ratio of their times."""
    return intervals.paired_by_round(per_round.xs(slower, level=_RUN_KEYS).to_dict(),
                                     per_round.xs(faster, level=_RUN_KEYS).to_dict())


def read_calls_ratio(measured: pd.DataFrame, cache: str = "warm") -> intervals.Estimate:
    """Seed 004's "TTreeCache reduces the number of accesses to disks": one reader's read calls
    (TFile::GetFileReadCalls over its pass) with TTreeCache on over those without, paired round by
    round (both settings run in each round: model_runs); UNKNOWN where rate_model.ttree_cache did
    not measure both."""
    one = measured[(measured["cache"] == cache) & (measured["processes"] == 1)]
    calls = one.groupby(["ttree_cache", "round"])["read_calls"].median()
    if not {"on", "off"} <= set(calls.index.get_level_values("ttree_cache")):
        return intervals.UNKNOWN
    return intervals.paired_by_round(calls.xs("on").to_dict(), calls.xs("off").to_dict())


def ttree_cache_sharing(per_round: pd.Series, cores: int, cache: str = "cold") -> tuple[int, intervals.Estimate]:
    """Seed 004's "TTreeCache increases the efficiency of device sharing": the aggregate rate of
    the most reader processes (at least 2, at most the cores) that read `cache` both with and
    without TTreeCache, with it over without it, paired round by round (both settings run in each
    round: model_runs); `per_round` as cores_speedup's. (n, UNKNOWN) where rate_model.ttree_cache
    did not measure both at such a count."""
    both = _counts(per_round, cache, "on") & _counts(per_round, cache, "off")
    n = max((k for k in both if 2 <= k <= cores), default=0)
    if not n:
        return n, intervals.UNKNOWN
    return n, _rate_ratio(per_round, (cache, "on", n), (cache, "off", n))


def fitted_up_to(cache: str, cores: int, most: int) -> int:
    """The most reader processes a cache state's fit uses. Where the reads are throttled, a reader
    waits on the device and leaves its core to another (the seed's regime), so every count is
    fitted; otherwise only counts up to the cores, since beyond them a bend is the cores' and the
    asymptote would be a CPU ceiling, not R_IO."""
    return most if cache == THROTTLED else min(cores, most)


def throttled_check(summary: dict[str, Any], settings: noise.Settings | None = None) -> dict[str, Any] | None:
    """Does Eq. (1) find the device where the device is what saturates? The throttled passes
    (TTreeCache on; every process count) are fitted round by round, and each round's asymptote is
    paired with the throttled raw read of its round: `ratio` (asymptote / raw read) with its t
    interval across the rounds. "met" where the ratio's interval holds 1 and is no wider than the
    noise limit (the model recovers the device's rate), "missed" where it excludes 1,
    "inconclusive" where it holds 1 only by being too wide, or where a round's curve did not bend
    (no finite asymptote). `fit` is the fit of every round's passes together, what the figure
    draws. `residual`: each round's largest relative residual from its own fit (largest_residual),
    their mean across the rounds with its t interval. `over_limit`: the throttled raw read's rate
    over the limit, and `burst` whether it is at most 1 + BURST_SHARE (met: the pass read enough bytes that the kernel's burst hardly moves
    its rate). None where the throttled state was not measured."""
    settings = settings or noise.Settings()
    fits = summary["fits"]
    fit = fits[(fits["cache"] == THROTTLED) & (fits["ttree_cache"] == "on")] if len(fits) else fits
    raw = summary["estimates"]["r_io"].get(THROTTLED)
    if raw is None or not len(fit):
        return None
    asymptotes = summary["by_round"]["throttled_asymptote"]
    bent = len(asymptotes) > 1 and bool(np.isfinite(asymptotes.to_numpy()).all())
    ratio = (intervals.paired_by_round(asymptotes.to_dict(), summary["by_round"]["r_io"][THROTTLED].to_dict())
             if bent else intervals.UNKNOWN)
    if not ratio.known:
        verdict = intervals.Verdict.INCONCLUSIVE
    elif intervals.comparison(ratio) != "not separated":
        verdict = intervals.Verdict.MISSED
    else:
        verdict = (intervals.Verdict.MET if not settings.is_noisy(ratio.relative_half_width)
                   else intervals.Verdict.INCONCLUSIVE)
    limit = summary["throttle"]["bytes_per_s"] / 1e6
    over_limit = raw.scaled(1 / limit) if raw.value > 0 else intervals.UNKNOWN
    residuals = summary["by_round"]["throttled_residual"].dropna()
    residual = intervals.mean_across(residuals.to_numpy()) if len(residuals) else intervals.UNKNOWN
    return {"verdict": verdict, "ratio": ratio, "residual": residual, "raw": raw, "fit": fit.iloc[0], "limit_mb_s": limit,
            "factor": summary["throttle"]["factor"], "size_mb": summary["size_mb"],
            # the kernel's burst: what a whole raw read gained over the limit
            "over_limit": over_limit, "burst": intervals.at_most(over_limit, 1 + BURST_SHARE)}
