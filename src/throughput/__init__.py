"""Shared Python side of the throughput study.

- `harness`: run a kernel or a Python function with warm-up and repetitions.
- `provenance`: where and how a measurement was made.
- `results`: raw results, one Parquet file per run, written atomically.
- `config`: the validated configuration (schema in workflow/schemas/).
- `plotstyle`: the figures' style; `paper`: LaTeX tables and number macros.
- `experiments.<name>`: what one experiment measures, called by its notebook;
  `experiments.SPECS`: each experiment's kernels and outputs, declared once
  (`spec`), from which Snakemake makes its rule; `outputs`: how a notebook
  writes only what its spec declares; `paths`: where generated files go.
"""
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
