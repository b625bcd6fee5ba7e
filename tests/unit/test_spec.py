"""Each experiment's kernels and outputs are declared once (throughput.experiments.SPECS):
the notebooks write only those, the paper uses exactly those, the kernels exist."""
from __future__ import annotations

import json
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from throughput import REPO
from throughput.setup import kernel_sources  # noqa: E402
from throughput.experiments import SPECS  # noqa: E402
from throughput.report.outputs import Outputs, UndeclaredOutput  # noqa: E402
from throughput.setup.spec import Spec  # noqa: E402

SECTIONS = REPO / "paper" / "sections"
_INPUT = re.compile(r"\\input\{paper/generated/(\w+)/(\w+)\.tex\}")
_GRAPHICS = re.compile(r"\\includegraphics(?:\[[^]]*\])?\{figures/(\w+)/(\w+)\.pdf\}")


def _used_by_the_paper() -> dict[str, dict[str, set[str]]]:
    used: dict[str, dict[str, set[str]]] = {}
    for path in sorted(SECTIONS.glob("*.tex")):
        text = path.read_text()
        for kind, pattern in (("tex", _INPUT), ("figures", _GRAPHICS)):
            for experiment, name in pattern.findall(text):
                used.setdefault(experiment, {"tex": set(), "figures": set()})[kind].add(name)
    return used


def test_the_paper_uses_exactly_the_declared_outputs():
    used = _used_by_the_paper()
    assert set(used) == set(SPECS), "the paper's sections and the specs name different experiments"
    for name, spec in SPECS.items():
        assert used[name]["tex"] == set(spec.tex_files), f"{name}: \\input vs its spec's tables"
        assert used[name]["figures"] == set(spec.figures), f"{name}: \\includegraphics vs its spec's figures"


def test_the_paper_check_reads_back_exactly_the_declared_tables():
    # paper_check finds the tables to read back by their \input: a file of macros
    # taken for a table fails the paper ("table has no rows")
    from throughput.report import paper_check

    declared = {f"paper/generated/{name}/{table}.tex" for name, spec in SPECS.items() for table in spec.tables}
    assert set(paper_check.table_inputs()) == declared | set(paper_check.STUDY_TABLES)


@pytest.mark.parametrize("name", sorted(SPECS))
def test_every_declared_kernel_is_a_cmake_target(name):
    targets = kernel_sources.main_sources()
    spec = SPECS[name]
    missing = [k for k in spec.kernels + spec.cuda_kernels if k not in targets]
    assert not missing, f"{name} declares kernels no kernels/*/CMakeLists.txt defines: {missing}"


@pytest.mark.parametrize("name", sorted(SPECS))
def test_the_notebook_writes_only_through_its_outputs(name):
    notebook = json.loads(SPECS[name].notebook.read_text())
    code = "\n".join("".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code")
    # its outputs are the session's (configuration.session: Outputs of its spec)
    assert f'configuration.session("{name}",' in code and "session.outputs" in code
    for forbidden in ("figures_dir /", "paper_dir /", "plotstyle.save(", "paper.write_table(", "paper.write_macros("):
        assert forbidden not in code, f"{name}: writes an output past its spec ({forbidden!r})"
    # every figure and table its entry gives, and nothing else (their names checked by Outputs against the spec's)
    assert not re.findall(r'outputs\.(?:figure|table|tex)\("(\w+)"', code), f"{name}: writes an output by hand"
    assert re.search(r"for name, fig in \w+\.figures\(measured, session\)\.items\(\):.*\n\s+outputs\.figure\(name, fig\)",
                     code), f"{name}: does not write the figures of its entry"
    assert re.search(r"outputs\.tables\(\w+\.tables\(measured, session\)\)", code), f"{name}: does not write its entry's tables"
    assert "outputs.check_complete()" in code


@pytest.mark.parametrize("name", sorted(SPECS))
def test_every_experiment_has_the_same_entries_and_its_notebook_calls_them(name):
    """measure(session) -> Measured, then figures, tables and macros of (measured, session): one
    signature in every experiment (its entry module); the notebook measures and writes its figures,
    tables and macros through them alone, and draws no figure of its own."""
    import importlib
    import inspect

    package = importlib.import_module(f"throughput.experiments.{name}")
    assert list(inspect.signature(package.measure).parameters) == ["session"]
    assert list(inspect.signature(package.macros).parameters) == ["measured", "session"]
    assert list(inspect.signature(package.figures).parameters) == ["measured", "session"]
    assert list(inspect.signature(package.tables).parameters) == ["measured", "session"]
    assert inspect.signature(package.measure).return_annotation in ("Measured", package.Measured)
    notebook = json.loads(SPECS[name].notebook.read_text())
    code = "\n".join("".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code")
    assert re.search(r"measured = \w+\.measure\(session\)", code), f"{name}: does not measure its session"
    assert re.search(r"\w+\.macros\(measured, session\)", code), f"{name}: does not write the macros of its entry"
    assert re.search(r"\w+\.figures\(measured, session\)", code), f"{name}: does not draw with its entry"
    # (an hvplot view is interactive, for the reader of the notebook, not a figure of the paper)
    drawing = re.findall(r"plt\.subplots|\bax\.\w+\(|\bfig\.\w+\(|(?<!hvplot)\.(?:errorbar|scatter|barh?)\(", code)
    assert not drawing, f"{name}.ipynb draws a figure itself ({drawing}): its entry's figures() draws them"
    for inner in ("measure_runs(", "paper_macros(", "measure_cpp(", "load_archived("):
        assert inner not in code, f"{name}.ipynb calls {inner} past its entries"


# The input parameters each notebook takes from the workflow (rules/<name>.smk); its measure reads them
# from the session, and makes its own inputs only where none was given (standalone).
INPUT_PARAMETERS = {"reader_comparison": ("inputs",), "writing": ("input_files", "aod_files"),
                    "rdataframe": ("input_files", "input_dir")}


@pytest.mark.parametrize("name", sorted(SPECS))
def test_every_input_the_workflow_passes_reaches_the_session(name):
    """A notebook that left an input parameter out of its session would measure inputs of its own
    making instead of the workflow's, and still run (a reader comparison did, in a fresh clone)."""
    notebook = json.loads(SPECS[name].notebook.read_text())
    setup = next("".join(c["source"]) for c in notebook["cells"]
                 if c["cell_type"] == "code" and "configuration.session(" in "".join(c["source"]))
    given = re.search(r"inputs=\{([^}]*)\}\)", setup)
    passed = dict(re.findall(r'"(\w+)": (\w+)', given.group(1))) if given else {}
    assert passed == {key: key for key in INPUT_PARAMETERS.get(name, ())}, f"{name}: its session's inputs {passed}"


def test_outputs_writes_declared_files_and_refuses_others(tmp_path):
    spec = Spec("demo", kernels=(), figures=("curve",), tables=("numbers",))
    outputs = Outputs(spec, tmp_path / "figures", tmp_path / "paper")
    fig, ax = plt.subplots()
    ax.plot([1, 2], [3, 4])
    with pytest.raises(UndeclaredOutput, match=r"declares no figure 'curv' \(its figures: curve"):
        outputs.figure("curv", fig)
    with pytest.raises(UndeclaredOutput, match="declares no table 'curve'"):
        outputs.table("curve", pd.DataFrame({"a": ["1"]}))
    with pytest.raises(UndeclaredOutput, match=r"did not write curve\.pdf, numbers\.tex, macros\.tex"):
        outputs.check_complete()
    assert sorted(p.name for p in outputs.figure("curve", fig)) == ["curve.pdf", "curve.png"]
    plt.close(fig)
    outputs.table("numbers", pd.DataFrame({"a": ["1"]}))
    assert outputs.missing() == ["macros.tex"]
    outputs.macros({"DemoValue": "1"})
    outputs.check_complete()
    assert (tmp_path / "paper" / "numbers.tex").read_text().startswith(r"\begin{tabular}{l}")
    assert (tmp_path / "paper" / "macros.tex").read_text() == "\\newcommand{\\DemoValue}{1}\n"
    assert (tmp_path / "figures" / "curve.pdf").read_bytes().startswith(b"%PDF")


def test_outputs_writes_an_entrys_tables_by_name(tmp_path):
    """Outputs.tables: each paper.Table of an entry's tables(measured, session), a frame as booktabs with
    its column format or LaTeX as given; an undeclared name is refused."""
    from throughput.report.paper import Table

    spec = Spec("demo", kernels=(), figures=(), tables=("frame", "typeset"))
    outputs = Outputs(spec, tmp_path / "figures", tmp_path / "paper")
    with pytest.raises(UndeclaredOutput, match="declares no table 'other'"):
        outputs.tables({"other": Table("x")})
    outputs.tables({"frame": Table(pd.DataFrame({"a": ["1"], "b": ["2"]}), column_format="lc"),
                    "typeset": Table("\\begin{tabular}{l}x\\end{tabular}\n")})
    assert outputs.missing() == ["macros.tex"]
    assert (tmp_path / "paper" / "frame.tex").read_text().startswith("\\begin{tabular}{lc}\n\\toprule\na & b")
    assert (tmp_path / "paper" / "typeset.tex").read_text() == "\\begin{tabular}{l}x\\end{tabular}\n"


def test_every_experiment_package_is_found_by_its_spec():
    """SPECS is found, not listed: every package under throughput/experiments, by the name of its package."""
    packages = {p.parent.name for p in (REPO / "src" / "throughput" / "experiments").glob("*/__init__.py")}
    assert set(SPECS) == packages and len(packages) == 5
    assert all(spec.name == name and spec.notebook.exists() for name, spec in SPECS.items())


def test_a_spec_refuses_a_name_twice_and_macros_as_a_table():
    with pytest.raises(ValueError, match="a figure is declared twice"):
        Spec("demo", kernels=(), figures=("a", "a"), tables=())
    with pytest.raises(ValueError, match="macros.tex is declared for every experiment"):
        Spec("demo", kernels=(), figures=(), tables=("macros",))


def test_spec_outputs_are_the_rule_outputs(tmp_path):
    outputs = SPECS["memory_bandwidth"].outputs(tmp_path)
    assert outputs["notebook"] == tmp_path / "results/memory_bandwidth/memory_bandwidth.ipynb"
    assert [p.name for p in outputs["figures"]] == ["thread_scaling.pdf", "opt_levels.pdf"]
    assert [p.name for p in outputs["tables"]] == ["opt_table.tex", "ratio_table.tex", "machine_table.tex", "macros.tex"]
    assert outputs["data"] == [tmp_path / "paper/generated/memory_bandwidth/macros.json"]  # the ledger reads it


def test_the_spec_registry_is_cheap_to_import():
    # Snakemake imports it while planning: none of the experiments' heavy modules
    import subprocess
    import sys

    # it imports each experiment's package, which runs only its spec module: none of its measured
    # code, analysis or report, nor what they need
    code = ("import sys; import throughput.experiments; "
            "heavy = [m for m in sys.modules if m in ('pandas', 'numpy', 'numba', 'ROOT') or "
            "m.startswith('throughput.experiments.') and m.endswith(('.measuring', '.analysis', '.report'))]; "
            "print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
