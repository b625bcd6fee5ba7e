# Writing (seeds 001 and 003): notebooks/writing.ipynb measures TBufferMerger and
# RNTupleParallelWriter on random doubles per compression and medium, and ROOT +
# IMT vs a simple per-event format vs RNTupleParallelWriter on the shared
# NanoAOD-like events, and ROOT + IMT vs the simple format (ROOT-serialized or
# copied values) on AOD-like data products. Its notebook rule comes from its spec (rules/notebooks.smk);
# here the input files it reads (rules/datasets.smk makes them) and its extra parameters.
import math

# Enough shared NanoAOD-like files for writing.events (the kernel replays them if there are fewer events).
WRITING_INPUTS = (nanoaod_files(STUDY["datasets"]["compression"],
                                max(1, math.ceil(STUDY["writing"]["events"] / STUDY["datasets"]["events_per_file"])))
                  if STUDY["writing"]["event_methods"] else [])
# The data products are built from the first flat AOD-like file (the one the reader comparison reads).
WRITING_AOD_INPUTS = (aod_files("aod", STUDY["datasets"]["compression"], 1) if STUDY["writing"]["object_events"] else [])


EXPERIMENT_INPUTS["writing"] = WRITING_INPUTS + WRITING_AOD_INPUTS
EXPERIMENT_PARAMETERS["writing"] = {
    "input_files": [str(Path(p).resolve()) for p in WRITING_INPUTS],
    "aod_files": [str(Path(p).resolve()) for p in WRITING_AOD_INPUTS],
}
