"""Figures: matplotlib drawn off-screen (the optional extra ``plot``), and one way to finish a PNG."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lsgtool.core.errors import UsageError

__all__ = ["pyplot", "require_plotting", "save"]

DPI = 110


def require_plotting(flag: str = "--no-plots") -> None:
    """Fail before any work when the plots cannot be drawn: matplotlib is the optional extra ``plot``."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise UsageError("the plots need matplotlib, which is not installed.",
                         f"pip install 'lsgtool[plot]' (or matplotlib), or pass {flag} for JSON and CSV only.") from None


def pyplot():
    """``matplotlib.pyplot`` on the Agg backend (no display needed)."""
    require_plotting()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save(fig, path: str | Path, *, rect: tuple[float, float, float, float] | None = None, tight_box: bool = False,
         **savefig: Any) -> Path:
    """Lay out ``fig`` (``rect``: the area the subplots may use), write it as a PNG at ``path`` and close it.
    ``tight_box`` crops to the drawn content instead of laying out the subplots."""
    import matplotlib.pyplot as plt

    if tight_box:
        savefig.setdefault("bbox_inches", "tight")
    else:
        fig.tight_layout(**({"rect": rect} if rect else {}))
    fig.savefig(path, dpi=DPI, **savefig)
    plt.close(fig)
    return Path(path)
