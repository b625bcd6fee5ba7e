# RDataFrame thread scaling, distributed RDataFrame on Dask, and the PROOF-Lite
# I/O rate model (seeds 002 and 004): notebooks/rdataframe.ipynb measures with
# the kernels of kernels/rdataframe/ (and distributed RDataFrame from Python) and
# writes the figures, tables and macros the paper uses.
#
# Its inputs are its own NanoAOD-like files (rdataframe.files of
# rdataframe.events_per_file events, per compression), made by the shared
# generator: data/rdataframe/<compression>/e<events>/part<k>.root. File k holds
# the same events in every compression (seed datasets.seed + k).
from throughput.experiments import rdataframe as rdataframe_experiment

KERNELS["rdataframe"] = [f"{KERNEL_BIN}/{name}" for name in rdataframe_experiment.KERNELS]
RDATAFRAME = STUDY["rdataframe"]
RDATAFRAME_INPUTS = [
    str(rdataframe_experiment.data_path("data/rdataframe", compression, RDATAFRAME["events_per_file"], k))
    for compression, count in rdataframe_experiment.file_sets(RDATAFRAME).items()
    for k in range(count)
]


rule rdataframe_input:
    input:
        kernel=KERNELS["datasets"][0],
    output:
        "data/rdataframe/{compression}/e{events}/part{index}.root",
    wildcard_constraints:
        events=r"\d+",
    params:
        section=json.dumps(STUDY["datasets"]),
    shell:
        "python -m throughput.datasets nanoaod {output} --compression {wildcards.compression} "
        "--index {wildcards.index} --events {wildcards.events} --section {params.section:q}"


rule rdataframe:
    input:
        notebook=str(REPO / "notebooks" / "rdataframe.ipynb"),
        header=str(REPO / "kernels" / "rdataframe" / "analysis.hpp"),
        kernels=KERNELS["rdataframe"],
        data=RDATAFRAME_INPUTS,
    output:
        notebook="results/rdataframe/rdataframe.ipynb",
        figures=expand("figures/rdataframe/{name}.pdf", name=["scaling", "rate_model"]),
        tables=expand("paper/generated/rdataframe/{name}.tex",
                      name=["scaling_table", "storage_table", "compression_table", "nhist_table", "pdf_table",
                            "dask_table", "agreement_table", "rate_components_table", "rate_fit_table", "macros"]),
    params:
        # The notebook finds the files by the same naming rule (thousands of paths would not fit
        # on a command line); it checks they are all there before measuring.
        parameters=lambda wildcards: notebook_parameters(
            "rdataframe",
            input_dir=str(Path("data/rdataframe").resolve()),
            datasets=STUDY["datasets"],
            # what the config asked for, before it was lowered to this machine's cores
            max_threads_requested=REQUESTED.get("rdataframe", {}).get("max_threads"),
        ),
    # A benchmark needs the machine to itself: take every core so that no
    # other job runs beside it.
    threads: workflow.cores
    shell:
        "python -m throughput.notebook {input.notebook} {output.notebook} "
        "--cwd {REPO}/notebooks --parameters {params.parameters:q}"


PAPER_INPUTS += rules.rdataframe.output
