"""What Snakemake and the configuration check take from the GPU bandwidth experiment: its
config section's check against this machine (sizes against its memory, threads against its
cores). Cheap to import (no numpy, numba, cupy, pandas: checked by tests/unit/test_architecture.py);
the measured code, analysis and report import from here."""
from __future__ import annotations

import ctypes
from typing import Any

from ...setup import machine_fit
from ...setup.spec import Spec
from ...setup.config import usable_cores

MIB = 2**20


def driver_present() -> bool:
    """Whether the NVIDIA driver library can be loaded (no driver: no GPU to use)."""
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    return True


def max_threads(params: dict[str, Any]) -> int:
    """Threads of the parallel CPU runs: max_threads, or every usable core where it is null."""
    return params["max_threads"] or usable_cores()


def resolve_counts(params: dict[str, Any]) -> dict[str, Any]:
    """`params` with max_threads null replaced by the usable cores (Spec.parameters applies it)."""
    return {**params, "max_threads": max_threads(params)}


def expected_pairs_per_event(mean: int) -> float:
    """Mean of n(n-1)/2 for n uniform in 0..2*mean."""
    return mean * (2 * mean - 1) / 3


def jagged_bytes(events: int, mean: int) -> int:
    """Host memory of one jagged run, float64, with awkward's temporaries (an estimate)."""
    particles, pairs = events * mean, events * expected_pairs_per_event(mean)
    return int(8 * (6 * pairs + 4 * particles + 3 * events))


def check_config(section: dict[str, Any], fit: machine_fit.Fitter) -> None:
    """Sizes against this machine's memory and threads against its cores (see throughput.setup.machine_fit)."""
    budget = fit.memory_budget
    fit.size(section, "cpu_array_mib", 2 * section["cpu_array_mib"] * MIB, budget // (2 * MIB) or None,
             "the host copy's two arrays")
    # explode/combine's memory is not linear in the events (pairs grow with the
    # multiplicity): refused rather than fitted
    fit.size(section, "events", jagged_bytes(section["events"], section["mean_particles"]), None,
             f"explode/combine on the CPU (mean_particles = {section['mean_particles']})")
    if driver_present():
        # Host buffers of the GPU cases: source, pinned copy and read-back.
        fit.size(section, "gpu_array_mib", 3 * section["gpu_array_mib"] * MIB, budget // (3 * MIB) or None,
                 "the GPU cases' three host buffers")
    fit.count(section, "max_threads", usable_cores())


# This experiment's kernels and outputs, declared once (throughput.setup.spec); seed 000, Table 2.
SPEC = Spec("gpu_bandwidth",
            kernels=("host_copy",), cuda_kernels=("gpu_bandwidth_cuda",),
            figures=("table2", "jagged"),
            tables=("table2", "gpu_detail", "launch_table", "jagged_table", "machines_table", "archived_detail", "archived_jagged"),
            shows_archived=True, check_config=check_config, resolve_counts=resolve_counts)
