"""Profiling (`lsgtool profile`, and the benchmarks): ``run(ProfileOptions(...))`` is what the command calls;
length specs, scaling analysis; engine, variants, models."""

from lsgtool.profiling.analysis import crossover, scaling_exponent
from lsgtool.profiling.run import ProfileOptions, ProfileProgress, ProfileResult, run
from lsgtool.profiling.spec import parse_lengths

__all__ = ["ProfileOptions", "ProfileProgress", "ProfileResult", "crossover", "parse_lengths", "run",
           "scaling_exponent"]
