"""What each experiment declares once: its name, the kernels it measures with,
and the figures and tables it hands to the paper.

From these declarations, and nowhere else:
* Snakemake makes every experiment's notebook rule (workflow/rules/notebooks.smk);
* a notebook writes its outputs through `throughput.report.outputs.Outputs`, which
  refuses a name not declared here and fails when a declared one was not written;
* the tests check that the paper's \\input and \\includegraphics name exactly
  the declared files, and that every declared kernel exists.

The name is the experiment's config section, notebook (notebooks/<name>.ipynb),
module (throughput.experiments.<name>) and output folders
(throughput.setup.paths). This module imports nothing heavy: Snakemake reads it
while it plans.
"""
from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

from .. import REPO
from . import config, paths

# Every experiment hands the paper one file of number macros besides its tables.
MACROS = "macros"


@dataclass(frozen=True)
class Spec:
    name: str
    kernels: tuple[str, ...]          # binaries under build/kernels/bin it measures with
    figures: tuple[str, ...]          # figures/<name>/<figure>.pdf (and .png)
    tables: tuple[str, ...]           # paper/generated/<name>/<table>.tex, besides macros.tex
    cuda_kernels: tuple[str, ...] = ()  # built only where an nvcc is found
    # whether its notebook shows the archived machines beside this one (throughput.machines.tables):
    # it then gets the config section `machines`, and the archive as an input
    shows_archived: bool = False
    # its config section's check against this machine (check_config(section, fitter): sizes, files
    # and counts fitted or refused by throughput.setup.machine_fit), which throughput.configuration
    # runs on every config before any job starts
    check_config: config.SectionCheck | None = None
    # its counts resolved for this machine (null: every usable core), applied by `parameters`
    resolve_counts: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    # keys it measures with from other sections: (its parameter, section, key)
    borrows: tuple[tuple[str, str, str], ...] = ()

    def __post_init__(self) -> None:
        for kind, names in (("figure", self.figures), ("table", self.tables)):
            if len(set(names)) != len(names):
                raise ValueError(f"experiment {self.name}: a {kind} is declared twice: {list(names)}")
        if MACROS in self.tables:
            raise ValueError(f"experiment {self.name}: {MACROS}.tex is declared for every experiment, not as a table")

    @property
    def notebook(self) -> Path:
        return REPO / "notebooks" / f"{self.name}.ipynb"

    def parameters(self, settings: dict[str, Any]) -> dict[str, Any]:
        """What its notebook measures with, from a validated config (throughput.configuration.session),
        in the workflow and standalone alike: its section, its rounds (config.rounds), the warm-up
        and what it borrows, with its counts resolved for this machine."""
        params = {**settings[self.name], "repetitions": config.rounds(settings, self.name),
                  "warmup": settings["warmup"],
                  **{param: settings[section][key] for param, section, key in self.borrows}}
        return self.resolve_counts(params) if self.resolve_counts else params

    @property
    def tex_files(self) -> tuple[str, ...]:
        """Every generated TeX file: the tables and the macros."""
        return (*self.tables, MACROS)

    def outputs(self, root: str | Path = ".") -> dict[str, Path | list[Path]]:
        """The files its notebook rule produces, under `root` (Snakemake's working directory)."""
        return {
            "notebook": paths.executed_notebook(self.name, root),
            "figures": [paths.figures_dir(self.name, root) / f"{figure}.pdf" for figure in self.figures],
            "tables": [paths.paper_dir(self.name, root) / f"{table}.tex" for table in self.tex_files],
            # the macros' numbers (throughput.report.paper.write_macros), which the ledger of claims reads
            "data": [paths.paper_dir(self.name, root) / f"{MACROS}.json"],
        }


def submodule_first(package: str, name: str) -> ModuleType | None:
    """For an experiment package's `__getattr__`, first, before its heavy imports: one of its
    submodules, imported alone (`from package import submodule`, `from . import submodule` within
    it, and `package.submodule` all ask the package for the name first; loading every lazy name
    then, ROOT and pandas included, would be slow and could close an import circle); None for
    another public name, which the package then loads (load_later); AttributeError for a private
    one. find_spec looks the submodule up without importing it."""
    if name.startswith("_"):
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    if importlib.util.find_spec(f"{package}.{name}") is None:
        return None
    return importlib.import_module(f"{package}.{name}")


def load_later(namespace: dict[str, Any], loaded: dict[str, Any], name: str) -> Any:
    """For an experiment package's `__getattr__` (after submodule_first), once it has imported the
    names of its measured code, analysis and report (`loaded`, its locals): put them in the package
    (`namespace`, its globals; none starting with '_'), and give `name`, or AttributeError when it
    has none."""
    namespace.update((key, value) for key, value in loaded.items() if not key.startswith("_"))
    try:
        return namespace[name]
    except KeyError:
        raise AttributeError(f"module {namespace['__name__']!r} has no attribute {name!r}") from None
