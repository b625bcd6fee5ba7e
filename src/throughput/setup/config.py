"""The study's configuration: defaults, validation and resource checks.

The schema (workflow/schemas/config.schema.yaml) is the one place where keys,
defaults and allowed values are defined. `read` reads a config file strictly
(a key given twice is refused; an empty file means every default). `validate`
fills the defaults, checks every value against the schema (an integer key takes
no float, and no number may be NaN or infinite), makes relative paths absolute
from the working directory, then (once the values are well-formed) checks that
sizes, directories and thread counts fit this machine's memory, disk and cores.
All problems of a stage are reported at once, each naming its key and value,
before any job starts.

A section's own check against this machine (`check_config(section_values, fitter)`)
lives with the section's owner, in a room above this one: the caller passes them
(`checks`, section -> check_config). throughput.configuration passes every section's,
and is the command that checks config files before Snakemake reads them.
"""
from __future__ import annotations

import copy
import functools
import math
import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

import psutil
import yaml

from .. import REPO
from . import machine_fit

if TYPE_CHECKING:  # imported where it is used: a GPU node may lack it (throughput.node)
    import jsonschema

SCHEMA_PATH = REPO / "workflow" / "schemas" / "config.schema.yaml"
SECTION_SCHEMAS = REPO / "workflow" / "schemas" / "sections"
DEFAULT_CONFIG = REPO / "config" / "config.yaml"
# libyaml's safe loader where PyYAML was built with it: the same objects as yaml.safe_load's, about
# eight times faster on the ledger's 292 kB of claims (report/ledger.py) and on the schemas
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
MEMORY_SHARE = machine_fit.MEMORY_SHARE  # the share of available memory one run may take


class ConfigError(ValueError):
    """One or more configuration problems, each naming its key."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("invalid configuration:\n" + "\n".join(f"  - {p}" for p in problems))


def load_schema() -> dict[str, Any]:
    """The shared schema with every section's schema (sections/<section>.schema.yaml) merged in."""
    with open(SCHEMA_PATH) as stream:
        schema = yaml.load(stream, Loader=SAFE_LOADER)
    for path in sorted(SECTION_SCHEMAS.glob("*.schema.yaml")):
        with open(path) as stream:
            schema["properties"][path.name.removesuffix(".schema.yaml")] = yaml.load(stream, Loader=SAFE_LOADER)
    return schema


def sections() -> list[str]:
    return sorted(p.name.removesuffix(".schema.yaml") for p in SECTION_SCHEMAS.glob("*.schema.yaml"))


# A section's check against this machine: check_config(section_values, fitter), which fits
# the section's values in place and appends the problems to fitter.problems.
SectionCheck = Callable[[dict[str, Any], machine_fit.Fitter], None]


def fill_defaults(config: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """Copy of `config` with every missing key set to its schema default."""
    filled = copy.deepcopy(config)
    for key, sub in schema.get("properties", {}).items():
        if key not in filled and "default" in sub:
            filled[key] = copy.deepcopy(sub["default"])
        if isinstance(filled.get(key), dict) and sub.get("type") == "object":
            filled[key] = fill_defaults(filled[key], sub)
    return filled


def _is_integer(checker, instance) -> bool:
    # YAML's 2.0 is a float, which jsonschema's "integer" accepts (2.0 == 2) but the
    # kernels and range() do not: an integer key takes Python ints only (bools neither).
    return isinstance(instance, int) and not isinstance(instance, bool)


@functools.lru_cache(maxsize=None)
def _validator_class():
    # Imported here: a GPU node without jsonschema (throughput.node) still fills the
    # defaults and fits them to the machine, with validate(..., schema_check=False).
    import jsonschema

    return jsonschema.validators.extend(
        jsonschema.Draft202012Validator,
        type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine("integer", _is_integer))


def _walk(value: Any, path: tuple = ()):
    """(path, value) of every value in a nested config, mappings and lists included."""
    yield path, value
    if isinstance(value, dict):
        for key, sub in value.items():
            yield from _walk(sub, (*path, key))
    elif isinstance(value, list):
        for index, sub in enumerate(value):
            yield from _walk(sub, (*path, index))


def _non_finite(config: dict[str, Any]) -> dict[tuple, float]:
    """Path -> value of every NaN or infinity: schema bounds let NaN through (every
    comparison with it is false), and no key of this study means anything by them."""
    return {path: value for path, value in _walk(config) if isinstance(value, float) and not math.isfinite(value)}


# The kernels parse an integer option as a signed 64-bit integer (std::stoll in
# kernels/common/bench.hpp, Long.parseLong in the Java readers): none takes more.
INT64_MAX = 2**63 - 1


def _beyond_int64(config: dict[str, Any]) -> dict[tuple, int]:
    """Path -> value of every integer no kernel option can take (outside the signed 64-bit range)."""
    return {path: value for path, value in _walk(config)
            if isinstance(value, int) and not isinstance(value, bool) and not -INT64_MAX - 1 <= value <= INT64_MAX}


def _path_keys(schema: dict[str, Any], path: tuple = ()):
    """(path, base) of every key whose schema has `x-path: workdir` (a path relative to the working directory)."""
    for key, sub in schema.get("properties", {}).items():
        if sub.get("x-path"):
            yield (*path, key), sub["x-path"]
        if sub.get("type") == "object":
            yield from _path_keys(sub, (*path, key))


def resolve_paths(config: dict[str, Any], schema: dict[str, Any], workdir: str | os.PathLike) -> None:
    """Make every relative path of an `x-path: workdir` key absolute, from `workdir`, in place:
    the check and every job then use the same directory whatever their current directory."""
    base = os.path.abspath(workdir)
    for path, kind in _path_keys(schema):
        if kind != "workdir":
            raise ValueError(f"schema of {_key(path)}: unknown x-path {kind!r}")
        holder = _holder(config, path)
        value = holder.get(path[-1])
        if isinstance(value, str):
            value = os.path.expanduser(value)
            # abspath, not resolve: symlinks stay as the user named them
            holder[path[-1]] = value if os.path.isabs(value) else os.path.abspath(os.path.join(base, value))


def _holder(config: dict[str, Any], path: tuple) -> dict[str, Any]:
    """The mapping that holds the key at `path`."""
    for part in path[:-1]:
        config = config[part]
    return config


def root_expanded_paths(config: dict[str, Any], schema: dict[str, Any], workdir: str | os.PathLike) -> list[str]:
    """The path keys (and the working directory, under which every generated file lies) that
    hold a '$': ROOT expands $VAR and $(VAR) in every file name it opens (TSystem::ExpandFileName),
    so such a path names another file, or none. (A shell never sees them: the rules quote paths.)"""
    named = [(f"config key '{_key(path)}' = {value!r}", value) for path, _ in _path_keys(schema)
             for value in [_holder(config, path).get(path[-1])] if isinstance(value, str)]
    named.append((f"working directory {os.path.abspath(workdir)!r}", os.path.abspath(workdir)))
    return [f"{where}: holds '$', which ROOT expands in file names ($VAR, $(VAR)): rename or move it"
            for where, value in named if "$" in value]


def directory_problem(key: str, path: str | os.PathLike, create: bool = False) -> str | None:
    """Why the directory of config key `key` cannot take this study's files, or None: it is not
    a directory, it is missing (with `create`, its parent must exist: it is made there), or a
    trial file cannot be made in it (permissions alone miss read-only mounts, and root)."""
    path = Path(path)
    where = f"config key '{key}' = {str(path)!r}"
    if path.exists() and not path.is_dir():
        return f"{where}: not a directory"
    target = path
    if not path.exists():
        if not create:
            return f"{where}: no such directory"
        target = path.parent
        if not target.is_dir():
            return f"{where}: neither it nor its parent ({target}) is a directory"
    try:
        fd, trial = tempfile.mkstemp(dir=target, prefix=".throughput-write-check-")
        os.close(fd)
        os.unlink(trial)
    except OSError as error:
        return f"{where}: cannot write in {target} ({error.strerror or error})"
    return None


def _key(path) -> str:
    return ".".join(str(p) if not isinstance(p, int) else f"[{p}]" for p in path).replace(".[", "[") or "<top>"


def _describe(error: jsonschema.ValidationError) -> str:
    if error.validator == "additionalProperties":
        known = sorted(error.schema.get("properties", {}))
        unknown = sorted(set(error.instance) - set(known), key=str)
        prefix = _key(error.absolute_path)
        names = ", ".join(f"'{u}'" if prefix == "<top>" else f"'{prefix}.{u}'" for u in unknown)
        return f"unknown config key {names} (known here: {', '.join(known)})"
    return f"config key '{_key(error.absolute_path)}' = {error.instance!r}: {error.message}"


def rounds(resolved: Mapping[str, Any], section: str) -> int:
    """The rounds (fresh processes per run) of `section`'s experiment: the section's own `rounds`
    where its schema has that key and the config sets it (a section whose cells need narrower
    intervals than the others can afford), else the study's top-level `repetitions`."""
    own = resolved.get(section, {}).get("rounds")
    return int(own) if own is not None else int(resolved["repetitions"])


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
             available_memory: int | None = None, schema_check: bool = True,
             checks: Mapping[str, SectionCheck] | None = None) -> dict[str, Any]:
    """The configuration with defaults filled, sizes resolved and paths absolute, or ConfigError.
    With check_resources, the free disk and each section of `checks` (section -> check_config:
    throughput.configuration.SECTION_CHECKS; required then) are checked against this machine.
    schema_check=False (only throughput.node, on a host without jsonschema) fills and fits the
    values without checking them against the schema."""
    if check_resources and checks is None:
        raise TypeError("validate(check_resources=True) needs the sections' checks (checks=...): "
                        "throughput.configuration.validate passes every section's")
    schema = load_schema()
    resolved = fill_defaults(config, schema)
    non_finite, too_large = _non_finite(resolved), _beyond_int64(resolved)
    problems = [f"config key '{_key(path)}' = {value!r}: not a finite number" for path, value in non_finite.items()]
    problems += [f"config key '{_key(path)}' = {value!r}: beyond the kernels' 64-bit integer options "
                 f"(at most 2^63 - 1 = {INT64_MAX})" for path, value in too_large.items()]
    # A NaN, an infinity or a huge integer is named once, above, not again for a bound it also breaks.
    named = non_finite.keys() | too_large.keys()
    errors = ([e for e in _validator_class()(schema).iter_errors(resolved) if tuple(e.absolute_path) not in named]
              if schema_check else [])
    problems += [_describe(e) for e in sorted(errors, key=lambda e: [str(p) for p in e.absolute_path])]
    if problems:
        raise ConfigError(problems)
    resolve_paths(resolved, schema, workdir)
    problems += root_expanded_paths(resolved, schema, workdir)
    resolved["fitted_to_machine"] = {}
    if check_resources:
        problems += fit_sections(resolved, checks, available_memory)
        free = shutil.disk_usage(Path(workdir).resolve()).free
        if free < MIN_FREE_DISK:
            problems.append(f"working directory {Path(workdir).resolve()}: {free / 1e6:.0f} MB free on disk, "
                            f"at least {MIN_FREE_DISK / 1e6:.0f} MB needed")
    if problems:
        raise ConfigError(problems)
    return resolved


def fit_sections(resolved: dict[str, Any], checks: Mapping[str, SectionCheck],
                 available_memory: int | None = None) -> list[str]:
    """Check sections of a filled configuration against this machine, each by its check in
    `checks` (section -> check_config(section_values, fitter), its owner's), which checks its
    sizes, files and threads, fitting them by the one rule of throughput.setup.machine_fit.
    Fills resolved["fitted_to_machine"]; returns the problems."""
    problems: list[str] = []
    available = psutil.virtual_memory().available if available_memory is None else available_memory
    for section, check_config in checks.items():
        fitter = machine_fit.Fitter(section, resolved["fit_to_machine"], problems, available, study=resolved)
        check_config(resolved[section], fitter)
        resolved["fitted_to_machine"][section] = machine_fit.as_records(fitter.fits)
    return problems


def _duplicate_keys(node: yaml.Node, path: tuple = ()) -> list[str]:
    """Every key given twice in one mapping of a composed YAML document (YAML loaders keep the last)."""
    found = []
    if isinstance(node, yaml.MappingNode):
        seen: dict[str, int] = {}
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":  # `<<: *defaults` may be overridden
                continue
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else str(key_node.value)
            line = key_node.start_mark.line + 1
            if key in seen:
                found.append(f"config key '{_key((*path, key))}' is given twice (lines {seen[key]} and {line})")
            seen.setdefault(key, line)
            found += _duplicate_keys(value_node, (*path, key))
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            found += _duplicate_keys(item, (*path, index))
    return found


def _yaml_problem(error: yaml.YAMLError) -> str:
    """PyYAML's error as one line: where (line and column, from 1), what, and what it was reading."""
    def at(mark) -> str:
        return f"line {mark.line + 1}, column {mark.column + 1}"

    problem, mark = getattr(error, "problem", None), getattr(error, "problem_mark", None)
    context, context_mark = getattr(error, "context", None), getattr(error, "context_mark", None)
    if not problem or mark is None:
        return f"not valid YAML: {error}"
    text = f"not valid YAML at {at(mark)}: {problem}"
    if context:
        started = f" from {at(context_mark)}" if context_mark is not None and context_mark.line != mark.line else ""
        text += f" ({context}{started})"
    return text


def _read(path: str | os.PathLike) -> tuple[dict[str, Any], bool]:
    """`read`'s keys, and whether the file holds no YAML document at all (only blanks or comments)."""
    try:
        with open(path, encoding="utf-8") as stream:
            text = stream.read()
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        duplicates = _duplicate_keys(node) if node is not None else []
        config = yaml.safe_load(text) if node is not None else None
    except OSError as error:
        raise ConfigError([f"config file {path}: cannot be read ({error.strerror or error})"]) from None
    except UnicodeDecodeError as error:
        raise ConfigError([f"config file {path}: not UTF-8 text (byte {error.start}: {error.reason})"]) from None
    except yaml.YAMLError as error:
        raise ConfigError([f"config file {path}: {_yaml_problem(error)}"]) from None
    if duplicates:
        raise ConfigError([f"config file {path}: {d}" for d in duplicates])
    if config is None:
        return {}, True
    if not isinstance(config, dict):
        raise ConfigError([f"config file {path}: the configuration must be a mapping of keys, "
                           f"got {type(config).__name__}"])
    return config, False


def read(path: str | os.PathLike) -> dict[str, Any]:
    """The keys of a YAML (or JSON) config file, not validated; an empty file is {} (every
    default). ConfigError naming the file for a file that cannot be read, a duplicate key,
    bad YAML (with its line and column) or a non-mapping."""
    return _read(path)[0]


def load(path: str | os.PathLike = DEFAULT_CONFIG, **kwargs: Any) -> dict[str, Any]:
    """Read a YAML file (see `read`) and validate it."""
    return validate(read(path), **kwargs)


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """`over` on `base`, a mapping merged key by key, anything else replaced (as Snakemake merges config files)."""
    merged = copy.deepcopy(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def check(paths: list[str | os.PathLike], **kwargs: Any) -> dict[str, Any]:
    """The configuration the workflow runs with `--configfile PATH...`: config/config.yaml and each
    file over it, each read strictly (`read`; a file with no document is refused, as Snakemake
    refuses it), then validated (`validate`'s keyword arguments). ConfigError naming every file's
    problems, or every key's."""
    problems: list[str] = []
    given: dict[str, Any] = {}
    for path in [DEFAULT_CONFIG, *paths]:
        try:
            keys, empty = _read(path)
        except ConfigError as error:
            problems += error.problems
            continue
        if empty:
            problems.append(f"config file {path}: holds no configuration (Snakemake refuses an empty "
                            "--configfile; write {} for every default)")
        given = _merge(given, keys)
    if problems:
        raise ConfigError(problems)
    return validate(given, **kwargs)
