"""Batches: a folder in, one output per input, --resume (also after a kill), failures kept to their input, user
files never overwritten, bad inputs refused before any work, and two processes under ``accelerate launch``."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

GEN = ["--max-new-tokens", "4", "--num-beams", "1"]


def _folder(tmp_path, text, n=3):
    folder = tmp_path / "docs"
    folder.mkdir()
    for i in range(n):
        (folder / f"doc{i}.txt").write_text(text(1 + i % 2))
    (folder / "notes.csv").write_text("ignored,1\n")  # not a supported document: not picked up
    return folder


def test_folder_batch_writes_one_output_per_input_and_resume_does_nothing(runner, app, models, tmp_path, text):
    folder, out = _folder(tmp_path, text), tmp_path / "out"
    args = ["summarize", str(folder), "--model", str(models / "bart-lsg"), *GEN, "--out", str(out)]
    first = runner.invoke(app, [*args, "--json"])
    assert first.exit_code == 0, first.output
    report = json.loads(first.stdout)
    assert report["done"] == 3 and report["skipped"] == 0 and report["failed"] == []
    files = sorted(p.name for p in out.iterdir() if not p.name.startswith("."))
    assert files == ["doc0.summary.md", "doc1.summary.md", "doc2.summary.md"]
    stamps = {name: (out / name).stat().st_mtime_ns for name in files}
    refused = runner.invoke(app, args)
    assert refused.exit_code == 2 and "pass --resume" in refused.stderr
    again = runner.invoke(app, [*args, "--resume", "--json"])
    assert json.loads(again.stdout)["skipped"] == 3 and json.loads(again.stdout)["done"] == 0
    assert {name: (out / name).stat().st_mtime_ns for name in files} == stamps  # nothing rewritten
    changed = runner.invoke(app, [*args[:-4], "--max-new-tokens", "5", "--num-beams", "1", "--out", str(out),
                                  "--resume", "--json"])
    assert json.loads(changed.stdout)["done"] == 3  # other settings: not the same work, redone


def test_a_bad_file_fails_alone_and_the_batch_exits_1(runner, app, models, tmp_path, text):
    folder = _folder(tmp_path, text, n=2)
    (folder / "empty.txt").write_text("")
    (folder / "binary.txt").write_bytes(b"\x00\x01\x02 not text")
    result = runner.invoke(app, ["summarize", str(folder), "--model", str(models / "bart-lsg"), *GEN,
                                 "--out", str(tmp_path / "out"), "--json"])
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report["done"] == 2 and sorted(f["input"].split("/")[-1] for f in report["failed"]) == ["binary.txt",
                                                                                                  "empty.txt"]
    assert "Error: 2 of 4 inputs failed" in result.stderr


def test_files_lsgtool_did_not_write_are_never_overwritten(runner, app, models, tmp_path, text):
    doc = tmp_path / "a.txt"
    doc.write_text(text(1))
    mine = tmp_path / "a.summary.md"
    mine.write_text("my own notes")
    for extra in ([], ["--overwrite"], ["--resume"]):
        result = runner.invoke(app, ["summarize", str(doc), "--model", str(models / "bart-lsg"), *GEN,
                                     "--out", str(mine), *extra])
        assert result.exit_code == 2 and "was not written by lsgtool" in result.stderr
    assert mine.read_text() == "my own notes"


def _batch_until_two_are_written(models, tmp_path, text):
    """A 12-document batch in a subprocess, returned once two outputs are written: (process, command, env, out)."""
    folder = tmp_path / "docs"
    folder.mkdir()
    for i in range(12):
        (folder / f"doc{i:02d}.txt").write_text(text(2))
    out = tmp_path / "out"
    command = [sys.executable, "-m", "lsgtool", "summarize", str(folder), "--model", str(models / "bart-lsg"),
               "--max-new-tokens", "24", "--num-beams", "4", "--out", str(out)]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "LSGTOOL_LOAD_PLUGINS": ""}
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    records = out / ".lsgtool-summaries" / "records"
    deadline = time.time() + 120
    while time.time() < deadline and len(list(records.glob("*.json")) if records.is_dir() else []) < 2:
        time.sleep(0.02)
    return process, command, env, out


def _finished(records) -> int:
    """Inputs whose record is final: one written as pending (its output not yet published when the signal came)
    is not finished, and the next run redoes it."""
    return sum(not json.loads(f.read_text()).get("pending") for f in records.glob("*.json"))


def test_a_killed_batch_resumes_where_it_stopped(models, tmp_path, text):
    process, command, env, out = _batch_until_two_are_written(models, tmp_path, text)
    records = out / ".lsgtool-summaries" / "records"
    process.send_signal(signal.SIGKILL)
    process.wait()
    finished = _finished(records)
    assert 1 <= finished < 12, "the run should have been killed part way"
    done = subprocess.run([*command, "--resume", "--json"], env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["skipped"] == finished and report["done"] == 12 - finished
    assert len(list(out.glob("*.summary.md"))) == 12 and not list(out.glob(".*lsgtool-tmp"))


@pytest.mark.parametrize("args, message", [
    ([], "no input given"),
    (["nowhere.txt"], "no such file or folder: 'nowhere.txt'"),
    (["https://example.org/post"], "is a web address: lsgtool reads files, offline"),  # and how to save it
    (["{empty_dir}"], "holds no .txt, .md, .vtt, .srt, .pdf, .epub, .docx or .html file"),
    (["{doc}", "--dataset", "x.jsonl"], "inputs and --dataset were both given"),
    (["{doc}", "--resume", "--overwrite"], "--resume and --overwrite contradict each other"),
    (["{doc}", "--device", "cuda"], "torch sees no CUDA device"),
    (["{doc}", "--model", "no-such-model"], "'no-such-model' is not on this machine"),
    (["{doc}", "--model", "{encoder}", "--method", "abstractive"], "is not a sequence-to-sequence model"),
    (["{doc}", "--model", "{bart}", "--overflow", "sideways"], "'sideways' is not one of"),
    (["{doc}", "--model", "{bart}", "--max-new-tokens", "0"], "Input should be greater than or equal to 1"),
    (["{doc}", "--model", "{bart}", "--format", "pdf"], "--format': 'pdf' is not one of"),  # no "Value error,"
    (["{doc}", "--json", "--format", "text"], "--out FILE.txt to write the text"),  # the suffix a text file has
    (["{doc}", "--model", "{bart}", "--memory-limit", "0"], "0 is not positive"),
    (["{empty}", "--model", "{bart}"], "is empty"),
    (["{binary}", "--model", "{bart}"], "is binary data"),
    (["{latin1}", "--model", "{bart}"], "is not UTF-8 text"),
    (["{doc}", "{doc2}", "--model", "{bart}", "--out", "{doc}"], "is a file; several inputs need a folder"),
    (["--dataset", "{missing}.jsonl"], "missing.jsonl: no such file or folder"),
    (["--dataset", "./nope.jsonl"], "--dataset ./nope.jsonl: no such file or folder"),  # not "couldn't reach the Hub"
    (["--dataset", "{data}", "--text-column", "body"], "the dataset has no column 'body'"),
    (["--dataset", "{data}", "--summary-column", "gist"], "the dataset has no column 'gist'"),
    (["--dataset", "{data}", "--split", "validation", "--limit", "0"], "Input should be greater than or equal to 1"),
    (["{doc}", "--model", "{ckpt}"], "carries no model configuration"),
    (["{doc}", "--model", "{bart}", "--method", "extractive"], "extractive summaries need an encoder"),
])
def test_bad_input_is_one_error_line_exit_2_and_no_traceback(runner, app, models, tmp_path, text, args, message):
    (tmp_path / "empty_dir").mkdir()
    (tmp_path / "doc.txt").write_text(text(1))
    (tmp_path / "doc2.txt").write_text(text(1))
    (tmp_path / "empty.txt").write_text("")
    (tmp_path / "binary.txt").write_bytes(b"\x00\x01binary")
    (tmp_path / "latin1.txt").write_bytes("caf\u00e9 au lait".encode("latin-1"))
    (tmp_path / "data.jsonl").write_text(json.dumps({"article": "a text", "summary": "a"}) + "\n")
    (tmp_path / "last.ckpt").write_bytes(b"not read before the config is missing")
    import transformers as T

    encoder = tmp_path / "encoder"
    T.BertModel(T.BertConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=4, intermediate_size=37,
                             vocab_size=99, max_position_embeddings=64)).save_pretrained(encoder)
    names = {"doc": tmp_path / "doc.txt", "doc2": tmp_path / "doc2.txt", "empty": tmp_path / "empty.txt",
             "binary": tmp_path / "binary.txt", "latin1": tmp_path / "latin1.txt", "bart": models / "bart-lsg",
             "encoder": encoder, "empty_dir": tmp_path / "empty_dir", "data": tmp_path / "data.jsonl",
             "missing": tmp_path / "missing", "ckpt": tmp_path / "last.ckpt"}
    result = runner.invoke(app, ["summarize", *[a.format(**names) for a in args]])
    text_err = " ".join(result.stderr.replace("│", " ").split())
    assert result.exit_code == 2, result.output
    assert message in text_err and "Traceback" not in result.output


def test_two_processes_under_accelerate_share_a_dataset_and_write_one_file(models, tmp_path):
    pytest.importorskip("accelerate")
    rows = [{"article": f"The storm number {i} came over the hills. The river rose.", "summary": "A storm."}
            for i in range(6)]
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out"
    # accelerate's --multi_gpu is its multi-process switch; on a machine without GPUs the processes use gloo
    command = [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", "2",
               "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no", "-m", "lsgtool", "summarize",
               "--dataset", str(data), "--model", str(models / "bart-lsg"), *GEN, "--out", str(out),
               "--format", "jsonl", "--json"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "LSGTOOL_LOAD_PLUGINS": "", "OMP_NUM_THREADS": "1"}
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)  # one report, from the main process
    assert report["done"] == 6 and report["outputs"] == ["summaries.jsonl"]
    records = [json.loads(line) for line in (out / "summaries.jsonl").read_text().splitlines()]
    assert [r["input"] for r in records] == [f"data.jsonl[{i}]" for i in range(6)]
    assert [r["process"] for r in records] == [0, 0, 0, 1, 1, 1]  # contiguous shares of the rows
    assert len(list((out / ".lsgtool-summaries" / "records").glob("*.json"))) == 6
    single = subprocess.run([sys.executable, "-m", "lsgtool", "summarize", "--dataset", str(data), "--model",
                             str(models / "bart-lsg"), *GEN, "--out", str(tmp_path / "one"), "--format", "jsonl"],
                            env=env, capture_output=True, text=True, check=False, timeout=300)
    assert single.returncode == 0, single.stderr
    alone = [json.loads(line) for line in (tmp_path / "one" / "summaries.jsonl").read_text().splitlines()]
    assert [r["summary"] for r in alone] == [r["summary"] for r in records]  # the same work, split in two


def test_batch_size_generates_together_what_one_by_one_gives(runner, app, models, tmp_path):
    rows = [{"article": "The storm came over the hills. " * (1 + 3 * i) + "The river rose.", "summary": "A storm."}
            for i in range(5)]  # different lengths: the batch is padded
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    summaries = {}
    for size in ("1", "3"):
        out = tmp_path / f"out{size}"
        result = runner.invoke(app, ["summarize", "--dataset", str(data), "--model", str(models / "locost"), *GEN,
                                     "--batch-size", size, "--out", str(out), "--format", "jsonl"])
        assert result.exit_code == 0, result.output
        summaries[size] = [json.loads(line)["summary"] for line in (out / "summaries.jsonl").read_text().splitlines()]
    assert summaries["3"] == summaries["1"] and len(summaries["1"]) == 5


def test_ctrl_c_keeps_what_is_finished_and_says_how_to_go_on(models, tmp_path, text):
    process, _, _, out = _batch_until_two_are_written(models, tmp_path, text)
    records = out / ".lsgtool-summaries" / "records"
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130
    assert "Error: interrupted (" in stderr and "--resume" in stderr and "Traceback" not in stderr
    kept = _finished(records)
    assert kept >= 1 and len(list(out.glob("*.summary.md"))) == kept and not list(out.glob(".*lsgtool-tmp"))


def test_a_lightning_checkpoint_with_its_config_given_summarises(runner, app, models, tmp_path, text):
    import torch

    import lsgtool

    model = lsgtool.load(models / "locost")
    torch.save({"state_dict": {f"model.{k}": v for k, v in model.state_dict().items()}}, tmp_path / "last.ckpt")
    doc = tmp_path / "doc.txt"
    doc.write_text(text(1))
    args = ["summarize", str(doc), *GEN, "--tokenizer", str(models / "locost"), "--json"]
    from_ckpt = runner.invoke(app, [*args, "--model", str(tmp_path / "last.ckpt"), "--config-from",
                                    str(models / "locost")])
    assert from_ckpt.exit_code == 0, from_ckpt.output
    from_folder = runner.invoke(app, [*args, "--model", str(models / "locost")])
    assert json.loads(from_ckpt.stdout)["summary"] == json.loads(from_folder.stdout)["summary"]


def _rows_short_and_long(tmp_path, n=8):
    rows = [{"article": "The storm came over the hills. " * (1 if i % 2 == 0 else 12) + f"River {i} rose.",
             "summary": "A storm."} for i in range(n)]  # short and long in turn: the worst order for padding
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return data


def test_batches_say_their_padding_sorted_by_length(runner, app, models, tmp_path):
    data = _rows_short_and_long(tmp_path)
    args = ["summarize", "--dataset", str(data), "--model", str(models / "locost"), *GEN, "--batch-size", "2",
            "--format", "jsonl"]
    shown = runner.invoke(app, [*args, "--out", str(tmp_path / "a")], env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    assert "batches of 2, sorted by length: 0.0% padding (was 43.6% in input order)" in shown.stdout
    resumed = runner.invoke(app, [*args, "--out", str(tmp_path / "a"), "--resume"], env={"COLUMNS": "200"})
    assert "batches of 2, sorted by length: none generated together in this run" in resumed.stdout
    report = json.loads(runner.invoke(app, [*args, "--out", str(tmp_path / "b"), "--json"]).stdout)
    assert report["batches"]["padding"] == 0.0 and report["batches"]["padding_in_input_order"] == 0.4361
    assert [r["input"] for r in report["records"]] == [f"data.jsonl[{i}]" for i in range(8)]
    alone = json.loads(runner.invoke(app, [*args[:-4], "--format", "jsonl", "--out", str(tmp_path / "c"),
                                           "--json"]).stdout)
    assert alone["batches"] is None
    assert [r["summary"] for r in alone["records"]] == [r["summary"] for r in report["records"]]


def test_two_processes_sort_their_own_shares_and_report_in_input_order(models, tmp_path):
    pytest.importorskip("accelerate")
    data = _rows_short_and_long(tmp_path)
    out = tmp_path / "out"
    command = [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", "2",
               "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no", "-m", "lsgtool", "summarize",
               "--dataset", str(data), "--model", str(models / "locost"), *GEN, "--batch-size", "2", "--out", str(out),
               "--format", "jsonl", "--json"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "LSGTOOL_LOAD_PLUGINS": "", "OMP_NUM_THREADS": "1"}
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert report["done"] == 8 and report["batches"]["inputs_together"] == 8  # both processes' batches counted
    assert report["batches"]["padding"] == 0.0 < report["batches"]["padding_in_input_order"]
    records = [json.loads(line) for line in (out / "summaries.jsonl").read_text().splitlines()]
    assert [r["input"] for r in records] == [f"data.jsonl[{i}]" for i in range(8)]
    assert [r["process"] for r in records] == [0] * 4 + [1] * 4
