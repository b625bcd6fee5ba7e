"""Shared Python side of the throughput study, in rooms that import only downward
(checked by import-linter: .importlinter, tests/unit/test_architecture.py):

- `setup/`: the config, machine fit, experiments' specs, paths, kernel sources;
- `core/`: the harness, the measuring loop, noise control, intervals, results, provenance;
- `inputs/`: datasets, references, checksums;  `report/`: tables, macros, outputs, plot style;
- `machines/`: the archive and the machine tables;
- `experiments.<name>`: what one experiment measures, called by its notebook;
- the commands on top: `node` (one machine's whole run), `readers`, `repeatability`.
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
