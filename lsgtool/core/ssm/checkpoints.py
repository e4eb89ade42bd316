"""The LOCOST authors' checkpoints: PyTorch Lightning ``.ckpt`` state dicts, read by name into our modules.

Loading by name, presets and Hub ids included, goes through ``lsgtool.load`` (``lsgtool.core.load.locost``
has the LOCOST-only shortcuts).
"""

from __future__ import annotations

from pathlib import Path

import torch

from lsgtool.core.errors import LsgtoolError, UsageError

# Tied to ``shared.weight`` (absent from the authors' checkpoints) / an unused bias T5 checkpoints carry.
TIED = ("encoder.embed_tokens.weight", "decoder.embed_tokens.weight", "lm_head.weight")
IGNORED = ("decoder.block.0.layer.1.EncDecAttention.relative_attention_bias.weight",)


def _damage(path: Path) -> str | None:
    """Why a checkpoint file is damaged, or None: torch saves a zip archive, and a file cut short loses the
    archive's directory at its end (legacy pickles, which are no archive, are not judged)."""
    import zipfile

    with path.open("rb") as handle:
        zipped = handle.read(4) == b"PK\x03\x04"
    if not zipped:
        return None
    if not zipfile.is_zipfile(path):
        return "the archive torch wrote is cut short (no directory at its end)"
    try:
        with zipfile.ZipFile(path) as archive:
            bad = archive.testzip()
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        return f"the archive cannot be read ({exc})"
    return f"the archive's member {bad} is corrupt" if bad else None


def read_state_dict(path: str | Path, trusted: bool = False) -> dict[str, torch.Tensor]:
    """Tensors of a Lightning ``.ckpt`` (``state_dict`` with its ``model.`` prefix removed) or a ``.bin``."""
    try:
        checkpoint = torch.load(path, map_location="cpu", weights_only=not trusted)
    except Exception as exc:
        damage = _damage(Path(path))
        if damage is not None:
            raise UsageError(f"'{path}' is damaged: {damage}.", "copy or download the checkpoint again (an interrupted "
                             "copy or download leaves such a file); --trust-checkpoint would not help.") from None
        if not trusted and "weights only load failed" in str(exc).lower():  # pickled objects beyond tensors
            raise LsgtoolError(f"cannot read '{path}' safely: it holds pickled Python objects besides tensors, "
                               "which load only by running their code.", "if you trust where the file comes from, load it with "
                               "trust_checkpoint=True (--trust-checkpoint).") from None
        raise UsageError(f"cannot read '{path}': {type(exc).__name__}: {exc}".splitlines()[0],
                         "pass a Lightning .ckpt or a PyTorch state dict.") from None
    state = checkpoint.get("state_dict", checkpoint) if isinstance(checkpoint, dict) else None
    if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise UsageError(f"'{path}' holds no state dict of tensors.", "pass a Lightning .ckpt or a PyTorch state dict.")
    if state and all(key.startswith("model.") for key in state):
        state = {key.removeprefix("model."): value for key, value in state.items()}
    return state
