"""A ``convert`` run, the one call the command (and a notebook) makes: check the settings and the output folder
before loading, resolve the model once, convert it, save it into a staged folder, reload and verify it there,
then publish it.

    from lsgtool.conversion import ConvertOptions, run
    result = run(ConvertOptions("minilm", max_length=4096))
    print(result.summary["checks"]["passed"], result.summary["output"])

``lsgtool.convert`` / ``lsgtool.save`` (``core.convert.api``) are the library calls underneath.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsgtool.core.errors import Interrupted, LsgtoolError, UsageError
from lsgtool.progress import Progress

__all__ = ["ConvertOptions", "ConvertResult", "default_out", "reach", "run"]


@dataclass
class ConvertOptions:
    """What to convert and how; the CLI's arguments, one field each (LSGConfig's names in errors)."""

    model: str
    out: Path | None = None  # default: ./<model>-lsg-<max_length>
    max_length: int = 4096
    block: int = 128
    sparse_block: int | None = None  # default: block
    sparse: str | None = "norm"
    factor: int = 2
    global_tokens: int = 1
    mask_first_token: bool = False
    architecture: str | None = None
    seed: int = 0
    overwrite: bool = False
    layout: str = "lsgtool"  # lsgtool or authors
    pass_global_to_decoder: bool = False
    tokenizer: str | None = None
    no_tokenizer: bool = False
    trust_remote_code: bool = False


@dataclass
class ConvertResult:
    """``summary``: what ``--json`` prints (architecture, LSG settings and pattern, global tokens, checks)."""

    summary: dict[str, Any]

    def raise_if_unverified(self) -> None:
        if not self.summary["checks"]["passed"]:
            raise LsgtoolError("the converted model failed verification (see the checks above).",
                               "run again with --debug and report the model type at the issue tracker.")


def default_out(model: str, max_length: int) -> Path:
    return Path(f"{Path(model.rstrip('/')).name}-lsg-{max_length}")


def reach(lsg_config, max_length: int) -> dict[str, Any]:
    """Keys per query and reach of the layout (LSG paper §3.2), capped at what a ``max_length``-token model reads
    (its tokens, plus the global ones as keys); ``reach_note`` says why when capped (None otherwise)."""
    from lsgtool.core.convert.verify import pattern

    shape, S, G = pattern(lsg_config), lsg_config.block_size, lsg_config.num_global_tokens
    note = None
    if max_length <= 2 * S:  # attention.lsg_attention: two blocks or fewer run full attention
        note = (f"block {S} is at least half of the max length {max_length}: every input fits in two blocks, so "
                "attention is full (dense, quadratic in the length); a smaller --block makes it sparse")
    elif shape["reach"] > max_length:
        note = f"capped at the max length {max_length}: a query reaches the whole input"
    return {"keys_per_query": min(shape["keys_per_query"], max_length + G), "reach": min(shape["reach"], max_length),
            "reach_note": note}


def run(options: ConvertOptions, progress: Progress | None = None) -> ConvertResult:
    """Convert, save, verify, publish; Ctrl-C while saving or verifying leaves no output and no staging folder."""
    from lsgtool.core.convert.api import convert, save
    from lsgtool.core.convert.verify import verify
    from lsgtool.core.load import load, resolve
    from lsgtool.core.writing import clean_stale

    o, progress = options, progress or Progress()
    out = _check(o)
    for stale in clean_stale(out):
        progress.note(f"Removed {stale}: the staging folder of an earlier run that was killed.")
    with progress:
        progress.stage("loading and converting", None, o.model)
        source = resolve(o.model)  # once: the conversion, its tokenizer and the verification load from it
        remote = {"trust_remote_code": True} if o.trust_remote_code else {}
        lsg_model, tok, report = convert(
            source, max_length=o.max_length, block_size=o.block, sparse_block_size=o.sparse_block,
            sparsity_type=o.sparse, sparsity_factor=o.factor, num_global_tokens=o.global_tokens,
            mask_first_token=o.mask_first_token, pass_global_tokens_to_decoder=o.pass_global_to_decoder,
            architecture=o.architecture, seed=o.seed, tokenizer=False if o.no_tokenizer else o.tokenizer,
            output_report=True, **remote)
        progress.stage("saving", None, f"to {out}")
        checks: dict[str, Any] = {}

        def verified(staged: Path) -> bool:
            progress.stage("verifying:", None, "reload, compare with the source, run at max length")
            checks["source"] = load(source, architecture=o.architecture, **remote)
            checks.update(verify(staged, lsg_model, checks["source"], o.max_length))
            return checks["passed"]

        try:
            save(lsg_model, tok, out, overwrite=o.overwrite, layout=o.layout, verify=verified)
        except KeyboardInterrupt:
            raise Interrupted(f"interrupted: nothing was written to {out}.", "run the same command again.") from None
    return ConvertResult(_summary(o, out, lsg_model, checks.pop("source"), tok, report, checks))


def _check(o: ConvertOptions) -> Path:
    """The settings (under LSGConfig's names) and the output folder, before anything loads."""
    from lsgtool.core.lsg.config import LSGConfig
    from lsgtool.core.writing import check_target

    LSGConfig(block_size=o.block, sparse_block_size=o.sparse_block if o.sparse_block is not None else o.block,
              sparsity_factor=o.factor, sparsity_type=o.sparse, num_global_tokens=o.global_tokens)
    if o.tokenizer is not None and o.no_tokenizer:
        raise UsageError("--tokenizer and --no-tokenizer contradict each other.", "pass one of them.")
    if o.layout not in ("lsgtool", "authors"):
        raise UsageError(f"unknown --layout {o.layout!r}.", "use --layout lsgtool or --layout authors.")
    return check_target(o.out or default_out(o.model, o.max_length), o.overwrite)


def _summary(o: ConvertOptions, out: Path, lsg_model, source_model, tok, report: dict, checks: dict) -> dict[str, Any]:
    added = sum(p.numel() for p in lsg_model.parameters()) - sum(p.numel() for p in source_model.parameters())
    lsg = lsg_model.base_model.lsg_config
    return {
        "source": o.model, "output": str(out), "architecture": "LSG" + type(lsg_model).__name__,
        "model_type": "lsg" if o.layout == "lsgtool" else lsg_model.config.model_type, "max_length": o.max_length,
        "parameters_added": added, "lsg": lsg.to_dict(), **reach(lsg, o.max_length),
        "global_tokens": report["global_tokens"],
        "adapter": report["adapter"], "loading": report["loading"], "tokenizer": tok is not None, "checks": checks,
    }
