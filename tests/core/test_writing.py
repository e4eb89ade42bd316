"""``lsgtool.core.writing``: which output folders a command may replace."""

import pytest

from lsgtool.core.errors import UsageError
from lsgtool.core.writing import check_own_target


def test_a_command_replaces_only_new_empty_and_its_own_folders(tmp_path, monkeypatch):
    assert check_own_target(tmp_path / "new", "profile") == tmp_path / "new"
    (tmp_path / "empty").mkdir()
    assert check_own_target(tmp_path / "empty", "profile") == tmp_path / "empty"
    own = tmp_path / "own"
    own.mkdir()
    (own / ".lsgtool.json").write_text('{"written_by": "lsgtool", "command": "profile"}')
    assert check_own_target(own, "profile") == own
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "config.json").write_text('{"model_type": "bert"}')  # --overwrite's business, not profile's
    with pytest.raises(UsageError, match="not written by lsgtool profile"):
        check_own_target(tmp_path / "model", "profile")
    monkeypatch.chdir(tmp_path / "empty")
    with pytest.raises(UsageError, match="current folder"):
        check_own_target(tmp_path / "empty", "profile")
