"""What Snakemake and the configuration check take from the memory bandwidth experiment: its
config section's check against this machine. Cheap to import (no numpy, numba, pandas: checked by
tests/unit/test_architecture.py); the measured code, analysis and report import from here."""
from __future__ import annotations

from typing import Any

from ...setup import machine_fit
from ...setup.spec import Spec
from ...setup.config import usable_cores

MIN_VALUES = 1000  # the schema's minimum of memory_bandwidth.n_values
ARRAYS_ALIVE = 3  # STREAM keeps three arrays; the immutable cases two


def check_config(section: dict[str, Any], fit: machine_fit.Fitter) -> None:
    """Fit this section to the machine (see throughput.setup.machine_fit): the arrays to
    the memory a run may use, threads to the cores (null: every core)."""
    largest = fit.memory_budget // (ARRAYS_ALIVE * 8)
    fit.size(section, "n_values", ARRAYS_ALIVE * 8 * section["n_values"],
             largest if largest >= MIN_VALUES else None, f"{ARRAYS_ALIVE} arrays of 8-byte values")
    cores = usable_cores()
    if section["max_threads"] is None:
        section["max_threads"] = cores
    # numba refuses more threads than cores, and oversubscribed threads would
    # measure the scheduler rather than the memory bus.
    fit.count(section, "max_threads", cores)


# This experiment's kernels and outputs, declared once (throughput.setup.spec); seed 000, "Memory bandwidth".
SPEC = Spec("memory_bandwidth",
            # rdf_raw_read and page_cache: the hierarchy's cold file read (config key hierarchy)
            kernels=(*(f"add_constant_O{level}" for level in range(4)), "stream_O3", "rdf_raw_read", "page_cache"),
            figures=("thread_scaling", "opt_levels"),
            tables=("opt_table", "ratio_table", "machine_table"), shows_archived=True,
            check_config=check_config)
