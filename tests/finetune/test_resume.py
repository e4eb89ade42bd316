"""What a resumed run must match and restore, piece by piece: its data by content (identity), MLM masks drawn
at the step (collators.Masking), and no evaluation from a Ctrl-C inside an epoch (train._inside_epoch). The
runs themselves: tests/commands/test_finetune_cli.py."""

from types import SimpleNamespace

import pytest

from lsgtool.core.errors import UsageError
from lsgtool.finetune.identity import data_record, same_data, same_place


def test_data_is_known_by_its_content_wherever_it_lies(tmp_path, monkeypatch):
    # issue 29, item 10
    folder = tmp_path / "data"
    (folder / "part").mkdir(parents=True)
    (folder / "a.jsonl").write_text('{"text": "w1"}\n')
    (folder / "part" / "b.jsonl").write_text('{"text": "w2"}\n')
    (folder / ".notes").write_text("not read")  # hidden files are not read as data (data.local_files)
    record = data_record(str(folder))
    assert record["path"] == str(folder.resolve()) and data_record("someone/reviews") is None
    (folder / ".notes").write_text("still not read")
    assert data_record(str(folder)) == record
    copy = tmp_path / "copy"
    (copy / "part").mkdir(parents=True)
    (copy / "a.jsonl").write_text('{"text": "w1"}\n')
    (copy / "part" / "b.jsonl").write_text('{"text": "w2"}\n')
    assert same_data(str(copy), record) is True
    (copy / "part" / "b.jsonl").rename(copy / "b.jsonl")  # the same bytes under another name
    assert same_data(str(copy), record) is False
    monkeypatch.chdir(tmp_path)
    assert same_place("./data", str(folder)) and same_place("data/../data", "data")
    assert not same_place("data", "copy") and not same_place("minilm", "minilm-lsg")
    (folder / "part" / "b.jsonl").write_text('{"text": "w3"}\n')
    with pytest.raises(UsageError, match=r"--data \./data changed since the run started") as refused:
        same_data("./data", record)
    assert "--out" in refused.value.hint
    assert same_data("./data", None) is None and same_data("someone/reviews", record) is None


def test_mlm_masks_follow_bert_and_their_generator():
    # issue 29, item 15: drawn at the step, from the state a resumed run restores
    import torch
    import transformers as T

    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [f"w{i}" for i in range(95)]
    tokenizer = T.BertTokenizerFast(vocab={w: i for i, w in enumerate(vocab)})
    from lsgtool.finetune.collators import collator

    pad = collator("mlm", tokenizer, None)
    rows = [tokenizer(" ".join(f"w{(7 * i + k) % 95}" for k in range(3 + i % 40))) for i in range(400)]
    batch = pad([{**dict(r), "length": len(r["input_ids"])} for r in rows])
    assert "labels" not in batch  # the collator pads; the trainer masks
    masked = pad.masking(batch, torch.Generator().manual_seed(0))
    again = pad.masking(batch, torch.Generator().manual_seed(0))
    assert torch.equal(masked["input_ids"], again["input_ids"]) and torch.equal(masked["labels"], again["labels"])
    ids, chosen = batch["input_ids"], masked["labels"] != -100
    special = torch.isin(ids, torch.tensor(tokenizer.all_special_ids))
    assert not (chosen & special).any() and torch.equal(masked["labels"][chosen], ids[chosen])
    assert torch.equal(masked["input_ids"][~chosen], ids[~chosen])
    share = chosen.sum() / (~special).sum()
    to_mask = (masked["input_ids"][chosen] == tokenizer.mask_token_id).float().mean()
    assert 0.13 < share < 0.17 and 0.75 < to_mask < 0.85, (share, to_mask)
    torch.manual_seed(1)
    first = pad.masking(batch)["labels"]
    torch.manual_seed(1)
    assert torch.equal(pad.masking(batch)["labels"], first)  # without a generator: the global random state


@pytest.mark.parametrize("step, epoch, expected", [
    (6, 6 / 27, True),  # inside the first epoch: its end's evaluation is not due
    (27, 1.0, False),  # the epoch's last step: its evaluation is due, in an uninterrupted run too
    (33, 1 + 6 / 27, True),
    (12, 12 / 27, False),  # max_steps reached inside an epoch: the run's end evaluates
])
def test_a_stop_inside_an_epoch_is_not_its_end(step, epoch, expected):
    # issue 29, item 15
    from lsgtool.finetune.train import _inside_epoch

    assert _inside_epoch(SimpleNamespace(global_step=step, max_steps=12 if step == 12 else 40, epoch=epoch)) is expected
