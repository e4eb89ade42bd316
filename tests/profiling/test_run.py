"""``lsgtool.profiling.run``: the call the command makes, from a notebook; the output folder it may write."""

import json

import pytest

from lsgtool.core.errors import UsageError
from lsgtool.profiling import ProfileOptions, run
from lsgtool.profiling.run import check_out
from lsgtool.progress import Progress


class _Recorder(Progress):
    def __init__(self):
        self.calls = []

    def stage(self, name, total=None, detail=""):
        self.calls.append(("stage", name, total))

    def advance(self, n=1, detail=None):
        self.calls.append(("advance", n, detail))


def test_run_from_a_notebook_reports_through_any_progress(tmp_path):
    progress = _Recorder()
    options = ProfileOptions(lengths="256", variants="full", hidden=32, heads=4, repeats=1, out=tmp_path / "p",
                             plots=False)
    result = run(options, progress)
    [point] = result.data["points"]
    assert point["error"] is None and result.data["files"] == [str(tmp_path / "p" / n) for n in ("results.json", "results.csv")]
    assert json.loads((tmp_path / "p" / "results.json").read_text())["points"] == result.data["points"]
    assert progress.calls[0] == ("stage", "measuring", 1)
    assert ("advance", 0, "measuring full @ 256") in progress.calls
    assert progress.calls[-1][:2] == ("advance", 1) and progress.calls[-1][2].startswith("full @ 256: ")
    result.raise_if_incomplete()  # complete: nothing raised


def test_check_out_takes_new_empty_and_own_folders_only(tmp_path, monkeypatch):
    assert check_out(tmp_path / "new") == tmp_path / "new"
    (tmp_path / "empty").mkdir()
    assert check_out(tmp_path / "empty") == tmp_path / "empty"
    own = tmp_path / "own"
    own.mkdir()
    (own / ".lsgtool.json").write_text('{"written_by": "lsgtool", "command": "profile"}')
    assert check_out(own) == own
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "config.json").write_text('{"model_type": "bert"}')  # --overwrite's business, not profile's
    with pytest.raises(UsageError, match="not written by lsgtool profile"):
        check_out(tmp_path / "model")
    monkeypatch.chdir(tmp_path / "empty")
    with pytest.raises(UsageError, match="current folder"):
        check_out(tmp_path / "empty")
