"""LSG attention: config, functional attention, drop-in module, sparse selectors, dense reference."""

from lsgtool.core.lsg.attention import lsg_attention
from lsgtool.core.lsg.config import LSGConfig
from lsgtool.core.lsg.module import LSGSelfAttention
from lsgtool.core.lsg.selectors import SparseInputs, SparseTokens

__all__ = ["LSGConfig", "LSGSelfAttention", "SparseInputs", "SparseTokens", "lsg_attention"]
