"""``lsgtool.profiling.run``: the call the command makes, from a notebook; the output folder it may write."""

import json

from lsgtool.profiling import ProfileOptions, run
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
