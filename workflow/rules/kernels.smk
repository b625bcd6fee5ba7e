# All compiled kernels, in one CMake build (kernels/build.sh): incremental, so
# re-running costs seconds and only changed sources are recompiled.
KERNEL_BIN = "build/kernels/bin"
# The notebooks (run by papermill from this process) use these binaries.
os.environ["THROUGHPUT_KERNELS_DIR"] = str(Path(KERNEL_BIN).resolve())
KERNELS = {
    "memory_bandwidth": [f"{KERNEL_BIN}/add_constant_O{o}" for o in range(4)] + [f"{KERNEL_BIN}/stream_O3"],
    "common": [f"{KERNEL_BIN}/root_info"],
}


rule kernels:
    input:
        sources=[str(p) for p in (REPO / "kernels").rglob("*") if p.is_file()],
    output:
        [binary for group in KERNELS.values() for binary in group],
    log:
        "results/logs/kernels.log",
    shell:
        "{REPO}/kernels/build.sh build/kernels python > {log} 2>&1"
