"""``lsgtool.inspection.run`` from Python, as a notebook calls it: the report the CLI renders, the output folder,
and the progress it reports through ``lsgtool.progress.Progress``."""

import json

import pytest

from lsgtool.core.errors import ConfigError, UsageError
from lsgtool.inspection import Inspection, InspectOptions, LSGLayout, run
from lsgtool.progress import Progress


class Recorder(Progress):
    def __init__(self):
        self.events = []

    def stage(self, name, total=None, detail=""):
        self.events.append(("stage", name, total, detail))

    def advance(self, n=1, detail=None):
        self.events.append(("advance", n, detail))


def test_an_lsg_layout_from_python(tmp_path):
    progress = Recorder()
    layout = LSGLayout(block_size=32, sparsity_factor=4, sparsity_type="pooling")
    result = run(InspectOptions(layout=layout, length="1k", out=tmp_path / "k", plots=False), progress)
    assert isinstance(result, Inspection) and result.what == "lsg"
    assert result.report["nominal"]["connexions"] == 160 and result.report["measured"]["reach"]["interior_max"] == 352
    assert result.view.connectivity.padded == 1024 and result.report["terminal_map"]
    assert result.files == [tmp_path / "k" / "lsg.json"] and result.report["files"] == [str(tmp_path / "k" / "lsg.json")]
    assert json.loads((tmp_path / "k" / "lsg.json").read_text())["title"] == result.report["title"]
    stage, *advances = progress.events
    assert stage[:2] == ("stage", "tracing the selector") and sum(e[1] for e in advances) == stage[2]


def test_ops_reports_each_point_as_it_starts(tmp_path, monkeypatch):
    from lsgtool.inspection import ops
    from lsgtool.profiling.variants import Setup

    monkeypatch.setattr(ops, "synthetic_setup", lambda: Setup(hidden=32, heads=4, level="layer", block=16, factor=4))
    progress = Recorder()
    result = run(InspectOptions(what="ops", length="64", out=tmp_path / "k", plots=False), progress)
    assert [p["variant"] for p in result.report["points"]] == ["full", "lsg-norm", "locost-s4d_lin"]
    assert progress.events[0] == ("stage", "profiling", 3, "")
    details = [e[2] for e in progress.events if e[0] == "advance" and e[2]]
    assert details == ["profiling full @ 64", "profiling lsg-norm @ 64", "profiling locost-s4d_lin @ 64"]
    assert sum(e[1] for e in progress.events if e[0] == "advance") == 3


def test_layout_keys_outside_the_lsg_view_are_named_by_key(tmp_path):
    with pytest.raises(ConfigError, match="sparsity_factor applies to --what lsg, not ops"):
        run(InspectOptions(what="ops", layout=LSGLayout(sparsity_factor=4), out=tmp_path / "k"))
    with pytest.raises(UsageError, match="unknown view 'maps'"):
        run(InspectOptions(what="maps", out=tmp_path / "k"))
    assert not (tmp_path / "k").exists()
