"""What to summarise: files, folders (every supported file in them), standard input, or the rows of a dataset.

Paths are checked before any model is loaded; a file is read when its turn comes, so a bad file fails only
itself in a batch.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from lsgtool.core.errors import UsageError
from lsgtool.documents import Document, read, supported
from lsgtool.documents.model import Chapter, kinds_said
from lsgtool.documents.webpage import SUFFIXES as PAGES
from lsgtool.summarize.html import written_by_lsgtool

TEXT_COLUMNS = ("document", "article", "text", "input", "source", "content")
SUMMARY_COLUMNS = ("summary", "abstract", "highlights", "target", "reference")


@dataclass
class Job:
    name: str
    stem: str
    read: Callable[[], Document]


OTHER_KINDS = 6  # the kinds of a folder's other files a note names, the commonest first


def _stem(path: Path, taken: set[str]) -> str:
    """The name results are called by: the file's name less a document suffix it has (``Apache-2.0`` stays whole)."""
    base = path.stem if supported(path) else path.name
    stem, n = base or "input", 1
    while stem in taken:  # two inputs of the same name in different folders
        n += 1
        stem = f"{base}-{n}"
    taken.add(stem)
    return stem


def files(inputs: list[str], references: Path | None = None, transcript: bool | None = None,
          note: Callable[[str], None] = lambda _: None) -> list[Job]:
    """Jobs for paths, folders and ``-``; a missing path or a folder without supported files is a usage error.
    ``references``: the folder of their reference summaries (``reference_path``); none found is a usage error.
    ``transcript``: read each text as a transcript (True) or prose (False); None: detected. A file given again
    (by name twice, or by name and in a folder given) is summarised once, and ``note`` told so."""
    jobs, taken, placed = [], set(), []  # placed: (input, its path inside the folder given, or its name)
    seen: dict[Path, str] = {}  # each file's real path: how it was first given

    def first(path: Path) -> bool:  # whether ``path`` is not a file given before
        real = path.resolve()
        if real in seen:
            again = "was given twice" if seen[real] == str(path) else f"is '{seen[real]}' given again"
            note(f"'{path}' {again}: summarised once")
            return False
        seen[real] = str(path)
        return True

    for given in inputs:
        if given == "-":
            jobs.append(Job("-", _stem(Path("stdin"), taken), functools.cache(lambda: read("-", transcript))))  # read once
            continue
        path = Path(given).expanduser()
        if path.is_dir():
            every = [p for p in path.rglob("*") if p.is_file()]  # the folder walked once
            found = sorted(p for p in every if supported(p)
                           and not p.name.startswith((".", "~$"))  # hidden, or an Office lock file ("~$report.docx")
                           and not (p.suffix.lower() in PAGES and written_by_lsgtool(p)))  # pages we wrote
            if not found:
                raise UsageError(f"folder '{path}' holds no {kinds_said()} file.",
                                 "pass files, or a folder with some in it.")
            others = Counter(p.suffix.lower() or "no suffix" for p in every
                             if not supported(p) and p.suffix.lower() != ".ref"  # reference summaries
                             and not any(part.startswith((".", "~$")) for part in p.relative_to(path).parts))
            if others:
                kinds = [f"{kind} {n}" for kind, n in others.most_common(OTHER_KINDS)]
                more = f", {len(others) - OTHER_KINDS} more kinds" if len(others) > OTHER_KINDS else ""
                note(f"'{path}': {sum(others.values())} file(s) of other kinds not read ({', '.join(kinds)}{more}; "
                     f"read: {kinds_said()})")
            found = [p for p in found if first(p)]
            placed += [(str(p), p.relative_to(path)) for p in found]
            jobs += [_job(p, p.relative_to(path), _stem(p, taken), references, transcript) for p in found]
        elif path.is_file():
            if not first(path):
                continue
            placed.append((str(path), Path(path.name)))
            jobs.append(_job(path, Path(path.name), _stem(path, taken), references, transcript))
        else:
            if re.match(r"(?i)(?:https?|ftp)://", str(given)):
                raise UsageError(f"'{given}' is a web address: lsgtool reads files, offline.",
                                 "save the page first, e.g. `curl -L -o page.html URL`, and pass page.html.")
            raise UsageError(f"no such file or folder: '{given}'.", "check the path; `-` reads standard input.")
    wanted = [reference_path(references, inside) for _, inside in placed] if references is not None else []
    if wanted and not any(where.is_file() for where in wanted):
        raise UsageError(f"--references {references} holds a reference for none of the inputs (looked for "
                         f"{wanted[0]}{', ...' if len(wanted) > 1 else ''}).",
                         "name each reference after its input with the suffix .ref: report.md -> report.ref.")
    return jobs


def reference_path(references: Path, inside: Path) -> Path:
    """Where the reference summary of input ``inside`` (its path inside the folder given, or its name) is: the same
    path under ``references`` with the suffix ``.ref`` in place of a document suffix (``notes/a.md`` ->
    ``notes/a.ref``; ``Apache-2.0`` -> ``Apache-2.0.ref``)."""
    base = inside.stem if supported(inside) else inside.name
    return references / inside.parent / f"{base}.ref"


def _job(path: Path, inside: Path, stem: str, references: Path | None, transcript: bool | None = None) -> Job:
    """The job of one input file; with ``references``, its document carries its reference summary, or a note
    that it has none (it is summarised, not scored)."""
    if references is None:
        return Job(str(path), stem, lambda: read(path, transcript))
    where = reference_path(references, inside)

    def with_reference() -> Document:
        document = read(path, transcript)
        if where.is_file():
            text = where.read_text(encoding="utf-8", errors="replace").strip()
            document.reference = text or None
        if not document.reference:
            document.notes.append(f"no reference summary at {where} (--references): this summary is not scored")
        return document

    return Job(str(path), stem, with_reference)


def _column(names: list[str], wanted: str | None, defaults: tuple[str, ...], what: str, flag: str) -> str | None:
    if wanted is not None:
        if wanted not in names:
            raise UsageError(f"the dataset has no column {wanted!r}.", f"columns: {', '.join(names)}; pick one with {flag}.")
        return wanted
    found = next((c for c in defaults if c in names), None)
    if found is None and what == "text":
        raise UsageError("no text column found in the dataset.", f"columns: {', '.join(names)}; pick one with {flag}.")
    return found


def load_rows(name: str, split: str):
    """A ``datasets`` split: a saved dataset folder, a local json/jsonl/csv/parquet file, or a Hub name."""
    try:
        import datasets
    except ImportError:
        raise UsageError("--dataset needs the datasets package.", "pip install 'lsgtool[data]' (or datasets).") from None
    path = Path(name).expanduser()
    formats = {".json": "json", ".jsonl": "json", ".csv": "csv", ".parquet": "parquet"}
    try:
        if path.is_dir() and ((path / "dataset_info.json").exists() or (path / "dataset_dict.json").exists()):
            loaded = datasets.load_from_disk(str(path))
            return loaded[split] if isinstance(loaded, datasets.DatasetDict) else loaded
        if path.is_file():
            if path.suffix.lower() not in formats:
                raise UsageError(f"'{path}' is not a json, jsonl, csv or parquet file.", "pass one of those, or a Hub name.")
            return datasets.load_dataset(formats[path.suffix.lower()], data_files={split: str(path)}, split=split)
        if name.startswith((".", "/", "~")) or path.suffix.lower() in formats:  # a path, not a Hub name
            raise UsageError(f"--dataset {name}: no such file or folder.", "check the path.")
        return datasets.load_dataset(name, split=split)
    except UsageError:
        raise
    except KeyError:
        raise UsageError(f"dataset '{name}' has no split {split!r}.", "pass an existing split with --split.") from None
    except Exception as exc:  # datasets raises many types: not found, offline, bad files
        raise UsageError(f"cannot load dataset '{name}' (split {split!r}): {type(exc).__name__}: {exc}".splitlines()[0],
                         "pass a local json/jsonl/csv/parquet file, a saved dataset folder, or a Hub name "
                         "(online, or cached).") from None


def dataset(name: str, split: str, text_column: str | None, summary_column: str | None, limit: int | None,
            transcript: bool | None = None) -> list[Job]:
    """A job per row; the row's summary column becomes the document's reference (``transcript``: as in
    ``files``)."""
    rows = load_rows(name, split)
    text = _column(rows.column_names, text_column, TEXT_COLUMNS, "text", "--text-column")
    summary = _column(rows.column_names, summary_column, SUMMARY_COLUMNS, "summary", "--summary-column")
    count = len(rows) if limit is None else min(limit, len(rows))
    if count == 0:
        raise UsageError(f"dataset '{name}' (split {split!r}) has no rows.", "pass a dataset with rows in it.")
    label = Path(name).name or name

    def row(i: int) -> Document:
        item = rows[i]
        value = item[text]
        if not isinstance(value, str) or not value.strip():
            from lsgtool.documents import DocumentError

            raise DocumentError(f"row {i} of '{name}' has no text in column {text!r}.", "check the dataset.")
        reference = item[summary] if summary else None
        digest = hashlib.sha256(value.encode("utf-8")).hexdigest()
        return Document(f"{label}[{i}]", "dataset", [Chapter(None, value.strip())], digest,
                        reference=reference if isinstance(reference, str) else None, transcript=transcript)

    return [Job(f"{label}[{i}]", f"{Path(label).stem}-{i:06d}", lambda i=i: row(i)) for i in range(count)]
