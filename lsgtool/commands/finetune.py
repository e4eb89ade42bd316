"""``lsgtool finetune``: train LSG and LOCOST models on datasets (classification, multilabel, token
classification, MLM, seq2seq, GSG pre-training) with transformers' Trainer."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.table import Table

from lsgtool.commands._common import JsonOption, emit, positive
from lsgtool.progress import Progress


def finetune_command(
    task: Annotated[Optional[str], typer.Option(
        help="classification, multilabel, token-classification, mlm, seq2seq, gsg or extractive (a sentence scorer "
             "for summarize --scorer).", show_default="classification")] = None,
    model: Annotated[Optional[str], typer.Option(help="Preset, folder, Hub id or LOCOST checkpoint to train.")] = None,
    data: Annotated[Optional[str], typer.Option(
        help="json/jsonl/csv/parquet/txt file or folder, a save_to_disk folder, or a Hub dataset.")] = None,
    text_column: Annotated[Optional[str], typer.Option(help="Input text column.", show_default="text")] = None,
    label_column: Annotated[Optional[str], typer.Option(help="Label column (classification).", show_default="label")] = None,
    summary_column: Annotated[Optional[str], typer.Option(help="Target column (seq2seq, extractive).",
                                                            show_default="summary")] = None,
    out: Annotated[Optional[Path], typer.Option("--out", "-o", help="Run folder: final model, metrics, curves, checkpoints.",
                                                show_default="./finetune-<task>")] = None,
    config: Annotated[Optional[Path], typer.Option("--config", help="A TOML file with any option (\\[train] lr = 8e-5).")] = None,
    sets: Annotated[Optional[list[str]], typer.Option("--set", help="Override one key: --set train.lr=5e-4 (repeatable).")] = None,
    recipe: Annotated[Optional[str], typer.Option(
        help="The papers' settings: lsg-classification, lsg-summarization, locost-finetune, locost-pretrain.")] = None,
    convert: Annotated[Optional[bool], typer.Option("--convert", help="Convert a plain checkpoint to LSG first "
                                                                       "(--block, --factor, --sparse, --global, --max-length).")] = None,
    block: Annotated[Optional[int], typer.Option(help="--convert: LSG block size.", min=1)] = None,
    factor: Annotated[Optional[int], typer.Option(help="--convert: sparsity factor.", min=1)] = None,
    sparse: Annotated[Optional[str], typer.Option(help="--convert: sparse selector.")] = None,
    global_tokens: Annotated[Optional[int], typer.Option("--global", help="--convert: global tokens.", min=0)] = None,
    max_length: Annotated[Optional[int], typer.Option(
        help="Input length: with --convert the LSG length; for an LSG model, extend its positions first (4K -> 16K).",
        min=1)] = None,
    train: Annotated[Optional[str], typer.Option("--train", help="full, or global-only (only the global tokens learn).")] = None,
    freeze: Annotated[Optional[list[str]], typer.Option(help="Freeze parameters matching a pattern (repeatable).")] = None,
    lr: Annotated[Optional[float], typer.Option(help="Learning rate.", callback=positive)] = None,
    epochs: Annotated[Optional[float], typer.Option(help="Epochs.", callback=positive)] = None,
    max_steps: Annotated[Optional[int], typer.Option(help="Stop after this many optimizer steps.", min=1)] = None,
    batch_size: Annotated[Optional[int], typer.Option(help="Examples per device and step.", min=1)] = None,
    resume: Annotated[bool, typer.Option("--resume", help="Continue an interrupted run from its last checkpoint.")] = False,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace a run folder lsgtool wrote.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Prepare data and model, train nothing (gsg: print pairs).")] = False,
    show: Annotated[int, typer.Option(help="--dry-run: examples to print.", min=0)] = 3,
    as_json: JsonOption = False,
) -> None:
    """Fine-tune (or GSG pre-train) a model on a dataset with transformers' Trainer; resumable, distributable."""
    from lsgtool.finetune.config import resolve
    from lsgtool.finetune.run import is_main, run

    if config is None and (model is None or data is None):
        model, data = _ask_missing(model, data, as_json)
    flags = {"train": {"task": task, "lr": lr, "epochs": epochs, "max_steps": max_steps, "batch_size": batch_size},
             "model": {"name": model, "convert": convert, "block": block, "factor": factor, "sparse": sparse,
                       "global": global_tokens, "max_length": max_length, "train": train, "freeze": freeze},
             "data": {"name": data, "text_column": text_column, "label_column": label_column,
                      "summary_column": summary_column}}
    settings = resolve(recipe, config, flags, list(sets or []))
    with _progress(as_json or not is_main()) as progress:
        result = run(settings, out, resume=resume, overwrite=overwrite, dry_run=dry_run, show=show, progress=progress)
    if dry_run or is_main():  # under torchrun / accelerate launch the first process reports
        emit(result, as_json, _render_pairs if "pairs" in result else _render_dry if dry_run else _render)


def _progress(quiet: bool) -> Progress:
    """Rich bars on a terminal, a line per log in a pipe; nothing with --json or beside the first process."""
    from lsgtool.commands._progress import RichProgress

    return Progress() if quiet else RichProgress()


def _ask_missing(model: str | None, data: str | None, as_json: bool) -> tuple[str | None, str | None]:
    """On a terminal, what is missing is asked for; in a pipe, under CI or with --json the checks say it instead."""
    from lsgtool.commands._prompt import ask, choose, interactive, model_choices

    if not interactive(as_json):
        return model, data
    if model is None:
        model = choose("Which model should be trained?", model_choices(), default="minilm")
    if data is None:
        found = sorted(p.name for p in Path(".").iterdir() if p.suffix.lower() in (".json", ".jsonl", ".csv", ".parquet", ".txt"))
        data = ask("Which data (a file, a folder, a save_to_disk folder or a Hub dataset)?", found[0] if found else "",
                   check=lambda v: None if v else "a dataset is needed.")
    return model, data


def _render_pairs(console: Console, data: dict) -> None:
    console.print(f"gap-sentence pairs (sentinel {data['gsg_sentinel']}; {data['gsg_skipped_documents']} documents "
                  "without a pair skipped):", markup=False)
    for i, pair in enumerate(data["pairs"]):
        console.print(f"\n[{i}] input:  {pair['input'][:600]}", markup=False)
        console.print(f"[{i}] target: {pair['target'][:400]}", markup=False)


def _render_dry(console: Console, data: dict) -> None:
    table = Table(title=f"lsgtool finetune --dry-run — {data['task']}, {data['model']}", title_justify="left")
    table.add_column("")
    table.add_column("value", justify="right")
    for key in ("train_examples", "eval_examples", "max_length", "truncated_examples", "trainable_parameters",
                "parameters"):
        if key in data:
            table.add_row(key.replace("_", " "), f"{data[key]:,}" if isinstance(data[key], int) else str(data[key]))
    console.print(table)
    for note in data.get("notes", []):
        console.print(f"note: {note}", markup=False)


def _render(console: Console, data: dict) -> None:
    table = Table(title=f"lsgtool finetune — {data['task']}, {data['model']}", title_justify="left")
    table.add_column("")
    table.add_column("value", justify="right")
    rows = {"steps": data["steps"], "train examples": data["train_examples"], "eval examples": data["eval_examples"],
            "truncated examples": data.get("truncated_examples"), "trainable parameters": data["trainable_parameters"],
            "first loss": data.get("first_loss"), "last loss": data.get("last_loss"), "loss drop": data.get("loss_drop")}
    for key, value in {**rows, **(data.get("final_eval") or {})}.items():
        if value is not None:
            table.add_row(key.removeprefix("eval_"), f"{value:,}" if isinstance(value, int) else f"{value:.4g}")
    console.print(table)
    for note in data.get("notes", []):
        console.print(f"note: {note}", markup=False)
    if data.get("truncated_examples"):
        console.print(f"note: {data['truncated_examples']} examples were cut at {data['max_length']} tokens.", markup=False)
    console.print(f"written: {data['out']} (model, metrics.json, finetune.toml"
                  + (", curves.png" if data.get("curves") else "") + ", checkpoints/)", markup=False)
