"""Look inside long-context models: what an LSG layer connects, and how far LOCOST's SSM kernels reach.

Pure computations (torch only); drawing and the command live above ``core``.
"""

from lsgtool.core.inspect.connectivity import Connectivity, compare_budget, connectivity, nominal, record_selector
from lsgtool.core.inspect.ssm import KernelStats, kernel_stats, ssm_layers

__all__ = ["Connectivity", "KernelStats", "compare_budget", "connectivity", "kernel_stats", "nominal",
           "record_selector", "ssm_layers"]
