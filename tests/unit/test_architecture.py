"""The package's import structure (.importlinter): layers that import only downward, experiments
that do not import each other, no import circle. import-linter checks the package as it is,
and a copy with one upward import shows that the check can fail."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from throughput import REPO

LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _lint(package_parent: Path | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    if package_parent is not None:  # a copy of the package, found before the installed one
        env["PYTHONPATH"] = f"{package_parent}{os.pathsep}{env.get('PYTHONPATH', '')}"
    return subprocess.run([str(LINT_IMPORTS), "--no-cache", "--config", str(REPO / ".importlinter")],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=120)


def test_the_package_keeps_its_layers_and_has_no_import_circle():
    result = _lint()
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_an_upward_import_breaks_the_layers(tmp_path):
    copy = tmp_path / "throughput"
    shutil.copytree(REPO / "src" / "throughput", copy, ignore=shutil.ignore_patterns("__pycache__"))
    with open(copy / "core" / "results.py", "a") as stream:  # storage reaching up to the paper's tables
        stream.write("\nfrom ..report import paper  # noqa\n")
    result = _lint(tmp_path)
    assert result.returncode != 0
    assert "throughput.core.results -> throughput.report.paper" in result.stdout
