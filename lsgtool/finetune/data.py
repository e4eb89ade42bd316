"""Training data for ``lsgtool finetune``, through ``datasets``: a Hub name (online), local json/jsonl/csv/
parquet/txt files (or a folder of them), or a folder written by ``save_to_disk``; column checks that name the
flag; tokenisation with the truncated examples counted, never dropped silently.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsgtool.core.errors import UsageError

BUILDERS = {".json": "json", ".jsonl": "json", ".csv": "csv", ".parquet": "parquet", ".txt": "text"}
FLAGS = {"text": "--text-column", "label": "--label-column", "summary": "--summary-column"}


def _datasets():
    try:
        import datasets
    except ImportError:
        raise UsageError("training data is read with datasets, which is not installed.",
                         "pip install 'lsgtool[data]' (or datasets).") from None
    return datasets


def _builder(files: list[Path], name: str) -> str:
    kinds = {BUILDERS.get(f.suffix.lower()) for f in files}
    if None in kinds or len(kinds) != 1:
        suffixes = ", ".join(sorted({f.suffix or f.name for f in files}))
        raise UsageError(f"--data {name}: cannot read {suffixes} as one dataset.",
                         f"pass files of one kind: {', '.join(BUILDERS)} (or a folder written by save_to_disk).")
    return kinds.pop()


def load(name: str, cache_dir: str | None = None):
    """A ``DatasetDict`` from whatever ``--data`` names (a single split comes back as ``train``)."""
    datasets = _datasets()
    path = Path(name).expanduser()
    if path.is_dir() and ((path / "dataset_dict.json").exists() or (path / "state.json").exists()):
        loaded = datasets.load_from_disk(str(path))
    elif path.exists():
        files = sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith(".")) if path.is_dir() else [path]
        if not files:
            raise UsageError(f"--data {name} is an empty folder.", "pass data files or a folder written by save_to_disk.")
        builder = _builder(files, name)
        if not any(f.stat().st_size for f in files):
            raise UsageError(f"--data {name} holds no examples (empty).", "pass a dataset with at least one row.")
        try:
            loaded = datasets.load_dataset(builder, data_files=[str(f) for f in files], cache_dir=cache_dir)
        except Exception as exc:  # malformed rows: datasets raises its own errors, arrow's, even StopIteration
            raise UsageError(f"--data {name} cannot be read as {builder}: {type(exc).__name__}: "
                             f"{str(exc).splitlines()[0][:200] if str(exc) else 'no rows'}",
                             f"check the file's format ({', '.join(BUILDERS)}).") from None
    elif name.startswith((".", "/", "~")) or path.suffix.lower() in BUILDERS:
        raise UsageError(f"--data {name}: no such file or folder.", "check the path.")
    else:
        try:
            loaded = datasets.load_dataset(name, cache_dir=cache_dir)
        except Exception as exc:  # offline, unknown name, gated: datasets raises several kinds
            raise UsageError(f"--data {name}: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}",
                             "pass a local file or folder, or a Hub dataset name while online.") from None
    if isinstance(loaded, datasets.Dataset):
        loaded = datasets.DatasetDict({"train": loaded})
    if not any(len(split) for split in loaded.values()):
        raise UsageError(f"--data {name} holds no examples.", "pass a dataset with at least one row.")
    return loaded


def check_columns(data, columns: dict[str, str]) -> None:
    """Each role's column (``{"text": "document"}``) must exist in every split; the error names the flag."""
    for split, table in data.items():
        for role, column in columns.items():
            if column not in table.column_names:
                raise UsageError(f"{FLAGS.get(role, role)} {column!r}: the {split} split has no such column.",
                                 f"its columns: {', '.join(table.column_names)}.")


def label_names(data, column: str, multilabel: bool = False) -> list[str]:
    """The label names of a classification column: class names of a ClassLabel, the sorted distinct strings, or
    the integers as strings; a float or mixed column is a usage error naming the flag."""
    feature = data["train"].features[column]
    names = getattr(feature, "names", None) or getattr(getattr(feature, "feature", None), "names", None)
    if names:
        return list(names)
    values = [v for split in data.values() for v in split[column]]
    flat = [x for v in values for x in (v if isinstance(v, list) else [v])] if multilabel else values
    if multilabel and not all(isinstance(v, list) for v in values):
        raise UsageError(f"--label-column {column!r} must hold a list of labels per example for multilabel.",
                         "e.g. [\"law\", \"tax\"] or [0, 3].")
    kinds = {type(v) for v in flat}
    if kinds <= {int} or kinds <= {str}:
        return [str(v) for v in sorted(set(flat))]
    raise UsageError(f"--label-column {column!r} holds {', '.join(sorted(k.__name__ for k in kinds))} values: "
                     "classification labels are integers or strings.",
                     "for a regression target, this task is not the one; pick or convert the label column.")


@dataclass
class Tokenized:
    data: Any
    truncated: int
    examples: int
    longest: int


def tokenize(data, tokenizer, column: str, max_length: int, target: str | None = None, target_length: int = 256,
             num_proc: int | None = None) -> Tokenized:
    """Tokenise ``column`` (and ``target`` as labels) to at most ``max_length`` (``target_length``) tokens, adding
    a ``length`` column for length grouping; counts the examples whose input or target was cut."""

    def encode(batch):
        inputs = tokenizer(batch[column], truncation=False, verbose=False)
        out: dict[str, list] = {"input_ids": [], "attention_mask": [], "length": [], "truncated": []}
        labels = tokenizer(text_target=batch[target], truncation=False, verbose=False)["input_ids"] if target else None
        for i, ids in enumerate(inputs["input_ids"]):
            cut = len(ids) > max_length
            ids = ids[:max_length]
            out["input_ids"].append(ids)
            out["attention_mask"].append([1] * len(ids))
            out["length"].append(len(ids))
            if labels is not None:
                cut = cut or len(labels[i]) > target_length
                out.setdefault("labels", []).append(labels[i][:target_length])
            out["truncated"].append(cut)
        return out

    mapped = data.map(encode, batched=True, num_proc=num_proc, desc="tokenising")
    truncated = sum(sum(split["truncated"]) for split in mapped.values())
    examples = sum(len(split) for split in mapped.values())
    longest = max((max(split["length"]) for split in mapped.values() if len(split)), default=0)
    return Tokenized(mapped.remove_columns("truncated"), truncated, examples, longest)
