"""Profiling (`lsgtool profile`, and the benchmarks): length specs, scaling analysis; engine, variants, models."""

from lsgtool.profiling.analysis import crossover, scaling_exponent
from lsgtool.profiling.spec import parse_lengths

__all__ = ["crossover", "parse_lengths", "scaling_exponent"]
