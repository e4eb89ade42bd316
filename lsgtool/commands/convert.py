"""``lsgtool convert MODEL``: any Hugging Face encoder or encoder-decoder checkpoint to its LSG variant."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.console import Console
from rich.table import Table

from lsgtool.commands._common import LSG_FLAGS, JsonOption, emit, flag_names


def convert_command(
    ctx: typer.Context,
    model: Annotated[Optional[str], typer.Argument(
        metavar="MODEL", show_default=False,
        help="Local folder, Hugging Face Hub id, or preset name (e.g. minilm) of the model to convert; "
             "asked for on a terminal when left out.")] = None,
    out: Annotated[Optional[Path], typer.Option("--out", "-o", help="Output folder (default: ./<model>-lsg-<max-length>).")] = None,
    max_length: Annotated[int, typer.Option(help="New maximum sequence length.", min=1)] = 4096,
    block: Annotated[int, typer.Option(help="Local block size S.", min=1)] = 128,
    sparse_block: Annotated[Optional[int], typer.Option(help="Sparse tokens per side (default: --block; --sparse none for no sparse "
                                                                     "tokens).", min=1)] = None,
    sparse: Annotated[str, typer.Option(help="Sparse selector (see `lsgtool plugins`).")] = "norm",
    factor: Annotated[int, typer.Option(help="Sparsity factor f.", min=1)] = 2,
    global_tokens: Annotated[int, typer.Option("--global", help="Number of global tokens.", min=0)] = 1,
    mask_first_token: Annotated[bool, typer.Option(help="Hide the first token ([CLS]) as a key.")] = False,
    architecture: Annotated[Optional[str], typer.Option(help="transformers class to load, e.g. BertForSequenceClassification.")] = None,
    seed: Annotated[int, typer.Option(help="Seed of random selectors (lsh), recorded in the config.")] = 0,
    overwrite: Annotated[bool, typer.Option(help="Replace an existing output folder.")] = False,
    layout: Annotated[str, typer.Option(help="Config layout: lsgtool (model_type 'lsg', AutoModel-loadable after "
                                              "`import lsgtool`) or authors (base model_type, as the LSG authors' checkpoints).")] = "lsgtool",
    pass_global_to_decoder: Annotated[bool, typer.Option(
        help="Encoder-decoders: the decoder also attends to the global tokens (the LSG authors' BART/PEGASUS "
             "default).")] = False,
    tokenizer: Annotated[Optional[str], typer.Option(
        help="Tokenizer folder or Hub id, when MODEL has none (default: MODEL's own).")] = None,
    no_tokenizer: Annotated[bool, typer.Option(
        "--no-tokenizer", help="Convert without a tokenizer: global tokens from the config's special token ids.")] = False,
    trust_remote_code: Annotated[bool, typer.Option(help="Allow the source model's own Hub code to run.")] = False,
    guided: Annotated[bool, typer.Option(
        "--guided", help="On a terminal: choose the task, then the recommended block size, sparsity factor, selector "
                         "and global tokens (LSG paper, App. E), see keys per query and reach, confirm.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Convert MODEL to LSG attention for long inputs, save it, reload it and verify it."""
    from lsgtool.commands._progress import RichProgress
    from lsgtool.commands._prompt import choose, interactive, model_choices
    from lsgtool.conversion import ConvertOptions, run
    from lsgtool.core.errors import UsageError

    if model is None:
        if not interactive(as_json):
            raise UsageError("missing argument 'MODEL'.", "usage: lsgtool convert [OPTIONS] MODEL — a model folder, "
                             "a Hub id or a preset (`lsgtool plugins` lists them), e.g. lsgtool convert minilm.")
        model = choose("Which model should become an LSG model?", model_choices(), default="minilm")
    if guided:
        max_length, block, factor, sparse, global_tokens = _ask(ctx, as_json, max_length, block, factor, sparse,
                                                                global_tokens)
    options = ConvertOptions(
        model, out=out, max_length=max_length, block=block, sparse_block=sparse_block, sparse=sparse, factor=factor,
        global_tokens=global_tokens, mask_first_token=mask_first_token, architecture=architecture, seed=seed,
        overwrite=overwrite, layout=layout, pass_global_to_decoder=pass_global_to_decoder, tokenizer=tokenizer,
        no_tokenizer=no_tokenizer, trust_remote_code=trust_remote_code)
    # bars are for a person at a terminal: a log, a pipe or --json gets only the notes (no stray lines)
    progress = RichProgress(bars=not as_json, lines=False)  # off a terminal and with --json: notes only
    with flag_names(LSG_FLAGS):  # errors name --block, not block_size
        result = run(options, progress)
    emit(result.summary, as_json, _render)
    result.raise_if_unverified()


def _ask(ctx: typer.Context, as_json: bool, max_length: int, block: int, factor: int, sparse: str,
         global_tokens: int) -> tuple[int, int, int, str, int]:
    """--guided: the settings the command line left open, asked on a terminal."""
    from lsgtool.commands._guided import guided as ask_settings
    from lsgtool.commands._prompt import interactive
    from lsgtool.core.errors import UsageError
    from lsgtool.core.registry import get_registry

    if not interactive(as_json):
        raise UsageError("--guided asks questions and needs a terminal (not a pipe, CI or --json).",
                         "pass the settings as options instead, e.g. --block 128 --factor 4 --sparse norm.")
    names = {"max_length": max_length, "block": block, "factor": factor, "sparse": sparse,
             "global_tokens": global_tokens}
    given = {k: v for k, v in names.items() if ctx.get_parameter_source(k).name == "COMMANDLINE"}
    answers = ask_settings(given, list(get_registry("sparse_selectors")))
    return answers.max_length, answers.block, answers.factor, answers.sparse, answers.global_tokens


def _render(console: Console, data: dict[str, Any]) -> None:
    table = Table(title="lsgtool convert", show_header=False)
    table.add_column("what")
    table.add_column("value")
    lsg = data["lsg"]
    rows = [
        ("architecture", data["architecture"]), ("new max length", str(data["max_length"])),
        ("parameters added", f"{data['parameters_added']:,}"),
        ("attention", f"block {lsg['block_size']}, {lsg['sparsity_type'] or 'no'} sparse x{lsg['sparsity_factor']}, "
                      f"{lsg['num_global_tokens']} global"),
        ("keys per query / reach", f"{data['keys_per_query']} / {data['reach']} tokens"
                                   + (f" ({data['reach_note']})" if data["reach_note"] else "")),
        ("global tokens from", _global_origin(data["global_tokens"])),
        ("reloaded = converted", f"max |diff| {data['checks']['reload_max_abs_diff']:.2e}"),
        ("= source at short length", f"max |diff| {data['checks']['source_max_abs_diff']:.2e}"),
        (f"runs at {data['max_length']}", f"{data['checks']['max_length_finite']} ({data['checks']['max_length_seconds']} s)"),
        ("verification", "passed" if data["checks"]["passed"] else "FAILED"),
        ("output folder", data["output"]),
    ]
    for row in rows:
        table.add_row(*row)
    console.print(table)


def _global_origin(ids: dict[str, Any]) -> str:
    if "kept_from" in ids:
        return ids["kept_from"]
    return f"id {ids['first']} ({ids['first_from']}), then id {ids['other']} ({ids['other_from']})"
