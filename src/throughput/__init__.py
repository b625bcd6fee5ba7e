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
import sys
from pathlib import Path

# jsonschema (the config's schema, and nbformat under hvplot's notebook extension) imports
# rfc3987_syntax where it is installed (jupyter-events asks for jsonschema[format-nongpl]),
# which compiles 38 lark grammars: 2.5 s of every notebook's and Snakefile's start, a
# twentieth of a Binder minute. It checks only the "iri" formats, which no schema of the
# study names; a process that imported it before this package keeps it.
sys.modules.setdefault("rfc3987_syntax", None)

REPO = Path(__file__).resolve().parents[2]
