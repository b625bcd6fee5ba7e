"""Where the study's generated files go, relative to the working directory
Snakemake runs in (the repository for `make paper`, a temporary folder in the
tests), and where the shared inputs beside the repository are (SHARED).
Sources are read from the repository (throughput.REPO); everything made is
written under the working directory, so a run never writes into the sources.

    results/<experiment>/<experiment>.ipynb   the executed notebook
    results/<experiment>/raw/                 one Parquet file per run
    figures/<experiment>/<figure>.pdf         figures (and .png)
    paper/generated/<experiment>/<table>.tex  tables and number macros
"""
from __future__ import annotations

from pathlib import Path

from .. import REPO

# ../shared beside the repository (as CI has it): the seeds' texts, the real data, vendored sources.
SHARED = REPO.parent / "shared"
RESULTS = Path("results")
FIGURES = Path("figures")
GENERATED = Path("paper") / "generated"


def results_dir(experiment: str, root: str | Path = ".") -> Path:
    return Path(root) / RESULTS / experiment


def raw_dir(experiment: str, root: str | Path = ".") -> Path:
    return results_dir(experiment, root) / "raw"


def executed_notebook(experiment: str, root: str | Path = ".") -> Path:
    return results_dir(experiment, root) / f"{experiment}.ipynb"


def figures_dir(experiment: str, root: str | Path = ".") -> Path:
    return Path(root) / FIGURES / experiment


def paper_dir(experiment: str, root: str | Path = ".") -> Path:
    return Path(root) / GENERATED / experiment
