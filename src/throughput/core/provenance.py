"""Where, when and how a measurement was made; stored with every raw result."""
from __future__ import annotations

import datetime as dt
import glob
import importlib.metadata
import os
import platform
import subprocess
from pathlib import Path
from typing import Any

import psutil

from .. import REPO
from ..setup import machine_fit

# The config key warm_min_resident reaches every kernel (and the Python and Java
# readers through the page_cache kernel) in this variable: one hand-off instead
# of an option on each of the six programs that warm files.
WARM_MIN_RESIDENT_ENV = "THROUGHPUT_WARM_MIN_RESIDENT"
DEFAULT_WARM_MIN_RESIDENT = 0.99

PACKAGES = ("root", "numpy", "numba", "pandas", "pyarrow", "uproot", "awkward", "snakemake", "papermill")


def _run(argv: list[str]) -> str | None:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None


# A copy of the tree without its .git (a GPU node: throughput.node) is told its commit.
COMMIT_ENV = "THROUGHPUT_COMMIT"


def git_state() -> dict[str, Any]:
    """Commit of the project and whether tracked files differ from it."""
    commit = _run(["git", "-C", str(REPO), "rev-parse", "HEAD"])
    if commit is None and os.environ.get(COMMIT_ENV):
        return {"git_commit": os.environ[COMMIT_ENV], "git_dirty": None}  # dirty: unknown without .git
    if commit is None:
        return {"git_commit": "unknown (not a git checkout)", "git_dirty": None}
    status = _run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"])
    return {"git_commit": commit, "git_dirty": bool(status)}


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def numa_nodes() -> int:
    return len(glob.glob("/sys/devices/system/node/node[0-9]*")) or 1


def last_level_cache_bytes() -> int | None:
    """Size of the largest CPU cache of core 0 (from sysfs), None where unknown."""
    sizes = []
    for path in glob.glob("/sys/devices/system/cpu/cpu0/cache/index*/size"):
        text = Path(path).read_text().strip()
        units = {"K": 2**10, "M": 2**20, "G": 2**30}
        sizes.append(int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text))
    return max(sizes) if sizes else None


def package_versions() -> dict[str, str]:
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def machine() -> dict[str, Any]:
    """What the hardware and operating system are."""
    return {
        "hostname": platform.node(),
        "cpu_model": cpu_model(),
        "logical_cores": os.cpu_count(),
        "usable_cores": len(os.sched_getaffinity(0)),
        "numa_nodes": numa_nodes(),
        "last_level_cache_bytes": last_level_cache_bytes(),
        "memory_bytes": psutil.virtual_memory().total,
        "os_kernel": platform.release(),
        "python": platform.python_version(),
    }


def gpus() -> list[str]:
    """'model, driver' of each NVIDIA GPU (from nvidia-smi); empty where there is none."""
    listing = _run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"])
    return [line.strip() for line in (listing or "").splitlines() if line.strip()]


def fingerprint() -> dict[str, Any]:
    """What identifies the machine a result was measured on: a stored run is
    reused only where this is the same (throughput.core.results.reuse_key)."""
    host = machine()
    return {"hostname": host["hostname"], "cpu_model": host["cpu_model"],
            "logical_cores": host["logical_cores"], "memory_bytes": host["memory_bytes"], "gpus": gpus()}


def capture(config: dict[str, Any], cache_state: str, build_info: dict[str, Any] | None = None,
            pinned_core: int | None = None) -> dict[str, Any]:
    """Full provenance of one run.

    `cache_state` says what the file cache held ("warm", "cold", or "n/a" for
    in-memory benchmarks); `build_info` is what the kernel reported about its
    compiler and flags (None for pure-Python measurements); `pinned_core` the core
    its single-threaded process was pinned to (None: not pinned; harness.single_core).
    """
    return {
        "date_utc": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        **git_state(),
        **machine(),
        "gpus": gpus(),
        "packages": package_versions(),
        "compiler": (build_info or {}).get("compiler", "n/a (Python)"),
        "cxx_flags": (build_info or {}).get("cxx_flags", "n/a (Python)"),
        "cache_state": cache_state,
        "pinned_core": pinned_core,
        # what "warm" had to reach (kernels/common/page_cache.hpp)
        "warm_min_resident": float(os.environ.get(WARM_MIN_RESIDENT_ENV, DEFAULT_WARM_MIN_RESIDENT)),
        # whether this run had the machine's measurement lock (throughput.core.measurement_lock)
        "measurement_lock": os.environ.get("THROUGHPUT_MEASUREMENT_LOCK", "not held (run outside throughput.core.notebook)"),
        "config": config,
        # config values lowered to fit this machine (throughput.setup.machine_fit)
        "fitted_to_machine": machine_fit.recorded(),
    }
