"""A single-node Slurm on this host for the tests: munged, slurmctld and slurmd started in a
temporary directory, one node of this machine's cores (tests/conftest.py's tiny_study runs the
tiny study through the Slurm profile on it; tests/workflow/test_tiny_study.py checks its jobs).

Debian's slurmctld, slurmd, slurm-client and munge (envs/apt-slurm.txt, `make test` installs
them as root); `missing()` says why a cluster cannot start here."""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
from pathlib import Path

import psutil

from conftest import REPO, Daemons
from throughput.setup import config

PROFILE = REPO / "workflow/profiles/slurm"
DAEMONS = {"munged": "/usr/sbin/munged", "slurmctld": "/usr/sbin/slurmctld", "slurmd": "/usr/sbin/slurmd"}
CLIENTS = ("sbatch", "srun", "squeue", "scontrol", "scancel", "sinfo", "sacct", "sacctmgr", "sshare")
PARTITION = "throughput"


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

    def workflow_arguments(self) -> list[str]:
        """Snakemake's arguments for the Slurm profile on this cluster: the site's settings, which
        the profile says to set (this node's cores, partition and memory), and no accounting
        database (squeue, with MinJobAge keeping finished jobs)."""
        return ["--workflow-profile", str(PROFILE), "--cores", str(self.cpus),
                "--default-resources", f"slurm_partition={PARTITION}", f"mem_mb={self.memory_mb // self.cpus}",
                "runtime=30", "--slurm-status-command", "squeue", "--slurm-init-seconds-before-status-checks", "5"]

    def jobs(self) -> list[dict[str, str]]:
        """Every job the controller still holds (MinJobAge keeps finished ones), as its fields."""
        out = self.client("scontrol", "show", "job", "-o").stdout
        return [dict(f.split("=", 1) for f in line.split() if "=" in f) for line in out.splitlines() if line.strip()]


def missing() -> str | None:
    """Why no single-node Slurm can run here (None: it can)."""
    absent = [d for d, path in DAEMONS.items() if not os.access(path, os.X_OK)]
    absent += [c for c in (*CLIENTS, "mungekey") if shutil.which(c) is None]
    if absent:
        return (f"Slurm is not installed here (missing {', '.join(absent)}): "
                "as root, `make test` installs envs/apt-slurm.txt")
    if os.geteuid() != 0:
        return "slurmd must run as root to start jobs; run the tests as root"
    return None
