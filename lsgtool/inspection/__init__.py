"""``lsgtool inspect-kernels`` below the command: the operator breakdown, picks on real text, the plots."""
