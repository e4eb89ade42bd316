"""A ``summarize`` run, the one call the command (and a notebook) makes: check the request, resolve the model
once, load it, read the inputs, route each document, write the outputs and their records.

    from lsgtool.summarize import SummarizeOptions, run
    result = run(SummarizeOptions(inputs=["book.epub"], model="minilm"))
    print(result.outcome.records[0]["summary"])
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsgtool.core.errors import UsageError
from lsgtool.progress import Progress
from lsgtool.summarize.length import Length

__all__ = ["GENERATION_FLAGS", "SummarizeOptions", "SummarizeResult", "default_model", "run"]

GENERATION_FLAGS = ("max_new_tokens", "min_new_tokens", "num_beams", "length_penalty", "no_repeat_ngram_size",
                    "repetition_penalty")
OUTPUT_SUFFIXES = {".md": "md", ".txt": "text", ".json": "json", ".jsonl": "jsonl", ".html": "html", ".htm": "html"}


@dataclass
class SummarizeOptions:
    """What to summarise and how; the CLI's flags, one field each (None: the model's or lsgtool's default)."""

    inputs: list[str] | None = None
    model: str | None = None
    method: str = "auto"  # auto, abstractive, extractive
    tokenizer: str | None = None
    out: Path | None = None
    fmt: str | None = None  # text, md, json, jsonl, html (files default to md, to html with ``open``)
    generation: dict[str, Any] = field(default_factory=dict)  # GENERATION_FLAGS given
    overflow: str = "auto"
    max_input_tokens: int | None = None
    per_chapter: bool = False
    device: str = "cpu"
    dtype: str | None = None
    memory_limit: float | None = None  # MB
    resume: bool = False
    overwrite: bool = False
    dataset: str | None = None
    split: str = "test"
    text_column: str | None = None
    summary_column: str | None = None
    limit: int | None = None
    batch_size: int = 1
    by_length: bool = True  # with batch_size > 1: inputs generated together grouped by length (False: input order)
    rouge: bool = False
    references: Path | None = None  # a folder of NAME.ref reference summaries for input files (--rouge on them)
    stemmer: bool = True
    trust_checkpoint: bool = False
    config_from: Path | None = None
    sources: bool | None = None  # where each summary sentence came from (None: in md and json, not in text)
    focus: str | None = None  # a question the summary is about
    length: str | None = None  # "5%" of the text or "300w" words, in place of --max-new-tokens
    sentences: int | None = None  # sentences in the summary, in place of --max-new-tokens
    stream: bool = False  # hand greedy text to progress.text as it is generated (one input)
    json: bool = False  # the result goes to standard output as JSON (--json)
    transcript: bool | None = None  # read texts as transcripts (True) or prose (False); None: detected
    scorer: str | None = None  # extractive: "rule", a scorer folder (summarize.scorer); None: the default
    open: bool = False  # --open: the HTML page (a folder's index) shown in a browser; written to a temporary folder
    # when no --out is given


@dataclass
class SummarizeResult:
    outcome: Any  # summarize.batch.Outcome
    inputs: int
    outputs: Any  # summarize.batch.Outputs, or None for one input to stdout
    method: str
    model: str
    why: str | None
    bertscore: dict[str, Any] | None = None  # with --rouge: the mean F1, or why it could not be computed
    batches: dict[str, Any] | None = None  # with --batch-size N: the padding of the batches generated together
    document: Any = None  # one input to standard output: the Document (an HTML page shows it)
    page: Path | None = None  # the HTML page to open (--open): the one written, or a folder's index.html

    @property
    def records(self) -> list[dict[str, Any]]:
        return self.outcome.records

    def mean_rouge(self) -> dict[str, float] | None:
        from lsgtool.summarize.scoring import METRICS

        scored = [r["rouge"] for r in self.records if "rouge" in r]
        return {m: sum(s[m]["f1"] for s in scored) / len(scored) for m in METRICS} if scored else None

    def report(self, with_records: bool = False) -> dict[str, Any]:
        """The batch summary the CLI prints (and --json gives)."""
        return {"inputs": self.inputs, "done": len(self.records) - self.outcome.skipped,
                "skipped": self.outcome.skipped,
                "failed": [{"input": n, "error": e} for n, e in self.outcome.failures], "method": self.method,
                "model": self.model, "why": self.why, "rouge": self.mean_rouge(),
                "scored": sum(1 for r in self.records if "rouge" in r), "bertscore": self.bertscore,
                "rouge_per_input": [{"input": r["input"], **{m: s["f1"] for m, s in r["rouge"].items()}}
                                    for r in self.records if "rouge" in r],
                "outputs": sorted({r.get("output") for r in self.records if r.get("output")}),
                "folder": str(self.outputs.folder) if self.outputs else None, "batches": self.batches,
                "records": self.records if with_records else None}


def default_model() -> tuple[str, str]:
    """A summariser preset whose weights are already on this machine, else the packaged extractive encoder."""
    from lsgtool.core.presets import weights_here
    from lsgtool.core.registry import get_registry

    presets = get_registry("presets")
    for name in presets:
        preset = presets[name]
        if preset.summarizer and weights_here(preset):
            return name, f"the summariser preset {name} ({preset.weights}) is on this machine"
    return "minilm", ("no abstractive summariser is cached, so sentences are picked with the packaged "
                      "all-MiniLM-L6-v2 read through LSG attention (extractive)")


def _check(options: SummarizeOptions) -> None:
    if not options.inputs and options.dataset is None:
        raise UsageError("no input given.", "pass files, folders or - (standard input), or --dataset NAME_OR_PATH.")
    if options.inputs and options.dataset is not None:
        raise UsageError("inputs and --dataset were both given.", "summarise either files or a dataset's rows.")
    if options.resume and options.overwrite:
        raise UsageError("--resume and --overwrite contradict each other.", "pass one of them.")
    if options.dtype == "int8":
        from lsgtool.core import precision

        if options.device != "cpu":
            raise UsageError(f"--dtype int8 runs on the CPU (VNNI or AMX products), and --device {options.device} was "
                             "given.", "on a GPU pass --dtype bfloat16 or float16.")
        precision.require_int8("--dtype int8")
    given = {k: v for k, v in options.generation.items() if v is not None}
    if given.get("min_new_tokens", 0) > given.get("max_new_tokens", float("inf")):
        raise UsageError(f"--min-new-tokens {given['min_new_tokens']} is more than --max-new-tokens "
                         f"{given['max_new_tokens']}.", "pass a --min-new-tokens no larger than --max-new-tokens.")
    if options.limit is not None and options.dataset is None:
        raise UsageError("--limit counts the rows of a dataset, and no --dataset was given.",
                         "pass --dataset NAME_OR_PATH, or leave --limit out.")
    if options.scorer not in (None, "rule"):
        from lsgtool.summarize.scorer import is_scorer

        if not is_scorer(Path(options.scorer).expanduser()):
            raise UsageError(f"--scorer {options.scorer} is neither rule nor a sentence scorer folder.",
                             "pass rule, or a folder written by lsgtool finetune --task extractive.")
    if options.focus is not None and not options.focus.strip():
        raise UsageError("--focus is empty.", 'pass the question or topic the summary should be about, e.g. '
                                              '--focus "What happened to Cain?".')
    length = Length.parse(options.length, options.sentences)
    flag = "--length" if options.length is not None else "--sentences"
    if length is not None and options.generation.get("max_new_tokens") is not None:
        raise UsageError(f"{flag} and --max-new-tokens both set the summary's length.", "pass one of them.")
    if length is not None and options.generation.get("min_new_tokens"):  # the budget comes from each text: may be less
        raise UsageError(f"{flag} {length.asked.split()[0]} and --min-new-tokens {options.generation['min_new_tokens']} "
                         "both set the summary's length: the length asked is a budget for each text, which may be "
                         "fewer tokens than --min-new-tokens.",
                         "leave --min-new-tokens out, or pass --max-new-tokens with it instead of the length.")
    if options.focus is not None and options.overflow != "auto":
        raise UsageError(f"--focus chooses what one pass reads, and --overflow {options.overflow} says what to do "
                         "with a text longer than one pass.", "leave --overflow out with --focus.")
    if length is not None and options.overflow == "chunk":
        raise UsageError(f"{flag} sets the length of one summary, "
                         "and --overflow chunk joins a summary per window.",
                         "pass --overflow auto (one summary of the windows' summaries), or leave the length out.")
    unused = _unused_by_extractive(options) if options.method == "extractive" else []
    if unused:
        raise UsageError(f"{unused[0]}.", "leave it out with --method extractive, or drop --method extractive for "
                                          "an abstractive summary with a sequence-to-sequence --model.")
    if options.references is not None and options.dataset is not None:
        raise UsageError(f"--references {options.references} is for input files: a --dataset's references are its "
                         "summary column.", "pass --summary-column with --dataset, or input files with --references.")
    if options.references is not None and not options.references.is_dir():
        raise UsageError(f"--references {options.references} is not a folder.",
                         "pass the folder that holds NAME.ref for each input NAME.md / NAME.txt (it may be the "
                         "inputs' own folder).")
    _check_open(options)
    if options.rouge and options.dataset is None and options.references is None:
        raise UsageError("--rouge scores summaries against references: a --dataset's summary column, or "
                         "--references for input files.", "pass --dataset with a summary column or --references "
                                                          "FOLDER, or leave --rouge out.")


def _check_open(options: SummarizeOptions) -> None:
    """--open shows an HTML page: it is the format unless another one was asked for (refused)."""
    if not options.open:
        return
    suffix = OUTPUT_SUFFIXES.get(options.out.suffix.lower()) if options.out is not None else None
    if options.fmt not in (None, "html") or suffix not in (None, "html"):
        given = f"--format {options.fmt}" if options.fmt not in (None, "html") else f"--out {options.out}"
        raise UsageError(f"--open shows an HTML page, and {given} asks for another format.",
                         "leave that out (--open writes HTML), or leave --open out.")
    options.fmt = "html"


def _jobs(options: SummarizeOptions, progress: Progress):
    from lsgtool.summarize.inputs import dataset, files

    if options.dataset:
        return dataset(options.dataset, options.split, options.text_column, options.summary_column, options.limit,
                       options.transcript)
    return files(options.inputs, options.references, options.transcript, progress.note)


def _outputs(jobs, options: SummarizeOptions):
    """Where the results go: None (one input, to stdout), one file, or a folder."""
    from lsgtool.summarize.batch import Outputs

    batch = len(jobs) > 1 or options.dataset is not None
    if options.out is None and not batch and options.open:  # a page to look at, not a file asked for: a new
        import secrets  # temporary folder, made when the run writes (a run refused before leaves nothing)
        import tempfile

        folder = Path(tempfile.gettempdir()) / f"lsgtool-{secrets.token_hex(6)}"
        return Outputs(folder, "html", f"{jobs[0].stem}.summary.html")
    if options.out is None and not batch:
        return None
    out = options.out or Path("summaries")
    if not batch and not out.is_dir() and (out.suffix or out.exists()):  # one input: a file, Markdown unless said
        return Outputs(out.parent if str(out.parent) else Path("."),
                       options.fmt or OUTPUT_SUFFIXES.get(out.suffix.lower(), "md"), out.name)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out '{out}' is a file; {'several inputs need' if len(jobs) > 1 else 'a --dataset needs'} "
                         "a folder.", "pass a folder for --out.")
    return Outputs(out, options.fmt or "md")


def _check_outputs(outputs, options: SummarizeOptions) -> None:
    from lsgtool.core.writing import probe_writable
    from lsgtool.summarize.render import SUFFIX

    if outputs is None:
        if options.json and options.fmt not in (None, "json"):
            raise UsageError(f"--json and --format {options.fmt} both say how the summary goes to standard output.",
                             f"pass one of them, or --out FILE{SUFFIX[options.fmt]} to write the {options.fmt} to a "
                             "file.")
        return
    probe_writable(outputs.given, "--out", start=outputs.folder)


@dataclass
class Model:
    """The model a run summarises with, found, routed and fingerprinted without loading it (``--resume`` with every
    input finished loads nothing)."""

    source: Any  # core.load.Source
    given: str  # the name as given (--model, or the default chosen)
    why: str | None
    method: str  # abstractive or extractive
    fingerprint: str  # its files' content (core.load.fingerprint), with --tokenizer, --dtype and --device

    @property
    def name(self) -> str:
        return self.source.name


def find_model(options: SummarizeOptions) -> Model:
    """The model resolved once, the route decided from its config, its files fingerprinted; nothing loaded."""
    from lsgtool.core.load import resolve
    from lsgtool.core.load.fingerprint import fingerprint

    name, why = options.model, f"--model {options.model}" if options.model else None
    if name is None:
        name, why = default_model()
    source = resolve(name, config=options.config_from, weights_needed=True)
    return Model(source, name, why, _route(source, name, options),
                 fingerprint(source, options.tokenizer, dtype=options.dtype, device=options.device))


def _route(source, name: str, options: SummarizeOptions) -> str:
    """abstractive or extractive: --method, else what the model's config is; what the route cannot do is refused."""
    seq2seq = source.kind == "locost" or bool(source.config.get("is_encoder_decoder"))
    chosen = options.method if options.method != "auto" else ("abstractive" if seq2seq else "extractive")
    if chosen == "abstractive" and options.scorer is not None:
        raise UsageError(f"--scorer {options.scorer} scores sentences to pick, and '{name}' writes abstractive "
                         "summaries.", "leave --scorer out, or pass an encoder --model (or --method extractive).")
    if chosen == "extractive":
        if seq2seq:
            raise UsageError(f"'{name}' is a sequence-to-sequence model: extractive summaries need an encoder.",
                             "drop --method extractive (it writes abstractive summaries), or give a BERT-like encoder.")
        for flag, value in options.generation.items():
            if value is not None and flag != "max_new_tokens":
                raise UsageError(f"--{flag.replace('_', '-')} does not apply to extractive summaries: sentences are "
                                 "picked, nothing is generated.", "leave it out, or pass a sequence-to-sequence "
                                                                  "--model for an abstractive summary.")
    return chosen


def load_summarizer(model: Model, options: SummarizeOptions):
    """The summariser of ``model``, loaded."""
    from lsgtool.summarize.abstractive import load_abstractive
    from lsgtool.summarize.extractive import load_extractive

    source = model.source
    if model.method == "extractive":
        budget = options.generation.get("max_new_tokens") or 256
        window = min(4096, options.max_input_tokens or 4096)
        summarizer = load_extractive(source, window=window, budget=budget, device=options.device,
                                     tokenizer=options.tokenizer, dtype=options.dtype, scorer=options.scorer)
        summarizer.budget_given = options.generation.get("max_new_tokens") is not None
        summarizer.notes += [f"{reason} (the extractive route was chosen for '{model.given}', an encoder)"
                             for reason in _unused_by_extractive(options)]
        return _precision_stated(summarizer, options)
    flags = {k: v for k, v in options.generation.items() if v is not None}
    summarizer = load_abstractive(source, flags, options.tokenizer, options.device, options.dtype,
                                  trust_checkpoint=options.trust_checkpoint)
    if options.max_input_tokens is not None:
        limit = summarizer.limit
        summarizer.limit = options.max_input_tokens if limit is None else min(limit, options.max_input_tokens)
    return _precision_stated(summarizer, options)


def _precision_stated(summarizer, options: SummarizeOptions):
    """``summarizer`` with the precision it runs in (``dtype``: its weights', or int8), for every record's
    settings: what --dtype became on this CPU, or the model's own."""
    weights = next(summarizer.model.parameters(), None)
    summarizer.dtype = "int8" if options.dtype == "int8" else \
        str(weights.dtype).removeprefix("torch.") if weights is not None else options.dtype
    return summarizer


def _unused_by_extractive(options: SummarizeOptions) -> list[str]:
    """Options that change nothing on the extractive route, each with why: refused when the user forced the route
    (--method extractive), a note in every record when the model chose it (a config file's --batch-size stays
    harmless)."""
    unused = []
    if options.batch_size > 1:
        unused.append(f"--batch-size {options.batch_size} does not apply to extractive summaries: nothing is generated, "
                      "each document is read on its own")
    if options.overflow == "chunk":
        unused.append("--overflow chunk does not apply to extractive summaries: a long text is read in windows and "
                      "the sentences picked from all of it, as with --overflow auto")
    return unused


def run(options: SummarizeOptions, progress: Progress | None = None) -> SummarizeResult:
    """Summarise every input of ``options``; usage errors are raised before the model is loaded (under a
    distributed launcher, on every process when any process raises one)."""
    from lsgtool import distributed

    progress = progress or Progress()
    options, notes = _precision(options)
    distributed.start(cpu=options.device == "cpu")  # under a launcher: the group the batch shares the work in
    jobs, outputs, model, loaded = distributed.together(lambda: _ready(options, progress, notes), undo=_release)
    try:
        if outputs is not None:
            distributed.shared(outputs.folder)  # a machine writing its share to its own disk would lose it
        outcome = _summarise(jobs, outputs, model, loaded, options, progress, notes)
    finally:
        if outputs is not None:
            outputs.unlock()
    result = SummarizeResult(outcome, len(jobs), outputs, model.method, model.name, model.why)
    if outputs is None and options.fmt == "html" and outcome.records:
        result.document = jobs[0].read()  # read once already (``_read_now``)
    if options.open and outputs is not None and outcome.records:
        from lsgtool.summarize.batch import INDEX

        result.page = outputs.folder / (outputs.single_name or INDEX)
    if options.batch_size > 1 and model.method == "abstractive":
        result.batches = outcome.padding.report(options.batch_size, options.by_length)
    if options.rouge and outcome.main:
        from lsgtool.summarize.scoring import bertscore

        scores, why_not = bertscore([(r["summary"], r["reference"]) for r in outcome.records if "reference" in r])
        result.bertscore = scores or {"not_computed": why_not}
        if why_not:
            progress.note(f"BERTScore not computed: {why_not}")
    return result


def _precision(options: SummarizeOptions) -> tuple[SummarizeOptions, list[str]]:
    """``--dtype`` bfloat16, float16 or int8 on a CPU without the instructions for it (where torch converts around
    every product, slower than float32): run in float32, and a note that says so."""
    from lsgtool.core.precision import INSTRUCTIONS, accelerated

    if options.dtype not in INSTRUCTIONS or options.device != "cpu" or accelerated(options.dtype, "cpu"):
        return options, []  # float32, the model's own, or a value the checks refuse later
    return dataclasses.replace(options, dtype="float32"), [
        f"--dtype {options.dtype}: this CPU has none of {', '.join(INSTRUCTIONS[options.dtype])}, without which "
        f"{options.dtype} runs slower than float32: running in float32"]


def _release(ready) -> None:
    """What ``_ready`` holds (the output's lock) given back: another process refused the run."""
    outputs = ready[1]
    if outputs is not None:
        outputs.unlock()


def _ready(options: SummarizeOptions, progress: Progress, notes: list[str]):
    """(jobs, outputs, model, (summariser, what the reader asked)): every check, then the model loaded, unless
    ``--resume`` finds every input finished (then None: nothing is loaded)."""
    from lsgtool import distributed
    from lsgtool.summarize.batch import all_finished, clean_stale

    _check(options)
    jobs = _jobs(options, progress)
    if options.rouge:
        from lsgtool.summarize.scoring import make_scorer

        make_scorer(options.stemmer)  # refuse now if rouge-score is missing
    outputs = _outputs(jobs, options)
    _check_outputs(outputs, options)
    if len(jobs) == 1 and not options.dataset:
        jobs = [_read_now(jobs[0])]  # an empty, binary or undecodable input is refused before the model loads
    if outputs is not None:
        outputs.check(jobs, options.resume, options.overwrite)
        outputs.folder.mkdir(parents=True, exist_ok=True)
        if distributed.is_main():  # one lock for the run, whose processes share the work
            outputs.lock()  # another run writing this --out is refused before the model loads
        for name in clean_stale(outputs.folder):
            progress.note(f"removed a temporary file of an interrupted run: {name}")
    try:
        model = find_model(options)
        if options.resume and outputs is not None and all_finished(jobs, outputs, _identity(model, options, outputs)):
            return jobs, outputs, model, None
        return jobs, outputs, model, _loaded(model, options, outputs, progress, notes)
    except BaseException:
        if outputs is not None:
            outputs.unlock()
            if options.open and options.out is None and outputs.single_name:  # the page's temporary folder
                try:
                    outputs.folder.rmdir()
                except OSError:
                    pass
        raise


def _loaded(model: Model, options: SummarizeOptions, outputs, progress: Progress, notes: list[str]):
    """(summariser, what the reader asked): the model loaded; what it cannot do as asked is noted once here, and
    in every record's notes."""
    summarizer = load_summarizer(model, options)
    summarizer.notes = [*notes, *summarizer.notes]
    for note in summarizer.notes:
        progress.note(note)
    if options.dtype == "int8":
        progress.note("--dtype int8: the encoder's linear layers multiply in int8 (torchao), the rest in float32")
    return summarizer, _ask(options, outputs, summarizer)


def _sources_asked(options: SummarizeOptions, outputs) -> bool:
    """Whether sources are asked for: --sources, else by the format (Markdown and JSON show them)."""
    fmt = outputs.fmt if outputs is not None else ("json" if options.json else options.fmt or "text")
    return options.sources if options.sources is not None else fmt in ("md", "json", "jsonl", "html")


def _ask(options: SummarizeOptions, outputs, summarizer):
    """Sources, focus and length as the pipeline takes them; sources are refused where they cannot be traced."""
    from lsgtool.summarize.pipeline import Ask

    sources = _sources_asked(options, outputs)
    if sources and summarizer.method == "abstractive":
        if options.sources:
            summarizer.require_traceable()
        sources = summarizer.untraceable() is None
        summarizer.track_offsets = sources
    focus = None
    if options.focus is not None:
        from lsgtool.summarize.focus import Relevance

        encoder = summarizer if summarizer.method == "extractive" else _encoder(options)
        focus = Relevance(encoder, options.focus.strip())
    return Ask(sources, focus, Length.parse(options.length, options.sentences))


def _encoder(options: SummarizeOptions):
    """The packaged sentence encoder that finds what is relevant to a question for abstractive summaries."""
    from lsgtool.summarize.extractive import load_extractive

    return load_extractive("minilm", device=options.device)


def _read_now(job):
    from lsgtool.summarize.inputs import Job

    document = job.read()
    return Job(job.name, job.stem, lambda: document)


def _identity(model: Model, options: SummarizeOptions, outputs) -> dict[str, Any]:
    """What a finished input's record is keyed on, beside its content (``--resume`` skips equal keys): the model's
    files (weights, configuration, generation config, tokenizer; dtype and device) and every option that changes
    the text. Known before the model loads: what the model makes of the options (its generation settings, its
    input limit, whether its sources can be traced) follows from its files."""
    return {"model": model.name, "fingerprint": model.fingerprint, "method": model.method,
            "overflow": options.overflow, "memory_limit": options.memory_limit,
            "per_chapter": options.per_chapter, "sources": _sources_asked(options, outputs), "focus": options.focus,
            "length": options.length, "sentences": options.sentences,
            "generation": {k: v for k, v in options.generation.items() if v is not None},
            "max_input_tokens": options.max_input_tokens,
            **({"transcript": options.transcript} if options.transcript is not None else {})}  # keys kept as they were


def _summarise(jobs, outputs, model: Model, loaded, options: SummarizeOptions, progress: Progress,
               notes: list[str]):
    """Every job through the batch; ``loaded``: (summariser, what the reader asked), or None when every input was
    finished as the run began (then loaded here if one is found unfinished after all)."""
    from lsgtool.profiling.memory import available_mb
    from lsgtool.summarize.batch import run as run_batch
    from lsgtool.summarize.pipeline import batch_tokens, summarize_document, summarize_documents
    from lsgtool.summarize.scoring import rouge

    limit = options.memory_limit if options.memory_limit is not None else available_mb(options.device)
    stream = options.stream and len(jobs) == 1

    def ready():
        nonlocal loaded
        if loaded is None:
            loaded = _loaded(model, options, outputs, progress, notes)
        return loaded

    def summarise(documents, chapters, encoded, padding) -> list[dict[str, Any]]:
        summarizer, ask = ready()
        if len(documents) == 1:
            results = [summarize_document(documents[0], summarizer, options.overflow, options.per_chapter, progress,
                                          stream=stream, memory_limit_mb=limit, ids=encoded[0], chapters=chapters[0],
                                          ask=ask)]
        else:
            results = summarize_documents(documents, summarizer, options.overflow, options.per_chapter, progress,
                                          limit, chapters, encoded, padding, ask)
        return [scored(document, {**result.to_dict(), "why": model.why}) for document, result in zip(documents, results)]

    def scored(document, record: dict[str, Any]) -> dict[str, Any]:
        """With --rouge, scored against the reference as this run reads it (--summary-column) and with this
        run's --stemmer: a kept summary's score under other settings is replaced, the summary is not redone."""
        if not (options.rouge and document.reference):
            return record
        if "rouge" in record and (record.get("reference"), record.get("rouge_stemmer")) == (document.reference,
                                                                                              options.stemmer):
            return record
        return {**record, "rouge": rouge(record["summary"], document.reference, options.stemmer),
                "reference": document.reference, "rouge_stemmer": options.stemmer}

    def measure(document):  # tokenised once, before generation: the length the groups are sorted by
        return batch_tokens(document, ready()[0], options.overflow, options.per_chapter)

    with progress:
        progress.inputs(len(jobs))
        return run_batch(jobs, outputs, summarise, _identity(model, options, outputs), options.resume,
                         on_start=lambda job, i, n: progress.next_input(job.name, i), keep_going=len(jobs) > 1,
                         cpu=options.device == "cpu", batch_size=options.batch_size, finish=scored,
                         measure=measure if options.batch_size > 1 and model.method == "abstractive" else None,
                         by_length=options.by_length)
