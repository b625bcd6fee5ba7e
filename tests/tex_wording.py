"""A section's worded variants built with pdflatex, for the tests of the states a generator writes:
paper/paper.tex's mechanism (\\variant, \\wording) and its words for an interval, the section's own
definitions (its \\newcommand's and \\variant's, which run only where used), the generated macros and
a body that prints some of them; and how siunitx prints a generated number."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

from throughput import REPO

PAPER = REPO / "paper" / "paper.tex"


def _end_of_groups(text: str, position: int, groups: int) -> int:
    """Where `groups` brace groups (and any [n] between them) starting at `position` end."""
    while groups:
        while text[position].isspace():
            position += 1
        if text[position] == "[":
            position = text.index("]", position) + 1
            continue
        depth = 0
        for index in range(position, len(text)):
            if text[index] == "\\":
                continue
            if text[index] == "{" and text[index - 1] != "\\":
                depth += 1
            elif text[index] == "}" and text[index - 1] != "\\":
                depth -= 1
                if depth == 0:
                    position = index + 1
                    break
        groups -= 1
    return position


def definitions(section: str) -> str:
    """Every \\newcommand and \\variant at the top level of paper/sections/<section>.tex."""
    text = re.sub(r"(?<!\\)%[^\n]*", "", (REPO / "paper" / "sections" / f"{section}.tex").read_text())
    found, end = [], 0
    for match in re.finditer(r"\\(newcommand|variant)(?=\{)", text):
        if match.start() < end:  # inside one already taken
            continue
        end = _end_of_groups(text, match.end(), 3 if match.group(1) == "variant" else 2)
        found.append(text[match.start():end])
    return "\n".join(found)


def _preamble() -> str:
    text = PAPER.read_text()
    mechanism = text[text.index(r"\makeatletter"):text.index(r"\makeatother") + len(r"\makeatother")]
    interval = [line for line in text.splitlines()
                if line.startswith((r"\newcommand{\confidenceinterval}", r"\newcommand{\nointerval}"))]
    return "\n".join([r"\documentclass{article}", r"\usepackage[T1]{fontenc}", r"\usepackage{lmodern}",
                      r"\usepackage{amsmath}", r"\usepackage{booktabs}", r"\usepackage{array}",
                      r"\usepackage{siunitx}", mechanism, *interval, r"\newcommand{\StudyConfidence}{95}"])


def compile_pdf(tmp_path: Path, source: str) -> tuple[int, str, str]:
    """pdflatex on `source` in `tmp_path`: its exit status, its log and the text of the PDF
    (whitespace collapsed; the minus sign and the apostrophe as typed)."""
    (tmp_path / "t.tex").write_text(source)
    run = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "t.tex"],
                         cwd=tmp_path, capture_output=True, text=True)
    log = " ".join((tmp_path / "t.log").read_text(errors="replace").replace("\n", "").split())
    pdf = tmp_path / "t.pdf"
    text = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True).stdout if pdf.exists() else ""
    return run.returncode, log, " ".join(text.split()).replace("\u2212", "-").replace("\u2019", "'")


def build(tmp_path: Path, section: str | None, macros: dict[str, str], body: str) -> tuple[int, str, str]:
    """compile_pdf of `body` with `section`'s definitions (none: the paper's mechanism alone) and
    `macros`."""
    values = "\n".join(rf"\newcommand{{\{name}}}{{{value}}}" for name, value in macros.items())
    return compile_pdf(tmp_path, "\n".join([_preamble(), values, definitions(section) if section else "",
                                             r"\begin{document}", body, r"\end{document}"]))


def printed(number: str) -> str:
    """How the PDF shows a generated \\num{...} (throughput.report.paper.number)."""
    return re.fullmatch(r"\\num\{(.*)\}", number).group(1)


def worded(family: str, macros: dict[str, str]) -> str:
    """TeX that defines `macros` and prints the wording of `family` they pick, with a full stop."""
    return "".join(rf"\def\{k}{{{v}}}" for k, v in macros.items()) + rf"\wording{{{family}}}."
