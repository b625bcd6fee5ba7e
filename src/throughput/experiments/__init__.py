"""The experiments: one package each (throughput.experiments.<name>: its
measured methods, measuring through the generic loop of throughput.core.experiment,
analysis and report) and its `SPEC`, which declares its kernels, outputs, config check and
parameter rules once (throughput.setup.spec), in its spec module; SPECS finds every package's.
Adding an experiment: its package (with `SPEC` in its spec module), config section schema,
notebook, kernels folder and paper section; nothing here.

This module stays light (Snakemake imports SPECS while it plans), and so does each
experiment's package: importing it runs only its cheap `spec` module (the config
section's check, constants, input paths: what Snakemake and throughput.configuration
take); its measured code, analysis and report are imported on first use of one of
their names, by the package's `__getattr__` and throughput.setup.spec.load_later.
"""
from __future__ import annotations

import importlib
import pkgutil

from ..setup.spec import Spec


def _declared() -> dict[str, Spec]:
    """Every package here by name, each with its spec module's SPEC (importing them runs only those
    cheap modules): found, not listed, so that a new experiment is its package alone."""
    specs = {}
    for package in sorted(pkgutil.iter_modules(__path__), key=lambda found: found.name):
        if not package.ispkg:
            continue
        spec = importlib.import_module(f"{__name__}.{package.name}.spec").SPEC
        if spec.name != package.name:
            raise ValueError(f"experiment package {package.name}: its SPEC is named {spec.name!r}; "
                             "an experiment's name is its package's, config section's and notebook's")
        specs[spec.name] = spec
    return specs


SPECS: dict[str, Spec] = _declared()
