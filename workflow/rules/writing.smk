# Writing (seeds 001 and 003): notebooks/writing.ipynb measures TBufferMerger and
# RNTupleParallelWriter on random doubles per compression and medium, and ROOT +
# IMT vs a simple per-event format vs RNTupleParallelWriter on the shared
# NanoAOD-like events, and ROOT + IMT vs the simple format (ROOT-serialized or
# copied values) on AOD-like data products. Its notebook rule comes from its spec (rules/notebooks.smk);
# here the input files it reads (rules/datasets.smk makes them) and its extra parameters.
from throughput.experiments.writing import spec as writing_spec

# The shared NanoAOD-like files for writing.events and the flat AOD-like file the data products are
# built from (its spec's input_files, which a standalone notebook takes too).
WRITING_INPUTS, WRITING_AOD_INPUTS = writing_spec.input_files(STUDY["writing"], STUDY["datasets"])

EXPERIMENT_INPUTS["writing"] = WRITING_INPUTS + WRITING_AOD_INPUTS
EXPERIMENT_PARAMETERS["writing"] = {
    "input_files": [str(Path(p).resolve()) for p in WRITING_INPUTS],
    "aod_files": [str(Path(p).resolve()) for p in WRITING_AOD_INPUTS],
}
