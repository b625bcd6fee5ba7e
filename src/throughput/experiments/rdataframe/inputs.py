"""The input files: where each lives, generated (or reused) or taken from the workflow's data
directory, the files of each part, and the check of every file, branch and the scheduler before
the first measurement (preflight)."""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Iterable

from tqdm.auto import tqdm

from ...inputs import datasets
from ...core import harness
from ...setup.config import usable_cores
from .dask_scheduler import connect_scheduler
from .measuring import _list_file
from .spec import data_path, file_sets


class InputError(ValueError):
    """A missing or unreadable input file, or a tree or branch that is not there."""


# Branches every workload reads besides the collection's and the PDF weights.
FIXED_BRANCHES = ("MET_pt", "nJet", "Jet_pt", "Jet_eta", "PV_npvs")


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
