"""Where ``lsgtool summarize`` writes: an output that cannot be written fails only its input, one run at a time per
``--out``, a record belongs to its input, and ``--out`` says what it is (a file for one input, else a folder)."""

import json
import os
import socket
import subprocess
import sys
import time

GEN = ["--max-new-tokens", "4", "--num-beams", "1"]
LOCK = (".lsgtool-summaries", "lock")


def _summarize(runner, app, models, *args):
    return runner.invoke(app, ["summarize", *map(str, args), "--model", str(models / "bart-lsg"), *GEN])


def _one_line(stderr: str) -> str:
    return " ".join(stderr.replace("│", " ").split())


def test_an_output_name_too_long_fails_its_input_alone(runner, app, models, tmp_path, text):  # issue 29, item 4
    docs = tmp_path / "docs"
    docs.mkdir()
    fits, too_long = "a" * 236 + ".txt", "b" * 247 + ".txt"  # legal names; b's summary name would be 258 bytes
    for name in (fits, too_long, "c.txt"):
        (docs / name).write_text(text(1))
    out = tmp_path / "out"
    result = _summarize(runner, app, models, docs, "--out", out, "--json")
    assert result.exit_code == 1, result.output  # the batch's convention: inputs failed, the others done
    report = json.loads(result.stdout)
    assert report["done"] == 2 and [f["input"] for f in report["failed"]] == [str(docs / too_long)]
    assert "File name too long" in report["failed"][0]["error"]
    assert sorted(p.name for p in out.glob("*.summary.md")) == ["a" * 236 + ".summary.md", "c.summary.md"]
    assert "Error: 1 of 3 inputs failed" in result.stderr and not list(out.rglob("*lsgtool-tmp"))
    again = _summarize(runner, app, models, docs, "--out", out, "--resume", "--json")
    assert again.exit_code == 1, again.output  # the long one fails again, on its own
    assert json.loads(again.stdout)["skipped"] == 2  # the long name's record is found again


def _plant_lock(out, pid, host=None):
    lock = out.joinpath(*LOCK)
    lock.parent.mkdir(parents=True)
    lock.write_text(json.dumps({"pid": pid, "host": host or socket.gethostname(), "started": time.time()}))
    return lock


def test_a_second_run_on_the_same_out_is_refused_while_the_first_holds_it(runner, app, tmp_path, text):
    # issue 29, item 13: a lock held by a live process (this one), on this machine or another
    doc = tmp_path / "doc.txt"
    doc.write_text(text(1))
    for host in (None, "another-machine"):
        out = tmp_path / f"out-{host}"
        lock = _plant_lock(out, os.getpid(), host)
        held = lock.read_text()
        result = runner.invoke(app, ["summarize", str(doc), "--out", str(out), "--model", str(tmp_path / "no-model")])
        stderr = _one_line(result.stderr)
        assert result.exit_code == 2, result.output
        assert f"Error: --out {out}: another lsgtool run (pid {os.getpid()} on {host or socket.gethostname()}" \
               in stderr and "Hint:" in stderr and "no-model" not in stderr  # refused before the model
        assert lock.read_text() == held and [p.name for p in out.iterdir()] == [".lsgtool-summaries"]


def test_a_lock_whose_process_is_gone_is_taken_over_and_released(runner, app, models, tmp_path, text):
    # issue 29, item 13: a stale lock (dead pid on this machine)
    doc = tmp_path / "doc.txt"
    doc.write_text(text(1))
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    out = tmp_path / "out"
    lock = _plant_lock(out, dead.pid)
    result = _summarize(runner, app, models, doc, "--out", out)
    assert result.exit_code == 0, result.output
    assert (out / "doc.summary.md").is_file() and not lock.exists()  # released when the run ends
    failed = runner.invoke(app, ["summarize", str(doc), "--out", str(out / "b.md"), "--model", str(tmp_path / "no")])
    assert failed.exit_code == 2 and not lock.exists() and not list(lock.parent.glob("*.lock"))  # also after a failure


def test_two_processes_writing_one_out_the_second_is_told(models, tmp_path, text):  # issue 29, item 13
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(12):
        (docs / f"doc{i:02d}.txt").write_text(text(2))
    out = tmp_path / "out"
    command = [sys.executable, "-m", "lsgtool", "summarize", str(docs), "--model", str(models / "bart-lsg"),
               "--max-new-tokens", "24", "--num-beams", "4", "--out", str(out)]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "LSGTOOL_LOAD_PLUGINS": ""}
    first = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 120
        while time.time() < deadline and not list(out.glob("*.summary.md")):
            time.sleep(0.05)
        assert first.poll() is None, "the first run should still be going"
        second = subprocess.run([*command, "--resume"], env=env, capture_output=True, text=True, timeout=120)
        assert second.returncode == 2, second.stderr
        assert f"Error: --out {out}: another lsgtool run (pid {first.pid}" in _one_line(second.stderr)
    finally:
        first.kill()
        first.wait()


def _english(tmp_path, text):
    for i in (1, 2):
        (tmp_path / f"english{i}.txt").write_text(text(i))
    return tmp_path / "english1.txt", tmp_path / "english2.txt"


def test_resume_does_not_replace_another_inputs_summary(runner, app, models, tmp_path, text, monkeypatch):
    # issue 29, item 17
    one, two = _english(tmp_path, text)
    out = tmp_path / "rs" / "one.md"
    assert _summarize(runner, app, models, one, "--out", out).exit_code == 0
    kept = out.read_text()
    refused = _summarize(runner, app, models, two, "--out", out, "--resume")
    stderr = _one_line(refused.stderr)
    assert refused.exit_code == 2, refused.output
    assert f"Error: --out {out} holds lsgtool's summary of '{one}', not of '{two}'" in stderr
    assert "Hint: choose a different --out, or pass --overwrite" in stderr and out.read_text() == kept
    monkeypatch.chdir(tmp_path)  # the same input named another way is the same input
    same = _summarize(runner, app, models, "english1.txt", "--out", out, "--resume", "--json")
    assert same.exit_code == 0 and json.loads(same.stdout)["skipped"] == 1
    replaced = _summarize(runner, app, models, two, "--out", out, "--overwrite")
    assert replaced.exit_code == 0, replaced.output
    back = _summarize(runner, app, models, one, "--out", out, "--resume")  # one.md is english2's now
    assert back.exit_code == 2 and f"summary of '{two}', not of '{one}'" in _one_line(back.stderr)


def test_an_existing_file_given_as_out_for_one_input_is_named_as_such(runner, app, models, tmp_path, text):
    # issue 29, item 19
    doc = tmp_path / "doc.txt"
    doc.write_text(text(1))
    mine = tmp_path / "mydata.dat"
    mine.write_bytes(b"\x00my data")
    result = _summarize(runner, app, models, doc, "--out", mine)
    stderr = _one_line(result.stderr)
    assert result.exit_code == 2 and "several inputs" not in stderr
    assert f"--out '{mine}' exists and was not written by lsgtool" in stderr and mine.read_bytes() == b"\x00my data"


def test_an_out_in_a_folder_that_cannot_be_written_names_the_path_given(runner, app, tmp_path, text, monkeypatch):
    # issue 29, item 19: the path typed, not only its folder (tests run as root, so the refusal is simulated)
    import tempfile

    doc = tmp_path / "doc.txt"
    doc.write_text(text(1))
    (tmp_path / "ro").mkdir()
    make = tempfile.mkdtemp

    def refused_in_ro(*args, dir=None, **kwargs):
        if dir is not None and os.path.samefile(dir, tmp_path / "ro"):
            raise PermissionError(13, "Permission denied")
        return make(*args, dir=dir, **kwargs)

    monkeypatch.setattr(tempfile, "mkdtemp", refused_in_ro)
    result = runner.invoke(app, ["summarize", str(doc), "--out", str(tmp_path / "ro" / "sum.md")])
    assert result.exit_code == 2
    assert f"Error: --out {tmp_path / 'ro' / 'sum.md'}: cannot write in" in _one_line(result.stderr)


def test_one_input_and_an_out_with_any_suffix_is_a_file(runner, app, models, tmp_path, text):  # issue 29, item 22
    doc = tmp_path / "doc.txt"
    doc.write_text(text(1))
    notes = tmp_path / "notes.dat"
    result = _summarize(runner, app, models, doc, "--out", notes)
    assert result.exit_code == 0, result.output
    assert notes.is_file() and notes.read_text().startswith("# ")  # Markdown, as files are by default
    folder = tmp_path / "summaries"  # no suffix: a folder, one <name>.summary.md in it
    assert _summarize(runner, app, models, doc, "--out", folder).exit_code == 0
    assert (folder / "doc.summary.md").is_file()
