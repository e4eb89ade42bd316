"""Many inputs: one output per input written atomically, a record per finished input to resume from, failures
kept to their input, and the work shared between processes under ``accelerate launch``.

Next to the outputs, ``.lsgtool-summaries/records/<output>.<key>.json`` holds each finished input's full result;
the key hashes the input's content, the model and every setting that changes the summary, so ``--resume``
skips exactly the work that would come out the same. An output file is only ever replaced if a record says lsgtool
wrote it, and, unless ``--overwrite`` says so, only by a summary of the input it holds. Files are written to a
temporary name (with the writer's pid) and renamed; the temporary files of a killed run are removed by the next one.
One run at a time writes an output (``.lsgtool-summaries/lock``, or ``<file>.lock`` for a single output file).
"""

from __future__ import annotations

import glob
import hashlib
import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from lsgtool.core.errors import Interrupted, LsgtoolError, UsageError
from lsgtool.core.writing import clean_stale_files, release_lock, short_name, take_lock, uninterrupted, write_file
from lsgtool.summarize.grouping import POOL_CHARACTERS, POOL_GROUPS, Item, Padding, groups, input_order
from lsgtool.summarize.inputs import Job
from lsgtool.summarize.render import SUFFIX, render

STATE = ".lsgtool-summaries"
JSONL = "summaries.jsonl"
INDEX = "index.html"  # a folder's HTML pages listed


@dataclass
class Outcome:
    records: list[dict[str, Any]] = field(default_factory=list)
    failures: list[tuple[str, str]] = field(default_factory=list)
    skipped: int = 0
    files: list[str] = field(default_factory=list)
    main: bool = True  # the process that reports (the only one outside a distributed launch)
    padding: Padding = field(default_factory=Padding)


def clean_stale(folder: Path) -> list[str]:
    """Remove temporary files of lsgtool runs that died, beside the outputs and in the records."""
    return clean_stale_files(folder) + clean_stale_files(folder / STATE, recursive=True)


def key(digest: str, identity: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps({"digest": digest, **identity}, sort_keys=True, default=str).encode()).hexdigest()[:24]


def all_finished(jobs: list[Job], outputs: Outputs, identity: dict[str, Any]) -> bool:
    """Whether every job has a finished record under ``identity`` (``--resume`` then needs no model). Looked for
    from the last job, the first an interrupted run left undone; an input that cannot be read is the run's to
    report."""
    for job in reversed(jobs):
        try:
            if outputs.finished(job, key(job.read().digest, identity)) is None:
                return False
        except FAILURES:
            return False
    return True


class Chapters:
    """The chapter summaries of one unfinished input, kept as they finish (``--per-chapter``) so that ``--resume``
    after an interruption goes on from the first unfinished chapter: ``.lsgtool-summaries/chapters/<stem>.<key>/``,
    one JSON file per chapter, removed once the input's record is written."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.kept = 0  # chapters taken from an interrupted run
        self.written = 0  # chapters finished in this run

    def get(self, index: int) -> dict[str, Any] | None:
        try:
            found = json.loads((self.folder / f"{index:05d}.json").read_text())
        except (OSError, ValueError):
            return None
        self.kept += 1
        return found

    def put(self, index: int, summary: dict[str, Any]) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        write_file(self.folder / f"{index:05d}.json", json.dumps(summary, ensure_ascii=False))
        self.written += 1

    def count(self) -> int:
        return len(list(self.folder.glob("*.json"))) if self.folder.is_dir() else 0

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


class Outputs:
    """Where results go: one file per input (``<stem>.summary<suffix>``) or one ``summaries.jsonl``."""

    def __init__(self, folder: Path, fmt: str, single_name: str | None = None):
        self.folder, self.fmt, self.single_name = folder, fmt, single_name
        self.records = folder / STATE / "records"

    def name(self, job: Job) -> str:
        if self.single_name:
            return self.single_name
        return JSONL if self.fmt == "jsonl" else f"{job.stem}.summary{SUFFIX[self.fmt]}"

    @property
    def given(self) -> Path:
        """The ``--out`` this was made from: the output file, or the folder."""
        return self.folder / self.single_name if self.single_name else self.folder

    def _records(self, pattern: str = "*.json"):
        """(file, record) of the records (matching ``pattern``) that can be read."""
        for file in self.records.glob(pattern) if self.records.is_dir() else []:
            try:
                record = json.loads(file.read_text())
            except (OSError, ValueError):
                continue
            if isinstance(record, dict) and "output" in record:
                yield file, record

    def owners(self) -> dict[str, list[dict[str, Any]]]:
        """Each output file a record says lsgtool wrote, with those records."""
        found: dict[str, list[dict[str, Any]]] = {}
        for _, record in self._records():
            found.setdefault(record["output"], []).append(record)
        return found

    def ours(self) -> set[str]:
        """Output files a record says lsgtool wrote."""
        return set(self.owners())

    def check(self, jobs: list[Job], resume: bool, overwrite: bool) -> None:
        """Before any work: outputs that exist are refused unless lsgtool wrote them and --resume/--overwrite says so;
        an output holding another input's summary only with --overwrite."""
        writers: dict[str, list[Job]] = {}
        for job in jobs:
            writers.setdefault(self.name(job), []).append(job)
        self._check_index()
        existing = sorted(name for name in writers if _exists(self.folder / name))
        if not existing:
            return
        owners = self.owners()
        foreign = [name for name in existing if name not in owners]
        if foreign:
            raise UsageError(("--out " if self.single_name else "")
                             + f"'{self.folder / foreign[0]}' exists and was not written by lsgtool"
                             + (f" ({len(foreign) - 1} more)" if len(foreign) > 1 else "") + ": it is left alone.",
                             "choose another --out.")
        if not overwrite:
            self._check_belonging({name: writers[name][0] for name in existing if len(writers[name]) == 1}, owners)
        if not (resume or overwrite):
            raise UsageError(f"{len(existing)} output(s) in '{self.folder}' exist from an earlier run "
                             f"(e.g. {existing[0]}).", "pass --resume to skip finished inputs, or --overwrite to redo them.")

    def _check_index(self) -> None:
        """A folder of HTML pages gets an index.html: one lsgtool did not write is left alone."""
        from lsgtool.summarize.html import written_by_lsgtool

        path = self.folder / INDEX
        if self.fmt == "html" and not self.single_name and _exists(path) and not written_by_lsgtool(path):
            raise UsageError(f"'{path}' exists and was not written by lsgtool: it is left alone (a folder of HTML "
                             "pages gets an index.html listing them).", "choose another --out.")

    def _check_belonging(self, writers: dict[str, Job], owners: dict[str, list[dict[str, Any]]]) -> None:
        """Refuse to replace an output that holds the summary of an input other than the one now written to it."""
        others = [(name, job, owners[name][0]) for name, job in writers.items()
                  if not any(_belongs(record, job) for record in owners[name])]
        if not others:
            return
        name, job, owner = others[0]
        where = "" if self.single_name else f": '{self.folder / name}'"
        raise UsageError(f"--out {self.given}{where} holds lsgtool's summary of '{owner.get('input')}', not of "
                         f"'{job.name}'" + (f" ({len(others) - 1} more like it)" if len(others) > 1 else "")
                         + ": it is left alone.", "choose a different --out, or pass --overwrite to replace it.")

    def lock(self) -> None:
        """Hold this output for this run (another run writing it is refused; UsageError); ``unlock`` ends it."""
        (self.folder / STATE).mkdir(parents=True, exist_ok=True)
        take_lock(self._lock_path(), "--out", self.given)

    def unlock(self) -> None:
        release_lock(self._lock_path())
        try:
            (self.folder / STATE).rmdir()  # made for the lock: a run refused before it wrote anything leaves nothing
        except OSError:
            pass  # it holds records (or another run's lock)

    def _lock_path(self) -> Path:
        return self.folder / STATE / (f"{short_name(self.single_name)}.lock" if self.single_name else "lock")

    def record_path(self, job: Job, record_key: str) -> Path:
        return self.records / f"{short_name(job.stem)}.{record_key}.json"

    def chapters(self, job: Job, record_key: str) -> Chapters:
        return Chapters(self.folder / STATE / "chapters" / f"{short_name(job.stem)}.{record_key}")

    def finished(self, job: Job, record_key: str) -> dict[str, Any] | None:
        path = self.record_path(job, record_key)
        try:
            record = json.loads(path.read_text()) if path.is_file() else None
        except (OSError, ValueError):
            return None
        return None if record is None or record.get("pending") else record

    def save(self, job: Job, record_key: str, record: dict[str, Any], document) -> str:
        """Record, then publish: the record is written as pending before the output file, so a run killed
        between the two leaves a file the next run knows lsgtool wrote (and redoes: a pending record is not
        a finished one). Ctrl-C waits for the three writes (``uninterrupted``): an output is never left with a
        pending record by an interruption. The records of what the file held before are dropped. ``document``:
        the Document summarised (an HTML page shows it). A file that
        cannot be written raises LsgtoolError (that input's failure)."""
        name = self.name(job)
        record = {**record, "output": name, "key": record_key, **_source(job)}
        path = self.record_path(job, record_key)
        try:
            self.records.mkdir(parents=True, exist_ok=True)
            with uninterrupted():
                if self.fmt != "jsonl":
                    write_file(path, json.dumps({**record, "pending": True}, ensure_ascii=False))
                    write_file(self.folder / name, render(record, self.fmt, document))
                    self._forget(job, name, path)
                write_file(path, json.dumps(record, ensure_ascii=False))
        except OSError as exc:
            raise LsgtoolError(f"cannot write '{self.folder / name}': {exc.strerror or exc}.",
                               "make room for it (a shorter input name, disk space, permissions) or choose another "
                               "--out, then run again.") from None
        self.chapters(job, record_key).remove()
        return name

    def _forget(self, job: Job, name: str, keep: Path) -> None:
        """Drop the records of other inputs or settings that held the file ``name``, now replaced."""
        pattern = "*.json" if self.single_name else f"{glob.escape(short_name(job.stem))}.*.json"
        for file, record in self._records(pattern):
            if file != keep and record["output"] == name:
                file.unlink(missing_ok=True)

    def write_index(self) -> str:
        """The folder's HTML pages listed in ``index.html`` (each input's title, words, route, first sentence): every
        page a finished record says lsgtool wrote here, this run's and earlier runs'."""
        from lsgtool.summarize.html import index

        pages: dict[str, tuple[float, dict[str, Any]]] = {}
        for file, record in self._records():
            name = record["output"]
            if record.get("pending") or not name.endswith(SUFFIX["html"]) or not _exists(self.folder / name):
                continue
            written = file.stat().st_mtime
            if name not in pages or pages[name][0] < written:
                pages[name] = (written, record)
        write_file(self.folder / INDEX, index([record for _, record in sorted(pages.values(),
                                                                              key=lambda p: p[1]["output"])]))
        return INDEX

    def write_jsonl(self, records: list[dict[str, Any]]) -> str:
        name = self.single_name or JSONL  # --out FILE.jsonl is that file, never a summaries.jsonl beside it
        write_file(self.folder / name, "".join(render(r, "jsonl") for r in records))
        return name


def _exists(path: Path) -> bool:
    """Whether ``path`` exists; a name the file system cannot hold (too long) does not."""
    try:
        return path.exists()
    except OSError:
        return False


def _source(job: Job) -> dict[str, str]:
    """Where a file input is, whatever name it was given by: a record belongs to it."""
    path = Path(job.name)
    return {"input_path": str(path.resolve())} if job.name != "-" and path.is_file() else {}


def _belongs(record: dict[str, Any], job: Job) -> bool:
    where = _source(job).get("input_path")
    if where and record.get("input_path"):
        return record["input_path"] == where
    return record.get("input") == job.name


def _shard(jobs: list[Job], cpu: bool):
    """(this process's jobs, the accelerate state or None): contiguous shares under ``accelerate launch`` (or
    torchrun); ``cpu``: processes on CPUs talk through gloo, as accelerate's MULTI_CPU mode."""
    from lsgtool import distributed

    state = distributed.start(cpu)
    if state is None:
        return jobs, None
    with state.split_between_processes(list(range(len(jobs)))) as mine:
        return [jobs[i] for i in mine], state


FAILURES = (Exception,)  # one input's failure, whatever it is, is that input's: the batch goes on


def _message(exc: BaseException) -> str:
    message = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}".splitlines()[0]
    if isinstance(exc, MemoryError) or "out of memory" in str(exc).lower():
        message = f"out of memory: {message}"
    return message


def run(jobs: list[Job], outputs: Outputs | None, summarize: Callable, identity: dict[str, Any], resume: bool,
        on_start: Callable[[Job, int, int], None] = lambda job, i, n: None, keep_going: bool = True,
        cpu: bool = True, batch_size: int = 1,
        finish: Callable[[Any, dict[str, Any]], dict[str, Any]] = lambda document, record: record,
        measure: Callable[[Any], tuple[list[int] | None, bool]] | None = None, by_length: bool = True) -> Outcome:
    """Summarise every job (this process's share), ``batch_size`` documents at a time.

    ``summarize(documents, chapters, encoded, padding) -> [record dict, ...]`` (``chapters``: each document's
    ``Chapters`` store, or None without outputs; ``encoded``: each document's tokens from ``measure`` or None;
    ``padding``: the ``Padding`` that batches generated together are counted in); ``finish(document, record)``
    completes a record skipped by ``--resume`` with what this run asks beside the text (scores).

    ``measure(document) -> (tokens or None, generated with others?)``, given with ``by_length``: inputs are read
    ahead in pools (``POOL_GROUPS`` groups, at most ``POOL_CHARACTERS`` of text: the texts of a large folder are
    never all held) and each pool's inputs that one padded pass takes are grouped by their token count, so the
    documents generated together have similar lengths; the others go one at a time. Outputs, records and the
    report keep the input order."""
    from lsgtool import distributed

    mine, state = _shard(jobs, cpu)
    by_length = by_length and measure is not None and batch_size > 1
    pool_size = batch_size * POOL_GROUPS if by_length else batch_size

    def share() -> Outcome:
        """This process's share, summarised."""
        outcome = Outcome()
        begun = iter(range(len(mine)))  # inputs begun, for on_start: in the order they are summarised
        group: list[Item] = []
        try:
            index = 0
            while index < len(mine):
                pool, characters = [], 0
                while index < len(mine) and len(pool) < pool_size and characters < POOL_CHARACTERS:
                    item = _take(mine[index], outputs, identity, resume, finish, measure, outcome, keep_going)
                    if item is None:  # skipped by --resume, or failed to read
                        on_start(mine[index], next(begun), len(mine))
                    else:
                        pool.append(item)
                        characters += len(item.document.text)
                    index += 1
                outcome.padding.add_input_order(input_order(pool, batch_size))
                for group in groups(pool, batch_size, by_length):
                    for item in group:
                        on_start(item.job, next(begun), len(mine))
                    _summarise(group, outputs, summarize, state, outcome, keep_going)
                group = []
        except KeyboardInterrupt:
            raise _interrupted(outcome, jobs, outputs, group) from None
        return outcome

    outcome = distributed.together(share)  # what stops one process's share (one input alone) stops every process
    if state is not None:
        outcome = _gather(outcome, state, outputs, jobs)
    order = {job.name: i for i, job in enumerate(jobs)}  # summarised in length order, reported in input order
    outcome.records.sort(key=lambda r: order.get(r["input"], 0))
    outcome.failures.sort(key=lambda f: order.get(f[0], 0))
    if outputs is not None and outputs.fmt == "jsonl" and outcome.records:
        written = distributed.together(lambda: outputs.write_jsonl(outcome.records) if outcome.main else None)
        outcome.files += [written] if written else []
    if outputs is not None and outputs.fmt == "html" and not outputs.single_name and outcome.records:
        written = distributed.together(lambda: outputs.write_index() if outcome.main else None)
        outcome.files += [written] if written else []
    return outcome


def _take(job: Job, outputs: Outputs | None, identity: dict[str, Any], resume: bool, finish: Callable,
          measure: Callable | None, outcome: Outcome, keep_going: bool) -> Item | None:
    """The job read and keyed: an Item to summarise (measured), or None when ``--resume`` keeps its finished
    record (``_kept``) or it fails (both in ``outcome``)."""
    try:
        document = job.read()
        record_key = key(document.digest, identity)
        done = outputs.finished(job, record_key) if (outputs and resume) else None
        if done is None:
            ids, together = measure(document) if measure is not None else (None, False)
            return Item(job, document, record_key, ids, together)
        outcome.records.append(_kept(job, document, record_key, done, outputs, finish))
        outcome.skipped += 1
    except FAILURES as exc:
        if not keep_going:
            raise
        outcome.failures.append((job.name, _message(exc)))
    return None


def _kept(job: Job, document, record_key: str, done: dict[str, Any], outputs: Outputs, finish: Callable) -> dict:
    """A finished record as this run shows it: with what it asks beside the text (scores, ``finish``), its output
    written again when that changed or the output is gone."""
    finished = finish(document, done)
    if finished != done or done["output"] != outputs.name(job) or not (outputs.folder / done["output"]).exists():
        finished["output"] = outputs.save(job, record_key, finished, document)
    return finished


def _interrupted(outcome: Outcome, jobs: list[Job], outputs: Outputs | None, pending: list[Item]) -> Interrupted:
    """What an interruption kept, and what the next run redoes."""
    if outputs is None:
        return Interrupted("interrupted: nothing was written.", "pass --out FILE_OR_FOLDER to keep finished work "
                           "(chapters with --per-chapter) for --resume.")
    unfinished = []
    for item in pending:
        job, record_key = item.job, item.key
        if outputs.finished(job, record_key) is not None:
            continue
        kept = outputs.chapters(job, record_key).count()
        unfinished.append(f"{job.name}: {kept} chapter summaries kept, --resume goes on from chapter {kept + 1}"
                          if kept else f"{job.name}: not finished, --resume summarises it again from the start")
    return Interrupted(f"interrupted ({len(outcome.records)} of {len(jobs)} inputs written"
                       + (f"; {'; '.join(unfinished)}" if unfinished else "") + ").",
                       "run the same command with --resume to go on from there.")


def _summarise(pending: list[Item], outputs, summarize, state, outcome: Outcome, keep_going: bool) -> None:
    """Summarise the pending items together; a failing group is retried one by one."""
    if not pending:
        return
    stores = [outputs.chapters(item.job, item.key) if outputs is not None else None for item in pending]
    try:
        records = summarize([item.document for item in pending], stores, [item.ids for item in pending],
                            outcome.padding)
    except FAILURES as exc:
        if len(pending) > 1:
            for one in pending:
                _summarise([one], outputs, summarize, state, outcome, keep_going)
            return
        if not keep_going:
            raise
        outcome.failures.append((pending[0].job.name, _message(exc)))
        return
    for item, record in zip(pending, records):
        job, record_key = item.job, item.key
        if state is not None:
            record["process"] = state.process_index
        if outputs is not None:
            try:
                record = {**record, "output": outputs.save(job, record_key, record, item.document), "key": record_key,
                          **_source(job)}
            except FAILURES as exc:
                if not keep_going:
                    raise
                outcome.failures.append((job.name, _message(exc)))
                continue
        outcome.records.append(record)


def _gather(outcome: Outcome, state, outputs: Outputs | None, jobs: list[Job]) -> Outcome:
    """Every process's records and failures, on every process (through accelerate's object gathering)."""
    from accelerate.utils import gather_object

    records = gather_object(outcome.records)
    failures = gather_object(outcome.failures)
    skipped = sum(gather_object([outcome.skipped]))
    padding = gather_object([outcome.padding])
    state.wait_for_everyone()
    return Outcome(records, [tuple(f) for f in failures], skipped, main=state.is_main_process,
                   padding=padding[0].merged(padding[1:]))
