# Writing (seeds 001 and 003): notebooks/writing.ipynb measures TBufferMerger and
# RNTupleParallelWriter on random doubles per compression and medium, and ROOT +
# IMT vs a simple per-event format vs RNTupleParallelWriter on the shared
# NanoAOD-like events. Its notebook rule comes from its spec (rules/common.smk);
# here the input files it reads and its extra parameters.
import math

# Enough shared NanoAOD-like files for writing.events (the kernel replays them if there are fewer events).
WRITING_INPUTS = (nanoaod_files(STUDY["datasets"]["compression"],
                                max(1, math.ceil(STUDY["writing"]["events"] / STUDY["datasets"]["events_per_file"])))
                  if STUDY["writing"]["event_methods"] else [])


EXPERIMENT_INPUTS["writing"] = WRITING_INPUTS
EXPERIMENT_PARAMETERS["writing"] = lambda input: {
    "input_files": [str(Path(p).resolve()) for p in input.data],
}
