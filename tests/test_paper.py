"""paper: LaTeX tables, number macros and escaping."""
from __future__ import annotations

import pandas as pd
import pytest

from throughput import paper


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
    assert [p.name for p in path.parent.iterdir()] == ["t.tex"]  # no temporary left


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
    assert [p.name for p in tmp_path.iterdir()] == ["m.tex"]


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
