"""paper: LaTeX tables, number macros and escaping; no typed figure in the paper or the notebooks' prose;
the seeds' figures in one place (throughput.report.seeds), each found in its seed."""
from __future__ import annotations

import ast
import json
import math
import re
import shutil
import subprocess

import pandas as pd
import pytest

from throughput import REPO
from throughput.core import intervals
from throughput.machines import tables as machines
from throughput.report import noise_sentences
from throughput.report import ledger, paper, seeds, standalone


def _body(text: str) -> list[str]:
    lines = text.splitlines()
    return lines[lines.index(r"\midrule") + 1: lines.index(r"\bottomrule")]


# --- escape -----------------------------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("n_values", r"n\_values"),
    ("50%", r"50\%"),
    ("R&D", r"R\&D"),
    ("$x$", r"\$x\$"),
    ("#1", r"\#1"),
    ("{a}", r"\{a\}"),
    ("~", r"\textasciitilde{}"),
    ("2^10", r"2\textasciicircum{}10"),
    ("a\\b", r"a\textbackslash{}b"),
    ("plain text 1.5", "plain text 1.5"),
    ("B (±12%)", r"B ($\pm$12\%)"),
    (12, "12"),
    ("", ""),
])
def test_escape(text, expected):
    assert paper.escape(text) == expected


def test_escape_backslash_not_double_escaped():
    # the braces that \textbackslash{} brings are not escaped again
    assert paper.escape("\\_") == r"\textbackslash{}\_"


# --- write_table ------------------------------------------------------------------------------

def test_write_table_structure(tmp_path):
    frame = pd.DataFrame({"mode": ["inplace", "immutable", "stream"], "GB/s_median": ["1.0", "2.0", "3.0"],
                          "50% & more": ["a", "b", "c"]})
    path = tmp_path / "tables" / "t.tex"
    assert paper.write_table(frame, path) == path
    text = path.read_text()
    lines = text.splitlines()
    assert lines[0] == r"\begin{tabular}{lrr}"
    assert lines[1] == r"\toprule"
    assert lines[2] == r"mode & GB/s\_median & 50\% \& more \\"
    assert lines[3] == r"\midrule"
    assert lines[-2:] == [r"\bottomrule", r"\end{tabular}"]
    assert text.endswith("\n")
    body = _body(text)
    assert len(body) == len(frame)
    assert body[0] == r"inplace & 1.0 & a \\"
    assert all(row.count(" & ") == len(frame.columns) - 1 and row.endswith(r" \\") for row in body)
    # no temporary left; beside the table, the widths of the intervals printed into it (none here)
    assert sorted(p.name for p in path.parent.iterdir()) == [paper.PRINTED_WIDTHS, "t.tex"]


def test_printed_intervals_are_filed_under_the_file_they_were_written_to(tmp_path):
    """with_interval and interval note each printed interval's relative half-width (its larger
    side); with_bounds (figures near zero) and unknown intervals note none; each write files what
    was noted since the last one under its name, and the study's method section reads them back."""
    from throughput.core.intervals import Estimate

    folder = tmp_path / "generated" / "some_experiment"
    # what earlier tests in this process noted goes here, outside the folder read back below
    paper.write_macros({}, tmp_path / "drained" / "drained.tex")
    cells = [paper.with_interval(10.0, 9.0, 12.0), paper.interval(Estimate(2.0, 1.9, 2.1, 5))]
    paper.with_bounds(Estimate(0.01, -0.5, 0.5, 5))  # near zero: its bounds only
    paper.with_interval(3.0, float("nan"), float("nan"))  # one round: no interval
    paper.write_table(pd.DataFrame({"cell": cells}), folder / "table.tex")
    typeset = paper.with_interval(5.0, 4.5, 5.5)  # a table typeset by its experiment (the GPU section's)
    assert (paper.write_tex(typeset, folder / "typeset.tex")).read_text() == typeset
    paper.interval(Estimate(4.0, 3.0, 5.0, 5))
    paper.write_macros({"Some": "1"}, folder / "macros.tex")
    files = json.loads((folder / paper.PRINTED_WIDTHS).read_text())["files"]
    assert files["table.tex"] == pytest.approx([0.2, 0.05]) and files["macros.tex"] == pytest.approx([0.25])
    assert files["typeset.tex"] == pytest.approx([0.1])
    printed = noise_sentences.printed_widths(tmp_path / "generated")
    assert sorted(printed["some_experiment"]) == pytest.approx([0.05, 0.1, 0.2, 0.25])
    facts = noise_sentences._printed(printed, 0.1)
    assert (facts["PrintedCells"], facts["PrintedWide"], facts["PrintedMedian"]) == (4, 2, pytest.approx(15.0))
    assert noise_sentences._printed({}, 0.1) == {"PrintedState": "none"}


def test_write_table_column_format_and_cells_verbatim(tmp_path):
    frame = pd.DataFrame({"a": [r"\num{1.5}"], "b": [r"\textbf{x}"]})
    path = paper.write_table(frame, tmp_path / "t.tex", column_format="cc")
    text = path.read_text()
    assert text.splitlines()[0] == r"\begin{tabular}{cc}"
    assert _body(text) == [r"\num{1.5} & \textbf{x} \\"]


def test_write_table_empty_frame(tmp_path):
    frame = pd.DataFrame({"x": pd.Series([], dtype=str), "y": pd.Series([], dtype=str)})
    text = paper.write_table(frame, tmp_path / "t.tex").read_text()
    assert _body(text) == []
    assert r"x & y \\" in text


def test_write_table_many_rows(tmp_path):
    frame = pd.DataFrame({"i": [str(i) for i in range(17)], "sq": [str(i * i) for i in range(17)]})
    body = _body(paper.write_table(frame, tmp_path / "t.tex").read_text())
    assert len(body) == 17
    assert body[-1] == r"16 & 256 \\"


# --- write_macros -----------------------------------------------------------------------------

def test_write_macros(tmp_path):
    path = paper.write_macros({"singleRatio": "0.93", "plateauGHz": paper.number(1.98765)}, tmp_path / "m.tex")
    lines = path.read_text().splitlines()
    assert lines == [r"\newcommand{\singleRatio}{0.93}", r"\newcommand{\plateauGHz}{\num{1.99}}"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.json", "m.tex", paper.PRINTED_WIDTHS]
    data = json.loads((tmp_path / "m.json").read_text())
    assert data["singleRatio"] == {"tex": "0.93"}
    assert data["plateauGHz"]["tex"] == r"\num{1.99}"
    assert data["plateauGHz"]["value"] == pytest.approx(1.98765)


@pytest.mark.parametrize("name", ["ratio2", "single_ratio", "", "with space", "r\\x", "naïve"])
def test_write_macros_rejects_bad_names(tmp_path, name):
    path = tmp_path / "m.tex"
    with pytest.raises(ValueError, match="letters only"):
        paper.write_macros({"good": "1", name: "2"}, path)
    assert not path.exists()
    assert list(tmp_path.iterdir()) == []


# --- number -----------------------------------------------------------------------------------

@pytest.mark.parametrize("value, digits, expected", [
    (1.23456, 3, r"\num{1.23}"),
    (1.0, 3, r"\num{1}"),
    (2, 3, r"\num{2}"),
    (12345.0, 3, r"\num{12300}"),
    (0.000123456, 3, r"\num{0.000123}"),
    (0.9876, 2, r"\num{0.99}"),
    (99.96, 3, r"\num{100}"),
    (-3.14159, 2, r"\num{-3.1}"),
    (1234567.0, 3, r"\num{1230000}"),
    (1.23456789, 8, r"\num{1.2345679}"),
    (0.0, 3, r"\num{0}"),
    (25.6, 1, r"\num{30}"),
])
def test_number(value, digits, expected):
    assert paper.number(value, digits) == expected


def test_number_default_digits():
    assert paper.number(3.14159265) == r"\num{3.14}"


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf")])
def test_number_refuses_non_finite_values(value):
    with pytest.raises(ValueError, match="not a finite number"):
        paper.number(value)


def test_with_bounds_prints_a_value_near_zero_with_its_two_bounds():
    # a share whose interval straddles zero: scaled to percent, the unit after the value and the upper bound
    share = intervals.Estimate(0.012, -0.034, 0.058, 5)
    assert paper.with_bounds(share, 2, 100, r"\%") == r"\num{1.2}\% (\confidenceinterval{\num{-3.4}}{\num{5.8}}{\%})"
    assert paper.with_bounds(intervals.Estimate(-91e-3, -0.18, 3.8e-3, 3), 2, 1e3, "~ms") == \
        r"\num{-91}~ms (\confidenceinterval{\num{-180}}{\num{3.8}}{~ms})"
    # one round: the value, marked as having no interval; nothing measured: what the caller prints instead
    assert paper.with_bounds(intervals.Estimate(0.2, math.nan, math.nan, 1), 2, 100, r"\%") == r"\num{20}\%\oneprocess{}"
    assert paper.with_bounds(intervals.UNKNOWN) == "n/a" and paper.with_bounds(intervals.UNKNOWN, missing="--") == "--"
    one = paper.with_interval(3.0, math.nan, math.nan)  # a figure from one process is never printed bare
    assert one == paper.number(3.0) + paper.NO_INTERVAL_MARK and one.value == 3.0


def test_an_interval_wider_than_the_value_is_printed_as_its_bounds():
    # two rounds of a ratio: far wider above than below, which a plus-or-minus would hide
    assert paper.with_interval(0.66, 0.087, 4.95, 2) == \
        rf"\num{{0.66}} (\confidenceinterval{{{paper.number(0.087, 2)}}}{{{paper.number(4.95, 2)}}}{{}})"
    assert paper.with_interval(1.0, 0.9, 1.2) == r"\num{1}\,$\pm$\,20\%"
    assert paper.with_interval(0.0, -0.1, 0.1, 2).startswith(r"\num{0} (\confidenceinterval")


def test_an_interval_is_its_two_bounds_as_numbers_and_the_words_are_the_papers():
    ratio = intervals.Estimate(0.97, 0.9612, 0.9788, 5)
    assert paper.interval(ratio) == rf"\confidenceinterval{{{paper.number(ratio.low, 2)}}}{{{paper.number(ratio.high, 2)}}}{{}}"
    assert paper.interval(ratio, 3, 100, r"\%") == \
        rf"\confidenceinterval{{{paper.number(100 * ratio.low)}}}{{{paper.number(100 * ratio.high)}}}{{\%}}"
    # one round, or nothing measured: no bounds to print
    assert paper.interval(intervals.Estimate(0.2, math.nan, math.nan, 1)) == paper.interval(intervals.UNKNOWN) == \
        r"\nointerval{}"


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="no pdflatex")
def test_the_paper_words_the_intervals_the_formatter_gives(tmp_path):
    from tex_wording import build, printed
    share, once = intervals.Estimate(0.012, -0.034, 0.058, 5), intervals.Estimate(0.2, math.nan, math.nan, 1)
    percent = r"\%"
    code, log, text = build(tmp_path, None, {}, f"A {paper.with_bounds(share, 2, 100, percent)}; "
                                                f"B {paper.number(once.value)} ({paper.interval(once)}).")
    assert code == 0, log[-2000:]
    value, low, high = (printed(paper.number(100 * v, 2)) for v in (share.value, share.low, share.high))
    assert f"A {value}% (95% interval {low} to {high}%); B {printed(paper.number(once.value))} (no interval: one round)." \
        in text, text


# --- nothing measured typed in the paper's sources or the notebooks' prose -------------------------

TEX_SOURCES = [REPO / "paper" / "paper.tex", *sorted((REPO / "paper" / "sections").glob("*.tex"))]
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
DIGIT = re.compile(r"[0-9\u00b2\u00b3\u00b9\u2070-\u2079]")  # ASCII and superscript digits

# Removed before looking for digits: LaTeX structure, references and citations, lengths and
# package options; each span is blanked, so line numbers stay right.
TEX_STRUCTURE = [
    r"(?<!\\)%[^\n]*",                                            # comments
    r"\\begin\{thebibliography\}.*?\\end\{thebibliography\}",     # the reference list
    r"\\begin\{equation\}.*?\\end\{equation\}",                   # a model's formula, not a figure
    r"\\(?:cite|ref|eqref|label|input|url|claimref)\{[^}]*\}",  # claimref: a ledger id (S000-...)
    r"\\includegraphics\[[^\]]*\]\{[^}]*\}",
    r"\\(?:documentclass|usepackage)\[[^\]]*\]",                  # class and package options
    r"\\setlength\{[^}]*\}\{[^}]*\}",
    r"\\newcommand\{\\[A-Za-z]+\}\[[1-9]\]", r"#[1-9]",       # a command's arguments (paper.tex's \wording)
    r"\d*\.?\d+\\(?:linewidth|textwidth)",                        # lengths
]
# Allowed where they stand: names, unit definitions and symbols, never a figure.
TEX_NAMES = [
    r"[Ss]eeds?~00[0-4]",                  # the seeds, by number
    r"\b(?:Table|Figure)~[12]\b",          # the seeds' own tables and figures (ours go by \ref)
    r"\bfloat(?:32|64)\b",                 # value types
    r"\bLZ4\b", r"\bliblz4\b", r"\broot4j\b", r"\bHisto[23]D\b", r"\bTH3D\b", r"\bGetV1\b",  # names
    r"-O[0-3]\b",                         # compiler flags
    r"\bL2\b",                             # the GPU's level-two cache, by name
    r"\$\\chi\^2\$",                       # the track chi-square, a quantity's name
    r"\$10\^[69]\$", r"\$2\^\{20\}\$",     # units: MB, GB, GHz, MiB
    r"\$2\^\{64\}\$", r"\b64-bit\b",       # the checksum's definition
    r"\\log_2 N", r"\b[RT]_1\b", r"\(1-s\)",  # symbols of the seeds' and Amdahl's formulas
]
# The notebooks' prose: the same kind of names, as markdown writes them.
MARKDOWN_NAMES = [
    r"\b[Ss]eeds? 00[0-4](?:(?:,| and) 00[0-4])*\b", r"\b(?:Table|Figure) [12]\b", r"\bfloat(?:32|64)\b",
    r"\bLZ4\b", r"\broot4j\b", r"\bHisto[23]D\b", r"-O[0-3]\b", r"\bR_1\b",
    r"\b10\^[369]\b", r"\b2\^64\b",
    r"\bseed00[0-4]_[a-z_.]+",  # the names of tables and functions: seed001_table.tex, seed003_claims
]


def _blank(text: str, patterns: list[str]) -> str:
    for pattern in patterns:
        text = re.sub(pattern, lambda m: re.sub(r"[^\n]", " ", m.group()), text, flags=re.S)
    return text


def _tex_offenders(text: str, name: str) -> list[str]:
    stripped = _blank(_blank(text, TEX_STRUCTURE), TEX_NAMES)
    return [f"{name}:{number}: {original.strip()}"
            for number, (line, original) in enumerate(zip(stripped.splitlines(), text.splitlines()), 1)
            if DIGIT.search(line)]


def test_the_tex_sources_type_no_number():
    offenders = [o for path in TEX_SOURCES for o in _tex_offenders(path.read_text(), str(path.relative_to(REPO)))]
    assert not offenders, "digits outside the allow-list (a figure must come from a macro):\n" + "\n".join(offenders)


@pytest.mark.parametrize("line", [
    r"saturates at about 2~GHz",                              # a seed's figure typed
    r"only 20\% of events have a muon",                       # a measurement typed
    r"\includegraphics[width=0.6\textwidth]{a.pdf} 947 branches",
    r"(see Table~3)",                                         # not one of the seeds' tables
    r"$5.13\times10^8$ events",
])
def test_the_tex_check_catches_typed_numbers(line):
    assert _tex_offenders(line, "x.tex"), line


@pytest.mark.parametrize("line", [
    r"Seed~000's Table~2, \cite{seed000} and Table~\ref{tab:a1} % 42 in a comment",
    r"\includegraphics[width=0.6\textwidth]{figures/x2.pdf} \input{paper/generated/a/macros.tex}",
    r"at \texttt{-O3} with float32, $10^9$ values, LZ4 and \texttt{Histo3D}",
    r"one array is \GpubLTwoRatio{} times the L2 cache of the GPU",
])
def test_the_tex_check_allows_structure_and_names(line):
    assert not _tex_offenders(line, "x.tex")


def _markdown_offenders(notebook) -> list[str]:
    cells = json.loads(notebook.read_text())["cells"]
    found = []
    for index, cell in enumerate(cells):
        if cell["cell_type"] != "markdown":
            continue
        text = _blank("".join(cell["source"]), MARKDOWN_NAMES)
        found += [f"{notebook.name} cell {index}: {line.strip()}" for line in text.splitlines() if DIGIT.search(line)]
    return found


def test_the_notebooks_prose_types_no_number():
    offenders = [o for notebook in NOTEBOOKS for o in _markdown_offenders(notebook)]
    assert NOTEBOOKS and not offenders, "digits in markdown cells outside the allow-list:\n" + "\n".join(offenders)


def test_the_markdown_check_catches_a_typed_number(tmp_path):
    notebook = tmp_path / "n.ipynb"
    notebook.write_text(json.dumps({"cells": [
        {"cell_type": "markdown", "source": ["# Seed 000, Table 1, float64, -O3\n", "plateau at about 2 GHz"]},
        {"cell_type": "code", "source": ["x = 2"]}]}))
    assert _markdown_offenders(notebook) == ["n.ipynb cell 0: plateau at about 2 GHz"]


# --- every macro the TeX uses is written by some generator -----------------------------------------

MACRO_PREFIXES = ("Study", "Seed", "Mbw", "Gpub", "Rc", "Rdf", "Wrt", "Ledger")


# \wording[Family]{Name}: prints the variant of Family (default: Name) that \NameState names.
_WORDING = re.compile(r"\\wording(?:\[[A-Za-z]+\])?\{([A-Za-z]+)\}")


def _used_macros(text: str) -> set[str]:
    text = re.sub(r"(?<!\\)%[^\n]*", "", text)
    used = {m for m in re.findall(r"\\([A-Za-z]+)", text) if m.startswith(MACRO_PREFIXES)}
    return used | {name + "State" for name in re.findall(_WORDING, text)}  # the state it picks by


def _producer_patterns(sources: list[str]) -> list[re.Pattern]:
    """Macro names a producer's code can write: its string constants, its f-strings with
    each formatted part standing for letters (f"Rdf{name}Speedup"), and the macros of its
    calls to noise_sentences.paper_macros("<Prefix>", ...), section_macros and looks_macros."""
    patterns = []
    for source in sources:
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isalpha():
                patterns.append(re.compile(re.escape(node.value)))
            elif (isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "paper_macros"
                  and node.args and isinstance(node.args[0], ast.Constant)):  # throughput.report.noise_sentences' macros
                patterns += [re.compile(re.escape(node.args[0].value + name)) for name in noise_sentences.PAPER_MACROS]
            elif (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "section_macros"
                  and node.args and isinstance(node.args[0], ast.Constant)):  # throughput.machines.tables' macros
                patterns += [re.compile(re.escape(node.args[0].value + name)) for name in machines.SECTION_MACROS]
            elif (isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "looks_macros"
                  and node.args and isinstance(node.args[0], ast.Constant)):  # throughput.report.ledger's looks macros
                patterns += [re.compile(re.escape(node.args[0].value + name)) for name in ledger.LOOKS_MACROS]
            elif isinstance(node, ast.JoinedStr):
                parts = [re.escape(v.value) if isinstance(v, ast.Constant) else "[A-Za-z]+" for v in node.values]
                if isinstance(node.values[0], ast.Constant):
                    patterns.append(re.compile("".join(parts)))
    return patterns


def _code_cells(notebook) -> str:
    cells = json.loads(notebook.read_text())["cells"]
    code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    return "\n".join(line for line in code.splitlines() if not line.lstrip().startswith(("%", "!")))


def test_every_macro_the_tex_uses_is_written_by_a_generator():
    everywhere = set(paper.study_macros("6.40")) | set(seeds.macros())  # paper/generated/study.tex
    everywhere |= set(noise_sentences.study_macros({}))  # paper/generated/noise.tex
    everywhere |= set(machines.paper_macros([]))  # paper/generated/machines_macros.tex
    everywhere |= set(standalone.macros([{"notebook": "n.ipynb", "wall_s": 1.0, "peak_pss_bytes": 1e8}]))
    everywhere |= set(standalone.macros(None))  # paper/generated/standalone.tex, measured and off
    claims = ledger.load()  # paper/generated/ledger.tex, with and without archived machines
    decisions = ledger.decide_all(claims, ledger.Machine("here", 2, gpu=False), {})
    everywhere |= set(ledger.macros(claims, decisions)) | set(ledger.macros(claims, decisions, {"m": decisions}))
    missing = []
    for path in TEX_SOURCES:
        text = path.read_text()
        inputs = re.findall(r"\\input\{paper/generated/([a-z_]+)/macros\.tex\}", text)
        # an experiment's code: its module, or every module of its package
        experiments = REPO / "src/throughput/experiments"
        sources = [path.read_text() for e in inputs
                   for path in [experiments / f"{e}.py", *sorted((experiments / e).glob("*.py"))] if path.is_file()]
        sources += [_code_cells(REPO / "notebooks" / f"{e}.ipynb") for e in inputs]
        patterns = _producer_patterns(sources)
        for name in sorted(_used_macros(text) - everywhere):
            if not any(p.fullmatch(name) for p in patterns):
                missing.append(f"{path.relative_to(REPO)}: \\{name} (producers: {', '.join(inputs) or 'none'})")
    assert not missing, "macros no generator writes:\n" + "\n".join(missing)


def test_the_study_rule_writes_the_seed_macros():
    rule = (REPO / "workflow/rules/paper.smk").read_text()
    assert "seeds.macros()" in rule and "paper.study_macros(" in rule


# --- the seeds' figures: one place, each found in its seed ------------------------------------------

def _normal(text: str) -> str:
    return " ".join(text.split())


def _flat(value) -> list:
    return [x for v in value for x in _flat(v)] if isinstance(value, (tuple, list)) else [value]


def _citation_problem(citation: seeds.Citation, seed_text: str | None) -> str | None:
    """Why `citation` is wrong: its quote is not in `seed_text`, or a figure of it is not,
    in order, among its quote's numbers (strings: not in the quote)."""
    if seed_text is not None and _normal(citation.quote) not in _normal(seed_text):
        return f"quote not in seed {citation.seed}: {citation.quote!r}"
    quoted, position = seeds.numbers(citation.quote), 0
    for item in _flat(citation.value):
        if isinstance(item, str):
            if item not in citation.quote:
                return f"{item!r} not in {citation.quote!r}"
            continue
        while position < len(quoted) and not math.isclose(quoted[position], item / citation.scale, rel_tol=1e-9):
            position += 1
        if position == len(quoted):
            return f"{item} (/{citation.scale:g}) not in order in {citation.quote!r}"
        position += 1
    return None


@pytest.mark.skipif(not seeds.SEEDS_DIR.is_dir(), reason="no ../shared/seeds beside the repository")
@pytest.mark.parametrize("citation", seeds.CITATIONS, ids=lambda c: f"{c.seed}:{c.quote[:40]}")
def test_every_seed_figure_is_in_its_quote_and_the_quote_in_its_seed(citation):
    # the seed's benchmark code ("code") is not among the seed texts: only its quote is checked
    text = None if citation.seed == "code" else (seeds.SEEDS_DIR / seeds.FILES[citation.seed]).read_text()
    assert _citation_problem(citation, text) is None


@pytest.mark.parametrize("value, quote, scale, why", [
    ((2.9, 206), "| photon | 2.9 | 205 | 1.14 kHz |", 1, "206"),          # a figure mistyped
    ((205, 2.9), "| photon | 2.9 | 205 | 1.14 kHz |", 1, "2.9"),          # figures swapped
    (("muon", 2.7), "| photon | 2.9 | 205 |", 1, "'muon'"),               # the wrong row
    (5.13e8, "from 513M Monte Carlo events", 1e5, "not in order"),      # the wrong scale
    ((4.0,), "is about 4 times slower than Java", 1, "quote not in seed"),  # a quote the seed lacks
])
def test_a_wrong_citation_is_caught(value, quote, scale, why):
    seed_text = "It is about 4 times slower than C++. | photon | 2.9 | 205 | 1.14 kHz | from 513M Monte Carlo events"
    problem = _citation_problem(seeds.Citation(value, "000", "Table 1", quote, scale), seed_text)
    assert problem is not None and why in problem, problem


def test_the_experiments_use_the_seed_figures_from_one_place():
    from throughput.experiments import gpu_bandwidth as gb
    from throughput.experiments import memory_bandwidth as mb
    from throughput.experiments import rdataframe as rdf
    from throughput.experiments import reader_comparison as rc
    from throughput.experiments import writing as wr

    assert gb.SEED_TABLE2 is seeds.GPU_TABLE2 and gb.SEED_GPUS is seeds.GPU_NAMES
    assert gb.SEED_ARRAY_MIB == seeds.GPU_ARRAY_MIB == 33554432 * 4 // 2**20
    assert mb.SEED_SECONDS is seeds.MBW_SECONDS and mb.SEED_N == seeds.MBW_VALUES
    assert rc.SEED_TABLE1 is seeds.READER_TABLE1 and rc.SEED_JAVA_SLOWDOWN == seeds.READER_JAVA_SLOWDOWN
    assert rdf.SEED_STORAGE is seeds.RDF_STORAGE and rdf.SEED_NHIST is seeds.RDF_NHIST and rdf.SEED_PDF is seeds.RDF_PDF
    assert wr.SEED001 is seeds.WRITE_SEED001 and wr.SEED001_THREADS == seeds.WRITE_THREADS


def test_seed_macros_are_computed_from_the_tables(tmp_path):
    values = seeds.macros()
    assert all(name.isalpha() and name.startswith("Seed") for name in values)
    assert values["SeedRdfTrickSpeedup"] == paper.number(seeds.RDF_PDF["defines"] / seeds.RDF_PDF["histo3d"], 2)
    assert values["SeedRdfThreadsLarge"] == paper.number(seeds.RDF_STORAGE["threads"].max())
    assert values["SeedWrtSizeRatioMax"] == paper.number(seeds.WRITE_SEED001["size_ratio"].max())
    assert values["SeedMbwValues"] == r"\num{1e10}" and values["SeedRdfBenchEvents"] == r"\num{5.13e8}"
    text = paper.write_macros(values, tmp_path / "seeds.tex").read_text()
    assert text.count(r"\newcommand") == len(values)


# --- worded variants: the states come from Python, their words from the sections --------------------

# Every \wording{Name} of the sections and the states its generator writes to \NameState
# (the section must word each, and only these).
WORDED = {
    "GpubGpu": {"measured", "notmeasured"}, "GpubCuda": {"built", "notbuilt"},  # gpu_bandwidth.report.paper_macros
    "StudyStandalone": {"measured", "off"},  # report.standalone.macros: the notebooks run with their own defaults
    "RdfThrottle": {"met", "missed", "inconclusive", "notmeasured"},  # rdataframe.report.throttle_macros
    "RdfThrottleBurst": {"met", "missed", "inconclusive", "notmeasured"},  # the same, the kernel's burst
    "RdfReadCalls": {"measured", "notmeasured"},  # rdataframe.report.saturation_macros: TTreeCache's read calls
    "RdfSharing": {"measured", "notmeasured"},  # rdataframe.report.sharing_macros: cold readers sharing the device
    "WrtObjCompressionShare": {"measured", "notmeasured"},  # writing.report.paper_macros: seed 001's compression share
    "WrtObjUncompressedSpeedup": {"measured", "notmeasured"},  # and its uncompressed speed-up
    "MbwSingle": {"met", "missed", "inconclusive"},  # memory_bandwidth.report.paper_macros (analysis.targets)
    "MbwPlateau": {"met", "missed", "inconclusive"},  # memory_bandwidth.analysis.plateau_verdict
    "MbwHugePages": {"recorded", "notrecorded"},  # memory_bandwidth.analysis.huge_pages
    "MbwHugePagesUnknown": {"none", "some"},  # the same: processes that could not tell
    "MbwPlateauImmutable": {"met", "missed", "inconclusive"},  # said only where the plateau is outside the band
    "MbwOptInplace": {"ranked", "unranked"}, "MbwOptImmutable": {"ranked", "unranked"},  # ...analysis.opt_verdict
    "MbwCache": {"beyond", "notbeyond", "unknown"},  # memory_bandwidth.analysis.cache_fit
    "MbwHierarchyCache": {"beyond", "notbeyond", "unknown"},  # the same, said of the hierarchy's memory run
    "MbwHierarchy": {"measured", "nocold", "off", "notmeasured"},  # memory_bandwidth.report._hierarchy_macros
    "WrtTarget": {"met", "missed", "inconclusive", "notmeasured"},  # writing.report.macros
    # writing.analysis.efficiency_target: why the target was not measured (none where it was)
    "WrtTargetReason": {"nosimple", "notmpfs", "compression", "onethread", "none"},
    "WrtDisk": {"fsync", "nofsync", "notmeasured"},  # writing.report._disk_macros
    # reader_comparison.report._numpy_macros, per layout; the MiniAOD-like one's gap and the load beside it
    "RcNumpyAod": {"met", "missed", "missednosplit", "inconclusive", "notmeasured"},
    "RcNumpyNano": {"met", "missed", "missednosplit", "inconclusive", "notmeasured"},
    "RcNumpyAodGap": {"perentry", "baskets", "notseparated"}, "RcNumpyBusy": {"busy", "quiet"},
    "RcOwnWorkAod": {"notsplit", "nogap", "less", "atleast", "notseparated"},  # reader_comparison.report._own_work_macros
    "RcOwnWorkNano": {"notsplit", "nogap", "less", "atleast", "notseparated"},
    # reader_comparison.report._rootreadspeed_macros: which verdicts the layouts had
    "RcRrs": {"notmeasured", "met", "open", "metopen", "slower", "slowermet", "sloweropen", "slowermetopen"},
    "WrtThan": {"higher", "lower", "notseparated", "notmeasured"},  # writing.report._than: every Wrt...Than...State
    "WrtRandomSetup": {"measured", "notmeasured"},  # writing.report._setup_macros
    # writing.report._size_macros and _setup_macros: the workloads measured, and per workload its
    # size ratio's, set-up cost's and speed-ups' states; _back_pressure_macros; the random branches
    "WrtSize": {"events", "products", "both", "notmeasured"}, "WrtSizeThan": {"larger", "smaller", "notseparated"},
    "WrtSetup": {"events", "products", "both", "notmeasured"}, "WrtSetupCost": {"negative", "notnegative"},
    "WrtSetupVerdict": {"met", "missed", "inconclusive"},
    "WrtBackPressure": {"holds", "toolittle", "blocks", "inconclusive", "notmeasured", "nopeak"},
    "WrtRandomBranches": {"one", "several"},
    # writing.report.seed003_table: seed 003's conclusions (writing.analysis.seed003_claims), a family each
    "WrtSeedScaling": {"holds", "notholds", "cannottell", "notmeasured"},
    "WrtSeedCompression": {"holds", "notholds", "cannottell", "notmeasured"},
    "WrtSeedSaturation": {"holds", "notholds", "cannottell", "notmeasured"},
    "WrtSeedBackPressure": {"holds", "toolittle", "blocks", "inconclusive", "notmeasured", "nopeak"},
    "RdfSaturation": {"met", "missed", "inconclusive", "notmeasured"},  # rdataframe.report.saturation_macros
    # rdataframe.report.model_check_macros: the caches checked, each one's state and the rates it names
    "RdfModelCheck": {"cold", "warm", "throttled", "coldwarm", "coldthrottled", "warmthrottled", "coldwarmthrottled",
                      "unchecked", "notmeasured"},
    "RdfCheck": {"holds", "fails", "notseparated"},
    "RdfCheckRates": {"io", "dec", "proc", "iodec", "ioproc", "decproc", "iodecproc"},
    # rdataframe.report.cold_reads_macros: where the cold reads came from (io_rate_model.cold_reads_verdict)
    "RdfColdReads": {"reached", "cache", "notseparated", "nocold", "nodirect", "notmeasured"},
    # rdataframe.report.oversubscribed_macros: the rate model's process counts beyond the cores (paper.count_state)
    "RdfRateOversubscribed": {"none", "one", "several", "notmeasured"},
    # rdataframe.report.dask_macros: how distributed RDataFrame ran, and its largest cluster's workers
    "RdfDaskMode": {"scheduler", "local", "notrun"}, "RdfDaskWorkers": {"none", "one", "several"},
    # rdataframe.report.pdf_weights_macros: the nominal weight put in front or not, the weights against the seed's
    "RdfPdfNominal": {"added", "notadded"}, "RdfPdfVsSeed": {"same", "different"},
    # rdataframe.report.amdahl_macros, usl_macros and agreement_macros
    "RdfAmdahlExtrapolation": {"extrapolated", "notextrapolated"}, "RdfUsl": {"fitted", "notfitted"},
    "RdfAgreement": {"identical", "withintolerance"},
    # gpu_bandwidth.report: target_macros and jagged_macros (this machine's and each archived one's),
    # numa_macros, archived_macros
    "GpubTarget": {"met", "missed", "inconclusive", "notchecked"},
    "GpubTargetReference": {"beside", "none"},  # CUB's transform beside the target's kernels
    "GpubTargetSeed": {"beside", "none"},  # the seed's kernels' fractions beside the tuned ones judged
    "GpubJagged": {"none", "nonumba", "cpuonly", "supports", "notsupported", "undecided"},
    "GpubNuma": {"skipped", "off", "measured"}, "GpubArchived": {"none", "some"},
    "LedgerArchived": {"none", "some"},  # report.ledger.macros: archived machines decide claims too
    "GpubLTwo": {"beyond", "notbeyond", "unknown"},  # gpu_bandwidth.report.l2_macros (device.l2_fit)
    # reader_comparison.report._columnar_macros and _attributes_macros
    "RcColumnar": {"higher", "lower", "notseparated", "notcompared"},
    "RcLooks": {"none", "some"},  # ledger.looks_macros: the claims' extra rounds
    "RdfCompStorage": {"measured", "notmeasured"},  # rdataframe.report.compression_storage_macros
    "RdfWorkflow": {"measured", "notmeasured"},  # rdataframe.report.workflow_macros
    "RdfWorkflowCores": {"higher", "lower", "notseparated", "notmeasured"},  # rdataframe.report.workflow_macros
    "RdfRateLooks": {"none", "some"},  # ledger.looks_macros: Eq. (1)'s extra rounds
    "RcObject": {"measured", "notmeasured"}, "RcObjectBulk": {"read", "refused", "notmeasured"},  # reader_comparison.report._object_macros
    "RcAttributes": {"toofew", "same", "cannotreach", "grows", "shrinks", "notshown"},
    # reader_comparison.report._outcome_macros: which input sets root4j read, and how many
    "RcRootFourJOutcome": {"notrun", "read", "readsome"}, "RcRootFourJReadSets": {"none", "one", "several"},
    # reader_comparison.report._cannot_macros: whether laurelin cannot read some compressions (a parenthesis, a sentence's end)
    "RcLaurelinCannot": {"none", "some"}, "RcLaurelinExcept": {"none", "some"},
}


def _variants(text: str) -> dict[str, set[str]]:
    text = re.sub(r"(?<!\\)%[^\n]*", "", text)
    found: dict[str, set[str]] = {family or name: set()
                                  for family, name in re.findall(r"\\wording(?:\[([A-Za-z]+)\])?\{([A-Za-z]+)\}", text)}
    for name, state in re.findall(r"\\variant\{([A-Za-z]+)\}\{([a-z]+)\}", text):
        found.setdefault(name, set()).add(state)
    return found


def test_every_worded_verdict_words_each_state_its_generator_writes():
    found = {}
    for path in TEX_SOURCES[1:]:
        found.update(_variants(path.read_text()))
    assert found == WORDED


def test_a_state_is_a_verdicts_value_or_not_measured():
    assert [paper.state(v) for v in (intervals.Verdict.MET, intervals.Verdict.MISSED, intervals.Verdict.INCONCLUSIVE, None)] \
        == ["met", "missed", "inconclusive", paper.NOT_MEASURED]


def test_a_count_state_says_none_one_or_several():
    # where the words change with how many there are (a section prints the count itself in several)
    assert [paper.count_state(n) for n in range(4)] == ["none", "one", "several", "several"]


def _mechanism() -> str:
    text = (REPO / "paper" / "paper.tex").read_text()
    return text[text.index(r"\makeatletter"):text.index(r"\makeatother") + len(r"\makeatother")]


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="no pdflatex")
@pytest.mark.parametrize("state, error", [
    ("missed", None),
    ("bogus", r"\RdfThrottleState is 'bogus'"),  # a state the section does not word
    (None, r"\RdfThrottleState is not defined"),  # no state macro at all
])
def test_wording_prints_the_states_variant_or_stops_the_build(tmp_path, state, error):
    source = "\n".join([
        r"\documentclass{article}", _mechanism(),
        rf"\newcommand{{\RdfThrottleState}}{{{state}}}" if state else "",
        r"\newcommand{\RdfOtherState}{met}",  # another state macro, worded by RdfThrottle's variants
        r"\begin{document}",
        r"\variant{RdfThrottle}{met}{recovers it}\variant{RdfThrottle}{missed}{misses it}",
        r"Eq. \wording{RdfThrottle}, \wording[RdfThrottle]{RdfOther}.", r"\end{document}"])
    (tmp_path / "t.tex").write_text(source)
    run = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "t.tex"],
                         cwd=tmp_path, capture_output=True, text=True)
    log = " ".join((tmp_path / "t.log").read_text(errors="replace").replace("\n", "").split())
    if error is None:
        assert run.returncode == 0 and "misses it, recovers it" in subprocess.run(
            ["pdftotext", str(tmp_path / "t.pdf"), "-"], capture_output=True, text=True).stdout
    else:
        assert run.returncode != 0 and error in log
