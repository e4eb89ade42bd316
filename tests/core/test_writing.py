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


def test_temporary_names_fit_wherever_the_file_fits(tmp_path):  # issue 29, item 4
    import os

    from lsgtool.core.writing import TMP, clean_stale_files, write_file

    longest = "é" * 96 + "x" * 52 + ".summary.md"  # 255 bytes: the longest name ext4 takes
    assert write_file(tmp_path / longest, "text").read_text() == "text"
    assert os.listdir(tmp_path) == [longest]
    stale = tmp_path / f".{'x' * 60}~0123456789ab.999999999{TMP}"  # a killed writer's (no such pid)
    stale.write_text("")
    assert clean_stale_files(tmp_path) == [stale.name]


def test_a_write_that_fails_leaves_no_temporary_file(tmp_path):  # issue 29, item 4
    from lsgtool.core.writing import write_file

    (tmp_path / "a-folder").mkdir()
    with pytest.raises(OSError):
        write_file(tmp_path / "a-folder", "text")  # the rename onto a folder fails
    assert [p.name for p in tmp_path.iterdir()] == ["a-folder"]


def test_a_lock_is_refused_while_its_process_lives_and_taken_over_when_it_is_gone(tmp_path):  # issue 29, item 13
    import json
    import os
    import socket
    import subprocess
    import sys

    from lsgtool.core.writing import release_lock, take_lock

    lock = tmp_path / "lock"
    take_lock(lock, "--out", tmp_path)
    assert json.loads(lock.read_text())["pid"] == os.getpid()
    with pytest.raises(UsageError, match=f"another lsgtool run \\(pid {os.getpid()} on {socket.gethostname()}"):
        take_lock(lock, "--out", tmp_path)  # held: a second holder in this process is refused too
    release_lock(lock)
    assert not lock.exists()
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    lock.write_text(json.dumps({"pid": gone.pid, "host": socket.gethostname(), "started": 0}))
    take_lock(lock, "--out", tmp_path)  # stale: taken over
    assert json.loads(lock.read_text())["pid"] == os.getpid()
    lock.write_text(json.dumps({"pid": os.getpid(), "host": "elsewhere", "started": 0}))
    release_lock(lock)  # not this process's: left alone
    assert lock.exists()


def test_ctrl_c_waits_for_writes_that_belong_together(tmp_path, ctrl_c):
    import os
    import signal

    from lsgtool.core.writing import uninterrupted, write_file

    done = []
    with pytest.raises(KeyboardInterrupt):
        with uninterrupted():
            write_file(tmp_path / "record.json", "pending")
            ctrl_c()  # between the two writes
            write_file(tmp_path / "out.md", "summary")
            write_file(tmp_path / "record.json", "final")
            done.append(True)
    assert done and (tmp_path / "record.json").read_text() == "final" and (tmp_path / "out.md").exists()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # the handler that was there is back
    with uninterrupted():  # nothing caught: nothing raised
        write_file(tmp_path / "again.md", "x")


def test_a_second_ctrl_c_stops_writes_that_hang(ctrl_c):
    import os
    import signal

    from lsgtool.core.writing import uninterrupted

    reached = []
    with pytest.raises(KeyboardInterrupt):
        with uninterrupted():
            ctrl_c()
            reached.append(1)
            ctrl_c()  # the user presses Ctrl-C again: a stuck write is given up
            reached.append(2)
    assert reached == [1] and signal.getsignal(signal.SIGINT) is signal.default_int_handler
