"""One look for every figure: mplhep's ROOT style, saved as PDF (paper) and PNG (README, notebooks)."""
from __future__ import annotations

import os
from pathlib import Path

import matplotlib.pyplot as plt
import mplhep

from ..core.results import atomic_path


def use() -> None:
    mplhep.style.use("ROOT")
    plt.rcParams.update({"figure.figsize": (8, 6), "savefig.bbox": "tight"})


def save(fig: "plt.Figure", stem: str | os.PathLike) -> list[Path]:
    """Write `stem`.pdf and `stem`.png atomically; return both paths."""
    paths = []
    for suffix in (".pdf", ".png"):
        path = Path(stem).with_suffix(suffix)
        with atomic_path(path) as temporary:
            fig.savefig(temporary, format=suffix[1:], dpi=150)
        paths.append(path)
    return paths
