"""Sizes of the runs, and the check of the configuration against the GPU's free memory
(its check against this machine is spec.check_config)."""
from __future__ import annotations

from typing import Any

import numpy as np

from ...setup.config import ConfigError
from .device import GpuStatus
from .spec import MIB, expected_pairs_per_event


def values_per_array(mib: int, dtype: str) -> int:
    return mib * MIB // np.dtype(dtype).itemsize


def check_device_fit(params: dict[str, Any], status: GpuStatus) -> None:
    """Stop before measuring if the GPU cases do not fit the device's free memory."""
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
