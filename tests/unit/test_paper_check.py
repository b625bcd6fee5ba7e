"""The check CI runs on the built paper: sections, references, tables with rows."""
from __future__ import annotations

import shutil
import subprocess

import pytest

from throughput.report import paper_check


def test_headings_and_tables_are_read_from_the_sources():
    titles = paper_check.headings()
    assert "Memory bandwidth" in titles and "How we measure" in titles
    tables = paper_check.table_inputs()
    assert "paper/generated/reader_comparison/failures_table.tex" in tables
    assert not any(t.endswith("macros.tex") for t in tables)


def test_table_rows_counts_body_rows_only():
    empty = "\\begin{tabular}{lr}\n\\toprule\na & b \\\\\n\\midrule\n\\bottomrule\n\\end{tabular}\n"
    assert paper_check.table_rows(empty) == 0
    assert paper_check.table_rows(empty.replace("\\midrule\n", "\\midrule\nx & failed: E \\\\\n")) == 1


def test_table_rows_of_a_longtable_skips_its_repeated_head():
    from throughput.report import ledger

    claims = ledger.load()
    decisions = ledger.decide_all(claims, ledger.Machine("here", 2, gpu=False), {})
    text = ledger.table(claims, decisions)
    shown = [c for c, d in zip(claims, decisions) if c.headline or d.state != ledger.UNDECIDED]
    assert shown and paper_check.table_rows(text) == len(shown)


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="no pdflatex (make test installs TeX)")
def test_a_pdf_with_a_missing_section_an_unresolved_reference_and_an_empty_table_fails(tmp_path):
    sources = tmp_path / "paper"
    (sources / "sections").mkdir(parents=True)
    (sources / "paper.tex").write_text("")
    (sources / "sections" / "a.tex").write_text(
        "\\section{The seeds' fate}\n\\subsection{Absent here}\n\\input{paper/generated/a/t.tex}\n")
    table = tmp_path / "paper/generated/a/t.tex"
    table.parent.mkdir(parents=True)
    table.write_text("\\begin{tabular}{l}\n\\toprule\nx \\\\\n\\midrule\n\\bottomrule\n\\end{tabular}\n")
    (tmp_path / "paper/build").mkdir(parents=True)
    (tmp_path / "doc.tex").write_text("\\documentclass{article}\\begin{document}\\section{The seeds' fate}"
                                      "See~\\ref{nowhere}.\\end{document}\n")
    subprocess.run(["pdflatex", "-interaction=nonstopmode", "-output-directory", str(tmp_path / "paper/build"),
                    str(tmp_path / "doc.tex")], capture_output=True, cwd=tmp_path)
    (tmp_path / "paper/build/doc.pdf").rename(tmp_path / "paper/build/paper.pdf")
    found = paper_check.problems(tmp_path, sources)
    assert any("Absent here" in p for p in found), found
    assert any("unresolved" in p for p in found), found
    assert any("t.tex: table has no rows" in p for p in found), found
    # present, its apostrophe set as a right quote (as pdftotext prints it)
    assert not any("seeds' fate" in p for p in found), found


def test_a_standalone_run_that_failed_or_outgrew_a_binder_host_is_named(tmp_path):
    import json

    from throughput.core import standalone

    records = tmp_path / paper_check.STANDALONE_RECORDS
    records.mkdir(parents=True)
    assert paper_check.standalone_problems(tmp_path) == []  # none run: nothing to say
    base = {"wall_s": 30.0, "peak_rss_sum_bytes": 1e9, "load_before": [0.1], "load_after": [0.2]}
    for name, returncode, pss in (("fits", 0, 0.9e9), ("failed", 1, 0.5e9),
                                  ("large", 0, standalone.BINDER_MEMORY_BYTES)):
        (records / f"{name}.json").write_text(json.dumps(
            {**base, "notebook": f"{name}.ipynb", "returncode": returncode, "peak_pss_bytes": pss}))
    found = paper_check.standalone_problems(tmp_path)
    assert len(found) == 2
    assert "failed.ipynb failed when run with its own defaults (exit 1; its log: " in found[0]
    assert found[0].endswith("failed.log)")
    assert "large.ipynb: exit 0" in found[1] and "over a Binder host's 2 GB (shrink its parameters cell)" in found[1]


def test_the_configs_standalone_notebooks_are_the_notebooks():
    """standalone_notebooks lists notebook names from the schema's enum: every notebook, none else."""
    from throughput import REPO
    from throughput.setup import config

    names = config.load_schema()["properties"]["standalone_notebooks"]["items"]["enum"]
    assert sorted(names) == sorted(p.stem for p in (REPO / "notebooks").glob("*.ipynb"))
