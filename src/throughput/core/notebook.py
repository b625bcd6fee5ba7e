"""Executing a parametrized notebook with papermill, for Snakemake and the tests.

The executed copy is written under a temporary name and renamed when the
notebook finished without error, so an interrupted or failed run never leaves
an output that looks done; a temporary left by a killed job is removed by the
next run. Every notebook measures, so it runs holding the machine-wide
measurement lock (throughput.core.measurement_lock).
"""
from __future__ import annotations

import contextlib
import os
import signal
import sys
from pathlib import Path
from typing import Any

import papermill
import psutil

from . import measurement_lock
from .results import atomic_path


def execute(notebook: str | os.PathLike, output: str | os.PathLike, parameters: dict[str, Any],
            cwd: str | os.PathLike | None = None, progress: bool = True) -> Path:
    measurement_lock.remove_stale_temporaries(Path(output))
    with measurement_lock.held(f"notebook {Path(notebook).name} -> {output}"), atomic_path(output) as temporary:
        papermill.execute_notebook(
            str(notebook), str(temporary), parameters=parameters,
            cwd=str(cwd) if cwd else None, progress_bar=progress, kernel_name="python3",
        )
    return Path(output)


class _StopOnSignal:
    """On SIGINT or SIGTERM, kill this process's descendants at once.

    jupyter_client starts the notebook's kernel in a session of its own, so
    neither Ctrl-C nor a cluster's kill of the job's process group reaches the
    kernel or the measurement it runs: papermill went on waiting for the cell,
    and a run interrupted at its start measured for minutes more. Killing the
    kernel (and what it started) makes papermill fail at once; the groups
    already stored are kept (throughput.core.experiment), the partial output is
    removed (atomic_path)."""

    def __init__(self):
        self.signal: int | None = None
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, self._stop)

    def _stop(self, signum, frame) -> None:
        self.signal = signum
        descendants = psutil.Process().children(recursive=True)  # all, before a parent dies and orphans them
        for process in descendants:
            with contextlib.suppress(psutil.Error):
                process.kill()


def main(argv: list[str] | None = None) -> None:
    """python -m throughput.core.notebook NOTEBOOK OUTPUT --cwd DIR --parameters JSON

    A process of its own, so that Ctrl-C or a cluster's kill reaches the
    notebook's kernel and the partial output is removed."""
    import argparse
    import json

    parser = argparse.ArgumentParser(prog="python -m throughput.core.notebook", description=main.__doc__)
    parser.add_argument("notebook")
    parser.add_argument("output")
    parser.add_argument("--cwd", default=None, help="folder the notebook runs in")
    parser.add_argument("--parameters", default="{}", help="papermill parameters as a JSON object")
    args = parser.parse_args(argv)
    stop = _StopOnSignal()
    try:
        execute(args.notebook, args.output, json.loads(args.parameters), cwd=args.cwd)
    except BaseException:
        if stop.signal is None:
            raise
        print(f"{args.notebook}: stopped by signal {stop.signal} (its kernel and measurements were killed; "
              "the groups of runs already stored are kept)", file=sys.stderr)
        sys.exit(128 + stop.signal)


if __name__ == "__main__":
    main()
