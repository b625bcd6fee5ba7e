"""What notebooks hand to the paper: LaTeX tables and number macros.

The paper \\input's these files and never contains a typed result; a missing
file stops the LaTeX build.
"""
from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from ..core.intervals import Estimate, Verdict, comparison
from ..core.results import EXECUTION, atomic_path

_SPECIAL = {"&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}",
            "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "\\": r"\textbackslash{}",
            "±": r"$\pm$"}  # the noise sentences' interval widths


# How wide the intervals the paper prints are (issue 28's benchmark: every printed rate and ratio
# cell): with_interval and interval note each one's relative half-width (the larger side, as
# printed) here; each table or macros file written (write_tex) takes the widths noted since the last write,
# under its name, into PRINTED_WIDTHS beside it (the notebook's generated folder, one
# execution's files), which the method section sums up, every file's together
# (noise_sentences.printed_widths): an entry's tables are made together, before the first is
# written, which files them all.
PRINTED_WIDTHS = "printed_widths.json"
_printed: list[float] = []


def _note_width(value: float, low: float, high: float) -> None:
    if all(math.isfinite(v) for v in (value, low, high)) and value:
        _printed.append(max(value - low, high - value) / abs(value))


def _file_printed(path: str | os.PathLike) -> None:
    """Move the widths noted since the last write under `path`'s name into its folder's
    PRINTED_WIDTHS (started afresh by a new execution, as results' current runs are)."""
    ledger = Path(path).parent / PRINTED_WIDTHS
    try:
        stored = json.loads(ledger.read_text())
    except (OSError, ValueError):
        stored = {}
    files = stored.get("files", {}) if stored.get("execution") == EXECUTION else {}
    files[Path(path).name] = list(_printed)
    _printed.clear()
    with atomic_path(ledger) as temporary:
        temporary.write_text(json.dumps({"execution": EXECUTION, "files": files}, indent=1, sort_keys=True))


def escape(text: Any) -> str:
    """`text` with LaTeX's special characters escaped."""
    return "".join(_SPECIAL.get(char, char) for char in str(text))


def write_table(frame: pd.DataFrame, path: str | os.PathLike, column_format: str | None = None,
                text_columns: int = 1) -> Path:
    """A booktabs tabular of `frame` (cells already formatted as strings; headers escaped). Without
    a `column_format`, the first `text_columns` are left-aligned and the rest right-aligned, so
    the format follows the frame's columns."""
    header = " & ".join(escape(c) for c in frame.columns) + r" \\"
    rows = [" & ".join(str(v) for v in row) + r" \\" for row in frame.itertuples(index=False)]
    text_columns = min(text_columns, len(frame.columns))
    column_format = column_format or "l" * text_columns + "r" * (len(frame.columns) - text_columns)
    text = "\n".join([rf"\begin{{tabular}}{{{column_format}}}", r"\toprule", header, r"\midrule",
                      *rows, r"\bottomrule", r"\end{tabular}", ""])
    return write_tex(text, path)


@dataclass(frozen=True)
class Table:
    """A table the paper \\input's, as an experiment's entry gives it (`tables(measured, session)`):
    a frame to typeset as booktabs (write_table, with its column format or its count of text
    columns), or LaTeX already typeset (a str)."""
    content: pd.DataFrame | str
    column_format: str | None = None
    text_columns: int = 1

    def write(self, path: str | os.PathLike) -> Path:
        if isinstance(self.content, str):
            return write_tex(self.content, path)
        return write_table(self.content, path, column_format=self.column_format, text_columns=self.text_columns)


def write_tex(text: str, path: str | os.PathLike) -> Path:
    """LaTeX written whole or not at all (a table typeset elsewhere, say), with the widths of the
    intervals printed into it filed under its name."""
    with atomic_path(path) as temporary:
        temporary.write_text(text)
    _file_printed(path)
    return Path(path)


def write_macros(values: dict[str, Any], path: str | os.PathLike) -> Path:
    r"""One \newcommand per entry; names must be letters only (LaTeX's rule). Beside it,
    <path>.json: every macro's TeX, and for a figure printed with its interval (a `Printed`)
    the numbers it was printed from, which the ledger of claims decides by
    (throughput.report.ledger), rather than reading them back from TeX."""
    lines, data = [], {}
    for name, value in values.items():
        if not re.fullmatch(r"[A-Za-z]+", name):
            raise ValueError(f"macro name {name!r} must be letters only")
        lines.append(rf"\newcommand{{\{name}}}{{{value}}}")
        data[name] = {"tex": str(value), **(value.numbers() if isinstance(value, Printed) else {})}
    with atomic_path(Path(path).with_suffix(".json")) as temporary:
        temporary.write_text(json.dumps(data, indent=1, allow_nan=True) + "\n")
    return write_tex("\n".join(lines) + "\n", path)


class Printed(str):
    """A cell as the paper prints it (TeX) that keeps the figure it was printed from: its value, the
    bounds of its 95% interval (NaN: none known) and the rounds (processes) behind it. It is a str
    everywhere TeX is wanted; write_macros files its numbers beside the macros."""

    value: float
    low: float
    high: float
    rounds: int

    def __new__(cls, tex: str, value: float, low: float = math.nan, high: float = math.nan,
                rounds: int = 0) -> "Printed":
        printed = super().__new__(cls, tex)
        printed.value, printed.low, printed.high, printed.rounds = float(value), float(low), float(high), int(rounds)
        return printed

    def numbers(self) -> dict[str, float | int]:
        return {"value": self.value, "low": self.low, "high": self.high, "rounds": self.rounds}

    def with_tex(self, tex: str) -> "Printed":
        """The same figure printed otherwise (a mark appended, say)."""
        return Printed(tex, self.value, self.low, self.high, self.rounds)


def number(value: float, digits: int = 3) -> str:
    """`value` with `digits` significant digits, as siunitx's \\num wants it."""
    if not math.isfinite(value):
        raise ValueError(f"cannot print {value} in the paper: not a finite number")
    rounded = float(f"{value:.{digits}g}")
    return Printed(rf"\num{{{rounded:.15g}}}", value)


def exact(value: float, digits: int = 3) -> Printed:
    """A figure every round gives alike, a file's bytes say: printed as `number`, its interval of
    no width (so the ledger judges it as it is, not as a figure without an interval)."""
    return Printed(number(value, digits), value, value, value, 0)


# Beyond this half-width (percent of the value) an interval is printed as its two bounds: a
# ratio's interval from two rounds can reach several times its value above and not below, and
# "0.66 +- 650%" would read as if it went below zero.
WIDE_INTERVAL_PERCENT = 100


def with_interval(value: float, low: float, high: float, digits: int = 3) -> str:
    """`value` (as `number`) and its 95% interval, as plus or minus the larger distance from the
    value to a bound, in percent (an interval of a geometric mean is a little wider above than
    below; printing the larger side never understates it); an interval wider than
    WIDE_INTERVAL_PERCENT as its two bounds, as `with_bounds` prints them. Without a known
    interval (NaN bounds: one process), the value and NO_INTERVAL_MARK."""
    cell = number(value, digits)
    if not (math.isfinite(low) and math.isfinite(high)):
        return Printed(cell + NO_INTERVAL_MARK, value, low, high)
    _note_width(value, low, high)
    percent = 100 * max(value - low, high - value) / abs(value) if value else math.inf
    if percent > WIDE_INTERVAL_PERCENT:
        return Printed(f"{cell} ({_bounds(low, high)})", value, low, high)
    return Printed(cell + rf"\,$\pm$\,{float(f'{percent:.2g}'):g}\%", value, low, high)


def estimate(value: Any, digits: int = 3) -> str:
    """An Estimate of throughput.core.intervals as `with_interval` prints it (a `Printed`, which
    keeps the estimate and its rounds)."""
    printed = with_interval(value.value, value.low, value.high, digits)
    return Printed(printed, value.value, value.low, value.high, getattr(value, "processes", 0))


def interval(value: Estimate, digits: int = 2, factor: float = 1.0, unit: str = "") -> str:
    """The interval of an Estimate times `factor`, as its two bounds (`number`), the upper one
    followed by `unit` (TeX), for paper/paper.tex to word: \\confidenceinterval{low}{high}{unit} ("95\\%
    interval 0.96 to 0.98"), or \\nointerval where one round gave none (or nothing was measured)."""
    if not value.known:
        return r"\nointerval{}"
    _note_width(value.value, value.low, value.high)
    return _bounds(value.low, value.high, digits, factor, unit)


def _bounds(low: float, high: float, digits: int = 2, factor: float = 1.0, unit: str = "") -> str:
    """Two known bounds times `factor`, as paper/paper.tex words them (\\confidenceinterval)."""
    low_text, high_text = (number(bound * factor, digits) for bound in (low, high))
    return rf"\confidenceinterval{{{low_text}}}{{{high_text}}}{{{unit}}}"


def with_bounds(value: Estimate, digits: int = 2, factor: float = 1.0, unit: str = "", missing: str = "n/a") -> str:
    """An Estimate that may lie near zero or below it (a fixed cost, a share, a difference) times
    `factor`, followed by `unit` (TeX), with its interval as its two bounds (`interval`, which
    paper/paper.tex words), since a relative plus-or-minus says nothing near zero: "20\\% (95\\%
    interval 18 to 22\\%)"; the value and NO_INTERVAL_MARK where one round gave no interval, `missing` where
    nothing was measured."""
    if not math.isfinite(value.value):
        return missing
    cell = number(value.value * factor, digits) + unit
    scaled = value.value * factor, value.low * factor, value.high * factor, getattr(value, "processes", 0)
    if not value.known:
        return Printed(cell + NO_INTERVAL_MARK, *scaled)
    # its bounds, not noted among the printed widths: a width relative to a value near zero is no rate's
    return Printed(f"{cell} ({_bounds(value.low, value.high, digits, factor, unit)})", *scaled)


# The mark of a figure measured in one process, which has no interval (paper/paper.tex defines
# it, the method section says what it means): never printed as if it were as good as the others.
NO_INTERVAL_MARK = r"\oneprocess{}"

# The mark of a cell measured on a machine too noisy to trust it (throughput.core.noise);
# every section that uses it says what it means, with the spread and load seen.
NOISY_MARK = r"\textsuperscript{\dag}"


def flagged(cell: str, noisy: bool) -> str:
    """`cell` with the noisy mark when its measurement stayed noisy (a `Printed` stays one)."""
    if not noisy:
        return cell
    return cell.with_tex(cell + NOISY_MARK) if isinstance(cell, Printed) else cell + NOISY_MARK


# The state by which a section's \\wording{Name} picks one of its worded variants (paper/paper.tex
# defines the mechanism; a state the section has no wording for stops the build): a verdict's
# value (met, missed, inconclusive), or NOT_MEASURED where there was nothing to judge.
NOT_MEASURED = "notmeasured"


def state(verdict: Verdict | None) -> str:
    """The state macro's value for `verdict` (None: not measured)."""
    return NOT_MEASURED if verdict is None else Verdict(verdict).value


def count_state(count: int) -> str:
    """The state macro's value for how many there are, where the words change with it: none, one or
    several (a section words each, printing the count itself where it says several)."""
    return "none" if count == 0 else "one" if count == 1 else "several"


def comparison_state(ratio: Estimate) -> str:
    """The state macro's value for a paired ratio against 1 (intervals.comparison): higher,
    lower, or notseparated where its interval holds 1."""
    return comparison(ratio).replace(" ", "")


def study_macros(root_version: str) -> dict[str, str]:
    """Where the paper's numbers were made: commit, date, machine, ROOT."""
    from ..core import intervals, provenance  # here: provenance imports psutil, which the table helpers do not need

    state = provenance.git_state()
    host = provenance.machine()
    commit = state["git_commit"][:12] + (" (modified)" if state["git_dirty"] else "")
    return {
        "StudyCommit": escape(commit),
        "StudyDate": escape(provenance.capture({}, cache_state="n/a")["date_utc"][:10]),
        "StudyCPU": escape(host["cpu_model"]),
        "StudyCores": str(host["usable_cores"]),
        "StudyMemoryGB": number(host["memory_bytes"] / 1e9, 3),
        "StudyNumaNodes": str(host["numa_nodes"]),
        "StudyOSKernel": escape(host["os_kernel"]),
        "StudyROOT": escape(root_version),
        "StudyPython": escape(host["python"]),
        # the confidence of every interval the paper prints (throughput.core.intervals), in percent
        "StudyConfidence": f"{100 * intervals.CONFIDENCE:g}",
    }
