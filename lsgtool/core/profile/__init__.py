"""Profiling engine pieces (issue #5, in progress): length specs and scaling analysis."""

from lsgtool.core.profile.analysis import crossover, scaling_exponent
from lsgtool.core.profile.spec import parse_lengths

__all__ = ["crossover", "parse_lengths", "scaling_exponent"]
