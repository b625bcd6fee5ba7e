# What every rule file shares, made once from the validated config (the Snakefile's STUDY):
# the notebooks' parameters, the kernel binaries each experiment needs (KERNELS, filled
# further by rules/datasets.smk), and the dicts an experiment's own rule file fills
# (EXPERIMENT_INPUTS, EXPERIMENT_PARAMETERS; rules/notebooks.smk reads them) and
# PAPER_INPUTS (rules/notebooks.smk fills it, rules/paper.smk reads it).
import json
import os

from throughput.setup import kernel_sources, paths
from throughput.machines import tables as machines
from throughput.experiments import SPECS


def _keys_sorted(value):
    """`value` with every mapping's keys in sorted order."""
    return {key: _keys_sorted(value[key]) for key in sorted(value)} if isinstance(value, dict) else value


# Rules' params are made from STUDY and Snakemake re-runs a job whose params changed: the
# same settings written in another key order (another config file) must give the same params.
STUDY = _keys_sorted(STUDY)


def notebook_parameters(experiment, **extra):
    """Papermill parameters of one experiment's notebook, as JSON: its whole
    config section as one parameter named after it, the shared keys (repetitions,
    warmup, noise), `extra`,
    and where its outputs go (under the working directory)."""
    root = Path.cwd()
    return json.dumps({
        experiment: STUDY[experiment],
        # what of it was lowered to fit this machine (throughput.setup.machine_fit)
        "fitted_to_machine": STUDY["fitted_to_machine"].get(experiment, []),
        "repetitions": STUDY["repetitions"],
        "warmup": STUDY["warmup"],
        "noise": STUDY["noise"],  # every experiment measures through the generic loop's noise control
        **extra,
        "results_dir": str(paths.results_dir(experiment, root)),
        "figures_dir": str(paths.figures_dir(experiment, root)),
        "paper_dir": str(paths.paper_dir(experiment, root)),
    })


KERNEL_BIN = "build/kernels/bin"
# The notebooks (run by papermill from this process's children) use these binaries.
os.environ["THROUGHPUT_KERNELS_DIR"] = str(Path(KERNEL_BIN).resolve())
# How resident a "warm" input must be (kernels/common/page_cache.hpp reads it).
os.environ["THROUGHPUT_WARM_MIN_RESIDENT"] = str(STUDY["warm_min_resident"])
KERNELS = {"common": [f"{KERNEL_BIN}/root_info"]}
# The CUDA kernels only where an nvcc is found (kernels/build.sh says so when it is not).
_CUDA = kernel_sources.find_nvcc() is not None
for _spec in SPECS.values():
    KERNELS[_spec.name] = [f"{KERNEL_BIN}/{k}" for k in _spec.kernels + (_spec.cuda_kernels if _CUDA else ())]
EXPERIMENT_INPUTS = {}
EXPERIMENT_PARAMETERS = {}
PAPER_INPUTS = []
