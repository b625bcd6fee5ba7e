"""What a run is set up from, importing nothing of the study above it: the validated
configuration (`config`) and what is lowered to fit the machine (`machine_fit`), each
experiment's declarations (`spec`), where every generated file goes (`paths`) and the
kernels' sources (`kernel_sources`). Snakemake imports this room while it plans."""
