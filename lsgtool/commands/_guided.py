"""``lsgtool convert --guided``: the task decides the recommended LSG settings (LSG paper, Appendix E), the
user confirms or changes each, sees keys per query and reach, and confirms before any work."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lsgtool.commands._common import stderr
from lsgtool.commands._prompt import ask, choose, confirm

# App. E: a small sparsity factor where the task is local (MLM, NER), larger for a wide context
# (summarisation, question answering); above 8 tends to hurt. Classification sits between.
TASKS = {
    "classification": (4, "documents as a whole: a middle factor"),
    "summarization": (8, "wide context: the largest factor that still helps (App. E: above 8 tends to hurt)"),
    "question-answering": (8, "wide context: a large factor"),
    "mlm": (2, "local information: a small factor"),
    "token-classification": (2, "local information (NER): a small factor"),
}


@dataclass
class Answers:
    max_length: int
    block: int
    factor: int
    sparse: str
    global_tokens: int


def _selector_for(block: int) -> tuple[str, str]:
    if block <= 64:
        return "block_stride", "at small blocks stride and block_stride hold up best (App. E)"
    return "norm", "keeps the keys of largest norm: data-dependent, no extra parameters"


def guided(given: dict[str, Any], selectors: list[str]) -> Answers:
    """Ask for every setting not ``given`` on the command line (``given``: flag name -> value)."""
    from lsgtool.conversion import reach
    from lsgtool.core.errors import ConfigError
    from lsgtool.core.lsg.config import LSGConfig

    console = stderr()
    task = choose("What will the converted model do?", [(name, why) for name, (_, why) in TASKS.items()],
                  default="classification", other=False)
    factor_default, _ = TASKS[task]

    def positive(value: int) -> str | None:
        return None if value > 0 else "a positive number, please"

    max_length = given.get("max_length") or ask("new maximum length (tokens)", 4096, int, positive)
    block = given.get("block") or ask("block size (App. E: up to 256 for models trained on 512 tokens; smaller "
                                      "is cheaper)", 128, int, positive)
    factor = given.get("factor") or ask(f"sparsity factor (2 to 8; {TASKS[task][1]})", factor_default, int,
                                        lambda f: positive(f) or (None if block % f == 0 else
                                                                  f"it must divide the block size {block}"))
    selector, why = _selector_for(block)
    sparse = given.get("sparse") or choose(f"sparse selector (recommended: {selector}: {why})",
                                           [(name, "recommended" if name == selector else "") for name in selectors],
                                           default=selector, other=False)
    global_tokens = given.get("global_tokens") or ask(
        "global tokens (App. E: more of them slow convergence; the first is initialised from [CLS]/<s>)", 1, int,
        lambda g: None if g >= 0 else "0 or more, please")
    try:
        config = LSGConfig(block_size=block, sparse_block_size=block, sparsity_factor=factor, sparsity_type=sparse,
                           num_global_tokens=global_tokens)
    except ConfigError as exc:
        console.print(f"these settings do not make an LSG layout: {exc.message}", markup=False)
        return guided(given, selectors)
    shape = reach(config, max_length)
    console.print(f"{task}: length {max_length}, block {block}, factor {factor}, {sparse} selector, "
                  f"{global_tokens} global token(s) -> each query sees {shape['keys_per_query']} keys and reaches "
                  f"{shape['reach']} tokens" + (f" ({shape['reach_note']})" if shape["reach_note"] else ""),
                  markup=False)
    if not confirm("convert with these settings?"):
        import typer

        raise typer.Abort()
    return Answers(max_length, block, factor, sparse, global_tokens)
