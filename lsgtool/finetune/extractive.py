"""``--task extractive``: a sentence scorer (``summarize.scorer``) trained over a frozen sentence encoder on
(document, summary) pairs (``--text-column``, ``--summary-column``). Each document is read as ``lsgtool summarize``
reads it (its prose sentences, embedded in the encoder's windows), its sentences labelled by the greedy ROUGE
oracle against its summary (the sentences that best rebuild it, up to its length); the Trainer then fits the head
on those labels, so the run folder, checkpoints, Ctrl-C and ``--resume`` are those of every other task. The folder's
root is then a scorer ``lsgtool summarize --scorer FOLDER`` takes."""

from __future__ import annotations

from typing import Any

import torch

from lsgtool.core.errors import UsageError
from lsgtool.finetune.config import Settings
from lsgtool.progress import Progress


def prepare_extractive(settings: Settings, source, progress: Progress | None = None):
    """``Prepared`` for the task: the examples are documents (their sentences' features and oracle labels)."""
    from datasets import Dataset, Features, List, Value

    from lsgtool.finetune import data as D
    from lsgtool.finetune.data import _split
    from lsgtool.finetune.prepare import Prepared
    from lsgtool.summarize.extractive import load_extractive
    from lsgtool.summarize.scorer import POSITIVE_WEIGHT, Scorer

    d = settings.data
    raw, _ = D.read(d, "seq2seq", d.max_examples)  # a text and a summary column, checked by their flags
    encoder = load_extractive(source, window=settings.model.max_length or 4096, scorer="rule")
    progress = progress or Progress()
    documents = sum(len(rows) for rows in raw.values())
    progress.stage("reading documents", documents, "sentences embedded, labelled by the ROUGE oracle")
    reader = Reader(encoder, source, d.text_column, d.summary_column, progress)
    kept = Features({"features": List(List(Value("float32"))), "labels": List(Value("float32")),
                     "length": Value("int64")})  # as computed: float32, not the float64 of Python floats
    built = type(raw)({part: rows.map(reader, batched=True, batch_size=8, remove_columns=rows.column_names,
                                      features=kept, desc="reading documents") if len(rows)
                       else Dataset.from_dict({name: [] for name in kept}, features=kept)  # map drops its columns
                       for part, rows in raw.items()})
    cached = None
    if reader.read < documents:  # datasets' cache: the same documents read by the same encoder and features
        cached = (f"{documents - reader.read:,} of {documents:,} documents' features taken from datasets' cache "
                  "(read by an earlier run: the same data, encoder and lsgtool code)")
        progress.advance(documents - reader.read)
        progress.note(cached)
    skipped = documents - sum(len(rows) for rows in built.values())
    train, evaluation = _split(built, d.validation_split, settings.train.seed)
    if len(train) == 0:
        raise UsageError(f"--data {d.name} leaves no document with sentences and a summary to train on.",
                         f"check --text-column {d.text_column} and --summary-column {d.summary_column}.")
    scorer = Scorer({"encoder": source.name, "embedding_size": encoder.model.config.hidden_size, "hidden": 0,
                     "positive_weight": POSITIVE_WEIGHT})
    everything = torch.cat([torch.tensor(f) for f in train["features"]])
    scorer.mean.copy_(everything.mean(0))
    scorer.scale.copy_(everything.std(0).clamp(min=1e-6))
    info = {"notes": [f"sentence scorer over the frozen encoder {source.name}; labels: the greedy ROUGE oracle",
                      *([cached] if cached else [])],
            "trainable_parameters": sum(p.numel() for p in scorer.parameters()),
            "parameters": sum(p.numel() for p in scorer.parameters()), "max_length": encoder.window,
            "examples": sum(len(s) for s in built.values()), "documents_without_sentences_or_summary": skipped,
            "documents_read": reader.read,
            "sentences": int(everything.shape[0]), "train_examples": len(train),
            "eval_examples": 0 if evaluation is None else len(evaluation)}
    return Prepared(scorer, None, train, evaluation, Documents(), None, info)


class Reader:
    """The ``datasets.Dataset.map(batched=True)`` function of the task: a batch of documents -> the features and
    oracle labels of those with sentences and a summary. What datasets hashes (its fingerprint cache: a resumed or
    repeated run does not read the documents again) is what the output depends on: the encoder's fingerprint (its
    weights, configuration, tokenizer and window), the columns, lsgtool's code and the versions of the libraries
    that embed and label; not the loaded model or the progress bar. Hashed, never unpickled (no ``num_proc``):
    the state lacks the encoder."""

    LIBRARIES = ("torch", "transformers", "rouge-score")

    def __init__(self, encoder, source, text_column: str, summary_column: str, progress: Progress):
        from importlib.metadata import version

        from lsgtool.core.load.fingerprint import fingerprint

        self.encoder, self.progress, self.read = encoder, progress, 0
        self.identity = {"encoder": fingerprint(source, window=encoder.window), "code": _code_digest(),
                         "libraries": {name: version(name) for name in self.LIBRARIES},
                         "text": text_column, "summary": summary_column}

    def __getstate__(self) -> dict[str, Any]:
        return {"identity": self.identity}

    def __call__(self, batch: dict[str, list]) -> dict[str, list]:
        out: dict[str, list] = {"features": [], "labels": [], "length": []}
        for text, summary in zip(batch[self.identity["text"]], batch[self.identity["summary"]]):
            found = _document(self.encoder, text or "", summary or "")
            self.read += 1
            self.progress.advance(1)
            if found is not None:
                out["features"].append(found[0].tolist())
                out["labels"].append(found[1].tolist())
                out["length"].append(len(found[1]))
        return out


def _code_digest() -> str:
    """SHA-256 of lsgtool's own Python files (any change reads the documents again: a few minutes, never stale)."""
    import hashlib
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _document(encoder, text: str, summary: str) -> tuple[torch.Tensor, torch.Tensor] | None:
    """A document's sentence features and oracle labels (None: no sentence or no summary)."""
    from lsgtool.summarize.scorer import oracle

    if not summary.strip():
        return None
    read = encoder.read(text)
    if read is None:
        return None
    labels = torch.zeros(len(read.sentences))
    labels[oracle(read.sentences, summary, len(summary.split()))] = 1
    return encoder.features(read), labels


class Documents:
    """A batch of documents: their sentences' features padded to the longest, ``mask`` the real ones."""

    def __call__(self, examples: list[dict[str, Any]]) -> dict[str, torch.Tensor]:
        longest = max(len(e["labels"]) for e in examples)
        size = len(examples[0]["features"][0])
        features = torch.zeros(len(examples), longest, size)
        labels = torch.zeros(len(examples), longest)
        mask = torch.zeros(len(examples), longest, dtype=torch.bool)
        for i, e in enumerate(examples):
            n = len(e["labels"])
            features[i, :n] = torch.tensor(e["features"])
            labels[i, :n] = torch.tensor(e["labels"])
            mask[i, :n] = True
        return {"features": features, "labels": labels, "mask": mask}
