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
import importlib
import importlib.util
import os
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import psutil
import yaml

from . import REPO

SCHEMA_PATH = REPO / "workflow" / "schemas" / "config.schema.yaml"
SECTION_SCHEMAS = REPO / "workflow" / "schemas" / "sections"
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
    """The shared schema with every section's schema (sections/<section>.schema.yaml) merged in."""
    with open(SCHEMA_PATH) as stream:
        schema = yaml.safe_load(stream)
    for path in sorted(SECTION_SCHEMAS.glob("*.schema.yaml")):
        with open(path) as stream:
            schema["properties"][path.name.removesuffix(".schema.yaml")] = yaml.safe_load(stream)
    return schema


def sections() -> list[str]:
    return sorted(p.name.removesuffix(".schema.yaml") for p in SECTION_SCHEMAS.glob("*.schema.yaml"))


def section_module(section: str):
    """The module that owns a section: throughput.experiments.<section>, else throughput.<section>."""
    for name in (f"throughput.experiments.{section}", f"throughput.{section}"):
        if importlib.util.find_spec(name) is not None:
            return importlib.import_module(name)
    return None


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
        for section in sections():
            # A section's module may check its sizes, files and threads against
            # this machine (and fit them where its config allows):
            # check_config(section_values, available_memory, problems).
            module = section_module(section)
            if hasattr(module, "check_config"):
                module.check_config(resolved[section], available, problems)
        free = shutil.disk_usage(Path(workdir).resolve()).free
        if free < MIN_FREE_DISK:
            problems.append(f"working directory {Path(workdir).resolve()}: {free / 1e6:.0f} MB free on disk, "
                            f"at least {MIN_FREE_DISK / 1e6:.0f} MB needed")
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
