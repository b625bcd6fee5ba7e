"""The experiments: one package each (throughput.experiments.<name>: its
measured methods, measuring through the generic loop of throughput.core.experiment,
analysis and report) and one entry each in SPECS, which declares its kernels
and outputs once (throughput.setup.spec), in its spec module. Adding an experiment: its package
(with `SPEC` in its spec module), notebook, kernels folder and paper section, and one line here.

This module stays light (Snakemake imports SPECS while it plans), and so does each
experiment's package: importing it runs only its cheap `spec` module (the config
section's check, constants, input paths: what Snakemake and throughput.configuration
take); its measured code, analysis and report are imported on first use of one of
their names, by the package's `__getattr__` and throughput.setup.spec.load_later.
"""
from __future__ import annotations

from ..setup.spec import Spec
# Each experiment's spec module declares it (SPEC); importing them runs only those cheap modules.
from .gpu_bandwidth import spec as _gpu_bandwidth
from .memory_bandwidth import spec as _memory_bandwidth
from .rdataframe import spec as _rdataframe
from .reader_comparison import spec as _reader_comparison
from .writing import spec as _writing

SPECS: dict[str, Spec] = {module.SPEC.name: module.SPEC for module in (
    _memory_bandwidth, _gpu_bandwidth, _reader_comparison, _writing, _rdataframe)}
