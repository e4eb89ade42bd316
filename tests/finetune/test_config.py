"""Settings checks at the library level: every number in range whichever layer set it, the flag named where there
is one; what a resumed run compares with its saved settings."""

import pytest

from lsgtool.core.errors import UsageError
from lsgtool.finetune.config import NUMBERS, Settings, changed, check, read_saved

NAMES = {"model": {"name": "bert"}, "data": {"name": "data.jsonl"}}


def settings(**sections) -> Settings:
    made = Settings()
    for layer in (NAMES, sections):
        for section, values in layer.items():
            for key, value in values.items():
                setattr(getattr(made, section), key, value)
    return made


@pytest.mark.parametrize("section, key, lowest, allowed, flag", [n[:5] for n in NUMBERS])
def test_every_number_has_its_lower_bound(section, key, lowest, allowed, flag):
    """Issue 21, item 9: the TOML and --set path checks what the options' min= checks on the command line."""
    check(settings(**{section: {key: lowest if allowed else lowest + 1}}))
    bad = lowest - 1 if allowed else lowest
    with pytest.raises(UsageError, match="must be") as caught:
        check(settings(**{section: {key: bad}}))
    shown = "global" if key == "global_tokens" else key
    assert f"{section}.{shown}" in caught.value.message and (flag is None or flag in caught.value.message)
    assert caught.value.hint.startswith("e.g.")


def test_epochs_zero_or_negative_is_refused():
    for epochs in (0.0, -2.0):
        with pytest.raises(UsageError, match=r"--epochs \(train.epochs\) must be more than 0"):
            check(settings(train={"epochs": epochs}))


def test_changed_names_every_key_that_differs(tmp_path):
    saved = tmp_path / "finetune.toml"
    before = settings(train={"lr": 1e-3})
    saved.write_text(before.to_toml())
    assert changed(read_saved(saved), before) == []
    assert changed(settings(train={"lr": 5e-2, "batch_size": 4}), read_saved(saved)) == [
        ("train.lr", 5e-2, 1e-3), ("train.batch_size", 4, 8)]


def test_a_dropout_that_is_not_a_number_is_a_usage_error():
    import pytest

    from lsgtool.core.errors import UsageError
    from lsgtool.finetune.config import resolve

    for value in ("abc", "[1]"):
        with pytest.raises(UsageError, match="model.dropout must be a number"):
            resolve(None, None, {"model": {"name": "m"}, "data": {"name": "d"}}, [f"model.dropout={value}"])
    assert resolve(None, None, {"model": {"name": "m"}, "data": {"name": "d"}}, ["model.dropout=0.2"]).model.dropout == 0.2


def test_a_task_with_its_own_defaults_takes_them_under_every_layer(tmp_path):
    from lsgtool.finetune.config import resolve

    given = ["model.name=minilm", "data.name=pairs.jsonl"]
    alone = resolve(None, None, {"train": {"task": "extractive"}}, given)
    assert (alone.train.lr, alone.train.epochs, alone.train.schedule) == (1e-2, 40.0, "constant")
    (tmp_path / "run.toml").write_text('[train]\ntask = "extractive"\nepochs = 3.0\n')
    layered = resolve(None, tmp_path / "run.toml", {"train": {"lr": 5e-3}}, [*given, "train.schedule=linear"])
    assert (layered.train.lr, layered.train.epochs, layered.train.schedule) == (5e-3, 3.0, "linear")
    assert resolve(None, None, {"train": {"task": "seq2seq"}}, given).train.lr == 5e-5  # others keep theirs
