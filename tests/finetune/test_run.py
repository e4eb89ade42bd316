"""The finetune run folder: which --out a run may take."""

import pytest

from lsgtool.core.errors import UsageError
from lsgtool.finetune.run import check_out


def test_a_new_or_empty_folder_is_taken_and_a_foreign_one_refused(tmp_path):
    check_out(tmp_path / "new", resume=False, overwrite=False)
    (tmp_path / "empty").mkdir()
    check_out(tmp_path / "empty", resume=False, overwrite=False)  # nothing to lose
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep")
    with pytest.raises(UsageError, match="is not a run folder of lsgtool finetune"):
        check_out(tmp_path / "mine", resume=False, overwrite=True)
