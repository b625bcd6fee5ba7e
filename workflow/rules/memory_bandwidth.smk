# CPU memory bandwidth (seed 000): its notebook rule comes from its spec
# (rules/common.smk); here only the parameters it gets besides its config section.
EXPERIMENT_PARAMETERS["memory_bandwidth"] = lambda input: {
    "noise": STUDY["noise"],
}
