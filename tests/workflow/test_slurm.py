"""The Slurm profile (workflow/profiles/slurm): every measuring rule asks for its node to itself.
That it gets it on a real Slurm (the tiny study the session runs through
snakemake-executor-plugin-slurm on a single-node Slurm of this host, tests/slurm_cluster.py) is
checked from the controller's record of every job in test_tiny_study.py."""
from __future__ import annotations

import yaml

from slurm_cluster import PROFILE
from throughput.experiments import SPECS


# The rules that measure: each experiment's notebook, and each notebook's standalone run (its time)
MEASURING_RULES = [*SPECS, "standalone_notebook"]


def test_every_measuring_rule_asks_for_its_node_exclusively():
    profile = yaml.safe_load((PROFILE / "config.yaml").read_text())
    for name in MEASURING_RULES:
        extra = profile["set-resources"].get(name, {}).get("slurm_extra", "")
        assert "--exclusive" in extra, f"the Slurm profile lets {name} share its node"
