"""``lsgtool inspect-kernels`` below the command: LSG connectivity maps, SSM kernels and their reach, the operator
breakdown, picks on real text, the plots. ``run(InspectOptions(...))`` is the one call the command makes."""

from lsgtool.inspection.options import InspectOptions, LSGLayout
from lsgtool.inspection.run import Inspection, run

__all__ = ["InspectOptions", "Inspection", "LSGLayout", "run"]
