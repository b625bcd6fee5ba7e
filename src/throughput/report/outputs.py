"""The one way a notebook writes what the paper uses: only the figures and
tables its experiment declares (throughput.setup.spec), each atomically, and a
check at the end that every declared one was written.

    outputs = Outputs(SPECS["writing"], figures_dir, paper_dir)
    outputs.figure("events_scaling", fig)
    outputs.table("events_table", frame, column_format="llrr")
    outputs.tables({"events_table": paper.Table(frame, column_format="llrr")})  # an entry's tables
    outputs.macros(values)
    outputs.check_complete()

A misspelt or undeclared name fails at once, naming the declared ones, rather
than as a file Snakemake misses after the run or a paper that \\input's a
stale file.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from . import paper, plotstyle
from ..setup.spec import MACROS, Spec


class UndeclaredOutput(ValueError):
    """A notebook wrote, or left out, an output its spec does not agree with."""


class Outputs:
    def __init__(self, spec: Spec, figures_dir: str | os.PathLike, paper_dir: str | os.PathLike) -> None:
        self.spec = spec
        self.figures_dir, self.paper_dir = Path(figures_dir), Path(paper_dir)
        self.written: set[tuple[str, str]] = set()

    def _declared(self, kind: str, name: str, declared: tuple[str, ...]) -> None:
        if name not in declared:
            raise UndeclaredOutput(f"experiment {self.spec.name} declares no {kind} {name!r} "
                                   f"(its {kind}s: {', '.join(declared)}; declare it in its spec module's SPEC)")
        self.written.add((kind, name))

    def figure(self, name: str, fig: Any) -> list[Path]:
        """figures/<experiment>/<name>.pdf and .png."""
        self._declared("figure", name, self.spec.figures)
        return plotstyle.save(fig, self.figures_dir / name)

    def table(self, name: str, frame: Any, column_format: str | None = None, text_columns: int = 1) -> Path:
        """A booktabs table of `frame` (throughput.report.paper.write_table)."""
        self._declared("table", name, self.spec.tables)
        return paper.write_table(frame, self.paper_dir / f"{name}.tex", column_format=column_format,
                                 text_columns=text_columns)

    def tex(self, name: str, text: str) -> Path:
        """A table already typeset as LaTeX (throughput.report.paper.write_tex)."""
        self._declared("table", name, self.spec.tables)
        return paper.write_tex(text, self.paper_dir / f"{name}.tex")

    def tables(self, tables: dict[str, paper.Table]) -> list[Path]:
        """Every table an experiment's entry gives (`tables(measured, session)`), each by its name."""
        written = []
        for name, table in tables.items():
            self._declared("table", name, self.spec.tables)
            written.append(table.write(self.paper_dir / f"{name}.tex"))
        return written

    def macros(self, values: dict[str, Any]) -> Path:
        """The experiment's number macros (throughput.report.paper.write_macros)."""
        self.written.add(("macros", MACROS))
        return paper.write_macros(values, self.paper_dir / f"{MACROS}.tex")

    def missing(self) -> list[str]:
        """Declared outputs not written yet, as file names."""
        wanted = ([("figure", name, f"{name}.pdf") for name in self.spec.figures]
                  + [("table", name, f"{name}.tex") for name in self.spec.tables]
                  + [("macros", MACROS, f"{MACROS}.tex")])
        return [file for kind, name, file in wanted if (kind, name) not in self.written]

    def check_complete(self) -> None:
        """Fail, naming them, when declared outputs were not written (the paper \\input's each)."""
        missing = self.missing()
        if missing:
            raise UndeclaredOutput(f"experiment {self.spec.name} did not write {', '.join(missing)}, "
                                   "which it declares and the paper uses")
