"""``lsgtool summarize INPUT...``: whole documents and books in one pass when the model allows, never truncated
silently; abstractive with any summariser, extractive with a sentence encoder (the offline default)."""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.console import Console
from rich.table import Table

from lsgtool.commands._common import DType, Device, JsonOption, emit, positive, require_device

KNOWN_SUMMARISERS = ("ccdv/lsg-bart-base-16384-arxiv", "ccdv/lsg-bart-base-16384-pubmed", "ccdv/lsg-bart-base-4096-arxiv",
                     "ccdv/lsg-bart-base-4096-pubmed")


class Overflow(str, Enum):
    auto = "auto"
    error = "error"
    truncate = "truncate"
    chunk = "chunk"


class Method(str, Enum):
    auto = "auto"
    abstractive = "abstractive"
    extractive = "extractive"


class Format(str, Enum):
    text = "text"
    md = "md"
    json = "json"
    jsonl = "jsonl"


def summarize_command(
    inputs: Annotated[Optional[list[str]], typer.Argument(
        metavar="INPUT", help="Files (.txt, .md, .pdf, .epub), folders (every such file in them) or - for standard input.",
        show_default=False)] = None,
    model: Annotated[Optional[str], typer.Option(
        help="Summariser: a preset, folder, Hub id or LOCOST .ckpt (`lsgtool plugins` lists presets).",
        show_default="a cached LSG summariser, else extractive with the packaged all-MiniLM-L6-v2")] = None,
    method: Annotated[Method, typer.Option(help="abstractive (a sequence-to-sequence model writes), extractive (sentences "
                                                "picked with an encoder); auto: by the model.")] = Method.auto,
    tokenizer: Annotated[Optional[str], typer.Option(help="Tokenizer folder or Hub id, when the model has none.")] = None,
    out: Annotated[Optional[Path], typer.Option(
        help="Output file (one input) or folder (one <name>.summary.<ext> per input, or summaries.jsonl).",
        show_default="stdout for one input, ./summaries for several")] = None,
    fmt: Annotated[Optional[Format], typer.Option("--format", help="text, md, json or jsonl.",
                                                  show_default="text on stdout, md in files")] = None,
    max_new_tokens: Annotated[Optional[int], typer.Option(help="Longest summary (tokens); extractive: its budget.",
                                                          min=1, show_default="the model's, else 256")] = None,
    min_new_tokens: Annotated[Optional[int], typer.Option(min=0, show_default="the model's, else 0")] = None,
    num_beams: Annotated[Optional[int], typer.Option(min=1, show_default="the model's, else the paper's")] = None,
    length_penalty: Annotated[Optional[float], typer.Option(show_default="the model's, else the paper's")] = None,
    no_repeat_ngram_size: Annotated[Optional[int], typer.Option(min=0, show_default="the model's, else 0")] = None,
    repetition_penalty: Annotated[Optional[float], typer.Option(callback=positive,
                                                                show_default="the model's, else 1.0")] = None,
    overflow: Annotated[Overflow, typer.Option(
        help="When the input is longer than one pass takes: auto (summaries of windows, then of their summaries), "
             "error, truncate (reported), chunk (the windows' summaries joined).")] = Overflow.auto,
    max_input_tokens: Annotated[Optional[int], typer.Option(
        help="Tokens one pass may take (lower than the model's limit).", min=1,
        show_default="the model's limit")] = None,
    per_chapter: Annotated[bool, typer.Option("--per-chapter", help="A summary per chapter (EPUB spine, headings), "
                                                                      "then of the book from them.")] = False,
    device: Annotated[Device, typer.Option(help="cpu or cuda.")] = Device.cpu,
    dtype: Annotated[Optional[DType], typer.Option(help="float32, bfloat16 or float16.",
                                                   show_default="the model's")] = None,
    memory_limit: Annotated[Optional[float], typer.Option(
        help="MB one pass may use beyond the weights; longer inputs take the overflow route.", callback=positive,
        show_default="the memory available")] = None,
    resume: Annotated[bool, typer.Option("--resume", help="Skip inputs already summarised with the same model and "
                                                          "settings (records next to the outputs).")] = False,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Redo inputs whose outputs lsgtool wrote before.")] = False,
    dataset: Annotated[Optional[str], typer.Option(
        help="Summarise the rows of a dataset: a local json/jsonl/csv/parquet file, a saved dataset, a Hub name.")] = None,
    split: Annotated[str, typer.Option(help="Dataset split.")] = "test",
    text_column: Annotated[Optional[str], typer.Option(help="Dataset column with the documents.",
                                                       show_default="document, article, text, ...")] = None,
    summary_column: Annotated[Optional[str], typer.Option(help="Dataset column with reference summaries.",
                                                          show_default="summary, abstract, highlights, ...")] = None,
    limit: Annotated[Optional[int], typer.Option(help="Only the first N dataset rows.", min=1)] = None,
    batch_size: Annotated[int, typer.Option(help="Inputs generated together (those one pass reads), for datasets "
                                                 "of short documents.", min=1)] = 1,
    rouge: Annotated[bool, typer.Option("--rouge", help="ROUGE-1/2/Lsum against the references (dataset summaries).")] = False,
    stemmer: Annotated[bool, typer.Option(help="Porter stemming in ROUGE.")] = True,
    trust_checkpoint: Annotated[bool, typer.Option("--trust-checkpoint", help="Allow a .ckpt with pickled objects "
                                                                              "(it runs their code).")] = False,
    config_from: Annotated[Optional[Path], typer.Option(help="config.json (or its folder) of a .ckpt model.")] = None,
    as_json: JsonOption = False,
) -> None:
    """Summarise documents and whole books: one pass when the model allows, no silent truncation."""
    from lsgtool.core.errors import UsageError
    from lsgtool.summarize.batch import clean_stale
    from lsgtool.summarize.inputs import dataset as dataset_jobs
    from lsgtool.summarize.inputs import files

    if not inputs and dataset is None:
        from lsgtool.commands._prompt import choose, document_choices, interactive

        if not interactive(as_json):
            raise UsageError("no input given.", "pass files, folders or - (standard input), or --dataset NAME_OR_PATH.")
        inputs = [choose("Which document should be summarised? (.txt, .md, .pdf, .epub, a folder)",
                         document_choices())]
    if inputs and dataset is not None:
        raise UsageError("inputs and --dataset were both given.", "summarise either files or a dataset's rows.")
    if resume and overwrite:
        raise UsageError("--resume and --overwrite contradict each other.", "pass one of them.")
    require_device(device)
    jobs = dataset_jobs(dataset, split, text_column, summary_column, limit) if dataset else files(inputs)
    if rouge:
        from lsgtool.summarize.scoring import _scorer

        _scorer(stemmer)  # refuse now if rouge-score is missing
    fmt_value = fmt.value if fmt else None  # --json is what goes to stdout; files keep their format
    outputs = _outputs(jobs, out, fmt_value, dataset is not None)
    if outputs is not None:
        outputs.check(jobs, resume, overwrite)
        outputs.folder.mkdir(parents=True, exist_ok=True)
        for name in clean_stale(outputs.folder):
            typer.echo(f"removed a temporary file of an interrupted run: {name}", err=True)
    summarizer, why = _summarizer(model, method, tokenizer, device.value, dtype.value if dtype else None,
                                  max_input_tokens, trust_checkpoint, config_from, max_new_tokens,
                                  {"max_new_tokens": max_new_tokens, "min_new_tokens": min_new_tokens,
                                   "num_beams": num_beams, "length_penalty": length_penalty,
                                   "no_repeat_ngram_size": no_repeat_ngram_size,
                                   "repetition_penalty": repetition_penalty})
    outcome = _run(jobs, outputs, summarizer, why, overflow.value, per_chapter, memory_limit, resume, rouge, stemmer,
                   as_json, device.value == "cpu", batch_size)
    if outcome.main:
        _report(outcome, jobs, outputs, fmt_value, as_json, summarizer, why)


def _outputs(jobs, out: Path | None, fmt: str | None, many_kind: bool):
    from lsgtool.summarize.batch import Outputs

    batch = len(jobs) > 1 or many_kind
    if out is None and not batch:
        return None
    out = out or Path("summaries")
    suffixes = {".md": "md", ".txt": "text", ".json": "json", ".jsonl": "jsonl"}
    if not batch and out.suffix.lower() in suffixes and not out.is_dir():
        return Outputs(out.parent if str(out.parent) else Path("."), fmt or suffixes[out.suffix.lower()], out.name)
    if out.exists() and not out.is_dir():
        from lsgtool.core.errors import UsageError

        raise UsageError(f"--out '{out}' is a file; several inputs need a folder.", "pass a folder for --out.")
    return Outputs(out, fmt or "md")


def _default_model() -> tuple[str, str]:
    """A long-input summariser already in the Hugging Face cache, else the packaged extractive encoder."""
    from huggingface_hub import try_to_load_from_cache

    for repo in KNOWN_SUMMARISERS:
        if isinstance(try_to_load_from_cache(repo, "config.json"), str):
            return repo, f"the cached LSG summariser {repo}"
    return "minilm", ("no abstractive summariser is cached, so sentences are picked with the packaged "
                      "all-MiniLM-L6-v2 read through LSG attention (extractive)")


def _summarizer(model, method, tokenizer, device, dtype, max_input_tokens, trust_checkpoint, config_from, budget,
                flags):
    from lsgtool.core.load import resolve
    from lsgtool.summarize.abstractive import load_abstractive
    from lsgtool.summarize.extractive import load_extractive

    why = f"--model {model}" if model else None
    if model is None:
        model, why = _default_model()
    source = resolve(model, config=config_from, weights_needed=True)
    seq2seq = source.kind == "locost" or bool(source.config.get("is_encoder_decoder"))
    chosen = method.value if method.value != "auto" else ("abstractive" if seq2seq else "extractive")
    if chosen == "extractive":
        if seq2seq:
            from lsgtool.core.errors import UsageError

            raise UsageError(f"'{model}' is a sequence-to-sequence model: extractive summaries need an encoder.",
                             "drop --method extractive (it writes abstractive summaries), or give a BERT-like encoder.")
        return load_extractive(model, budget=budget or 256, device=device, tokenizer=tokenizer), why
    summarizer = load_abstractive(model, {k: v for k, v in flags.items() if v is not None}, tokenizer, device, dtype,
                                  trust_checkpoint=trust_checkpoint, config=config_from)
    if max_input_tokens is not None:
        summarizer.limit = max_input_tokens if summarizer.limit is None else min(summarizer.limit, max_input_tokens)
    return summarizer, why


def _run(jobs, outputs, summarizer, why, overflow, per_chapter, memory_limit, resume, rouge, stemmer, as_json, cpu,
         batch_size):
    from lsgtool.commands._progress import RichProgress
    from lsgtool.profiling.memory import available_mb
    from lsgtool.summarize.batch import run
    from lsgtool.summarize.pipeline import summarize_document, summarize_documents
    from lsgtool.summarize.scoring import rouge as score

    limit = memory_limit if memory_limit is not None else available_mb("cpu")
    identity = {"model": summarizer.name, "method": summarizer.method, "overflow": overflow, "per_chapter": per_chapter,
                "settings": summarizer.generation.values if summarizer.generation else summarizer.settings,
                "limit": getattr(summarizer, "limit", None)}
    progress = _Silent() if as_json else RichProgress(stream=len(jobs) == 1)

    def summarise(documents) -> list[dict[str, Any]]:
        if len(documents) == 1:
            results = [summarize_document(documents[0], summarizer, overflow, per_chapter, progress,
                                          stream=progress.stream, memory_limit_mb=limit)]
        else:
            results = summarize_documents(documents, summarizer, overflow, per_chapter, progress, limit)
        records = []
        for document, result in zip(documents, results):
            record = {**result.to_dict(), "why": why}
            if rouge and document.reference:
                record["rouge"] = score(record["summary"], document.reference, stemmer)
                record["reference"] = document.reference
            records.append(record)
        return records

    with progress:
        progress.inputs(len(jobs))
        return run(jobs, outputs, summarise, identity, resume,
                   on_start=lambda job, i, n: progress.next_input(job.name, i), keep_going=len(jobs) > 1, cpu=cpu,
                   batch_size=batch_size)


class _Silent:
    stream = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None

    def inputs(self, total):
        pass

    def next_input(self, name, index):
        pass

    def stage(self, *args, **kwargs):
        pass

    def advance(self, n=1):
        pass

    def text(self, piece):
        pass

    def note(self, message):
        pass


def _report(outcome, jobs, outputs, fmt, as_json, summarizer, why) -> None:
    from lsgtool.core.errors import LsgtoolError
    from lsgtool.summarize.render import render
    from lsgtool.summarize.scoring import METRICS

    scored = [r["rouge"] for r in outcome.records if "rouge" in r]
    mean = {m: sum(s[m]["f1"] for s in scored) / len(scored) for m in METRICS} if scored else None
    if outputs is None and outcome.records:  # one input, to stdout
        record = outcome.records[0]
        if as_json or fmt == "json":
            typer.echo(json.dumps(record, indent=2, ensure_ascii=False))
        else:
            typer.echo(render(record, fmt or "text"), nl=False)
    else:
        data = {"inputs": len(jobs), "done": len(outcome.records) - outcome.skipped, "skipped": outcome.skipped,
                "failed": [{"input": n, "error": e} for n, e in outcome.failures], "method": summarizer.method,
                "model": summarizer.name, "why": why, "rouge": mean,
                "outputs": sorted({r.get("output") for r in outcome.records if r.get("output")}),
                "folder": str(outputs.folder) if outputs else None, "records": outcome.records if as_json else None}
        emit(data, as_json, _render_batch)
    if outcome.failures:
        raise LsgtoolError(f"{len(outcome.failures)} of {len(jobs)} inputs failed: "
                           + "; ".join(f"{n}: {e}" for n, e in outcome.failures[:3]),
                           "the other inputs were summarised; fix these and run again with --resume.")


def _render_batch(console: Console, data: dict[str, Any]) -> None:
    table = Table(title=f"lsgtool summarize — {data['method']} with {data['model']}", show_header=False)
    table.add_column("what")
    table.add_column("value")
    table.add_row("inputs", f"{data['inputs']} ({data['done']} summarised, {data['skipped']} already done, "
                            f"{len(data['failed'])} failed)")
    table.add_row("written to", f"{data['folder']}: {', '.join(data['outputs'][:5])}"
                                + (" ..." if len(data["outputs"]) > 5 else ""))
    if data["rouge"]:
        table.add_row("ROUGE-1/2/Lsum F1", " / ".join(f"{100 * v:.2f}" for v in data["rouge"].values()))
    for failure in data["failed"]:
        table.add_row("failed", f"{failure['input']}: {failure['error']}")
    console.print(table)
