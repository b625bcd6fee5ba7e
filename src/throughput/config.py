"""The study's configuration: defaults, validation and resource checks.

The schema (workflow/schemas/config.schema.yaml) is the one place where keys,
defaults and allowed values are defined. `validate` fills the defaults, checks
every value against the schema, then (once the values are well-formed) checks
that sizes and thread counts fit this machine's memory, disk and cores. All
problems of a stage are reported at once, each naming its key and value,
before any job starts.
"""
from __future__ import annotations

import copy
import os
import shutil
from pathlib import Path
from typing import Any, Callable

import jsonschema
import psutil
import yaml

from . import REPO

SCHEMA_PATH = REPO / "workflow" / "schemas" / "config.schema.yaml"
DEFAULT_CONFIG = REPO / "config" / "config.yaml"
# Share of the available memory one benchmark may take: the rest is for the
# OS, Python and the file cache.
MEMORY_SHARE = 0.6


class ConfigError(ValueError):
    """One or more configuration problems, each naming its key."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("invalid configuration:\n" + "\n".join(f"  - {p}" for p in problems))


def load_schema() -> dict[str, Any]:
    with open(SCHEMA_PATH) as stream:
        return yaml.safe_load(stream)


def fill_defaults(config: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """Copy of `config` with every missing key set to its schema default."""
    filled = copy.deepcopy(config)
    for key, sub in schema.get("properties", {}).items():
        if key not in filled and "default" in sub:
            filled[key] = copy.deepcopy(sub["default"])
        if isinstance(filled.get(key), dict) and sub.get("type") == "object":
            filled[key] = fill_defaults(filled[key], sub)
    return filled


def _key(path) -> str:
    return ".".join(str(p) if not isinstance(p, int) else f"[{p}]" for p in path).replace(".[", "[") or "<top>"


def _describe(error: jsonschema.ValidationError) -> str:
    if error.validator == "additionalProperties":
        known = sorted(error.schema.get("properties", {}))
        unknown = sorted(set(error.instance) - set(known))
        prefix = _key(error.absolute_path)
        names = ", ".join(f"'{u}'" if prefix == "<top>" else f"'{prefix}.{u}'" for u in unknown)
        return f"unknown config key {names} (known here: {', '.join(known)})"
    return f"config key '{_key(error.absolute_path)}' = {error.instance!r}: {error.message}"


def thread_counts(max_threads: int) -> list[int]:
    """1, 2, 4, ... below max_threads, and max_threads itself."""
    counts, n = [], 1
    while n < max_threads:
        counts.append(n)
        n *= 2
    return counts + [max_threads]


def usable_cores() -> int:
    return len(os.sched_getaffinity(0))


def _memory_bandwidth_fit(section: dict[str, Any], available: int, problems: list[str]) -> None:
    # STREAM keeps three arrays alive; the immutable cases two.
    arrays = 3
    need = arrays * 8 * section["n_values"]
    budget = int(MEMORY_SHARE * available)
    if need <= budget:
        return
    fitted = budget // (arrays * 8)
    if section["fit_to_memory"] and fitted >= MIN_VALUES:
        section["n_values"] = fitted
        return
    problems.append(
        f"config key 'memory_bandwidth.n_values' = {section['n_values']}: needs {need / 1e9:.1f} GB "
        f"({arrays} arrays of 8-byte values) but only {budget / 1e9:.1f} GB of memory may be used "
        f"({MEMORY_SHARE:.0%} of {available / 1e9:.1f} GB available); lower it or set "
        f"memory_bandwidth.fit_to_memory: true"
    )


MIN_VALUES = 1000  # as the schema's minimum of memory_bandwidth.n_values


def _memory_bandwidth_threads(section: dict[str, Any], problems: list[str]) -> None:
    cores = usable_cores()
    if section["max_threads"] is None:
        section["max_threads"] = cores
    elif section["max_threads"] > cores:
        # numba refuses more threads than cores, and oversubscribed threads
        # would measure the scheduler rather than the memory bus.
        problems.append(f"config key 'memory_bandwidth.max_threads' = {section['max_threads']}: "
                        f"more than the {cores} usable cores of this machine")


# Per experiment: a check that may lower sizes (when allowed) or add problems.
RESOURCE_CHECKS: dict[str, Callable[[dict[str, Any], int, list[str]], None]] = {
    "memory_bandwidth": _memory_bandwidth_fit,
}
# Free disk needed in the working directory for results, figures and the paper.
MIN_FREE_DISK = 200 * 10**6


def validate(config: dict[str, Any], check_resources: bool = True, workdir: str | os.PathLike = ".",
             available_memory: int | None = None) -> dict[str, Any]:
    """The configuration with defaults filled and sizes resolved, or ConfigError."""
    schema = load_schema()
    resolved = fill_defaults(config, schema)
    validator = jsonschema.Draft202012Validator(schema)
    problems = [_describe(e) for e in sorted(validator.iter_errors(resolved), key=lambda e: list(e.absolute_path))]
    if problems:
        raise ConfigError(problems)
    if check_resources:
        available = psutil.virtual_memory().available if available_memory is None else available_memory
        for section, check in RESOURCE_CHECKS.items():
            check(resolved[section], available, problems)
        free = shutil.disk_usage(Path(workdir).resolve()).free
        if free < MIN_FREE_DISK:
            problems.append(f"working directory {Path(workdir).resolve()}: {free / 1e6:.0f} MB free on disk, "
                            f"at least {MIN_FREE_DISK / 1e6:.0f} MB needed")
        _memory_bandwidth_threads(resolved["memory_bandwidth"], problems)
    if problems:
        raise ConfigError(problems)
    return resolved


def load(path: str | os.PathLike = DEFAULT_CONFIG, **kwargs: Any) -> dict[str, Any]:
    """Read a YAML file and validate it."""
    with open(path) as stream:
        config = yaml.safe_load(stream) or {}
    if not isinstance(config, dict):
        raise ConfigError([f"{path}: the configuration must be a mapping of keys, got {type(config).__name__}"])
    return validate(config, **kwargs)
