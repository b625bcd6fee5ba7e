# CPU memory bandwidth (seed 000): notebooks/memory_bandwidth.ipynb measures
# with the kernels and writes the figures, tables and macros the paper uses.
KERNELS["memory_bandwidth"] = [f"{KERNEL_BIN}/add_constant_O{o}" for o in range(4)] + [f"{KERNEL_BIN}/stream_O3"]


rule memory_bandwidth:
    input:
        notebook=str(REPO / "notebooks" / "memory_bandwidth.ipynb"),
        kernels=KERNELS["memory_bandwidth"],
    output:
        notebook="results/memory_bandwidth/memory_bandwidth.ipynb",
        figures=expand("figures/memory_bandwidth/{name}.pdf", name=["thread_scaling", "opt_levels"]),
        tables=expand("paper/generated/memory_bandwidth/{name}.tex", name=["opt_table", "ratio_table", "macros"]),
    params:
        parameters=lambda wildcards: notebook_parameters(
            "memory_bandwidth",
            # what the config asked for, before it was fitted to this machine's memory
            n_values_requested=REQUESTED.get("memory_bandwidth", {}).get("n_values"),
            noise=STUDY["noise"],
        ),
    # A benchmark needs the machine to itself: take every core so that no
    # other job runs beside it.
    threads: workflow.cores
    shell:
        "python -m throughput.notebook {input.notebook} {output.notebook} "
        "--cwd {REPO}/notebooks --parameters {params.parameters:q}"


PAPER_INPUTS += rules.memory_bandwidth.output
