"""RDataFrame thread scaling, distributed RDataFrame, and the PROOF-Lite I/O rate model (seeds 002 and 004).

RDataFrame (seed 002), measured by the compiled kernel `rdf_bench`
(kernels/rdataframe/): histograms filled from many NanoAOD-like files,
sequentially and with ROOT::EnableImplicitMT(n); the same data in several
compressions; 1 to 101 histograms with one Define each; the PDF weights
histogrammed four ways (one Define and Histo2D per weight, the seed's Histo3D
trick, a THnD with scalar and vector columns, RDataFrame's Vary). The same
analysis runs on Dask with distributed RDataFrame (from Python: the column
functions and binnings come from the kernel's own header, declared in Cling).

Every histogram of every run is compared bin by bin with a sequential
(no IMT) run of the compiled kernel: counts must be identical; sums of
weights must be identical or, where floating-point sums were added in another
order, within `rtol` of the larger of the bin content and its statistical
uncertainty. A disagreement raises.

The I/O rate model (seed 004): Np reader processes (`rdf_rate_reader`),
started together, read disjoint entry ranges of the same files; R(Np) is
fitted with R = R1*Np / (1 + R1/R_IO*(Np-1)), cold and warm page cache,
TTreeCache on and off, and R1 is also predicted from separately measured
rates: 1/R1 = 1/R_IO + 1/R_dec + 1/R_proc.

Units: MB = 1e6 bytes; every rate of the I/O model is in MB/s of *file*
bytes (compressed, as stored), so that the rates add as the model assumes;
event rates are in kHz (1e3 events/s).
"""
from __future__ import annotations

import contextlib
import copy
import hashlib
import io
import json
import math
import os
import shutil
import socket
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Iterable
from urllib.parse import urlparse

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from .. import REPO, datasets, harness, provenance, seeds
from . import SPECS
from ..config import thread_counts, usable_cores
from ..results import atomic_path, measure_once

HEADER = REPO / "kernels" / "rdataframe" / "analysis.hpp"
KERNELS = SPECS["rdataframe"].kernels
PDF_METHODS = ("defines", "histo3d", "histond", "vary")
TREE = "Events"
# Histograms whose name starts with this hold sums of weights (the PDF-weight
# histograms); all others hold counts, which must agree exactly.
WEIGHTED_PREFIX = "pdf"
# Branches every workload reads besides the collection's and the PDF weights.
FIXED_BRANCHES = ("MET_pt", "nJet", "Jet_pt", "Jet_eta", "PV_npvs")


def _seconds(text: str) -> float:
    """'8m45s' -> 525.0 (the seeds' notation)."""
    minutes, seconds = text.rstrip("s").split("m")
    return 60 * int(minutes) + float(seconds)


# ----------------------------------------------------------------------------------------------
# The seeds' published figures (seeds 002 and 004, in throughput.seeds with where each comes
# from), used only as "seed" columns beside ours.

SEED_EVENTS_BENCHMARK = seeds.RDF_BENCH_EVENTS  # "fill 9 TH3D's from 513M Monte Carlo events", LZMA
SEED_STORAGE = seeds.RDF_STORAGE
# Compression: total size and size of the branches read (GB), and the benchmark on the local SSD
# (64 threads) and in the page cache (256 threads).
SEED_COMPRESSION = seeds.RDF_COMPRESSION
SEED_NHIST = seeds.RDF_NHIST  # number of histograms (one Define each), LZMA, 32C/64T
SEED_PDF = seeds.RDF_PDF  # 103 Define + Histo2D vs the Histo3D trick, seconds
SEED_PDF_WEIGHTS = seeds.RDF_PDF_WEIGHTS
SEED_RDEC_MB_S = seeds.RDF_RDEC_MB_S  # seed 004's effective decompression rate


# ----------------------------------------------------------------------------------------------
# Configuration

class InputError(ValueError):
    """A missing or unreadable input file, or a tree or branch that is not there."""


class SchedulerError(ConnectionError):
    """The configured Dask scheduler cannot be reached."""


def _count_problem(value: int | None, full_key: str, cores: int, fit: bool, problems: list[str]) -> None:
    if value is not None and value > cores and not fit:
        problems.append(f"config key '{full_key}' = {value}: more than the {cores} usable cores of this machine "
                        f"(set rdataframe.fit_to_cores: true to lower it to {cores})")


def resolve_counts(section: dict[str, Any], cores: int | None = None) -> dict[str, Any]:
    """A copy of the section with thread, worker and process counts resolved for this machine:
    null -> every usable core; more than the cores -> the cores (only where fit_to_cores allows,
    check_config has refused the others)."""
    cores = cores or usable_cores()
    out = copy.deepcopy(section)
    for holder, key in ((out, "max_threads"), (out["rate_model"], "max_processes"), (out["dask"], "max_workers")):
        if holder[key] is None or holder[key] > cores:
            holder[key] = cores
    return out


def parse_scheduler(address: str) -> tuple[str, int]:
    """'tcp://host:port' (or 'host:port') -> (host, port); ValueError if it is not one."""
    parsed = urlparse(address if "://" in address else f"tcp://{address}")
    if parsed.scheme not in ("tcp", "tls") or not parsed.hostname or parsed.port is None:
        raise ValueError("expected tcp://host:port")
    return parsed.hostname, parsed.port


def _scheduler_identity(address: str, timeout_s: float) -> dict[str, Any]:
    """The scheduler's answer to Dask's `identity` request, within timeout_s whatever the server
    does: an open port alone proves nothing (a server that accepts and stays silent held a Client
    for minutes), and distributed's own connect timeout does not bound its handshake. The request
    runs on its own event loop in a daemon thread (the caller may be inside a running loop, e.g.
    a notebook), and is abandoned at the deadline."""
    import asyncio
    import threading

    from distributed import comm
    from distributed.security import Security

    async def ask() -> dict[str, Any]:
        # deserialize=False: nothing from an unknown server is unpickled
        connection = await comm.connect(address, timeout=timeout_s, deserialize=False,
                                        **Security().get_connection_args("client"))
        try:
            await connection.write({"op": "identity", "reply": True})
            return await connection.read()
        finally:
            connection.abort()

    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["reply"] = asyncio.run(asyncio.wait_for(ask(), timeout_s))
        except BaseException as error:  # reported by the caller
            outcome["error"] = error

    thread = threading.Thread(target=run, name="dask-scheduler-check", daemon=True)
    thread.start()
    thread.join(timeout_s + 1)  # wait_for ends it at timeout_s; the second is for its clean-up
    if "reply" in outcome:
        return outcome["reply"]
    error = outcome.get("error")
    if error is None or isinstance(error, (asyncio.TimeoutError, TimeoutError)):
        raise TimeoutError(f"no answer within {timeout_s:g} s")
    raise error


def scheduler_problem(address: str, timeout_s: float) -> str | None:
    """Why the scheduler at `address` cannot be used (None if a Dask scheduler answers there
    within timeout_s)."""
    key = "rdataframe.dask.scheduler"
    try:
        parse_scheduler(address)
    except ValueError as error:
        return f"config key '{key}' = {address!r}: not a scheduler address ({error})"
    where = f"config key '{key}' = {address!r}"
    try:
        reply = _scheduler_identity(address, timeout_s)
    except Exception as error:
        return (f"{where}: no Dask scheduler answered within {timeout_s:g} s "
                f"(rdataframe.dask.connect_timeout_s): {type(error).__name__}: {error}")
    kind = reply.get("type") if isinstance(reply, dict) else None
    if kind != "Scheduler":
        return f"{where}: the server there is not a Dask scheduler (it answered {str(reply)[:80]!r})"
    return None


def file_sets(section: dict[str, Any]) -> dict[str, int]:
    """Files needed per compression: the main set, the compression table's, the rate model's."""
    need: dict[str, int] = {section["compression"]: section["files"]}
    for compression in section["compressions"]:
        need[compression] = max(need.get(compression, 0), section["compression_files"])
    if section["rate_model"]["enabled"]:
        rate = section["rate_model"]
        need[rate["compression"]] = max(need.get(rate["compression"], 0), rate["files"])
    return need


def check_config(section: dict[str, Any], available_memory: int, problems: list[str]) -> None:
    """Check this section against the machine (see throughput.config.validate): thread, worker and
    process counts within the cores (unless fit_to_cores; resolve_counts lowers them), the scheduler
    reachable, the input files' size on disk."""
    cores, fit = usable_cores(), section["fit_to_cores"]
    rate, dask = section["rate_model"], section["dask"]
    _count_problem(section["max_threads"], "rdataframe.max_threads", cores, fit, problems)
    _count_problem(rate["max_processes"], "rdataframe.rate_model.max_processes", cores, fit, problems)
    if dask["scheduler"] is None:
        _count_problem(dask["max_workers"], "rdataframe.dask.max_workers", cores, fit, problems)
    elif dask["enabled"]:
        problem = scheduler_problem(dask["scheduler"], dask["connect_timeout_s"])
        if problem:
            problems.append(problem)
    if section["pdf_methods"] and "defines" not in section["pdf_methods"]:
        problems.append(f"config key 'rdataframe.pdf_methods' = {section['pdf_methods']}: must include 'defines' "
                        "(the seed's reference method every other is compared with)")
    sets = file_sets(section)
    need = sum(n * section["events_per_file"] * datasets.BYTES_PER_EVENT_ESTIMATE[c] for c, n in sets.items())
    free = shutil.disk_usage(Path(".").resolve()).free
    if need > 0.8 * free:
        problems.append(f"config key 'rdataframe.files' = {section['files']} (with rdataframe.events_per_file = "
                        f"{section['events_per_file']}, compression_files and rate_model.files): the input files "
                        f"need about {need / 1e9:.1f} GB on disk, {free / 1e9:.1f} GB free in {Path('.').resolve()}")


def counts(maximum: int, spacing: str) -> list[int]:
    """Thread or process counts: 1..maximum ('every') or 1, 2, 4, ..., maximum ('doubling')."""
    return list(range(1, maximum + 1)) if spacing == "every" else thread_counts(maximum)


# ----------------------------------------------------------------------------------------------
# Inputs

def data_path(root: str | os.PathLike, compression: str, events: int, index: int) -> Path:
    """Where file `index` of a set lives (the workflow's rule makes the same paths under data/rdataframe)."""
    return Path(root) / compression / f"e{events}" / f"part{index}.root"


def make_inputs(section: dict[str, Any], datasets_section: dict[str, Any], root: str | os.PathLike,
                progress: bool = True) -> dict[str, list[str]]:
    """Generate (or reuse) every file the section needs under `root`, in parallel on every core."""
    jobs = [(compression, k) for compression, n in file_sets(section).items() for k in range(n)]
    paths = {c: [str(data_path(root, c, section["events_per_file"], k)) for k in range(n)]
             for c, n in file_sets(section).items()}

    def make(job: tuple[str, int]) -> None:
        compression, k = job
        path = Path(paths[compression][k])
        if not path.exists():  # files are written under a temporary name, so an existing one is complete
            datasets.make_nanoaod_like(path, section["events_per_file"], compression, datasets_section,
                                       index=k, progress=False)

    with ThreadPoolExecutor(max_workers=usable_cores()) as pool:
        list(tqdm(pool.map(make, jobs), total=len(jobs), desc="input files", unit="file", disable=not progress))
    return paths


def select_inputs(section: dict[str, Any], input_files: dict[str, list[str]]) -> dict[str, Any]:
    """The file lists of each part, taken from `input_files` (compression -> paths)."""
    def take(compression: str, n: int, key: str) -> list[str]:
        files = list(input_files.get(compression, []))
        if len(files) < n:
            raise InputError(f"parameter 'input_files' has {len(files)} {compression} files, {key} asks for {n}")
        return [str(f) for f in files[:n]]

    chosen = {
        "main": take(section["compression"], section["files"], "rdataframe.files"),
        "compression": {c: take(c, section["compression_files"], "rdataframe.compression_files")
                        for c in section["compressions"]},
    }
    if section["rate_model"]["enabled"]:
        rate = section["rate_model"]
        chosen["rate"] = take(rate["compression"], rate["files"], "rdataframe.rate_model.files")
    return chosen


def needed_branches(section: dict[str, Any]) -> dict[str, str]:
    """Branch -> what asks for it (a config key, or the workload)."""
    c, pdf = section["collection"], section["pdf_weights_branch"]
    needed = {b: "the analysis workload" for b in FIXED_BRANCHES}
    needed.update({f"n{c}": "config key 'rdataframe.collection'", f"{c}_pt": "config key 'rdataframe.collection'",
                   f"{c}_eta": "config key 'rdataframe.collection'",
                   pdf: "config key 'rdataframe.pdf_weights_branch'"})
    return needed


def inspect_inputs(files: Iterable[str], section: dict[str, Any], work_dir: Path) -> dict[str, Any]:
    """Check every file before any event loop (with the compiled kernel: thousands of files in
    seconds): it exists, opens, holds the tree and every branch read, and the same number of PDF
    weights in every event. Returns entries per file and that number."""
    files = [str(f) for f in files]
    for path in files:
        if not Path(path).is_file():
            raise InputError(f"input file {path} does not exist")
    records: list[dict[str, Any]] = []
    try:
        harness.run_kernel("rdf_bench", {"file-list": _list_file(files, work_dir), "check-only": 1,
                                         "collection": section["collection"],
                                         "pdf-branch": section["pdf_weights_branch"]}, on_progress=records.append)
    except harness.KernelError as error:
        message = str(error).split(": error: ")[-1]
        for branch, asker in needed_branches(section).items():
            if f"no branch '{branch}'" in message and "config key" in asker:
                value = section["collection"] if "collection" in asker else section["pdf_weights_branch"]
                raise InputError(f"{asker} = {value!r}: {message}") from error
        raise InputError(message) from error
    entries = {str(Path(r["path"]).resolve()): int(r["entries"]) for r in records}
    found = {(r["pdf_min"], r["pdf_max"]) for r in records}
    if any(low != high for low, high in found) or len(found) != 1:
        raise InputError(f"branch '{section['pdf_weights_branch']}' holds {sorted(found)} (min, max) values per event "
                         "across the input files; the PDF-weight histograms need the same number in every event")
    (low, _), = found
    if low < 0:
        raise InputError(f"config key 'rdataframe.pdf_weights_branch' = {section['pdf_weights_branch']!r}: "
                         "not a per-event array of weights")
    return {"entries": {f: entries[str(Path(f).resolve())] for f in files}, "pdf_count": int(low)}


def preflight(section: dict[str, Any], inputs: dict[str, Any], work_dir: str | Path) -> dict[str, Any]:
    """Everything that can fail before a measurement, checked before the first one: every input
    file and branch, and the Dask scheduler. Returns what the measurements need to know."""
    work_dir = Path(work_dir)
    main = inspect_inputs(inputs["main"], section, work_dir)
    info = {"entries": dict(main["entries"]), "pdf_count": main["pdf_count"]}
    for files in inputs["compression"].values():
        found = inspect_inputs(files, section, work_dir)
        if found["pdf_count"] != info["pdf_count"]:
            raise InputError(f"the compression table's files hold {found['pdf_count']} PDF weights per event, "
                             f"the main set {info['pdf_count']}")
        info["entries"].update(found["entries"])
    if "rate" in inputs:
        info["entries"].update(inspect_inputs(inputs["rate"], section, work_dir)["entries"])
    dask = section["dask"]
    if dask["enabled"] and dask["scheduler"]:
        client = connect_scheduler(dask["scheduler"], dask["connect_timeout_s"])
        info["dask_workers"] = len(client.scheduler_info()["workers"])
        client.close()
    return info


def connect_scheduler(address: str, timeout_s: float):
    """A dask.distributed Client on `address`, or SchedulerError within about timeout_s."""
    problem = scheduler_problem(address, timeout_s)
    if problem:
        raise SchedulerError(problem)
    from dask.distributed import Client

    try:
        return Client(address, timeout=f"{timeout_s}s")
    except (OSError, TimeoutError) as error:
        raise SchedulerError(f"config key 'rdataframe.dask.scheduler' = {address!r}: no Dask scheduler answers "
                             f"within {timeout_s:g} s: {error}") from error


# ----------------------------------------------------------------------------------------------
# Histograms: reading, comparing

def load_histograms(path: str | os.PathLike) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """name -> (contents, variances), flow bins included, of every histogram in a ROOT file."""
    import uproot

    out = {}
    with uproot.open(path) as handle:
        for name in sorted({key.split(";")[0] for key in handle.keys()}):
            h = handle[name]
            out[name] = (np.asarray(h.values(flow=True), dtype=np.float64),
                         np.asarray(h.variances(flow=True), dtype=np.float64))
    return out


class HistogramMismatch(AssertionError):
    """Two runs that must give the same histograms do not."""


def nhist_names(n: int) -> list[str]:
    """The histograms of rdf_bench's nhist workload with n histograms (nhist_name in rdf_bench.cpp)."""
    return [f"nhist_{i:03d}" for i in range(n)]


def compare_histograms(reference: dict, other: dict, rtol: float, what: str,
                       expected: Iterable[str] | None = None) -> dict[str, Any]:
    """Compare `other` with `reference`: first the names, as sets (`other` must hold exactly the
    `expected` histograms, by default every one of the reference's), then bin by bin. Counts must be
    identical; sums of weights identical or within rtol of max(|a|, |b|, sqrt(variance)). Raises
    HistogramMismatch naming the run and the missing or extra histogram, or the histogram and bin."""
    expected = set(reference) if expected is None else set(expected)
    if not expected:
        raise HistogramMismatch(f"{what}: the reference run has no histograms to compare with")
    unknown = sorted(expected - set(reference))
    if unknown:
        raise HistogramMismatch(f"{what}: histograms {unknown} are expected but not in the reference run")
    missing, extra = sorted(expected - set(other)), sorted(set(other) - expected)
    if missing:
        raise HistogramMismatch(f"{what}: histograms {missing} of the reference run are missing")
    if extra:
        raise HistogramMismatch(f"{what}: histograms {extra} are not in the reference run")
    identical, max_rel = True, 0.0
    for name, (values, variances) in other.items():
        ref_values, ref_variances = reference[name]
        if values.shape != ref_values.shape:
            raise HistogramMismatch(f"{what}: histogram {name} has shape {values.shape}, reference {ref_values.shape}")
        differ = values != ref_values
        if not differ.any():
            continue
        identical = False
        where = np.argwhere(differ)[0]
        if not name.startswith(WEIGHTED_PREFIX):
            raise HistogramMismatch(f"{what}: counts of histogram {name} differ from the reference in bin "
                                    f"{tuple(where.tolist())}: {values[tuple(where)]} != {ref_values[tuple(where)]}")
        scale = np.maximum.reduce([np.abs(values), np.abs(ref_values), np.sqrt(np.abs(ref_variances))])
        rel = np.where(differ, np.abs(values - ref_values) / np.where(scale > 0, scale, 1), 0.0)
        max_rel = max(max_rel, float(rel.max()))
        if rel.max() > rtol:
            worst = np.unravel_index(int(rel.argmax()), rel.shape)
            raise HistogramMismatch(f"{what}: histogram {name} bin {tuple(int(i) for i in worst)}: "
                                    f"{values[worst]!r} vs reference {ref_values[worst]!r} "
                                    f"(relative difference {rel.max():.3g} > {rtol:g})")
    return {"histograms": len(other), "identical": identical, "max_rel_diff": max_rel}


# ----------------------------------------------------------------------------------------------
# The compiled RDataFrame runs

def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _file_ids(files: Iterable[str]) -> list[list[Any]]:
    """Name and size of each input: a changed input is measured again, not reused."""
    return [[str(f), Path(f).stat().st_size] for f in files]


def _list_file(files: Iterable[str], directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    text = "\n".join(str(Path(f).resolve()) for f in files) + "\n"
    path = directory / f"files-{hashlib.sha256(text.encode()).hexdigest()[:16]}.txt"
    if not path.exists():
        with atomic_path(path) as temporary:
            temporary.write_text(text)
    return path


def set_cache(files: Iterable[str], state: str, work_dir: Path) -> dict[str, Any]:
    """Bring every file to page-cache `state` ('warm' or 'cold'), per file and checked."""
    return harness.run_kernel("rdf_page_cache", {"file-list": _list_file(files, work_dir), "action": state}).validation


def cache_columns(state: str, prepared: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The page-cache state a run was measured in, as columns of its rows: the state, and the pages
    found resident by rdf_page_cache (validation records; one per host for Dask). The fraction is the
    least resident host's (one host: resident / pages)."""
    prepared = list(prepared)
    if not prepared:
        raise ValueError("no page-cache state was set up")
    fractions = [p["resident"] / p["pages"] if p["pages"] else 1.0 for p in prepared]
    return {"cache": state, "resident_pages": sum(int(p["resident"]) for p in prepared),
            "pages": sum(int(p["pages"]) for p in prepared), "resident_fraction": min(fractions),
            "cache_hosts": len(prepared)}


def _cache_note(columns: dict[str, Any]) -> str:
    return (f"{columns['cache']} (every file set and checked by rdf_page_cache first; resident fraction "
            f"{columns['resident_fraction']:.4f}, {columns['resident_pages']} of {columns['pages']} pages, "
            f"{columns['cache_hosts']} host(s))")


def cpp_plan(params: dict[str, Any]) -> list[dict[str, Any]]:
    """Every compiled run, in the order measured; `reference` names the run it must agree with."""
    top, main = params["max_threads"], params["compression"]
    scan_threads = counts(top, params["thread_spacing"])
    runs = [{"part": "scan", "workload": "analysis", "threads": t, "set": "main", "compression": main,
             "name": f"scan_{main}_t{t}", "reference": f"scan_{main}_t0"} for t in [0, *scan_threads]]
    hist_counts = sorted(params["histogram_counts"])
    if hist_counts:
        reference = f"nhist_{hist_counts[-1]}_t0"
        runs.append({"part": "nhist", "workload": "nhist", "histograms": hist_counts[-1], "threads": 0,
                     "set": "main", "compression": main, "name": reference, "reference": reference})
        runs += [{"part": "nhist", "workload": "nhist", "histograms": n, "threads": top, "set": "main",
                  "compression": main, "name": f"nhist_{n}_t{top}", "reference": reference} for n in hist_counts]
    if params["pdf_methods"]:
        runs.append({"part": "pdf", "workload": "pdf", "method": "defines", "threads": 0, "set": "main",
                     "compression": main, "name": "pdf_defines_t0", "reference": "pdf_defines_t0"})
        runs += [{"part": "pdf", "workload": "pdf", "method": m, "threads": top, "set": "main", "compression": main,
                  "name": f"pdf_{m}_t{top}", "reference": "pdf_defines_t0"} for m in params["pdf_methods"]]
    if params["compressions"]:
        first = params["compressions"][0]
        reference = f"comp_{first}_t0"
        runs.append({"part": "compression", "workload": "analysis", "threads": 0, "set": "compression",
                     "compression": first, "name": reference, "reference": reference})
        runs += [{"part": "compression", "workload": "analysis", "threads": top, "set": "compression",
                  "compression": c, "name": f"comp_{c}_t{top}", "reference": reference}
                 for c in params["compressions"]]
    for run in runs:
        run.setdefault("method", "")
        run.setdefault("histograms", 0)
    return runs


def _run_files(run: dict[str, Any], inputs: dict[str, Any]) -> list[str]:
    return inputs["main"] if run["set"] == "main" else inputs["compression"][run["compression"]]


def _common_key(params: dict[str, Any], pdf_count: int) -> dict[str, Any]:
    keys = ("repetitions", "warmup", "collection", "pdf_weights_branch", "pdf_nominal", "rtol")
    return {**{k: params[k] for k in keys}, "pdf_count": pdf_count}


def kernel_args(run: dict[str, Any], params: dict[str, Any], pdf_count: int, file_list: Path,
                output: Path | None) -> dict[str, Any]:
    args = {"file-list": file_list, "workload": run["workload"], "threads": run["threads"],
            "reps": params["repetitions"], "warmup": params["warmup"], "collection": params["collection"],
            "pdf-branch": params["pdf_weights_branch"], "pdf-count": pdf_count,
            "pdf-nominal": int(params["pdf_nominal"]), "rtol": params["rtol"]}
    if run["workload"] == "pdf":
        args["method"] = run["method"]
    if run["workload"] == "nhist":
        args["histograms"] = run["histograms"]
    if output is not None:
        args["output"] = output
    return args


def _measure_cpp(run, params, files, pdf_count, work_dir, hist_path, progress):
    cache = cache_columns("warm", [set_cache(files, "warm", work_dir)])
    hist_path.parent.mkdir(parents=True, exist_ok=True)
    with tqdm(total=params["warmup"] + params["repetitions"], desc=run["name"], unit="loop", leave=False,
              disable=not progress) as bar:
        result = harness.run_kernel("rdf_bench", kernel_args(run, params, pdf_count, _list_file(files, work_dir),
                                                             hist_path),
                                    on_progress=lambda r: bar.update(r["done"] - bar.n))
    frame = result.timings
    v = result.validation
    for key in ("file_bytes", "read_zip_bytes", "read_tot_bytes", "selected", "reps_identical", "reps_max_rel_diff",
                "open_s"):
        frame[key] = v[key]
    frame["files"] = len(files)
    frame["final_hash"] = v["content_hash"]
    for key in ("part", "name", "compression", "reference"):
        frame[key] = run[key]
    frame["method"] = run["method"]
    frame = frame.assign(**cache)
    return frame, provenance.capture(params, cache_state=_cache_note(cache), build_info=result.build_info)


def measure_cpp(params: dict[str, Any], inputs: dict[str, Any], pdf_count: int, results_dir: str | Path,
                progress: bool = True) -> pd.DataFrame:
    """Run (or reuse) every compiled run of `cpp_plan`; histograms go to results_dir/histograms/."""
    results_dir = Path(results_dir)
    raw, hists, work = results_dir / "raw", results_dir / "histograms", results_dir / "work"
    binary = _sha256(harness.kernel_path("rdf_bench"))
    frames = []
    runs = cpp_plan(params)
    for run in tqdm(runs, desc="RDataFrame runs", unit="run", disable=not progress):
        files = _run_files(run, inputs)
        hist_path = hists / f"{run['name']}.root"
        raw_path = raw / f"{run['name']}.parquet"
        if not hist_path.exists():
            raw_path.unlink(missing_ok=True)  # its histograms are needed for the cross-checks
        key = {**_common_key(params, pdf_count), **run, "inputs": _file_ids(files), "binary_sha256": binary}
        frame = measure_once(raw_path, key, lambda: _measure_cpp(run, params, files, pdf_count, work, hist_path,
                                                                 progress))
        # What the plan asked for (the key holds it, so a reused frame is this run's): the
        # agreement check compares what was produced with it.
        frames.append(frame.assign(histograms_asked=run["histograms"]))
    return pd.concat(frames, ignore_index=True)


def check_agreement(frame: pd.DataFrame, results_dir: str | Path, rtol: float,
                    extra: dict[str, str] | None = None) -> pd.DataFrame:
    """Compare every run's histograms with its reference run: the same set of histograms (an nhist
    run with fewer histograms than its reference: the first ones), then bin by bin; raise on a
    disagreement. `extra` maps more runs (e.g. Dask's, the same set as their reference) to their
    references. Returns one row per comparison."""
    hists = Path(results_dir) / "histograms"
    pairs = dict(frame.groupby("name", sort=False)["reference"].first())
    asked = dict(frame[frame["part"] == "nhist"].groupby("name", sort=False)["histograms_asked"].first()) \
        if "part" in frame.columns and (frame["part"] == "nhist").any() else {}
    pairs.update(extra or {})
    cache: dict[str, dict] = {}

    def get(name: str) -> dict:
        if name not in cache:
            cache[name] = load_histograms(hists / f"{name}.root")
        return cache[name]

    rows = []
    for name, reference in pairs.items():
        if name == reference:
            continue
        expected = nhist_names(int(asked[name])) if name in asked else None
        result = compare_histograms(get(reference), get(name), rtol, f"run {name} vs {reference}", expected)
        rows.append({"run": name, "reference": reference, **result})
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------------------------
# Distributed RDataFrame on Dask

def _declare_analysis():
    """Declare kernels/rdataframe/analysis.hpp locally and (for the workers) with DistributeCppCode."""
    import ROOT

    code = "\n".join(line for line in HEADER.read_text().splitlines() if line.strip() != "#pragma once")
    ROOT.RDF.Distributed.DistributeCppCode(code)
    return ROOT


@contextlib.contextmanager
def _no_progress_bar():
    """Distributed RDataFrame shows dask's progress bar: text in a terminal, an ipywidgets widget in
    a notebook (which fails without ipywidgets). The runs have their own tqdm bar: switch it off."""
    try:
        from ROOT._distrdf.Backends.Dask import Backend as backend
    except ImportError:  # another layout of ROOT's internals: leave it alone
        backend = None
    saved = getattr(backend, "progress", None)
    if saved is not None:
        backend.progress = lambda *args, **kwargs: None
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            yield
    finally:
        if saved is not None:
            backend.progress = saved


def _axis(a) -> tuple[int, float, float]:
    return int(a.bins), float(a.low), float(a.high)


def book_analysis(df, section: dict[str, Any], pdf_count: int) -> dict[str, Any]:
    """The `analysis` workload of rdf_bench.cpp, booked with string expressions on any RDataFrame
    (local or distributed). Same columns, functions and binnings as the kernel."""
    import ROOT

    tpa = ROOT.tpa
    c, pdf = section["collection"], section["pdf_weights_branch"]
    nominal = bool(section["pdf_nominal"])
    n = pdf_count + int(nominal)
    booked = {
        "count": df.Count(),
        "met": df.Histo1D(("met", "", *_axis(tpa.kMet)), "MET_pt"),
        "njet": df.Histo1D(("njet", "", *_axis(tpa.kNJet)), "nJet"),
        "jet_pt": df.Histo1D(("jet_pt", "", *_axis(tpa.kJetPt)), "Jet_pt"),
        "jet_eta_pt": df.Histo2D(("jet_eta_pt", "", *_axis(tpa.kJetEta), *_axis(tpa.kJetPt)), "Jet_eta", "Jet_pt"),
        "npv": df.Histo1D(("npv", "", *_axis(tpa.kNpv)), "PV_npvs"),
    }
    sel = (df.Filter(f"n{c} > 0", f"has a leading {c}")
           .Define("leadPt", f"tpa::lead({c}_pt)")
           .Define("leadEta", f"tpa::lead({c}_eta)")
           .Define("pdfWeights", f"tpa::pdf_weights({pdf}, {'true' if nominal else 'false'}, {pdf_count}u)"))
    booked["lead_pt_eta"] = sel.Histo2D(("lead_pt_eta", "", *_axis(tpa.kLeadPt), *_axis(tpa.kLeadEta)),
                                        "leadPt", "leadEta")
    booked["pdf3d"] = (sel.Define("leadPtVec", "tpa::repeat(leadPt, pdfWeights)")
                       .Define("leadEtaVec", "tpa::repeat(leadEta, pdfWeights)")
                       .Define("pdfIdx", "tpa::indices(pdfWeights)")
                       .Histo3D(("pdf3d", "", *_axis(tpa.kPdfPt), *_axis(tpa.kPdfEta), n, 0.0, float(n)),
                                "leadPtVec", "leadEtaVec", "pdfIdx", "pdfWeights"))
    return booked


def _write_root_histograms(hists: dict[str, Any], path: Path) -> None:
    import ROOT

    with atomic_path(path) as temporary:
        handle = ROOT.TFile.Open(str(temporary), "RECREATE")
        for name, h in hists.items():
            handle.WriteObject(h, name)
        handle.Close()


def _worker_cpu(client) -> float:
    def cpu() -> float:
        import psutil

        times = psutil.Process().cpu_times()
        return times.user + times.system

    return float(sum(client.run(cpu).values()))


def _warm_here(files: list[str]) -> dict[str, Any]:
    """Warm the files in this machine's page cache, checked per file (run on a Dask worker)."""
    with tempfile.TemporaryDirectory(prefix="rdf-cache-") as tmp:
        return {**set_cache(files, "warm", Path(tmp)), "host": socket.gethostname()}


def warm_dask_workers(client, files: list[str]) -> dict[str, Any]:
    """Warm the input files where the Dask workers read them, as the compiled runs do here: with
    rdf_page_cache on one worker per host (a host's workers share its page cache), which checks
    every file's resident fraction. Returns cache_columns of the hosts."""
    hosts: dict[str, str] = {}
    for address, host in client.run(socket.gethostname).items():
        hosts.setdefault(host, address)
    if not hosts:
        raise SchedulerError("the Dask cluster has no workers to read the input files")
    found = client.run(_warm_here, list(files), workers=list(hosts.values()))
    return cache_columns("warm", found.values())


def dask_plan(params: dict[str, Any], info: dict[str, Any]) -> list[int]:
    dask = params["dask"]
    if not dask["enabled"]:
        return []
    if dask["scheduler"]:
        return [info["dask_workers"]]
    return counts(dask["max_workers"], "doubling")


def _measure_dask(workers, params, files, pdf_count, hist_path, expected_entries):
    ROOT = _declare_analysis()
    dask = params["dask"]
    cluster = None
    if dask["scheduler"]:
        client = connect_scheduler(dask["scheduler"], dask["connect_timeout_s"])
    else:
        from dask.distributed import Client, LocalCluster

        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
        client = Client(cluster)
    npartitions = min(len(files), workers * dask["partitions_per_worker"])
    rows, last = [], None
    try:
        cache = warm_dask_workers(client, files)
        for index in range(params["warmup"] + params["repetitions"]):
            cpu0, own0, wall0 = _worker_cpu(client), time.process_time(), time.perf_counter()
            df = ROOT.RDataFrame(TREE, files, executor=client, npartitions=npartitions)
            booked = book_analysis(df, params, pdf_count)
            with _no_progress_bar():
                entries = int(booked["count"].GetValue())
            wall1, own1, cpu1 = time.perf_counter(), time.process_time(), _worker_cpu(client)
            if entries != expected_entries:
                raise AssertionError(f"Dask run with {workers} workers saw {entries} entries, the files hold "
                                     f"{expected_entries}")
            last = {name: result.GetValue() for name, result in booked.items() if name != "count"}
            rows.append({"rep": index - params["warmup"], "warmup": index < params["warmup"],
                         "wall_s": wall1 - wall0, "cpu_s": (cpu1 - cpu0) + (own1 - own0),
                         "client_cpu_s": own1 - own0, "events": entries})
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    hist_path.parent.mkdir(parents=True, exist_ok=True)
    _write_root_histograms(last, hist_path)
    frame = pd.DataFrame(rows).assign(workers=workers, npartitions=npartitions, threads=workers,
                                      name=f"dask_w{workers}", part="dask", files=len(files), **cache)
    return frame, provenance.capture(params, cache_state=_cache_note(cache))


def measure_dask(params: dict[str, Any], inputs: dict[str, Any], info: dict[str, Any], results_dir: str | Path,
                 progress: bool = True) -> pd.DataFrame:
    """Distributed RDataFrame on a local Dask cluster of 1, 2, 4, ... workers (or on the configured
    scheduler's workers); histograms to results_dir/histograms/dask_w<N>.root."""
    results_dir = Path(results_dir)
    files = inputs["main"]
    expected = sum(info["entries"][f] for f in files)
    frames = []
    versions = {"packages": provenance.package_versions(), "header_sha256": _sha256(HEADER)}
    for workers in tqdm(dask_plan(params, info), desc="Dask runs", unit="run", disable=not progress):
        name = f"dask_w{workers}"
        hist_path = results_dir / "histograms" / f"{name}.root"
        raw_path = results_dir / "raw" / f"{name}.parquet"
        if not hist_path.exists():
            raw_path.unlink(missing_ok=True)
        key = {**_common_key(params, info["pdf_count"]), "dask": params["dask"], "workers": workers,
               "inputs": _file_ids(files), **versions}
        frames.append(measure_once(raw_path, key, lambda: _measure_dask(workers, params, files, info["pdf_count"],
                                                                       hist_path, expected)))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


# ----------------------------------------------------------------------------------------------
# The I/O rate model (seed 004)

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
                  timeout_s: float = 3600) -> dict[str, Any]:
    """Start one rdf_rate_reader per segment list, let them all go at once, and return the
    aggregate: wall from the first start to the last end, summed CPU, entries and counters.
    `primer`: a file with the same tree (not one measured) each reader reads one entry of before
    the start, so that what a process does once is not timed (PROOF-Lite's workers live long)."""
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
                                               text=True, env=harness.pinned_env()), stderr, argv))
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
    return {"wall_s": max(r["t_end"] for r in records) - min(r["t_start"] for r in records),
            "cpu_s": sum(r["cpu_s"] for r in records), "entries": sum(r["entries"] for r in records),
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


def _measure_raw(cache, params, files, work):
    result = harness.run_kernel("rdf_raw_read", {"file-list": _list_file(files, work), "cache": cache,
                                                 "reps": params["repetitions"], "warmup": params["warmup"]})
    frame = result.timings.assign(part="raw", name=f"raw_{cache}")
    check_raw_bytes(frame, sum(Path(f).stat().st_size for f in files))
    return frame, provenance.capture(params, cache_state=cache, build_info=result.build_info)


def _measure_components(params, files, entries, work, primer):
    ranges = _ranges_file(split_ranges(entries, files, 1)[0], work / "components-ranges.txt")
    result = harness.run_kernel("rdf_rate_reader", {
        "ranges": ranges, "cache": "warm", "phase-timing": 1, "cache-size": params["rate_model"]["ttree_cache_bytes"],
        "reps": params["repetitions"], "warmup": params["warmup"], "primer": primer})
    frame = result.timings.assign(part="components", name="components")
    return frame, provenance.capture(params, cache_state="warm", build_info=result.build_info)


def _measure_rate(cache, ttc, processes, params, files, entries, work, reference_counters, primer):
    rate = params["rate_model"]
    cache_bytes = rate["ttree_cache_bytes"] if ttc == "on" else 0
    segments = split_ranges(entries, files, processes)
    rows = []
    for index in range(params["warmup"] + params["repetitions"]):
        prepared = set_cache(files, cache, work)  # every file, checked, before the readers start
        result = run_processes(segments, cache_bytes, primer)
        if result["counter_sum"] != reference_counters:
            raise AssertionError(f"{processes} readers ({cache}, TTreeCache {ttc}) summed the collection counters to "
                                 f"{result['counter_sum']}, one reader of every entry to {reference_counters}")
        rows.append({**result, "rep": index - params["warmup"], "warmup": index < params["warmup"],
                     "resident_pages": prepared["resident"], "pages": prepared["pages"]})
    frame = pd.DataFrame(rows).assign(part="rate", cache=cache, ttree_cache=ttc, processes=processes,
                                      name=f"rate_{cache}_{ttc}_np{processes}")
    return frame, provenance.capture(params, cache_state=cache)


def measure_rate_model(params: dict[str, Any], inputs: dict[str, Any], info: dict[str, Any],
                       results_dir: str | Path, primer: str | os.PathLike, progress: bool = True) -> dict[str, Any]:
    """R_IO (raw bytes, cold and warm), R_dec and R_proc (one warm reader), and R(Np) for every
    cache state x TTreeCache setting x process count. Returns frames and what was not measured.
    `primer`: a file with the same tree that is not measured (see run_processes)."""
    rate = params["rate_model"]
    primer = str(primer)
    if str(Path(primer).resolve()) in {str(Path(f).resolve()) for f in inputs["rate"]}:
        raise ValueError(f"the primer file {primer} must not be one of the files measured")
    results_dir = Path(results_dir)
    raw, work = results_dir / "raw", results_dir / "work"
    files = inputs["rate"]
    entries = {f: info["entries"][f] for f in files}
    binaries = {k: _sha256(harness.kernel_path(k)) for k in KERNELS}
    base = {"repetitions": params["repetitions"], "warmup": params["warmup"], "inputs": _file_ids(files),
            "rate_model": rate, "binaries": binaries}
    not_measured = {}
    states = list(rate["cache_states"])
    if "cold" in states:
        problem = cold_cache_problem(files, work)
        if problem:
            not_measured["cold"] = problem
            states.remove("cold")
    frames = {}
    frames["raw"] = pd.concat([measure_once(raw / f"raw_{c}.parquet", {**base, "cache": c},
                                            lambda c=c: _measure_raw(c, params, files, work))
                               for c in ["cold", "warm"] if c in states or c == "warm"], ignore_index=True)
    frames["components"] = measure_once(raw / "components.parquet", {**base, "part": "components"},
                                        lambda: _measure_components(params, files, entries, work, primer))
    reference = int(frames["components"]["counter_sum"].iloc[0])
    runs = [(c, "on" if t else "off", n) for c in states for t in rate["ttree_cache"]
            for n in counts(rate["max_processes"], rate["process_spacing"])]
    rate_frames = []
    for cache, ttc, n in tqdm(runs, desc="I/O rate model", unit="run", disable=not progress):
        rate_frames.append(measure_once(raw / f"rate_{cache}_{ttc}_np{n}.parquet",
                                        {**base, "cache": cache, "ttree_cache": ttc, "processes": n},
                                        lambda: _measure_rate(cache, ttc, n, params, files, entries, work, reference,
                                                              primer)))
    frames["rate"] = pd.concat(rate_frames, ignore_index=True) if rate_frames else pd.DataFrame()
    frames["bytes"] = sum(Path(f).stat().st_size for f in files)
    frames["events"] = sum(entries.values())
    frames["not_measured"] = not_measured
    return frames


# ----------------------------------------------------------------------------------------------
# Fits

def _lstsq_nonnegative(design: np.ndarray, target: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Weighted least squares with every coefficient >= 0 (exhaustive over active sets: few columns)."""
    a, b = design * weights[:, None], target * weights
    best, best_cost = None, math.inf
    n = design.shape[1]
    for mask in range(1, 2**n):
        cols = [j for j in range(n) if mask >> j & 1]
        coef, *_ = np.linalg.lstsq(a[:, cols], b, rcond=None)
        if (coef < 0).any():
            continue
        full = np.zeros(n)
        full[cols] = coef
        cost = float(np.sum((a @ full - b) ** 2))
        if cost < best_cost:
            best, best_cost = full, cost
    return best if best is not None else np.zeros(n)


def fit_amdahl(threads: np.ndarray, wall: np.ndarray) -> dict[str, Any]:
    """T(n) = T1 * (s + (1 - s) / n), fitted to relative residuals; s is the serial fraction."""
    n, t = np.asarray(threads, float), np.asarray(wall, float)
    if len(np.unique(n)) < 2:  # one thread count: nothing to fit
        level = float(np.median(t))
        return {"t1_s": level, "serial_fraction": math.nan, "max_speedup": math.nan, "points": len(np.unique(n)),
                "dof": len(np.unique(n)) - 2, "predict": lambda x: np.full(np.shape(x), level)}
    coef = _lstsq_nonnegative(np.column_stack([np.ones_like(n), 1 / n]), t, 1 / t)
    t1 = coef.sum()
    return {"t1_s": t1, "serial_fraction": coef[0] / t1 if t1 else math.nan,
            "max_speedup": t1 / coef[0] if coef[0] > 0 else math.inf,
            "points": len(np.unique(n)), "dof": len(np.unique(n)) - 2,
            "predict": lambda x: coef[0] + coef[1] / np.asarray(x, float)}


def fit_usl(threads: np.ndarray, wall: np.ndarray) -> dict[str, Any] | None:
    """Universal Scalability Law, T(n) = T1 * (1 + sigma*(n-1) + kappa*n*(n-1)) / n; None with fewer
    than 4 distinct thread counts (3 parameters need at least one degree of freedom)."""
    n, t = np.asarray(threads, float), np.asarray(wall, float)
    if len(np.unique(n)) < 4:
        return None
    coef = _lstsq_nonnegative(np.column_stack([np.ones_like(n), n - 1, n * (n - 1)]), n * t, 1 / (n * t))
    t1, a, b = coef
    return {"t1_s": t1, "sigma": a / t1, "kappa": b / t1, "points": len(np.unique(n)), "dof": len(np.unique(n)) - 3,
            "predict": lambda x: (t1 + a * (np.asarray(x, float) - 1)
                                  + b * np.asarray(x, float) * (np.asarray(x, float) - 1)) / np.asarray(x, float)}


def rate_model(np_: Any, r1: float, r_io: float) -> np.ndarray:
    """Seed 004: R = R1*Np / (1 + R1/R_IO*(Np-1))."""
    n = np.asarray(np_, float)
    return r1 * n / (1 + (r1 / r_io) * (n - 1)) if math.isfinite(r_io) else r1 * n


def fit_rate_model(processes: np.ndarray, rates: np.ndarray) -> dict[str, Any]:
    """Fit R1 and R_IO. 1/R = (1/R1)/Np + (1/R_IO)(Np-1)/Np is linear in 1/R1 and 1/R_IO: weighted
    (relative) least squares with both >= 0; 1/R_IO = 0 means no saturation seen (R_IO unbounded)."""
    n, r = np.asarray(processes, float), np.asarray(rates, float)
    coef = _lstsq_nonnegative(np.column_stack([1 / n, (n - 1) / n]), 1 / r, r)
    inv_r1, inv_rio = coef
    distinct = len(np.unique(n))
    return {"r1": 1 / inv_r1 if inv_r1 > 0 else math.inf, "r_io": 1 / inv_rio if inv_rio > 0 else math.inf,
            "points": distinct, "dof": distinct - 2, "io_determined": distinct >= 2 and inv_rio > 0}


# ----------------------------------------------------------------------------------------------
# Summaries

def summary(frame: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Median (min, max) wall time and median CPU time per group, warm-up excluded; CPU efficiency =
    CPU time / (wall time x threads), threads 0 (no IMT) counting as 1."""
    measured = frame[~frame["warmup"].astype(bool)].copy()
    measured["cpu_eff"] = measured["cpu_s"] / (measured["wall_s"] * measured["threads"].clip(lower=1))
    extra = {c: (c, "first") for c in ("events", "file_bytes", "read_zip_bytes", "read_tot_bytes", "files", "open_s")
             if c in measured.columns}
    out = (measured.groupby(by, sort=False)
           .agg(wall_s=("wall_s", "median"), wall_min=("wall_s", "min"), wall_max=("wall_s", "max"),
                cpu_s=("cpu_s", "median"), cpu_eff=("cpu_eff", "median"), passes=("wall_s", "count"), **extra)
           .reset_index())
    out["khz"] = out["events"] / out["wall_s"] / 1e3
    return out


def rate_summary(frames: dict[str, Any]) -> dict[str, Any]:
    """The model's rates (MB/s of file bytes) from the separate measurements, and its fits."""
    size = frames["bytes"] / 1e6
    check_raw_bytes(frames["raw"], frames["bytes"])  # the bytes R_IO divides by were the bytes read
    raw = frames["raw"][~frames["raw"]["warmup"].astype(bool)]
    comp = frames["components"][~frames["components"]["warmup"].astype(bool)]
    t_raw = raw.groupby("cache")["wall_s"].median()
    t_proc = float(comp["process_s"].median())
    t_getentry = float(comp["getentry_s"].median())
    t_reader = float(comp["wall_s"].median())
    # T_dec = T_unzip + T_reco (the seed's definition): everything in the warm reader that is
    # neither processing nor bringing the bytes from the page cache (per-event GetEntry, and
    # opening the files and their trees).
    t_dec = t_reader - t_proc - float(t_raw["warm"])
    out = {"size_mb": size, "events": frames["events"], "t_raw": t_raw.to_dict(), "t_proc": t_proc,
           "t_getentry": t_getentry, "t_setup": t_reader - t_getentry - t_proc, "t_dec": t_dec, "t_reader": t_reader,
           "r_io": {c: size / t for c, t in t_raw.items()}, "r_dec": size / t_dec, "r_proc": size / t_proc}
    out["r1_predicted"] = {c: 1 / (1 / r + 1 / out["r_dec"] + 1 / out["r_proc"]) for c, r in out["r_io"].items()}
    measured = frames["rate"][~frames["rate"]["warmup"].astype(bool)].copy()
    measured["rate_mb_s"] = size / measured["wall_s"]
    measured["khz"] = frames["events"] / measured["wall_s"] / 1e3
    table = (measured.groupby(["cache", "ttree_cache", "processes"], sort=False)
             .agg(rate=("rate_mb_s", "median"), rate_min=("rate_mb_s", "min"), rate_max=("rate_mb_s", "max"),
                  khz=("khz", "median"), cpu_s=("cpu_s", "median"), wall_s=("wall_s", "median"),
                  read_calls=("read_calls", "median"))
             .reset_index())
    fits = []
    for (cache, ttc), group in measured.groupby(["cache", "ttree_cache"], sort=False):
        fit = fit_rate_model(group["processes"].to_numpy(), group["rate_mb_s"].to_numpy())
        fits.append({"cache": cache, "ttree_cache": ttc, **fit,
                     "r_np1": float(table[(table["cache"] == cache) & (table["ttree_cache"] == ttc)
                                          & (table["processes"] == 1)]["rate"].iloc[0])
                     if 1 in set(group["processes"]) else math.nan})
    out["table"], out["fits"] = table, pd.DataFrame(fits)
    return out


# ----------------------------------------------------------------------------------------------
# Tables, numbers and figures for the paper (cells formatted for paper.write_table)

def _num(value: float, digits: int = 3) -> str:
    from .. import paper

    return paper.number(value, digits) if value is not None and math.isfinite(value) else "--"


def _threads_label(t: int) -> str:
    return "no IMT" if t == 0 else str(t)


def scaling_table(table: pd.DataFrame) -> pd.DataFrame:
    """The thread scan: median wall time (min-max), rate, speed-up over the sequential run, CPU efficiency."""
    scan = table[table["part"] == "scan"].sort_values("threads")
    sequential = float(scan[scan["threads"] == 0]["wall_s"].iloc[0])
    return pd.DataFrame({
        "threads": [_threads_label(t) for t in scan["threads"]],
        "wall [s]": [_num(v) for v in scan["wall_s"]],
        "min--max [s]": [f"{_num(a)}--{_num(b)}" for a, b in zip(scan["wall_min"], scan["wall_max"])],
        "rate [kHz]": [_num(v) for v in scan["khz"]],
        "speed-up": [_num(sequential / v) for v in scan["wall_s"]],
        "CPU eff.": [_num(v, 2) for v in scan["cpu_eff"]],
    })


def storage_table(table: pd.DataFrame, cpu: str, max_threads: int) -> pd.DataFrame:
    """Seed 002's benchmark table (its rates derived from 513M events) with our all-threads row."""
    from .. import paper

    ours = table[(table["part"] == "scan") & (table["threads"] == max_threads)].iloc[0]
    rows = [{"": "seed", "CPU": row.cpu, "storage": row.storage, "threads": str(row.threads),
             "CPU eff.": _num(row.cpu_eff, 2), "wall [s]": _num(row.wall_s),
             "rate [kHz]": _num(SEED_EVENTS_BENCHMARK / row.wall_s / 1e3)} for row in SEED_STORAGE.itertuples()]
    rows.append({"": "this run", "CPU": paper.escape(cpu), "storage": "page cache (warm)", "threads": str(max_threads),
                 "CPU eff.": _num(ours["cpu_eff"], 2), "wall [s]": _num(ours["wall_s"]),
                 "rate [kHz]": _num(ours["khz"])})
    return pd.DataFrame(rows)


def compression_table(table: pd.DataFrame, levels: dict[str, int], compressions: list[str],
                      max_threads: int) -> pd.DataFrame:
    """Seed 002's compression table beside ours: sizes (total, branches read), CPU efficiency and time
    at all threads; sizes also as ratios to LZMA, the comparison that travels."""
    ours = table[(table["part"] == "compression") & (table["threads"] == max_threads)].set_index("compression")
    seed = SEED_COMPRESSION.set_index("compression")
    base = ours.loc["LZMA"] if "LZMA" in ours.index else None
    rows = []
    for c in compressions:
        o = ours.loc[c]
        s = seed.loc[c] if c in seed.index else None
        rows.append({
            "algorithm": c if c == "none" else f"{c} ({levels.get(c, '?')})",
            "seed total [GB]": _num(s["total_gb"]) if s is not None else "--",
            "seed read [GB]": _num(s["read_gb"]) if s is not None else "--",
            "seed size / LZMA": _num(s["total_gb"] / seed.loc["LZMA", "total_gb"], 2) if s is not None else "--",
            "seed eff.": _num(s["ssd_eff"], 2) if s is not None else "--",
            "seed time [s]": _num(_seconds(s["ssd_time"])) if s is not None else "--",
            "total [MB]": _num(o["file_bytes"] / 1e6),
            "read [MB]": _num(o["read_zip_bytes"] / 1e6),
            "size / LZMA": _num(o["file_bytes"] / base["file_bytes"], 2) if base is not None else "--",
            "eff.": _num(o["cpu_eff"], 2),
            "wall [s]": _num(o["wall_s"]),
        })
    return pd.DataFrame(rows)


def nhist_table(table: pd.DataFrame, max_threads: int) -> pd.DataFrame:
    """Seed 002's number-of-histograms table beside ours (wall time also relative to one histogram)."""
    ours = table[(table["part"] == "nhist") & (table["threads"] == max_threads)].set_index("histograms")
    seed = SEED_NHIST.set_index("histograms")
    one = ours["wall_s"].get(1, math.nan)
    rows = []
    for n in sorted(set(ours.index) | set(seed.index)):
        s = seed.loc[n] if n in seed.index else None
        o = ours.loc[n] if n in ours.index else None
        rows.append({
            "histograms": str(n),
            "seed wall [s]": _num(s["wall_s"]) if s is not None else "--",
            "seed eff.": _num(s["cpu_eff"], 2) if s is not None else "--",
            "seed / 1 histo.": _num(s["wall_s"] / seed.loc[1, "wall_s"], 2) if s is not None else "--",
            "wall [s]": _num(o["wall_s"]) if o is not None else "--",
            "eff.": _num(o["cpu_eff"], 2) if o is not None else "--",
            "/ 1 histo.": _num(o["wall_s"] / one, 2) if o is not None else "--",
        })
    return pd.DataFrame(rows)


PDF_LABELS = {"defines": "Define + Histo2D per weight", "histo3d": "Histo3D trick",
              "histond": "HistoND, scalars + vectors", "vary": "Vary"}


def pdf_table(table: pd.DataFrame, max_threads: int) -> pd.DataFrame:
    """The PDF-weight methods: wall time, CPU efficiency and speed-up over one Define per weight."""
    ours = table[(table["part"] == "pdf") & (table["threads"] == max_threads)].set_index("method")
    reference = ours.loc["defines", "wall_s"]
    return pd.DataFrame([{
        "method": PDF_LABELS[m],
        "seed time [s]": _num(SEED_PDF[m]) if m in SEED_PDF else "--",
        "seed speed-up": _num(SEED_PDF["defines"] / SEED_PDF[m], 2) if m in SEED_PDF else "--",
        "wall [s]": _num(ours.loc[m, "wall_s"]),
        "CPU eff.": _num(ours.loc[m, "cpu_eff"], 2),
        "speed-up": _num(reference / ours.loc[m, "wall_s"], 2),
    } for m in ours.index])


def dask_table(dask: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """Distributed RDataFrame by workers, beside the compiled IMT run with as many threads."""
    scan = table[table["part"] == "scan"].set_index("threads")
    first = dask.sort_values("threads")["wall_s"].iloc[0]
    return pd.DataFrame([{
        "workers": str(row.threads), "partitions": str(int(row.npartitions)),
        "wall [s]": _num(row.wall_s), "rate [kHz]": _num(row.khz), "CPU eff.": _num(row.cpu_eff, 2),
        "speed-up": _num(first / row.wall_s, 2),
        "C++ IMT wall [s]": _num(scan.loc[row.threads, "wall_s"]) if row.threads in scan.index else "--",
    } for row in dask.sort_values("threads").itertuples()])


def agreement_table(agreement: pd.DataFrame) -> pd.DataFrame:
    from .. import paper

    return pd.DataFrame({
        "run": [paper.escape(r) for r in agreement["run"]],
        "reference": [paper.escape(r) for r in agreement["reference"]],
        "histograms": agreement["histograms"].astype(str),
        "bit-identical": ["yes" if v else "no" for v in agreement["identical"]],
        "max. rel. diff.": [_num(v, 2) if v > 0 else "0" for v in agreement["max_rel_diff"]],
    })


def rate_components_table(rs: dict[str, Any], measured: pd.DataFrame) -> pd.DataFrame:
    """R_IO, R_dec, R_proc, and R1 predicted from them beside R1 measured (one reader)."""
    def np1(cache: str) -> float:
        row = measured[(measured["cache"] == cache) & (measured["ttree_cache"] == "on") & (measured["processes"] == 1)]
        return float(row["rate"].iloc[0]) if len(row) else math.nan

    rows = [("R_IO, cold cache (raw bytes)", rs["r_io"].get("cold", math.nan), "--"),
            ("R_IO, warm cache (raw bytes)", rs["r_io"]["warm"], "--"),
            ("R_dec (decompress + deserialise, warm)", rs["r_dec"], f"{SEED_RDEC_MB_S[0]}--{SEED_RDEC_MB_S[1]}"),
            ("R_proc (processing, decompressed data)", rs["r_proc"], "--")]
    for cache in ("cold", "warm"):
        if cache in rs["r1_predicted"]:
            rows.append((f"R1 predicted, {cache}", rs["r1_predicted"][cache], "--"))
            rows.append((f"R1 measured, {cache}, one reader", np1(cache), "--"))
    from .. import paper

    return pd.DataFrame({"rate": [paper.escape(r[0]) for r in rows], "this run [MB/s]": [_num(r[1]) for r in rows],
                         "seed [MB/s]": [r[2] for r in rows]})


def rate_fit_table(rs: dict[str, Any]) -> pd.DataFrame:
    table = rs["table"]
    rows = []
    for fit in rs["fits"].itertuples():
        group = table[(table["cache"] == fit.cache) & (table["ttree_cache"] == fit.ttree_cache)]
        top = group.sort_values("processes").iloc[-1]
        rows.append({"cache": fit.cache, "TTreeCache": fit.ttree_cache, "R(1) [MB/s]": _num(fit.r_np1),
                     f"R(Np max) [MB/s]": _num(top["rate"]), "Np max": str(int(top["processes"])),
                     "fit R1 [MB/s]": _num(fit.r1),
                     "fit R_IO [MB/s]": _num(fit.r_io) if math.isfinite(fit.r_io) else "unbounded",
                     "dof": str(fit.dof)})
    return pd.DataFrame(rows)


def agreement_summary(agreement: pd.DataFrame) -> dict[str, Any]:
    return {"comparisons": len(agreement), "identical": int(agreement["identical"].sum()),
            "max_rel_diff": float(agreement["max_rel_diff"].max()) if len(agreement) else 0.0}


# ----------------------------------------------------------------------------------------------
# Figures

def scaling_figure(table: pd.DataFrame, dask: pd.DataFrame | None, amdahl: dict[str, Any],
                   usl: dict[str, Any] | None, extrapolate_to: int = 256):
    """Left: speed-up over the sequential run against threads, with the Amdahl (and USL) fit, solid
    where measured and dotted where extrapolated. Right: CPU efficiency, with the seed's 64- and
    256-thread figures."""
    import matplotlib.pyplot as plt

    scan = table[table["part"] == "scan"].sort_values("threads")
    imt = scan[scan["threads"] > 0]
    sequential = float(scan[scan["threads"] == 0]["wall_s"].iloc[0])
    top = int(imt["threads"].max())
    fig, (left, right) = plt.subplots(1, 2, figsize=(16, 7))
    left.errorbar(imt["threads"], sequential / imt["wall_s"],
                  yerr=[sequential / imt["wall_s"] - sequential / imt["wall_max"],
                        sequential / imt["wall_min"] - sequential / imt["wall_s"]],
                  marker="o", linestyle="none", color="C0", label="RDataFrame + IMT (C++), median")
    grid_in = np.linspace(1, top, 50)
    grid_out = np.geomspace(top, max(extrapolate_to, top), 50)
    left.plot(grid_in, sequential / amdahl["predict"](grid_in), color="C1",
              label=f"Amdahl fit, serial fraction {amdahl['serial_fraction']:.3f} ({amdahl['dof']} dof)")
    left.plot(grid_out, sequential / amdahl["predict"](grid_out), color="C1", linestyle=":",
              label="Amdahl, extrapolated")
    if usl is not None:
        left.plot(grid_in, sequential / usl["predict"](grid_in), color="C2", label=f"USL fit ({usl['dof']} dof)")
        left.plot(grid_out, sequential / usl["predict"](grid_out), color="C2", linestyle=":")
    if dask is not None and len(dask):
        left.errorbar(dask["threads"], sequential / dask["wall_s"], marker="s", linestyle="none", color="C3",
                      label="distributed RDataFrame on Dask (workers)")
    ideal = np.array([1, max(extrapolate_to, top)])
    left.plot(ideal, ideal, color="grey", linestyle="--", label="ideal")
    left.set(xscale="log", yscale="log", xlabel="threads (Dask: workers)", ylabel="speed-up vs sequential")
    left.legend(fontsize="xx-small", loc="upper left")
    right.plot(imt["threads"], imt["cpu_eff"], marker="o", color="C0", label="this run (page cache)")
    for row in SEED_STORAGE.itertuples():
        right.plot([row.threads], [row.cpu_eff], marker="x", linestyle="none", color="grey")
    right.plot([], [], marker="x", linestyle="none", color="grey", label="seed 002 (64 and 256 threads)")
    right.set(xscale="log", xlabel="threads", ylabel="CPU efficiency", ylim=(0, 1.1),
              xlim=(0.8, max(extrapolate_to, top) * 1.3))
    right.legend(fontsize="xx-small", loc="lower left")
    return fig


def rate_figure(rs: dict[str, Any], extrapolate_to: int = 24):
    """R(Np) measured (median, min-max), the fitted model (solid where measured, dotted beyond), the
    model predicted from R_IO, R_dec and R_proc measured separately (dashed), per cache state."""
    import matplotlib.pyplot as plt

    table, fits = rs["table"], rs["fits"]
    states = list(dict.fromkeys(table["cache"]))
    fig, axes = plt.subplots(1, len(states), figsize=(8 * len(states), 7), squeeze=False)
    for ax, cache in zip(axes[0], states):
        top = int(table[table["cache"] == cache]["processes"].max())
        grid_in = np.linspace(1, top, 50)
        grid_out = np.linspace(top, max(extrapolate_to, top), 50)
        for colour, (ttc, group) in zip(("C0", "C1"), table[table["cache"] == cache].groupby("ttree_cache")):
            group = group.sort_values("processes")
            ax.errorbar(group["processes"], group["rate"], yerr=[group["rate"] - group["rate_min"],
                                                                  group["rate_max"] - group["rate"]],
                        marker="o", linestyle="none", color=colour, label=f"measured, TTreeCache {ttc}")
            fit = fits[(fits["cache"] == cache) & (fits["ttree_cache"] == ttc)].iloc[0]
            ax.plot(grid_in, rate_model(grid_in, fit.r1, fit.r_io), color=colour,
                    label=f"fit, TTreeCache {ttc}: R1 {fit.r1:.3g}, R_IO {fit.r_io:.3g} MB/s ({fit.dof} dof)")
            ax.plot(grid_out, rate_model(grid_out, fit.r1, fit.r_io), color=colour, linestyle=":")
        if cache in rs["r1_predicted"]:
            grid = np.linspace(1, max(extrapolate_to, top), 100)
            ax.plot(grid, rate_model(grid, rs["r1_predicted"][cache], rs["r_io"][cache]), color="C2", linestyle="--",
                    label=f"predicted from R_IO, R_dec, R_proc (R1 {rs['r1_predicted'][cache]:.3g} MB/s)")
            ax.axhline(rs["r_io"][cache], color="grey", linestyle="-.", label=f"R_IO measured ({cache})")
        ax.set(xlabel="reader processes Np", ylabel="R [MB/s of file bytes]", title=f"{cache} cache", yscale="log")
        ax.legend(fontsize="xx-small", loc="lower right")
    return fig


def resolve_inputs(section: dict[str, Any], datasets_section: dict[str, Any], input_files: dict | None,
                   input_dir: str | None, results_dir: str | Path, progress: bool = True) -> dict[str, Any]:
    """The input files of every part: `input_files` (compression -> paths) if given; else the files
    of the workflow's data directory `input_dir` (which must all be there); else generated (or
    reused) under results_dir/data, for a standalone notebook."""
    if input_files is None and input_dir is not None:
        input_files = {c: [str(data_path(input_dir, c, section["events_per_file"], k)) for k in range(n)]
                       for c, n in file_sets(section).items()}
    if input_files is None:
        input_files = make_inputs(section, datasets_section, Path(results_dir) / "data", progress=progress)
    return select_inputs(section, input_files)


def paper_macros(params: dict[str, Any], table: pd.DataFrame, agreement: pd.DataFrame, info: dict[str, Any],
                 amdahl: dict[str, Any], usl: dict[str, Any] | None, dask: pd.DataFrame | None,
                 rs: dict[str, Any] | None, not_measured: dict[str, str], levels: dict[str, int],
                 max_threads_requested: int | None) -> dict[str, str]:
    """Every number the paper section quotes, as macro name -> LaTeX."""
    from .. import paper

    top = params["max_threads"]
    scan = table[table["part"] == "scan"].set_index("threads")
    sequential = scan.loc[0, "wall_s"]
    pdf = table[(table["part"] == "pdf") & (table["threads"] == top)].set_index("method")["wall_s"]
    agree = agreement_summary(agreement)
    n_pdf = info["pdf_count"] + int(params["pdf_nominal"])
    main_files = params["files"]
    seed_threads = sorted(set(SEED_STORAGE["threads"]))
    macros = {
        "RdfCores": str(usable_cores()),
        "RdfMaxThreads": str(top),
        "RdfMaxThreadsRequested": str(max_threads_requested or top),
        "RdfFiles": str(main_files),
        "RdfEventsPerFile": _num(params["events_per_file"]),
        "RdfEvents": _num(int(scan.loc[0, "events"])),
        "RdfCompression": params["compression"],
        "RdfLevel": str(levels.get(params["compression"], 0)),
        "RdfCompressionFiles": str(params["compression_files"]),
        "RdfCollection": paper.escape(params["collection"]),
        "RdfPdfBranch": paper.escape(params["pdf_weights_branch"]),
        "RdfPdfCount": str(info["pdf_count"]),
        "RdfPdfWeights": str(n_pdf),
        "RdfPdfVsSeed": ("as many as the seed's" if n_pdf == SEED_PDF_WEIGHTS else
                         f"against the seed's {SEED_PDF_WEIGHTS}"),
        "RdfPdfNominal": "with the nominal weight 1 put in front" if params["pdf_nominal"] else
                         "as they are (no nominal weight added)",
        "RdfRepetitions": str(params["repetitions"]), "RdfWarmup": str(params["warmup"]),
        "RdfSequentialKHz": _num(scan.loc[0, "khz"]),
        # Opening one file and its tree (measured by the kernel before its event loops), against one
        # file's share of the sequential event loop.
        "RdfOpenMs": _num(1e3 * scan.loc[0, "open_s"] / main_files, 2),
        "RdfLoopPerFileMs": _num(1e3 * sequential / main_files, 2),
        "RdfTopKHz": _num(scan.loc[top, "khz"]),
        "RdfTopSpeedup": _num(sequential / scan.loc[top, "wall_s"], 3),
        "RdfTopEff": _num(scan.loc[top, "cpu_eff"], 2),
        "RdfImtOneOverhead": _num(scan.loc[1, "wall_s"] / sequential, 3) if 1 in scan.index else "--",
        "RdfSerialFraction": _num(amdahl["serial_fraction"], 2),
        "RdfAmdahlDof": str(amdahl["dof"]),
        "RdfAmdahlPoints": str(amdahl["points"]),
        # Amdahl's law taken at its word at the seed's two machines' thread counts
        "RdfSpeedupSeedSmall": _num(float(sequential / amdahl["predict"](seed_threads[0])), 2),
        "RdfSpeedupSeedLarge": _num(float(sequential / amdahl["predict"](seed_threads[-1])), 2),
        "RdfUslNote": (f"The Universal Scalability Law, fitted too, gives contention "
                       f"$\\sigma = {usl['sigma']:.3g}$ and coherency $\\kappa = {usl['kappa']:.3g}$ "
                       f"({usl['dof']} degrees of freedom)." if usl else
                       f"The Universal Scalability Law has three parameters and needs at least four thread counts; "
                       f"this machine gives {amdahl['points']}, so it is not fitted here."),
        "RdfComparisons": str(agree["comparisons"]),
        "RdfIdentical": str(agree["identical"]),
        "RdfMaxRelDiff": _num(agree["max_rel_diff"], 2) if agree["max_rel_diff"] > 0 else "0",
        "RdfRtol": _num(params["rtol"], 2),
        "RdfAgreementText": (
            f"Here all {agree['comparisons']} comparisons are bit-identical: with these sizes every partial sum of "
            "the single-precision weights is exactly representable in double precision, so the order of the "
            "additions does not matter"
            if agree["identical"] == agree["comparisons"] else
            f"Here {agree['identical']} of {agree['comparisons']} comparisons are bit-identical; in the others sums "
            f"of weights differ by at most {agree['max_rel_diff']:.2g} (relative), within the tolerance"),
    }
    for method, name in (("histo3d", "Trick"), ("histond", "Histond"), ("vary", "Vary")):
        macros[f"Rdf{name}Speedup"] = _num(pdf["defines"] / pdf[method], 2) if method in pdf.index else "--"
    nhist = table[(table["part"] == "nhist") & (table["threads"] == top)].set_index("histograms")["wall_s"]
    counts_ = sorted(nhist.index)
    macros["RdfNhistMax"] = str(counts_[-1]) if counts_ else "--"
    macros["RdfNhistRatio"] = _num(nhist[counts_[-1]] / nhist[counts_[0]], 2) if len(counts_) > 1 else "--"
    if dask is not None and len(dask):
        d = dask.sort_values("threads")
        macros["RdfDaskWorkers"] = str(int(d["threads"].iloc[-1]))
        largest = int(d["threads"].iloc[-1])
        macros["RdfDaskWorkersText"] = f"{largest} worker" + ("s" if largest > 1 else "")
        macros["RdfDaskSpeedup"] = _num(d["wall_s"].iloc[0] / d["wall_s"].iloc[-1], 2)
        macros["RdfDaskOverCpp"] = _num(d["wall_s"].iloc[-1] / scan.loc[int(d["threads"].iloc[-1]), "wall_s"], 3) \
            if int(d["threads"].iloc[-1]) in scan.index else "--"
        macros["RdfDaskMode"] = ("on the configured scheduler" if params["dask"]["scheduler"] else
                                 "on a local cluster of single-threaded worker processes")
    else:
        macros.update({"RdfDaskWorkers": "0", "RdfDaskWorkersText": "no workers", "RdfDaskSpeedup": "--",
                       "RdfDaskOverCpp": "--",
                       "RdfDaskMode": "not run (rdataframe.dask.enabled is false)"})
    if rs is not None:
        fits = rs["fits"]
        macros.update({
            "RdfRateFiles": str(params["rate_model"]["files"]),
            "RdfRateCompression": params["rate_model"]["compression"],
            "RdfRateMB": _num(rs["size_mb"]),
            "RdfRateMaxNp": str(int(rs["table"]["processes"].max())),
            "RdfRateDof": str(int(fits["dof"].max())) if len(fits) else "--",
            "RdfRIOCold": _num(rs["r_io"].get("cold", math.nan)),
            "RdfRIOWarm": _num(rs["r_io"]["warm"]),
            "RdfRDec": _num(rs["r_dec"]), "RdfRProc": _num(rs["r_proc"]),
            "RdfROnePredCold": _num(rs["r1_predicted"].get("cold", math.nan)),
            "RdfROnePredWarm": _num(rs["r1_predicted"]["warm"]),
            "RdfTSetupShare": _num(rs["t_setup"] / rs["t_dec"], 2),
            "RdfLimiter": min([(rs["r_dec"], "decompression and deserialisation"), (rs["r_proc"], "processing"),
                               (rs["r_io"].get("cold", rs["r_io"]["warm"]), "the device (raw read)")])[1],
        })
        # Where Eq. (1) saturates, N_p = R_IO / R_1, from the separately measured rates (cold
        # cache where measured), against the most reader processes this run started.
        cache = "cold" if "cold" in rs["r_io"] and "cold" in rs["r1_predicted"] else "warm"
        saturation = rs["r_io"][cache] / rs["r1_predicted"][cache]
        max_np = int(rs["table"]["processes"].max())
        macros.update({"RdfSaturationNp": _num(saturation, 2), "RdfSaturationCache": cache,
                       "RdfSaturationVerdict": "more than" if saturation > max_np else "no more than"})
    else:
        macros.update({k: "--" for k in ("RdfRateFiles", "RdfRateCompression", "RdfRateMB", "RdfRateMaxNp",
                                          "RdfRateDof", "RdfRIOCold", "RdfRIOWarm", "RdfRDec", "RdfRProc",
                                          "RdfROnePredCold", "RdfROnePredWarm", "RdfTSetupShare", "RdfLimiter",
                                          "RdfSaturationNp", "RdfSaturationCache", "RdfSaturationVerdict")})
    macros["RdfNotMeasured"] = paper.escape("; ".join(f"{k}: {v}" for k, v in not_measured.items())) or "nothing"
    return macros
