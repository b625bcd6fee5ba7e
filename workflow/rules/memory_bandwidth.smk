# CPU memory bandwidth (seed 000): its notebook rule comes from its spec
# (rules/common.smk); here only the parameters it gets besides its config section.
EXPERIMENT_PARAMETERS["memory_bandwidth"] = lambda input: {
    # what the config asked for, before it was fitted to this machine's memory
    "n_values_requested": REQUESTED.get("memory_bandwidth", {}).get("n_values"),
    "noise": STUDY["noise"],
}
