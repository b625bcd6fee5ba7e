"""python -m throughput.core.notebook, what every notebook rule runs: Ctrl-C (or a cluster's
SIGTERM) stops the notebook's kernel and what it started at once, and leaves no output."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import nbformat
import psutil
import pytest

from conftest import command_env


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_kills_the_kernel_and_its_children_at_once(tmp_path, signum):
    notebook = tmp_path / "slow.ipynb"
    marker = tmp_path / "child.pid"
    parameters = nbformat.v4.new_code_cell("marker = ''")
    parameters.metadata["tags"] = ["parameters"]
    nbformat.write(nbformat.v4.new_notebook(cells=[parameters, nbformat.v4.new_code_cell(
        # what a measurement does: a process of its own, waited for
        "import pathlib, subprocess, sys\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
        "pathlib.Path(marker).write_text(str(child.pid))\n"
        "child.wait()\n")], metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                    "language": "python"}}), notebook)
    output = tmp_path / "out.ipynb"
    runner = subprocess.Popen([sys.executable, "-m", "throughput.core.notebook", str(notebook), str(output),
                               "--cwd", str(tmp_path), "--parameters", json.dumps({"marker": str(marker)})],
                              env={**command_env(), "THROUGHPUT_LOCK_FILE": str(tmp_path / "lock")},
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 120
    while not marker.exists():
        assert runner.poll() is None and time.monotonic() < deadline, runner.communicate()[0][-3000:]
        time.sleep(0.2)
    child = psutil.Process(int(marker.read_text()))
    runner.send_signal(signum)
    log, _ = runner.communicate(timeout=300)  # a runner that waited for the cell would take its 600 s
    assert runner.returncode == 128 + signum, log[-3000:]
    assert f"stopped by signal {int(signum)}" in log
    _, alive = psutil.wait_procs([child], timeout=5)
    assert not alive, "the measurement the kernel started was left running"
    assert not output.exists() and not list(tmp_path.glob("out.ipynb*"))
