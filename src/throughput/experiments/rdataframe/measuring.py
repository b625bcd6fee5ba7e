"""Measuring with the compiled kernels: the file lists they read, the page cache set and checked
by the page_cache tool, what a stored run's reuse key holds (also for the Dask runs and the rate model),
and the compiled RDataFrame runs (rdf_bench): their plan, arguments and groups, measured
interleaved (throughput.core.experiment) or reused."""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Iterable

import pandas as pd

from ...core import experiment, harness, noise, provenance
from .spec import SPEC
from ...core.results import atomic_path, input_identity, kernel_sha256
from .spec import counts

KERNELS = SPEC.kernels


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
    return harness.run_kernel("page_cache", {"file-list": _list_file(files, work_dir), "mode": state}).validation


def cache_columns(state: str, prepared: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The page-cache state a run was measured in, as columns of its rows: the state, and the pages
    found resident by the page_cache tool (validation records; one per host for Dask). The fraction is the
    least resident host's (one host: resident / pages)."""
    prepared = list(prepared)
    if not prepared:
        raise ValueError("no page-cache state was set up")
    fractions = [p["resident"] / p["pages"] if p["pages"] else 1.0 for p in prepared]
    return {"cache": state, "resident_pages": sum(int(p["resident"]) for p in prepared),
            "pages": sum(int(p["pages"]) for p in prepared), "resident_fraction": min(fractions),
            "cache_hosts": len(prepared)}


def _cache_note(columns: dict[str, Any]) -> str:
    return (f"{columns['cache']} (every file set and checked by the page_cache tool first; resident fraction "
            f"{columns['resident_fraction']:.4f}, {columns['resident_pages']} of {columns['pages']} pages, "
            f"{columns['cache_hosts']} host(s))")


# ----------------------------------------------------------------------------------------------
# The compiled RDataFrame runs

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
                output: Path | None, settings: noise.Settings = noise.Settings()) -> dict[str, Any]:
    """rdf_bench's arguments for one pass of `run`: its warm-up event loops, then one timed
    sample of as many loops as reach settings.min_sample_s (its row's `loops`; wall_s and cpu_s
    their sum), taken again while settings.sample_retakes says its threads waited too long for a CPU."""
    args = {"file-list": file_list, "workload": run["workload"], "threads": run["threads"],
            "reps": 1, "warmup": params["warmup"], "collection": params["collection"],
            "pdf-branch": params["pdf_weights_branch"], "pdf-count": pdf_count,
            "pdf-nominal": int(params["pdf_nominal"]), "rtol": params["rtol"],
            **settings.calibration_kernel_args(), **settings.sample_retakes.kernel_args()}
    if run["workload"] == "pdf":
        args["method"] = run["method"]
    if run["workload"] == "nhist":
        args["histograms"] = run["histograms"]
    if output is not None:
        args["output"] = output
    return args


def _measure_pass(run, params, files, pdf_count, work_dir, hist_path, settings):
    """One rdf_bench process of `run` on warm files: the interleaving loop calls it once per round."""
    cache = cache_columns("warm", [set_cache(files, "warm", work_dir)])
    hist_path.parent.mkdir(parents=True, exist_ok=True)
    result = harness.run_kernel("rdf_bench", kernel_args(run, params, pdf_count, _list_file(files, work_dir),
                                                         hist_path, settings))
    frame = result.timings
    v = result.validation
    for key in ("file_bytes", "read_zip_bytes", "read_tot_bytes", "selected", "reps_identical", "reps_max_rel_diff",
                "open_s"):
        frame[key] = v[key]
    frame["files"] = len(files)
    frame["final_hash"] = v["content_hash"]
    for key in ("part", "compression", "reference"):
        frame[key] = run[key]
    frame["method"] = run["method"]
    frame = frame.assign(**cache)
    return frame, provenance.capture(params, cache_state=_cache_note(cache), build_info=result.build_info)


def cpp_groups(params: dict[str, Any], runs: list[dict[str, Any]] | None = None) -> list[experiment.Group]:
    """The compiled runs that ratios compare (`runs`, default `cpp_plan`), one group
    per part: the thread counts of the scan, the histogram counts, the PDF methods,
    the compressions (each part with its sequential reference run)."""
    grouped: dict[str, list[dict[str, Any]]] = {}
    for run in runs if runs is not None else cpp_plan(params):
        grouped.setdefault(run["part"], []).append(run)
    return [experiment.Group(part, runs) for part, runs in grouped.items()]


def measure_cpp(params: dict[str, Any], inputs: dict[str, Any], pdf_count: int, results_dir: str | Path,
                noise_settings: noise.Settings | None = None, progress: bool = True) -> pd.DataFrame:
    """Run (or reuse, when stored with the same parameters, inputs and binary on
    this machine) every compiled run of `cpp_plan`, the runs of each group of
    `cpp_groups` interleaved pass by pass; histograms go to results_dir/histograms/."""
    results_dir = Path(results_dir)
    raw, hists, work = results_dir / "raw", results_dir / "histograms", results_dir / "work"
    binary = kernel_sha256(harness.kernel_path("rdf_bench"))
    runs = cpp_plan(params)
    for run in runs:
        if not (hists / f"{run['name']}.root").exists():
            (raw / f"{run['name']}.parquet").unlink(missing_ok=True)  # its histograms are needed for the cross-checks

    def key_of(run: dict[str, Any]) -> dict[str, Any]:
        return {**_common_key(params, pdf_count), **run, "inputs": input_identity(_run_files(run, inputs)),
                "binary_sha256": binary}

    settings = noise_settings or noise.Settings()
    frame = experiment.measure_interleaved(
        cpp_groups(params, runs), raw, key_of,
        lambda run, _round: _measure_pass(run, params, _run_files(run, inputs), pdf_count, work,
                                          hists / f"{run['name']}.root", settings),
        params["repetitions"], settings, desc="RDataFrame runs", progress=progress)
    frame["name"] = frame["run"]
    # What the plan asked for (the key holds it, so a reused frame is this run's): the
    # agreement check compares what was produced with it.
    asked = {run["name"]: run["histograms"] for run in runs}
    return frame.assign(histograms_asked=frame["run"].map(asked))
