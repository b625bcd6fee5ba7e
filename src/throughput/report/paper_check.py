"""Checks a built paper as a reader would see it (CI runs it after `make paper`).

    python -m throughput.report.paper_check [--workdir DIR]

Reads the PDF back with pdftotext and the generated tables from disk: every
section and subsection of paper/sections/ is in the PDF, no unresolved
reference or citation ("??") is, and every table the sections \\input has at
least one row. A failed reader's cell ("failed: ...") is a filled cell; a
table with no rows is not. Every notebook the workflow ran standalone (its
defaults, as a reviewer on a Binder-like host: results/standalone/executed/)
finished and fit such a host's memory. Exits 1 naming each problem.
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

from .. import REPO
from ..core import standalone

PDF = Path("paper/build/paper.pdf")
STANDALONE_RECORDS = Path("results/standalone/executed")
_HEADING = re.compile(r"\\(?:sub)*section\*?\{((?:[^{}]|\{[^{}]*\})*)\}")
_TABLE_INPUT = re.compile(r"\\input\{(paper/generated/[^}]+\.tex)\}")
# Tables of the study as a whole, not of one experiment (workflow/rules/paper.smk makes them).
# the method section's machines (rule study_machines) and the ledger's summary (rule study_ledger)
STUDY_TABLES = ("paper/generated/machines.tex", "paper/generated/ledger_table.tex")


def _plain(latex: str) -> str:
    """A heading as pdftotext prints it: commands dropped, braces and escapes removed, spaces folded."""
    text = re.sub(r"\\[a-zA-Z]+\*?", "", latex).replace("\\", "")
    text = text.replace("{", "").replace("}", "").replace("~", " ").replace("--", "–")
    text = text.replace("'", "\u2019")  # LaTeX sets an apostrophe as a right quote, as pdftotext prints it
    return " ".join(text.split())


def headings(sources: Path = REPO / "paper") -> list[str]:
    titles = []
    for tex in [sources / "paper.tex", *sorted((sources / "sections").glob("*.tex"))]:
        text = re.sub(r"(?<!\\)%.*", "", tex.read_text())
        titles += [_plain(t) for t in _HEADING.findall(text)]
    return titles


def table_inputs(sources: Path = REPO / "paper") -> list[str]:
    """Generated files the sections \\input that are tables (their path as written)."""
    found = []
    for tex in sorted((sources / "sections").glob("*.tex")):
        found += _TABLE_INPUT.findall(re.sub(r"(?<!\\)%.*", "", tex.read_text()))
    return [name for name in found if not name.endswith("macros.tex")]


def table_rows(text: str) -> int:
    """Body rows of a booktabs tabular (between \\midrule and \\bottomrule); of a longtable, after
    its repeated head (\\endhead)."""
    if r"\midrule" not in text or r"\bottomrule" not in text:
        return 0
    body = text.split(r"\endhead", 1)[-1] if r"\endhead" in text else text.split(r"\midrule", 1)[1]
    body = body.split(r"\bottomrule", 1)[0]
    return sum(1 for line in body.splitlines() if line.strip().endswith("\\\\"))


def standalone_problems(workdir: Path) -> list[str]:
    """Each standalone run's record (throughput.core.standalone) that failed or outgrew a Binder
    host's memory, named with its notebook; none where the workflow ran none."""
    found = []
    for path in sorted((workdir / STANDALONE_RECORDS).glob("*.json")):
        record = json.loads(path.read_text())
        if record["returncode"] != 0:
            found.append(f"{path}: {record['notebook']} failed when run with its own defaults "
                         f"(exit {record['returncode']}; its log: {path.with_suffix('.log')})")
        elif record["peak_pss_bytes"] >= standalone.BINDER_MEMORY_BYTES:
            found.append(f"{path}: {standalone.describe(record)}: over a Binder host's "
                         f"{standalone.BINDER_MEMORY_BYTES / 1e9:.0f} GB (shrink its parameters cell)")
    return found


def problems(workdir: Path, sources: Path = REPO / "paper") -> list[str]:
    found = []
    pdf = workdir / PDF
    if not pdf.is_file():
        return [f"{pdf}: no PDF (run `make paper`)"]
    text = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    folded = " ".join(text.split())
    for title in headings(sources):
        if title not in folded:
            found.append(f"section '{title}' is not in {pdf}")
    if "??" in text:
        where = folded.index("??")
        found.append(f"{pdf} has an unresolved reference or citation: ...{folded[max(0, where - 80):where + 20]}...")
    for name in table_inputs(sources):
        table = workdir / name
        if not table.is_file():
            found.append(f"{name}: table missing")
        elif table_rows(table.read_text()) == 0:
            found.append(f"{name}: table has no rows")
    return found + standalone_problems(workdir)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m throughput.report.paper_check", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workdir", default=".", type=Path, help="where the workflow ran (default: here)")
    args = parser.parse_args(argv)
    found = problems(args.workdir)
    for problem in found:
        print(f"paper check: {problem}", file=sys.stderr)
    if not found:
        print(f"paper check: {len(headings())} sections and {len(table_inputs())} tables present, "
              f"no unresolved reference in {args.workdir / PDF}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
