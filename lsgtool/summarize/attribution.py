"""How much of the decoder's cross-attention each input sentence received while each summary token was generated.

Forward hooks on the decoder's cross-attention modules take the attention weights of the position being
decoded, sum them over the heads and add them into one bin per input sentence (a token outside every sentence,
a special token or padding, goes to a bin that is dropped); the sums of all layers are one row per decoded
sequence and step. A logits processor, which generate calls once per step after the forward pass, stores that
row with the sequences it belongs to; at the end each finished sequence is followed back through the steps by
its prefix, so beam search (whose rows are reordered every step) gets the rows of the beam it kept.

Memory: the weights of one layer are formed and reduced at a time (rows·heads·L floats, what the attention
computes anyway), and what is kept is steps·rows·sentences float32 values plus the decoded prefixes — for one
greedy summary of 256 tokens over the 31,102 verses of the King James Bible, 32 MB. The models' own attention
gives its weights only in the eager implementation, so that is what the decoder's attention uses while sources
are recorded (the encoder has run before); LOCOST's cross-attention without the cache gives them as it is.
"""

from __future__ import annotations

import logging
from contextlib import contextmanager
from typing import Iterator

import torch
from torch import Tensor

from lsgtool.core import compat

CROSS_ATTENTION_NAMES = ("encoder_attn", "EncDecAttention")  # BART, mBART, PEGASUS, LED; T5, LongT5, LOCOST


def cross_attention_modules(model) -> list[torch.nn.Module]:
    """The decoder's cross-attention modules (empty when the architecture names them otherwise)."""
    decoder = model.get_decoder() if hasattr(model, "get_decoder") else model
    return [module for name, module in decoder.named_modules() if name.split(".")[-1] in CROSS_ATTENTION_NAMES]


class _Unasked(logging.Filter):
    """transformers (5.x) warns at every ``generate`` given ``output_attentions`` without returning a dict of
    outputs that the flag "may be ignored"; the recorder passes it for the modules (``compat.RECORD_ATTENTION``),
    which do give their weights (the contract ``cross_attention_weights``): that warning alone is not shown."""

    logger = logging.getLogger("transformers.generation.configuration_utils")

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        return not ("generation flags are not valid" in message and "['output_attentions']" in message)


class Recorder:
    """Cross-attention mass per input sentence for each generated token of each input row.

    ``bins``: for each input row, a (L,) long tensor giving each token's sentence (-1: none); ``sizes``: the
    number of sentences of each row; ``beams``: the rows generate decodes per input row."""

    def __init__(self, model, bins: list[Tensor], sizes: list[int], beams: int = 1):
        self.modules = cross_attention_modules(model)
        if not self.modules:
            raise ValueError(f"{type(model).__name__} has no cross-attention modules named "
                             f"{' or '.join(CROSS_ATTENTION_NAMES)}")
        self.sizes, self.beams, self.width = sizes, beams, max(sizes) + 1  # the last bin takes what is dropped
        length = max(len(b) for b in bins)
        index = torch.full((len(bins), length), self.width - 1, dtype=torch.long)
        for row, found in enumerate(bins):
            index[row, :len(found)] = torch.where(found < 0, self.width - 1, found)
        self.index = index.repeat_interleave(beams, dim=0)  # rows as generate expands them
        self.current: Tensor | None = None
        self.steps: list[tuple[Tensor, Tensor]] = []  # (prefixes (R, t), sentence mass (R, width - 1))

    def _hook(self, module, args, output) -> None:
        weights = output[-1] if isinstance(output, tuple) else None
        if weights is None:
            raise RuntimeError(f"{type(module).__name__} gave no attention weights to attribute the summary with")
        last = weights[:, :, -1, :].float().sum(1)  # (R, L): this step's position, summed over the heads
        if self.index.device != last.device:
            self.index = self.index.to(last.device)  # once: it is read at every layer of every step
        index = self.index
        if index.shape[0] != last.shape[0]:  # one encoder output shared by every beam: its rows broadcast
            index = index[:1].expand(last.shape[0], -1)
        mass = torch.zeros(last.shape[0], self.width, device=last.device).scatter_add_(1, index[:, :last.shape[1]], last)
        self.current = mass if self.current is None else self.current + mass

    def __call__(self, input_ids: Tensor, scores: Tensor) -> Tensor:
        """A logits processor: the step's mass, paired with the prefixes it was computed for."""
        if self.current is not None:
            self.steps.append((input_ids.detach().cpu().clone(), self.current[:, :-1].cpu()))
        self.current = None
        return scores

    # generate() passes it to the decoder: modules give their weights (lsgtool.core.compat, cross_attention_weights)
    generate_kwargs = compat.RECORD_ATTENTION

    @contextmanager
    def recording(self) -> Iterator["Recorder"]:
        """Hooks on, and the attention computed eagerly (weights formed), for the block's generation."""
        configs = {id(m.config): m.config for m in self.modules if getattr(m, "config", None) is not None}
        before = {key: getattr(config, "_attn_implementation", None) for key, config in configs.items()}
        hooks = [module.register_forward_hook(self._hook) for module in self.modules]
        quiet = _Unasked()
        quiet.logger.addFilter(quiet)
        try:
            for config in configs.values():
                config._attn_implementation = "eager"
            yield self
        finally:
            for hook in hooks:
                hook.remove()
            for key, config in configs.items():
                config._attn_implementation = before[key]
            quiet.logger.removeFilter(quiet)

    def tokens(self, sequence: Tensor, row: int) -> Tensor:
        """(new tokens, sentences of input ``row``): the mass each sentence received as each token of the
        finished ``sequence`` (decoder start token first) was generated."""
        size = self.sizes[row]
        out = torch.zeros(max(len(sequence) - 1, 0), size)
        rows = range(row * self.beams, (row + 1) * self.beams)
        for t, (prefixes, mass) in enumerate(self.steps[:len(out)]):
            wanted = sequence[:t + 1].cpu()
            for r in rows:
                if r < prefixes.shape[0] and torch.equal(prefixes[r, :t + 1], wanted):
                    out[t] = mass[r, :size]
                    break
        return out
