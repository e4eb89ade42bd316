"""``lsgtool.conversion.run``: the call ``lsgtool convert`` makes, from a notebook."""

import json

from lsgtool.conversion import ConvertOptions, run
from lsgtool.progress import Progress


class _Stages(Progress):
    def __init__(self):
        self.stages, self.notes = [], []

    def stage(self, name, total=None, detail=""):
        self.stages.append(name)

    def note(self, message):
        self.notes.append(message)


def test_run_resolves_the_model_once_and_reports_its_stages(tiny_folder, tmp_path, monkeypatch):
    import lsgtool.core.load as loading

    looked_up = []
    resolve = loading.resolve
    monkeypatch.setattr(loading, "resolve", lambda *a, **k: looked_up.append(a) or resolve(*a, **k))
    progress = _Stages()
    result = run(ConvertOptions(str(tiny_folder), out=tmp_path / "lsg", max_length=128, block=16), progress)
    # the conversion, its tokenizer and the verification share one Source (the other look-up: the staged folder)
    assert [str(a[0]) for a in looked_up].count(str(tiny_folder)) == 1 and len(looked_up) == 2
    assert progress.stages == ["loading and converting", "saving", "verifying:"]
    assert result.summary["checks"]["passed"] and result.summary["output"] == str(tmp_path / "lsg")
    assert json.loads((tmp_path / "lsg" / ".lsgtool.json").read_text())["verified"] is True
    result.raise_if_unverified()  # verified: nothing raised
