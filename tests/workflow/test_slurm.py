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
import time
from pathlib import Path

import pytest
import yaml

from conftest import REPO, TINY_CONFIG, command_env, snakemake
from throughput import paper_check
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
        self.cpus = len(os.sched_getaffinity(0))
        total_mb = int(Path("/proc/meminfo").read_text().split()[1]) // 1024
        self.memory_mb = int(total_mb * 0.8)
        self.node = socket.gethostname().split(".")[0]
        self.conf = root / "slurm.conf"
        self.processes: list[subprocess.Popen] = []

    def start(self) -> None:
        munge, state, logs = (self.root / d for d in ("munge", "state", "logs"))
        for d in (munge, state, logs, self.bin):
            d.mkdir(mode=0o700)
        subprocess.run(["mungekey", "--create", "--keyfile", str(munge / "key")], check=True)
        sock = munge / "sock"
        self._spawn("munged", "-F", "--force", f"--socket={sock}", f"--key-file={munge / 'key'}",
                    f"--pid-file={munge / 'pid'}", f"--seed-file={munge / 'seed'}", f"--log-file={logs / 'munged.log'}")
        self._wait_for(sock.exists, "munged's socket")
        self.conf.write_text("\n".join([
            "ClusterName=throughputtest",
            f"SlurmctldHost={self.node}(127.0.0.1)",
            f"SlurmctldPort={_free_port()}", f"SlurmdPort={_free_port()}",
            "AuthType=auth/munge", "CredType=cred/munge", f"AuthInfo=socket={sock}",
            "SlurmUser=root", "SlurmdUser=root",
            f"StateSaveLocation={state}", f"SlurmdSpoolDir={state}/spool",
            f"SlurmctldPidFile={state}/slurmctld.pid", f"SlurmdPidFile={state}/slurmd.pid",
            f"SlurmctldLogFile={logs}/slurmctld.log", f"SlurmdLogFile={logs}/slurmd.log",
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
        self._wait_for(lambda: self.client("sinfo", "-h", "-N", "-o", "%T").stdout.strip() == "idle",
                       "the node to be idle")

    def _spawn(self, daemon: str, *args: str) -> None:
        log = open(self.root / "logs" / f"{daemon}.out", "w")
        self.processes.append(subprocess.Popen([DAEMONS[daemon], *args], stdout=log, stderr=subprocess.STDOUT,
                                               env={**os.environ, "SLURM_CONF": str(self.conf)}))

    def _wait_for(self, ready, what: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while not ready():
            dead = [p.args[0] for p in self.processes if p.poll() is not None]
            if dead or time.monotonic() > deadline:
                logs = "\n".join(f"== {f.name}\n{f.read_text()[-1500:]}" for f in sorted((self.root / "logs").iterdir()))
                pytest.fail(f"waiting for {what}: {'exited: ' + ', '.join(dead) if dead else 'timed out'}\n{logs}")
            time.sleep(0.5)

    def client(self, command: str, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(self.bin / command), *args], capture_output=True, text=True)

    def jobs(self) -> list[dict[str, str]]:
        """Every job the controller still holds (MinJobAge keeps finished ones), as its fields."""
        out = self.client("scontrol", "show", "job", "-o").stdout
        return [dict(f.split("=", 1) for f in line.split() if "=" in f) for line in out.splitlines() if line.strip()]

    def stop(self) -> None:
        for p in reversed(self.processes):
            p.terminate()
        for p in self.processes:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()


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
        cluster.stop()


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
    for name in SPECS:
        mine = [j for j in jobs if j["Comment"] == f"rule_{name}"]
        assert len(mine) == 1, f"{name}: {len(mine)} Slurm jobs"
        job = mine[0]
        # the whole node: all its cores, and no job of any kind beside it
        assert job["OverSubscribe"] == "NO" and int(job["NumCPUs"]) == slurm.cpus, job
        start, end = _interval(job)
        beside = [j["Comment"] for j in jobs if j is not job
                  and _interval(j)[0] < end and _interval(j)[1] > start]
        assert not beside, f"{name} shared its node with {beside}"
    assert {j["Comment"] for j in jobs} >= {"rule_paper", "rule_study_noise", "rule_study_machines"}
    assert (tmp_path / "paper/build/paper.pdf").is_file()
    assert paper_check.problems(tmp_path) == []
