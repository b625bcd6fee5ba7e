"""What the configuration check takes from the writing experiment: its config section fitted
to this machine (threads to the cores; the tmpfs and disk directories writable with room for one
output; memory for the events, an in-memory output and every thread's buffers). Cheap to import
(no ROOT, numpy, pandas: checked by tests/unit/test_architecture.py); the measured code, analysis
and report import from here."""
from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import psutil

from ...setup import machine_fit
from ...setup.spec import Spec
from ...setup.config import MEMORY_SHARE, directory_problem, usable_cores
from ...inputs.layout import data_files, file_count

# Uncompressed bytes of one NanoAOD-like event with all 947 branches (measured
# here: 3125 on 5000 events); used only to check memory and disk before running.
EVENT_BYTES_ESTIMATE = 3200
# The same for one AOD-like event's data products, small arrays included (measured here: 16834
# on 500 events, ROOT-serialized by simple_root).
AOD_EVENT_BYTES_ESTIMATE = 17000
PROCESS_BYTES = 300 * 10**6  # ROOT's libraries and the kernel itself (about 210 MB measured here)
THREAD_BYTES = 40 * 10**6    # a TTree's basket buffers for every branch, per writing thread


def filesystem_type(path: str | os.PathLike) -> str:
    """The type of the file system holding `path` (the mount with the longest matching prefix)."""
    real = os.path.realpath(path)
    best, fstype = "", "unknown"
    for part in psutil.disk_partitions(all=True):  # later mounts shadow earlier ones at the same point
        mount = part.mountpoint
        inside = mount == "/" or real == mount or real.startswith(mount.rstrip("/") + "/")
        if inside and len(mount) >= len(best):
            best, fstype = mount, part.fstype
    return fstype


def _largest_file(section: dict[str, Any]) -> float:
    scale = 2 if section["setup_parts"] else 1  # the set-up runs write twice the entries
    return scale * max(section["random_mb"] * 1e6, 2.0 * section["events"] * EVENT_BYTES_ESTIMATE) * 1.2


def check_config(section: dict[str, Any], fit: machine_fit.Fitter) -> None:
    """Fit this section to the machine (see throughput.setup.machine_fit): threads to
    the usable cores; the tmpfs directory must be a writable tmpfs with room for one
    output; a given disk directory must be writable (or makeable) with room for one;
    memory must hold the events, an in-memory output and every thread's buffers."""
    problems, cores = fit.problems, usable_cores()
    fit.count(section, "max_threads", cores)  # null stays null (every core; resolve_threads)
    threads = min(section["max_threads"] or cores, cores)
    used = set(section["media"]) | set(section["event_media"])
    largest = _largest_file(section)
    if "tmpfs" in used:
        tmpfs = Path(section["tmpfs_dir"])
        problem = directory_problem("writing.tmpfs_dir", tmpfs)
        if problem:
            problems.append(problem)
        elif filesystem_type(tmpfs) != "tmpfs":
            problems.append(f"config key 'writing.tmpfs_dir' = {section['tmpfs_dir']!r}: is on "
                            f"{filesystem_type(tmpfs)}, not on a tmpfs")
        elif shutil.disk_usage(tmpfs).free < largest:
            problems.append(f"config key 'writing.tmpfs_dir' = {section['tmpfs_dir']!r}: "
                            f"{shutil.disk_usage(tmpfs).free / 1e6:.0f} MB free, one output needs about "
                            f"{largest / 1e6:.0f} MB (lower writing.random_mb or writing.events)")
    if section["disk_dir"] is not None and used & {"disk", "slow"}:
        disk = Path(section["disk_dir"])
        # medium_dirs makes it when missing, so its parent must take it
        problem = directory_problem("writing.disk_dir", disk, create=True)
        free = None if problem else shutil.disk_usage(disk if disk.is_dir() else disk.parent).free
        if problem:
            problems.append(problem)
        elif free < largest:
            problems.append(f"config key 'writing.disk_dir' = {section['disk_dir']!r}: "
                            f"{free / 1e6:.0f} MB free, one output needs about {largest / 1e6:.0f} MB")
    events_bytes = section["events"] * EVENT_BYTES_ESTIMATE
    # The events in memory, and as much again in RNTuple's page buffers (its default
    # clusters, 128 MiB per fill context, can hold them all); one in-memory output;
    # every thread's basket buffers and flushed data.
    # The data products' events: as columns, as objects, and an in-memory output.
    objects_bytes = 1.5 * section["object_events"] * AOD_EVENT_BYTES_ESTIMATE
    event_keys = ["events"] if events_bytes >= objects_bytes else ["object_events"]
    events_bytes = max(events_bytes, objects_bytes) * (2 if section["setup_parts"] else 1)
    # what needs the memory, each part with the keys that size it (the largest part's are named)
    parts = [(2 * events_bytes, "events in memory", event_keys),
             (largest, "an in-memory output", ["random_mb", "events"]),
             (threads * (THREAD_BYTES + 3 * section["flush_mb"] * 1e6), f"{threads} threads' buffers",
              ["flush_mb", "max_threads"])]
    need = PROCESS_BYTES + sum(bytes_ for bytes_, _, _ in parts)
    budget = fit.memory_budget
    if need > budget:
        _, what, keys = max(parts, key=lambda part: part[0])
        named = " / ".join(f"'writing.{key}' = {section[key]}" for key in keys)
        problems.append(f"config key {named}: a writing run needs about {need / 1e9:.3g} GB of memory, most of it "
                        f"for {what} ({', '.join(f'{w} {b / 1e9:.3g} GB' for b, w, _ in parts)}), "
                        f"only {budget / 1e9:.1f} GB may be used ({MEMORY_SHARE:.0%} of {fit.available_memory / 1e9:.1f} "
                        f"GB available)")


def input_files(section: dict[str, Any], datasets: dict[str, Any],
                data_dir: str | os.PathLike = "data") -> tuple[list[str], list[str]]:
    """The files it reads, making none: enough of the shared NanoAOD-like files (datasets.events_per_file
    events each) for writing.events (the kernel replays them where there are fewer), and the first flat
    MiniAOD-like file (the one the reader comparison reads) that the data products are built from;
    none for a workload the section leaves out. The workflow's rules (rules/writing.smk) and a
    standalone notebook (entry.input_files, which makes what is missing) take them from here."""
    compression = datasets["compression"]
    nanoaod = (data_files(data_dir, "nanoaod", compression, file_count(section["events"], datasets["events_per_file"]))
               if section["event_methods"] else [])
    aod = data_files(data_dir, "aod", compression, 1) if section["object_events"] else []
    return nanoaod, aod


def resolve_threads(params: dict[str, Any]) -> dict[str, Any]:
    """`params` with max_threads null replaced by the usable cores."""
    return {**params, "max_threads": params["max_threads"] or usable_cores()}


# This experiment's kernels and outputs, declared once (throughput.setup.spec); seeds 001 and 003.
SPEC = Spec("writing",
            kernels=("write_bench", "read_simple"),
            figures=("random_runtime", "random_speedup", "random_memory", "events_scaling"),
            tables=("random_table", "events_table", "seed001_table", "seed001_size_table", "seed001_setup_table",
                   "seed003_table", "machine_table"), shows_archived=True,
            check_config=check_config, resolve_counts=resolve_threads)
