"""What Snakemake and the configuration check take from the RDataFrame experiment: its config
section against this machine (thread, worker and process counts resolved to the usable cores,
check_config, called by throughput.configuration before any job starts), the input files each
part needs and where each lives. Cheap to import (no ROOT, numpy, pandas, dask: checked by
tests/unit/test_architecture.py); the measured code, analysis and report import from here."""
from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

from ...setup import machine_fit
from ...setup.spec import Spec
from ...inputs.layout import BYTES_PER_EVENT_ESTIMATE
from ...setup.config import thread_counts, usable_cores
from .dask_scheduler import scheduler_problem

# The I/O rate model may oversubscribe the cores: a reader waiting on I/O leaves its core to
# another, and the model's saturation (R_IO) shows only once readers compete for the device.
# Its process counts go up to this many per usable core.
RATE_PROCESSES_PER_CORE = 3


def resolve_counts(section: dict[str, Any], cores: int | None = None) -> dict[str, Any]:
    """A copy of the section with thread, worker and process counts resolved for this machine:
    null -> every usable core, RATE_PROCESSES_PER_CORE per core for the rate model's reader
    processes (check_config has fitted or refused counts above these)."""
    cores = cores or usable_cores()
    out = copy.deepcopy(section)
    for holder, key, limit in ((out, "max_threads", cores), (out["dask"], "max_workers", cores),
                               (out["rate_model"], "max_processes", RATE_PROCESSES_PER_CORE * cores)):
        if holder[key] is None or holder[key] > limit:
            holder[key] = limit
    return out


def file_sets(section: dict[str, Any]) -> dict[str, int]:
    """Files needed per compression: the main set, the compression table's, the rate model's."""
    need: dict[str, int] = {section["compression"]: section["files"]}
    for compression in section["compressions"]:
        need[compression] = max(need.get(compression, 0), section["compression_files"])
    if section["rate_model"]["enabled"]:
        rate = section["rate_model"]
        need[rate["compression"]] = max(need.get(rate["compression"], 0), rate["files"])
    return need


def data_path(root: str | os.PathLike, compression: str, events: int, index: int) -> Path:
    """Where file `index` of a set lives (the workflow's rule makes the same paths under data/rdataframe)."""
    return Path(root) / compression / f"e{events}" / f"part{index}.root"


def check_config(section: dict[str, Any], fit: machine_fit.Fitter) -> None:
    """Check this section against the machine (see throughput.setup.machine_fit): thread, worker and
    process counts within the cores, the scheduler reachable, the input files' size on disk."""
    problems, cores = fit.problems, usable_cores()
    rate, dask = section["rate_model"], section["dask"]
    fit.count(section, "max_threads", cores)
    fit.count(rate, "max_processes", cores, path="rate_model.", per_core=RATE_PROCESSES_PER_CORE)
    if dask["scheduler"] is None:
        fit.count(dask, "max_workers", cores, path="dask.")
    elif dask["enabled"]:
        problem = scheduler_problem(dask["scheduler"], dask["connect_timeout_s"])
        if problem:
            problems.append(problem)
    if section["pdf_methods"] and "defines" not in section["pdf_methods"]:
        problems.append(f"config key 'rdataframe.pdf_methods' = {section['pdf_methods']}: must include 'defines' "
                        "(the seed's reference method every other is compared with)")
    sets = file_sets(section)
    need = sum(n * section["events_per_file"] * BYTES_PER_EVENT_ESTIMATE[c] for c, n in sets.items())
    problem = machine_fit.disk_problem(need, f"config key 'rdataframe.files' = {section['files']} (with "
                                             f"rdataframe.events_per_file = {section['events_per_file']}, "
                                             f"compression_files and rate_model.files): the input files")
    if problem:
        problems.append(problem)


def counts(maximum: int, spacing: str) -> list[int]:
    """Thread or process counts: 1..maximum ('every') or 1, 2, 4, ..., maximum ('doubling')."""
    return list(range(1, maximum + 1)) if spacing == "every" else thread_counts(maximum)


# This experiment's kernels and outputs, declared once (throughput.setup.spec); seeds 002 and 004.
SPEC = Spec("rdataframe",
            kernels=("rdf_bench", "rdf_rate_reader", "rdf_raw_read", "page_cache"),
            figures=("scaling", "rate_model"),
            tables=("scaling_table", "storage_table", "compression_table", "nhist_table", "pdf_table",
                   "dask_table", "agreement_table", "rate_components_table", "rate_fit_table", "machine_table"),
            shows_archived=True, check_config=check_config, resolve_counts=resolve_counts)
