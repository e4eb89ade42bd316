"""Should LSG offer a flex_attention backend on this device? ``torch.compile``d ``flex_attention`` with a block mask
of 5 key blocks of 128 per query block (640 keys per query, as many as LSG 128/4's 641: globals, 2 x 128 reduced
tokens, 3 local blocks) against ``lsg_attention`` (norm, 128/4, 1 global) at 16K tokens, 12 heads x 64, in one
run; the first compiled call (compile time) reported apart. Uncompiled, flex_attention builds the n x n scores.

    python benchmarks/flex_attention.py
"""
import time, torch
from torch.nn.attention.flex_attention import flex_attention, create_block_mask
from lsgtool.core.lsg.attention import lsg_attention
from lsgtool.core.lsg.config import LSGConfig
torch.manual_seed(0)
H, D, L, S = 12, 64, 16384, 128
q, k, v = (torch.randn(1, H, L, D) for _ in range(3))
def mask_mod(b, h, qi, ki):
    return ((qi // S) - (ki // S)).abs() <= 2
block = create_block_mask(mask_mod, 1, 1, L, L, device="cpu", BLOCK_SIZE=S)
compiled = torch.compile(flex_attention)
def best(f, n=3):
    f(); ts = []
    for _ in range(n):
        s = time.perf_counter(); f(); ts.append(time.perf_counter() - s)
    return min(ts)
with torch.no_grad():
    s = time.perf_counter(); compiled(q, k, v, block_mask=block); first = time.perf_counter() - s
    flex = best(lambda: compiled(q, k, v, block_mask=block))
    cfg = LSGConfig(block_size=128, sparse_block_size=128, sparsity_factor=4, sparsity_type="norm", num_global_tokens=1)
    q1, k1, v1 = (torch.randn(1, H, L + 1, D) for _ in range(3))
    lsg = best(lambda: lsg_attention(q1, k1, v1, config=cfg))
print(f"flex compiled: first call {first:.1f} s (compile), then {flex:.3f} s; lsg_attention {lsg:.3f} s; flex/lsg {flex/lsg:.2f}")
