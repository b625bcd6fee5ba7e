# Writing (seeds 001 and 003): notebooks/writing.ipynb measures TBufferMerger and
# RNTupleParallelWriter on random doubles per compression and medium, and ROOT +
# IMT vs a simple per-event format vs RNTupleParallelWriter on the shared
# NanoAOD-like events; it writes the figures, tables and macros the paper uses.
import math

KERNELS["writing"] = [f"{KERNEL_BIN}/write_bench", f"{KERNEL_BIN}/read_simple"]
# Enough shared NanoAOD-like files for writing.events (the kernel replays them if there are fewer events).
WRITING_INPUTS = (nanoaod_files(STUDY["datasets"]["compression"],
                                max(1, math.ceil(STUDY["writing"]["events"] / STUDY["datasets"]["events_per_file"])))
                  if STUDY["writing"]["event_methods"] else [])


rule writing:
    input:
        notebook=str(REPO / "notebooks" / "writing.ipynb"),
        kernels=KERNELS["writing"],
        events=WRITING_INPUTS,
    output:
        notebook="results/writing/writing.ipynb",
        figures=expand("figures/writing/{name}.pdf", name=["random_runtime", "random_speedup", "random_memory", "events_scaling"]),
        tables=expand("paper/generated/writing/{name}.tex",
                      name=["random_table", "events_table", "seed001_table", "seed003_table", "macros"]),
    params:
        parameters=lambda wildcards, input: notebook_parameters(
            "writing",
            input_files=[str(Path(p).resolve()) for p in input.events],
            # what the config asked for, before it was lowered to this machine's cores
            max_threads_requested=REQUESTED.get("writing", {}).get("max_threads"),
        ),
    # A benchmark needs the machine to itself: take every core so that no
    # other job runs beside it.
    threads: workflow.cores
    shell:
        "python -m throughput.notebook {input.notebook} {output.notebook} "
        "--cwd {REPO}/notebooks --parameters {params.parameters:q}"


PAPER_INPUTS += rules.writing.output
