"""The Slurm profile (workflow/profiles/slurm) on a real Slurm: munged, slurmctld and slurmd
started by the test on this host, in its temporary directory, one node of this machine's
cores, and the tiny study run through snakemake-executor-plugin-slurm to the PDF. What the
controller recorded of every job is then checked: each measuring rule had its node to itself.

Debian's slurmctld, slurmd, slurm-client and munge (envs/apt-slurm.txt, `make test` installs
them as root); without them, or without root (slurmd starts jobs as their user), the
test is skipped with the reason."""
from __future__ import annotations

import datetime
import os
import shutil
import socket
import subprocess
from pathlib import Path

import psutil
import pytest
import yaml

from conftest import REPO, TINY_CONFIG, Daemons, command_env, snakemake
from throughput import config, paper_check
from throughput.experiments import SPECS

PROFILE = REPO / "workflow/profiles/slurm"
DAEMONS = {"munged": "/usr/sbin/munged", "slurmctld": "/usr/sbin/slurmctld", "slurmd": "/usr/sbin/slurmd"}
CLIENTS = ("sbatch", "srun", "squeue", "scontrol", "scancel", "sinfo", "sacct", "sacctmgr", "sshare")
PARTITION = "throughput"


def test_every_measuring_rule_asks_for_its_node_exclusively():
    profile = yaml.safe_load((PROFILE / "config.yaml").read_text())
    for name in SPECS:
        extra = profile["set-resources"].get(name, {}).get("slurm_extra", "")
        assert "--exclusive" in extra, f"the Slurm profile lets {name} share its node"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class SingleNodeSlurm:
    """munged, slurmctld and slurmd of one node (this host, all its cores) in `root`. Client
    commands are wrapped in `root/bin` to find this cluster's slurm.conf: the jobstep plugin
    drops SLURM_* variables before its nested srun, which on a real cluster finds
    /etc/slurm/slurm.conf, and this test leaves /etc alone."""

    def __init__(self, root: Path):
        self.root, self.bin = root, root / "bin"
        self.cpus = config.usable_cores()
        self.memory_mb = int(psutil.virtual_memory().total * 0.8) // 2**20
        self.node = socket.gethostname().split(".")[0]
        self.conf = root / "slurm.conf"
        self.daemons = Daemons(root / "logs")

    def start(self) -> None:
        munge, state, logs = self.root / "munge", self.root / "state", self.daemons.logs
        for d in (munge, state, self.bin):
            d.mkdir(mode=0o700)
        subprocess.run(["mungekey", "--create", "--keyfile", str(munge / "key")], check=True)
        sock = munge / "sock"
        self._spawn("munged", "-F", "--force", f"--socket={sock}", f"--key-file={munge / 'key'}",
                    f"--pid-file={munge / 'pid'}", f"--seed-file={munge / 'seed'}", f"--log-file={logs / 'munged-own.log'}")
        self.daemons.wait_until(sock.exists, "munged's socket")
        self.conf.write_text("\n".join([
            "ClusterName=throughputtest",
            f"SlurmctldHost={self.node}(127.0.0.1)",
            f"SlurmctldPort={_free_port()}", f"SlurmdPort={_free_port()}",
            "AuthType=auth/munge", "CredType=cred/munge", f"AuthInfo=socket={sock}",
            "SlurmUser=root", "SlurmdUser=root",
            f"StateSaveLocation={state}", f"SlurmdSpoolDir={state}/spool",
            f"SlurmctldPidFile={state}/slurmctld.pid", f"SlurmdPidFile={state}/slurmd.pid",
            f"SlurmctldLogFile={logs}/slurmctld-own.log", f"SlurmdLogFile={logs}/slurmd-own.log",
            # no cgroups in a container: processes tracked by their parents, not bound
            "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none", "MpiDefault=none",
            # no slurmdbd: the plugin asks squeue, which must still see finished jobs
            "AccountingStorageType=accounting_storage/none", "JobAcctGatherType=jobacct_gather/none",
            "JobCompType=jobcomp/none", "MinJobAge=3600",
            "SelectType=select/cons_tres", "SelectTypeParameters=CR_Core_Memory", "ReturnToService=2",
            f"NodeName={self.node} NodeAddr=127.0.0.1 CPUs={self.cpus} RealMemory={self.memory_mb} State=UNKNOWN",
            f"PartitionName={PARTITION} Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
        ]) + "\n")
        for client in CLIENTS:
            wrapper = self.bin / client
            wrapper.write_text(f'#!/bin/sh\nSLURM_CONF={self.conf} exec {shutil.which(client)} "$@"\n')
            wrapper.chmod(0o755)
        self._spawn("slurmctld", "-D", "-i", "-f", str(self.conf))
        self._spawn("slurmd", "-D", "-N", self.node, "-f", str(self.conf))
        self.daemons.wait_until(lambda: self.client("sinfo", "-h", "-N", "-o", "%T").stdout.strip() == "idle",
                                "the node to be idle")

    def _spawn(self, daemon: str, *args: str) -> None:
        self.daemons.start(daemon, [DAEMONS[daemon], *args], env={**os.environ, "SLURM_CONF": str(self.conf)})

    def client(self, command: str, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(self.bin / command), *args], capture_output=True, text=True)

    def jobs(self) -> list[dict[str, str]]:
        """Every job the controller still holds (MinJobAge keeps finished ones), as its fields."""
        out = self.client("scontrol", "show", "job", "-o").stdout
        return [dict(f.split("=", 1) for f in line.split() if "=" in f) for line in out.splitlines() if line.strip()]


@pytest.fixture
def slurm(tmp_path_factory):
    missing = [d for d, path in DAEMONS.items() if not os.access(path, os.X_OK)]
    missing += [c for c in (*CLIENTS, "mungekey") if shutil.which(c) is None]
    if missing:
        pytest.skip(f"Slurm is not installed here (missing {', '.join(missing)}): "
                    "as root, `make test` installs envs/apt-slurm.txt")
    if os.geteuid() != 0:
        pytest.skip("slurmd must run as root to start jobs; run this test as root")
    # a short path: munged's socket path must fit a Unix socket's 108 bytes
    cluster = SingleNodeSlurm(tmp_path_factory.mktemp("slurm"))
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.daemons.stop()


def _interval(job: dict[str, str]) -> tuple[datetime.datetime, datetime.datetime]:
    return tuple(datetime.datetime.fromisoformat(job[k]) for k in ("StartTime", "EndTime"))


@pytest.mark.slow
def test_the_slurm_profile_runs_the_tiny_study_on_a_real_slurm(tmp_path, slurm):
    # the kernels `make test` built, as in the tiny workflow test (their build is tested there)
    if (REPO / "build/kernels/bin").is_dir():
        (tmp_path / "build").mkdir()
        (tmp_path / "build/kernels").symlink_to(REPO / "build/kernels")
    env = command_env()
    env["PATH"] = f"{slurm.bin}{os.pathsep}{env['PATH']}"
    # The site's settings, which the profile says to set: this node's cores, partition and memory.
    result = snakemake(tmp_path, "--workflow-profile", str(PROFILE), "--configfile", str(TINY_CONFIG),
                       "--cores", str(slurm.cpus),
                       "--default-resources", f"slurm_partition={PARTITION}",
                       f"mem_mb={slurm.memory_mb // slurm.cpus}", "runtime=30",
                       # no accounting database here: squeue, with MinJobAge keeping finished jobs
                       "--slurm-status-command", "squeue", "--slurm-init-seconds-before-status-checks", "5",
                       env=env)
    assert result.returncode == 0, result.stderr[-4000:]

    jobs = [j for j in slurm.jobs() if j.get("Comment", "").startswith("rule_")]
    assert jobs and all(j["JobState"] == "COMPLETED" for j in jobs), [(j["Comment"], j["JobState"]) for j in jobs]
    intervals = {j["JobId"]: _interval(j) for j in jobs}
    for name in SPECS:
        mine = [j for j in jobs if j["Comment"] == f"rule_{name}"]
        assert len(mine) == 1, f"{name}: {len(mine)} Slurm jobs"
        job = mine[0]
        # the whole node: all its cores, and no job of any kind beside it
        assert job["OverSubscribe"] == "NO" and int(job["NumCPUs"]) == slurm.cpus, job
        start, end = intervals[job["JobId"]]
        beside = [j["Comment"] for j in jobs if j is not job
                  and intervals[j["JobId"]][0] < end and intervals[j["JobId"]][1] > start]
        assert not beside, f"{name} shared its node with {beside}"
    assert {j["Comment"] for j in jobs} >= {"rule_paper", "rule_study_noise", "rule_study_machines"}
    assert (tmp_path / "paper/build/paper.pdf").is_file()
    assert paper_check.problems(tmp_path) == []
