"""``lsgtool summarize INPUT...``: whole documents and books in one pass when the model allows, never truncated
silently; abstractive with any summariser, extractive with a sentence encoder (the offline default)."""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from lsgtool.commands._batch_report import render_batch
from lsgtool.commands._common import Device, JsonOption, SummaryDType, emit, positive, require_device
from lsgtool.documents.model import NAMED_KINDS


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
    html = "html"


def summarize_command(
    inputs: Annotated[Optional[list[str]], typer.Argument(
        metavar="INPUT",
        help=f"Files ({', '.join(NAMED_KINDS)}), folders (every such file in them) or - for standard input.",
        show_default=False)] = None,
    model: Annotated[Optional[str], typer.Option(
        help="Summariser: a preset, folder, Hub id or LOCOST .ckpt (`lsgtool plugins` lists presets).",
        show_default="a summariser preset whose weights are here, else extractive with the packaged all-MiniLM-L6-v2")] = None,
    method: Annotated[Method, typer.Option(help="abstractive (a sequence-to-sequence model writes), extractive (sentences "
                                                "picked with an encoder); auto: by the model.")] = Method.auto,
    tokenizer: Annotated[Optional[str], typer.Option(help="Tokenizer folder or Hub id, when the model has none.")] = None,
    out: Annotated[Optional[Path], typer.Option(
        "--out", "-o", help="Output file (one input, a name with a suffix) or folder (one <name>.summary.<ext> per "
                            "input, or summaries.jsonl).",
        show_default="stdout for one input, ./summaries for several")] = None,
    fmt: Annotated[Optional[Format], typer.Option("--format", help="text, md, json, jsonl or html (the summary beside "
                                                  "the text, its sources highlighted).",
                                                  show_default="text on stdout, md in files")] = None,
    open_page: Annotated[bool, typer.Option("--open", help="Show the HTML page in your browser (a temporary file "
                                                           "without --out).")] = False,
    max_new_tokens: Annotated[Optional[int], typer.Option(help="Longest summary (tokens); extractive: its budget.",
                                                          min=1, show_default="the model's, else 256")] = None,
    length: Annotated[Optional[str], typer.Option(help="Summary length as a share of the text or in words: --length 5% "
                                                       "or --length 300w (instead of --max-new-tokens).")] = None,
    sentences: Annotated[Optional[int], typer.Option(help="Sentences in the summary: --sentences 12.", min=1)] = None,
    focus: Annotated[Optional[str], typer.Option(help='What the summary is about: --focus "What became of Cain?" '
                                                      "(sentences, windows and chapters most relevant to it first).")] = None,
    sources: Annotated[Optional[bool], typer.Option("--sources/--no-sources", help="Where each summary sentence came "
                                                    "from: \\[chapter, page or line] markers; spans and shares in JSON.",
                                                    show_default="in md and json, not in text")] = None,
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
    transcript: Annotated[Optional[bool], typer.Option("--transcript/--no-transcript", help="Read text as a transcript "
        "(`Speaker: words` turns) or prose; .vtt/.srt are captions.", show_default="detected")] = None,
    per_chapter: Annotated[bool, typer.Option("--per-chapter", help="A summary per chapter (EPUB spine, headings), "
                                                                      "then of the book from them.")] = False,
    scorer: Annotated[Optional[str], typer.Option(help="Extractive: how sentences are scored: rule (centroid, lexical "
                                                      "centrality, title) or a folder from lsgtool finetune --task "
                                                      "extractive.", show_default="the packaged learned scorer with "
                                                      "the packaged encoder, else rule")] = None,
    device: Annotated[Device, typer.Option(help="cpu or cuda.")] = Device.cpu,
    dtype: Annotated[Optional[SummaryDType], typer.Option(
        help="float32, bfloat16, float16, or int8 (the encoder's products, on a CPU with VNNI or AMX; needs torchao).",
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
    batch_size: Annotated[int, typer.Option(help="Inputs generated together (those one pass reads), grouped by "
                                                 "length; for datasets of short documents.", min=1)] = 1,
    references: Annotated[Optional[Path], typer.Option(
        help="A folder of reference summaries, one per input file: NAME.ref for NAME.md (the input's path inside a "
             "folder given, its suffix .ref; the inputs' own folder works). Scores each summary (as --rouge).")] = None,
    rouge: Annotated[bool, typer.Option("--rouge", help="ROUGE-1/2/Lsum against the references (a dataset's summaries, "
                                                        "or --references).")] = False,
    stemmer: Annotated[bool, typer.Option(help="Porter stemming in ROUGE.")] = True,
    trust_checkpoint: Annotated[bool, typer.Option("--trust-checkpoint", help="Allow a .ckpt with pickled objects "
                                                                              "(it runs their code).")] = False,
    config_from: Annotated[Optional[Path], typer.Option(help="config.json (or its folder) of a .ckpt model.")] = None,
    as_json: JsonOption = False,
) -> None:
    """Summarise documents and whole books: one pass when the model allows, no silent truncation.

    \b
    Examples:
      lsgtool summarize book.epub --per-chapter --out book.md     chapters; each sentence marked \\[chapter, ¶]
      lsgtool summarize GPL-3 --focus "patents" --length 300w --sources
      lsgtool summarize report.pdf --sentences 5 --json           each sentence's page, span and share
    """
    from lsgtool.commands._progress import RichProgress
    from lsgtool.distributed import together
    from lsgtool.progress import Progress
    from lsgtool.summarize.run import SummarizeOptions, run

    if not inputs and dataset is None:
        inputs = _ask_for_input(as_json)
    require_device(device)  # before any work
    generation = {"max_new_tokens": max_new_tokens, "min_new_tokens": min_new_tokens, "num_beams": num_beams,
                  "length_penalty": length_penalty, "no_repeat_ngram_size": no_repeat_ngram_size,
                  "repetition_penalty": repetition_penalty}
    options = SummarizeOptions(
        inputs=inputs, model=model, method=method.value, tokenizer=tokenizer, out=out, fmt=fmt.value if fmt else None,
        generation=generation, overflow=overflow.value, max_input_tokens=max_input_tokens, per_chapter=per_chapter,
        device=device.value, dtype=dtype.value if dtype else None, memory_limit=memory_limit, resume=resume,
        overwrite=overwrite, sources=sources, focus=focus, length=length, sentences=sentences, dataset=dataset,
        split=split, text_column=text_column, summary_column=summary_column,
        limit=limit, batch_size=batch_size, rouge=rouge or references is not None, references=references, stemmer=stemmer, trust_checkpoint=trust_checkpoint,
        config_from=config_from, stream=not as_json, json=as_json, transcript=transcript, open=open_page,
        scorer=scorer)
    result = run(options, Progress() if as_json else RichProgress(stream=True))
    together(lambda: _report(result, options.fmt, as_json) if result.outcome.main else None)  # the first one reports


def _ask_for_input(as_json: bool) -> list[str] | None:
    """On a terminal, the document to summarise is asked for; elsewhere the run refuses the missing input."""
    from lsgtool.commands._prompt import choose, document_choices, interactive

    if not interactive(as_json):
        return None
    return [choose(f"Which document should be summarised? ({', '.join(NAMED_KINDS)}, a folder)", document_choices())]


def _report(result, fmt: str | None, as_json: bool) -> None:
    from lsgtool.core.errors import LsgtoolError
    from lsgtool.summarize.render import render

    outcome = result.outcome
    if result.outputs is None and outcome.records:  # one input, to stdout
        record = outcome.records[0]
        if as_json or fmt == "json":
            typer.echo(json.dumps(record, indent=2, ensure_ascii=False))
        else:
            typer.echo(render(record, fmt or "text", result.document), nl=False)
    else:
        emit(result.report(with_records=as_json), as_json, render_batch)
    if result.page is not None:
        from lsgtool.summarize.html import show

        typer.echo(show(result.page), err=True)
    if outcome.failures:
        raise LsgtoolError(f"{len(outcome.failures)} of {result.inputs} inputs failed: "
                           + "; ".join(f"{n}: {e}" for n, e in outcome.failures[:3]),
                           "the other inputs were summarised; fix these and run again with --resume.")
