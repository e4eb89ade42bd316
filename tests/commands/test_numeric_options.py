"""Issue 21, item 9: every count, size or rate an option takes is checked where it is typed: exit 2, an Error
line naming the flag, a Hint, no traceback, nothing loaded (the model named does not exist)."""

import pytest

from lsgtool.cli import create_app
from lsgtool.plugins.manager import make_plugin_manager


@pytest.mark.parametrize("args, flag", [
    (["finetune", "--model", "nowhere", "--data", "nothing.jsonl", "--epochs", "0"], "--epochs"),
    (["finetune", "--model", "nowhere", "--data", "nothing.jsonl", "--epochs", "-2"], "--epochs"),
    (["finetune", "--model", "nowhere", "--data", "nothing.jsonl", "--lr", "0"], "--lr"),
    (["finetune", "--model", "nowhere", "--data", "nothing.jsonl", "--set", "train.epochs=0"], "--epochs"),
    (["finetune", "--model", "nowhere", "--data", "nothing.jsonl", "--set", "train.grad_accum=0"], "train.grad_accum"),
    (["finetune", "--model", "nowhere", "--data", "nothing.jsonl", "--set", "data.target_length=0"],
     "data.target_length"),
    (["inspect-kernels", "--layer", "-1"], "--layer"),
    (["inspect-kernels", "--head", "-1"], "--head"),
])
def test_a_number_out_of_range_is_a_usage_error_naming_the_flag(runner, tmp_path, monkeypatch, args, flag):
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(create_app(make_plugin_manager(load_installed=False)), args)
    text = " ".join(result.stderr.split())
    assert result.exit_code == 2, result.output
    assert text.startswith("Error:") and flag in text.split("Hint:")[0] and "Hint:" in text, text
    assert "Traceback" not in text and not list(tmp_path.iterdir())
