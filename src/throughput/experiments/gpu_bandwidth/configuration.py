"""Sizes of the runs, and the checks of the configuration against this machine
(throughput.setup.config calls check_config) and against the GPU's free memory."""
from __future__ import annotations

from typing import Any

import numpy as np

from ...setup import machine_fit
from ...setup.config import usable_cores
from .cases import MIB
from .device import GpuStatus, driver_present


def max_threads(params: dict[str, Any]) -> int:
    """Threads of the parallel CPU runs: max_threads, or every usable core where it is null."""
    return params["max_threads"] or usable_cores()


def values_per_array(mib: int, dtype: str) -> int:
    return mib * MIB // np.dtype(dtype).itemsize


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


def check_device_fit(params: dict[str, Any], status: GpuStatus) -> None:
    """Stop before measuring if the GPU cases do not fit the device's free memory."""
    from ...setup.config import ConfigError

    if not status.device:
        return
    free = status.device["free_bytes"]
    problems = []
    need = 2 * params["gpu_array_mib"] * MIB  # two arrays alive (copy, immutable)
    if need > 0.9 * free:
        problems.append(f"config key 'gpu_bandwidth.gpu_array_mib' = {params['gpu_array_mib']}: two arrays need "
                        f"{need / 1e9:.1f} GB, the GPU has {free / 1e9:.1f} GB free")
    events, mean = params["gpu_events"], params["mean_particles"]
    need = 8 * (events * expected_pairs_per_event(mean) + 2 * events * mean + 4 * events)
    if need > 0.9 * free:
        problems.append(f"config key 'gpu_bandwidth.gpu_events' = {events}: combine needs about {need / 1e9:.1f} GB "
                        f"on the GPU, which has {free / 1e9:.1f} GB free")
    if problems:
        raise ConfigError(problems)
