"""One rule for fitting the config's sizes and counts to the machine it runs on.

Every experiment's check_config (its spec's, called through throughput.setup.config.validate
by throughput.configuration before any job starts) goes through a `Fitter`:

* a thread, worker or process count beyond this machine's usable cores, and a
  size beyond the share of available memory one run may use, is lowered to
  what the machine has when the config's top-level `fit_to_machine` is true,
  and otherwise refused with a message naming the key, the value and the limit;
* every value lowered is recorded as a `Fit` (key, requested, used, limit).
  `config.validate` returns them under `fitted_to_machine` (section -> fits),
  the workflow passes each notebook its own section's, the notebook `record`s
  them, and from then on every run's provenance carries them
  (provenance.capture) and the paper's macros give what was asked
  (`requested`).

A null count (every usable core) is resolved by the experiment itself and is
not a fit: the run's provenance has the machine's cores. `disk_problem` is the one
wording of a check's "too little disk".
"""
from __future__ import annotations

import dataclasses
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Share of the available memory one benchmark may take: the rest is for the
# OS, Python and the file cache.
MEMORY_SHARE = 0.6


@dataclass(frozen=True)
class Fit:
    """One value of the config lowered to this machine."""

    key: str          # the full config key, e.g. "memory_bandwidth.n_values"
    requested: Any    # what the config asked for
    used: Any         # what the run uses
    limit: str        # what the machine has, in words


class Fitter:
    """Applies the rule to one config section; collects its fits and problems."""

    def __init__(self, section: str, allowed: bool, problems: list[str], available_memory: int,
                 study: dict[str, Any] | None = None):
        self.section, self.allowed, self.problems = section, allowed, problems
        self.available_memory = available_memory
        # the whole configuration, read only: for a check that needs another section's keys
        self.study = study or {}
        self.memory_budget = int(MEMORY_SHARE * available_memory)  # what one run may use
        self.fits: list[Fit] = []

    def _lower(self, holder: dict[str, Any], key: str, full_key: str, used: Any, limit: str, why: str) -> None:
        requested = holder[key]
        if self.allowed and used is not None:
            holder[key] = used
            self.fits.append(Fit(full_key, requested, used, limit))
        elif used is None:
            self.problems.append(f"config key '{full_key}' = {requested}: {why}; lower it (it cannot be fitted "
                                 "to this machine automatically)")
        else:
            self.problems.append(f"config key '{full_key}' = {requested}: {why} (lower it, or set "
                                 f"fit_to_machine: true to use {used})")

    def count(self, holder: dict[str, Any], key: str, cores: int, path: str = "", per_core: int = 1) -> None:
        """A thread, worker or process count: at most `per_core` per usable core (null stays null)."""
        full_key = f"{self.section}.{path}{key}"
        limit = per_core * cores
        if holder[key] is not None and holder[key] > limit:
            what = f"{cores} usable cores" if per_core == 1 else f"{per_core} per usable core ({cores} cores)"
            self._lower(holder, key, full_key, limit, what,
                        f"more than {'the ' if per_core == 1 else ''}{what} of this machine")

    def size(self, holder: dict[str, Any], key: str, need_bytes: float, largest: Any, what: str,
             path: str = "") -> None:
        """A size whose run needs `need_bytes` of memory (at most memory_budget); `largest`
        is the largest value that fits (None: the experiment cannot fit it)."""
        if need_bytes <= self.memory_budget:
            return
        full_key = f"{self.section}.{path}{key}"
        budget = self.memory_budget
        self._lower(holder, key, full_key, largest, f"{budget / 1e9:.1f} GB of memory for one run",
                    f"{what} need about {need_bytes / 1e9:.1f} GB, but only {budget / 1e9:.1f} GB of memory may "
                    f"be used ({MEMORY_SHARE:.0%} of {self.available_memory / 1e9:.1f} GB available)")


def as_records(fits: list[Fit]) -> list[dict[str, Any]]:
    return [dataclasses.asdict(f) for f in fits]


def requested(fits: list[dict[str, Any]] | None, key: str, used: Any) -> Any:
    """What the config asked for `key` (the full key), or `used` where it was not lowered."""
    for fit in fits or []:
        if fit["key"] == key:
            return fit["requested"]
    return used


def describe(fits: list[dict[str, Any]] | None) -> str:
    """One sentence for a notebook's log: what was lowered to this machine. Nothing in the paper
    reads it: the paper words the fits itself (throughput.report.noise_sentences.study_macros
    reads them from the runs' provenance; paper/wording/noise.tex's NoiseFit and \\noisefit)."""
    if not fits:
        return "Nothing was lowered to fit this machine."
    parts = [f"{f['key']} from {f['requested']} to {f['used']} ({f['limit']})" for f in fits]
    return "Lowered to fit this machine: " + "; ".join(parts) + "."


_RECORDED: list[dict[str, Any]] = []


def record(fits: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """Make `fits` part of every later run's provenance in this process (a notebook's
    whole run is one experiment); returns them."""
    _RECORDED[:] = list(fits or [])
    return list(_RECORDED)


def recorded() -> list[dict[str, Any]]:
    return list(_RECORDED)


def disk_problem(need: float, what: str, directory: str | os.PathLike = ".") -> str | None:
    """'<what> need about N GB on disk, M GB free in <directory>' when `need` bytes
    would take more than 80% of the free space there, else None (one wording for
    every section's check: the tests and users look for "on disk")."""
    free = shutil.disk_usage(Path(directory).resolve()).free
    if need <= 0.8 * free:
        return None
    return f"{what} need about {need / 1e9:.1f} GB on disk, {free / 1e9:.1f} GB free in {Path(directory).resolve()}"
