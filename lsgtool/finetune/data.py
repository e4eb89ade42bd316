"""Training data for ``lsgtool finetune``, through ``datasets``: a Hub name (online), local json/jsonl/csv/
parquet/txt files (or a folder of them), or a folder written by ``save_to_disk``; column checks that name the
flag; label names; GSG pairs; tokenisation with the truncated examples counted, never dropped silently; the
evaluation split.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsgtool.core.errors import UsageError
from lsgtool.finetune.config import CLASSIFIERS, DataSettings, Settings

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
        files = local_files(path)
        if not files:
            raise UsageError(f"--data {name} is an empty folder.", "pass data files or a folder written by save_to_disk.")
        builder = _builder(files, name)
        if not any(f.stat().st_size for f in files):
            raise UsageError(f"--data {name} holds no examples (empty).", "pass a dataset with at least one row.")
        try:
            for file in files:  # a file that cannot be opened is not a format problem
                with open(file, "rb"):
                    pass
            loaded = datasets.load_dataset(builder, data_files=[str(f) for f in files], cache_dir=cache_dir)
        except Exception as exc:  # malformed rows: datasets raises its own errors, arrow's, even StopIteration
            denied = _permission_error(exc)
            if denied is not None:
                raise UsageError(f"--data {name}: permission denied reading {denied.filename or name}.",
                                 "make the file readable for this user (chmod a+r FILE), or copy it somewhere you "
                                 "can read.") from None
            raise UsageError(f"--data {name} cannot be read as {builder}: {type(exc).__name__}: "
                             f"{str(exc).splitlines()[0][:200] if str(exc) else 'no rows'}",
                             f"check the file's format ({', '.join(BUILDERS)}).") from None
    elif name.startswith((".", "/", "~")) or path.suffix.lower() in BUILDERS:
        raise UsageError(f"--data {name}: no such file or folder.", "check the path.")
    else:
        _check_hub(name)
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


def local_files(path: Path) -> list[Path]:
    """The files local data ``path`` (a file or a folder) is read from, in reading order; hidden ones are not."""
    if not path.is_dir():
        return [path]
    return sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith("."))


def _permission_error(exc: BaseException | None) -> PermissionError | None:
    """The PermissionError behind ``exc`` (datasets wraps what it meets while reading), if there is one."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, PermissionError):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


def _check_hub(name: str) -> None:
    """One quick probe of the Hub before datasets looks a name up there (its retries take ~30 s without
    network), the probe the model loader makes; offline, datasets answers from its cache at once."""
    import huggingface_hub.constants as hub

    from lsgtool.core.load.source import hub_unreachable

    if hub.HF_HUB_OFFLINE:
        return
    reason = hub_unreachable()
    if reason:
        raise UsageError(f"--data {name}: no such local file or folder, and the Hub cannot be reached to look it up "
                         f"({reason}).", "pass a local file or folder, or a Hub dataset name while online.")


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
    names = list(names) if names else _distinct(data, column, multilabel)
    if len(names) < 2 and not multilabel:
        found = ", ".join(repr(n) for n in names) or "none"
        raise UsageError(f"--label-column {column!r} holds {len(names)} class{'es' if len(names) != 1 else ''} "
                         f"({found}): classification needs at least two.",
                         "check the column (or the --data file) holds examples of every class; one class would "
                         "train a regression that predicts a constant.")
    return names


def _distinct(data, column: str, multilabel: bool) -> list[str]:
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
            ids = _cut(tokenizer, ids, max_length)
            out["input_ids"].append(ids)
            out["attention_mask"].append([1] * len(ids))
            out["length"].append(len(ids))
            if labels is not None:
                cut = cut or len(labels[i]) > target_length
                out.setdefault("labels", []).append(_cut(tokenizer, labels[i], target_length))
            out["truncated"].append(cut)
        return out

    mapped = data.map(encode, batched=True, num_proc=num_proc, desc="tokenising")
    truncated = sum(sum(split["truncated"]) for split in mapped.values())
    examples = sum(len(split) for split in mapped.values())
    longest = max((max(split["length"]) for split in mapped.values() if len(split)), default=0)
    return Tokenized(mapped.remove_columns("truncated"), truncated, examples, longest)


def _cut(tokenizer, ids: list[int], length: int) -> list[int]:
    """``ids`` in at most ``length`` tokens, as the tokenizer's own truncation cuts them: the text shortened, the
    special tokens around it (``[CLS]`` ... ``[SEP]``, ``</s>``) kept, so a cut target still ends with EOS."""
    from lsgtool.core.tokens import truncate_ids

    if len(ids) <= length:
        return ids
    specials = len(truncate_ids(tokenizer, ids, 0))
    return truncate_ids(tokenizer, ids, length - specials)[:length]


def read(d: DataSettings, task: str, limit: int = 0):
    """The examples of a run, their columns checked for ``task``, at most ``limit`` per split (0: all), and the
    label names (None when the task has none)."""
    raw = load(d.name)
    columns = {"text": d.text_column}
    if task in CLASSIFIERS or task == "token-classification":
        columns["label"] = d.label_column
    if task == "seq2seq":
        columns["summary"] = d.summary_column
    check_columns(raw, columns)
    if limit:
        raw = type(raw)({k: v.select(range(min(len(v), limit))) for k, v in raw.items()})
    labels = None
    if task in CLASSIFIERS or task == "token-classification":
        labels = label_names(raw, d.label_column, multilabel=task != "classification")
    return raw, labels


def gsg_pairs(raw, settings: Settings, tokenizer):
    """The GSG pairs of every split (cached by datasets' fingerprints), documents without a pair dropped and
    counted."""
    from lsgtool.finetune.gsg import GSGOptions, map_function, parse_ratio, sentinel_for, sentinel_sequence, shown

    g = settings.gsg
    sentinel, what = sentinel_for(tokenizer)
    sentinels = sentinel_sequence(tokenizer, sentinel)
    options = GSGOptions(g.strategy, parse_ratio(str(g.ratio)), float(g.noise), settings.train.seed)
    built = type(raw)({part: rows.map(map_function(settings.data.text_column, options, sentinels, part), batched=True,
                                      with_indices=True, desc="gap sentences")
                       for part, rows in raw.items()})  # each split its own draws: row indices restart per split
    before = sum(len(s) for s in built.values())
    built = built.filter(lambda row: bool(row["gsg_target"]))
    return built, {"gsg_sentinel": f"{shown(sentinels)} ({what})",
                   "gsg_skipped_documents": before - sum(len(s) for s in built.values())}


def encode(raw, tokenizer, settings: Settings, labels: list[str] | None, limit: int):
    """Token ids (and labels) of every example for the task, cut at ``limit`` tokens, split into training and
    evaluation examples. Returns train, evaluation (or None) and counts."""
    from datasets import DatasetDict

    d, task = settings.data, settings.train.task
    counts: dict[str, Any] = {}
    text, target = d.text_column, d.summary_column if task == "seq2seq" else None
    if task == "gsg":
        raw, counts = gsg_pairs(raw, settings, tokenizer)
        text, target = "gsg_input", "gsg_target"
    if task == "token-classification":
        tokenised, truncated = _token_labels(raw, tokenizer, d, labels, limit)
        counts.update(truncated_examples=truncated)
    else:
        done = tokenize(raw, tokenizer, text, limit, target=target, target_length=d.target_length)
        tokenised = done.data
        counts.update(truncated_examples=done.truncated, examples=done.examples, longest_input=done.longest)
        if task in CLASSIFIERS:
            tokenised = tokenised.map(_label_encoder(labels, d.label_column, task == "multilabel"), batched=True)
    keep = {"input_ids", "attention_mask", "labels", "length"}
    tokenised = DatasetDict({k: v.remove_columns([c for c in v.column_names if c not in keep]) for k, v in tokenised.items()})
    train, evaluation = _split(tokenised, d.validation_split, settings.train.seed)
    if len(train) == 0:
        raise UsageError(f"--data {d.name} leaves no training examples.", "pass more data.")
    counts.update(train_examples=len(train), eval_examples=0 if evaluation is None else len(evaluation))
    return train, evaluation, counts


def _split(raw, fraction: float, seed: int):
    if "validation" in raw:
        return raw["train"], raw["validation"]
    if "test" in raw and len(raw) == 2:
        return raw["train"], raw["test"]
    if fraction <= 0 or len(raw["train"]) < 4:
        return raw["train"], None
    parts = raw["train"].train_test_split(test_size=fraction, seed=seed)
    return parts["train"], parts["test"]


def _label_encoder(labels: list[str], column: str, multilabel: bool):
    index = {name: i for i, name in enumerate(labels)}

    def encode(batch):
        if multilabel:
            rows = []
            for values in batch[column]:
                row = [0.0] * len(labels)
                for v in values:
                    row[index[str(v)]] = 1.0
                rows.append(row)
            return {"labels": rows}
        return {"labels": [index[str(v)] for v in batch[column]]}

    return encode


def _token_labels(raw, tokenizer, d: DataSettings, labels: list[str], limit: int):
    """Words and their tags -> tokens with the tag on each word's first token (-100 elsewhere)."""
    index = {name: i for i, name in enumerate(labels)}
    truncated = [0]

    def encode(batch):
        enc = tokenizer(batch[d.text_column], is_split_into_words=True, truncation=True, max_length=limit,
                        return_overflowing_tokens=False)
        out = {"input_ids": enc["input_ids"], "attention_mask": enc["attention_mask"], "labels": [], "length": []}
        for i, tags in enumerate(batch[d.label_column]):
            words = enc.word_ids(i)
            previous, row = None, []
            for w in words:
                row.append(-100 if w is None or w == previous else index[str(tags[w])])
                previous = w
            if max(w for w in words if w is not None) + 1 < len(tags):
                truncated[0] += 1
            out["labels"].append(row)
            out["length"].append(len(row))
        return out

    mapped = raw.map(encode, batched=True)
    return mapped, truncated[0]
