# RDataFrame thread scaling, distributed RDataFrame on Dask, and the PROOF-Lite
# I/O rate model (seeds 002 and 004): notebooks/rdataframe.ipynb measures with
# the kernels of kernels/rdataframe/ (and distributed RDataFrame from Python). Its
# notebook rule comes from its spec (rules/notebooks.smk); here its input files.
#
# Its inputs are its own NanoAOD-like files (rdataframe.files of
# rdataframe.events_per_file events, per compression), made by rules/datasets.smk
# (nanoaod_like_sized): data/rdataframe/<compression>/e<events>/part<k>.root. File k
# holds the same events in every compression (seed datasets.seed + k).
from throughput.experiments.rdataframe import spec as rdataframe_spec

RDATAFRAME = STUDY["rdataframe"]
RDATAFRAME_INPUTS = [
    str(rdataframe_spec.data_path("data/rdataframe", compression, RDATAFRAME["events_per_file"], k))
    for compression, count in rdataframe_spec.file_sets(RDATAFRAME).items()
    for k in range(count)
]


EXPERIMENT_INPUTS["rdataframe"] = [str(REPO / "kernels" / "rdataframe" / "analysis.hpp"), *RDATAFRAME_INPUTS]
EXPERIMENT_PARAMETERS["rdataframe"] = {
    # The notebook finds the files by the same naming rule (thousands of paths would not fit
    # on a command line); it checks they are all there before measuring.
    "input_dir": str(Path("data/rdataframe").resolve()),
    "datasets": STUDY["datasets"],
}
