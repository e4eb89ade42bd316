"""Past one machine: ``summarize --dataset`` and ``finetune`` run as a 2-node job (one process per node, the
nodes' launchers started here as two processes meeting on 127.0.0.1, gloo on CPU) give what one process gives."""

import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import torch

pytest.importorskip("accelerate")

ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "LSGTOOL_LOAD_PLUGINS": "", "OMP_NUM_THREADS": "1"}
GEN = ["--max-new-tokens", "4", "--num-beams", "1"]
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [f"w{i}" for i in range(94)]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def torchrun(rank: int, port: int) -> list[str]:
    """What node ``rank`` of a 2-node job runs: the real command with the head node's address (here 127.0.0.1)."""
    return [sys.executable, "-m", "torch.distributed.run", "--nnodes", "2", "--nproc_per_node", "1",
            "--node_rank", str(rank), "--master_addr", "127.0.0.1", "--master_port", str(port)]


def accelerate(rank: int, port: int) -> list[str]:
    """The same with accelerate: 2 machines, 2 processes in all (--multi_gpu is its multi-process switch; without
    GPUs the processes talk through gloo)."""
    return [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_machines", "2",
            "--num_processes", "2", "--machine_rank", str(rank), "--main_process_ip", "127.0.0.1",
            "--main_process_port", str(port), "--mixed_precision", "no", "--dynamo_backend", "no"]


def two_nodes(launcher, args: list[str], cwd, timeout: int = 240,
              env: dict | None = None) -> list[subprocess.CompletedProcess]:
    """Node 0 and node 1 of one job, each its own launcher started in ``cwd`` (or one folder each: machines that do
    not share a disk); a rendezvous or collective that hangs fails the test, and every process of the job is killed
    (the launchers' workers run in sessions of their own: they are found by a mark in their environment)."""
    cwds = cwd if isinstance(cwd, (list, tuple)) else (cwd, cwd)
    port, mark = _free_port(), uuid.uuid4().hex
    logs = [(Path(cwds[rank]) / f".node{rank}.out", Path(cwds[rank]) / f".node{rank}.err") for rank in (0, 1)]
    nodes = []
    for rank in (0, 1):
        with open(logs[rank][0], "w") as stdout, open(logs[rank][1], "w") as stderr:  # files: no pipe to hold open
            nodes.append(subprocess.Popen([*launcher(rank, port), "-m", "lsgtool", *args], cwd=cwds[rank],
                                          env={**ENV, **(env or {}), "LSGTOOL_TEST_JOB": mark}, stdout=stdout,
                                          stderr=stderr,
                                          text=True, start_new_session=True))
    try:
        for node in nodes:
            node.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the 2-node job did not finish in {timeout} s (rendezvous or collective hung)")
    finally:
        _kill_marked(mark)
    return [subprocess.CompletedProcess(node.args, node.returncode, out.read_text(), err.read_text())
            for node, (out, err) in zip(nodes, logs)]


def _kill_marked(mark: str) -> None:
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            if f"LSGTOOL_TEST_JOB={mark}".encode() in environ.read_bytes().split(b"\0"):
                os.kill(int(environ.parent.name), signal.SIGKILL)
        except (OSError, ValueError):
            continue  # gone, or not ours to read


def succeeded(nodes: list[subprocess.CompletedProcess]) -> list[subprocess.CompletedProcess]:
    for rank, node in enumerate(nodes):
        assert node.returncode == 0, f"node {rank}:\n{node.stderr[-3000:]}"
    return nodes


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    """A dataset of 5 rows: the nodes take 3 and 2."""
    root = tmp_path_factory.mktemp("dataset")
    rows = [{"article": f"The storm number {i} came over the hills. The river rose {i} feet.", "summary": "A storm."}
            for i in range(5)]
    (root / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


def _summarize(models, fmt: str) -> list[str]:
    return ["summarize", "--dataset", "data.jsonl", "--model", str(models / "bart-lsg"), *GEN, "--format", fmt]


@pytest.mark.parametrize(("launcher", "fmt"), [(torchrun, "jsonl"), (accelerate, "md")], ids=["torchrun", "accelerate"])
def test_summarize_dataset_on_two_nodes_gives_the_one_process_summaries(launcher, fmt, models, dataset):
    one = subprocess.run([sys.executable, "-m", "lsgtool", *_summarize(models, fmt), "--out", f"one-{fmt}"], env=ENV,
                         cwd=dataset, capture_output=True, text=True, timeout=240)
    assert one.returncode == 0, one.stderr[-3000:]
    head, other = succeeded(two_nodes(launcher, [*_summarize(models, fmt), "--out", f"two-{fmt}", "--json"], dataset))
    report = json.loads(head.stdout)  # one report, from the head node
    assert report["done"] == 5 and report["failed"] == [] and other.stdout == ""
    one, two = dataset / f"one-{fmt}", dataset / f"two-{fmt}"
    records = sorted((json.loads(f.read_text()) for f in (two / ".lsgtool-summaries" / "records").glob("*.json")),
                     key=lambda r: r["input"])
    alone = sorted((json.loads(f.read_text()) for f in (one / ".lsgtool-summaries" / "records").glob("*.json")),
                   key=lambda r: r["input"])
    assert [r["process"] for r in records] == [0, 0, 0, 1, 1]  # the rows were shared between the nodes
    assert [r["input"] for r in records] == [r["input"] for r in alone] == [f"data.jsonl[{i}]" for i in range(5)]
    assert [r["summary"] for r in records] == [r["summary"] for r in alone]
    outputs = sorted(p.name for p in one.iterdir() if not p.name.startswith("."))
    assert sorted(p.name for p in two.iterdir() if not p.name.startswith(".")) == outputs == sorted(report["outputs"])
    if fmt == "md":  # one file per row, written by the node that summarised it: the same files
        assert all((two / name).read_text() == (one / name).read_text() for name in outputs)
    else:  # one file, written by the head node: the rows in order
        assert [json.loads(line)["summary"] for line in (two / "summaries.jsonl").read_text().splitlines()] == \
            [r["summary"] for r in alone]
    assert not list(two.rglob("*lsgtool-tmp*")) and not list(two.glob(".lsgtool-probe*"))


@pytest.fixture(scope="module")
def tiny_classifier(tmp_path_factory):
    """A tiny BERT with a WordPiece tokenizer, and 64 labelled rows."""
    import transformers as T

    root = tmp_path_factory.mktemp("multinode")
    torch.manual_seed(0)
    T.BertForMaskedLM(T.BertConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=37,
                                   vocab_size=99, max_position_embeddings=64)).save_pretrained(root / "bert")
    T.BertTokenizerFast(vocab={w: i for i, w in enumerate(VOCAB)}, model_max_length=64).save_pretrained(root / "bert")
    rng = random.Random(0)
    rows = []
    for i in range(64):
        words = [f"w{rng.randint(0, 46) if i % 2 else rng.randint(47, 93)}" for _ in range(rng.randint(5, 20))]
        rows.append({"text": " ".join(words), "label": "odd" if i % 2 else "even"})
    (root / "cls.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    return root


def _finetune(root) -> list[str]:
    return ["finetune", "--task", "classification", "--model", str(root / "bert"), "--data", str(root / "cls.jsonl"),
            "--lr", "1e-3", "--max-steps", "6", "--set", "train.logging_steps=1", "--set", "train.save_steps=3",
            "--set", "data.validation_split=0", "--set", "model.dropout=0.0", "--set", "train.sampling=sequential"]


@pytest.fixture(scope="module")
def one_process_run(tiny_classifier):
    """The run of one process, 8 rows a step."""
    one = subprocess.run([sys.executable, "-m", "lsgtool", *_finetune(tiny_classifier), "--batch-size", "8", "--out",
                          "one"], env=ENV, cwd=tiny_classifier, capture_output=True, text=True, timeout=240)
    assert one.returncode == 0, one.stderr[-3000:]
    return tiny_classifier / "one"


def _losses(run) -> list[float]:
    return [h["loss"] for h in json.loads((run / "metrics.json").read_text())["log_history"] if "loss" in h]


@pytest.mark.parametrize("launcher", [torchrun, accelerate], ids=["torchrun", "accelerate"])
def test_finetune_on_two_nodes_gives_the_one_process_losses_and_weights(launcher, tiny_classifier, one_process_run,
                                                                        tmp_path):
    # Equal because every step trains on the same 8 rows: sequential sampling, 4 rows a node (accelerate's loader
    # gives consecutive batches to ranks 0 and 1, so rows 0-7 make the first step on both runs), DDP averages the
    # two nodes' gradients (each the mean over its 4 rows, so their mean is the mean over the 8), no dropout.
    head, other = succeeded(two_nodes(launcher, [*_finetune(tiny_classifier), "--batch-size", "4", "--out", "two",
                                                 "--json"], tmp_path))
    assert json.loads(head.stdout)["steps"] == 6 and other.stdout == ""  # the head node reports
    two = tmp_path / "two"
    assert len(_losses(one_process_run)) == 6
    assert _losses(two) == pytest.approx(_losses(one_process_run), rel=1e-4, abs=1e-4)
    from safetensors.torch import load_file

    a, b = load_file(one_process_run / "model.safetensors"), load_file(two / "model.safetensors")
    assert a.keys() == b.keys() and all(torch.allclose(a[k], b[k], atol=1e-4) for k in a)
    assert sorted(p.name for p in (two / "checkpoints").iterdir()) == ["checkpoint-3", "checkpoint-6"]
    assert json.loads((two / ".lsgtool.json").read_text())["state"] == "done"
    assert not list(two.rglob("*lsgtool-tmp*")) and not list(two.glob(".lsgtool-probe*"))


def test_a_run_folder_the_head_node_refuses_stops_both_nodes(tiny_classifier, tmp_path):
    # only the head node checks and writes the folder: before, node 1 went on and waited for it (30 minutes)
    run = tmp_path / "run"
    run.mkdir()
    (run / ".lsgtool.json").write_text(json.dumps({"written_by": "lsgtool", "command": "finetune", "state": "done"}))
    head, other = two_nodes(torchrun, [*_finetune(tiny_classifier), "--out", "run"], tmp_path, timeout=120)
    assert head.returncode and other.returncode  # the launchers exit 1 whatever their process's code
    assert "Error: --out run holds a done run." in head.stderr
    assert "Error: process 0 (on " in other.stderr and "holds a done run" in other.stderr
    assert "--overwrite" in other.stderr  # the head node's hint, too


def test_a_dataset_one_node_lacks_stops_both_nodes(models, tmp_path):
    # node 1 runs where the relative path finds nothing: before, node 0 loaded its model and waited for node 1
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
    (tmp_path / "a" / "data.jsonl").write_text(json.dumps({"article": "The storm came.", "summary": "A storm."}) + "\n")
    args = ["summarize", "--dataset", "data.jsonl", "--model", str(models / "bart-lsg"), *GEN, "--out",
            str(tmp_path / "out")]
    head, other = two_nodes(torchrun, args, (tmp_path / "a", tmp_path / "b"), timeout=120)
    assert head.returncode and other.returncode, (head.stderr[-2000:], other.stderr[-2000:])  # launchers: 1
    assert "Error: process 1 (on " in head.stderr and "data.jsonl" in head.stderr
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


@pytest.mark.parametrize("command", ["summarize", "finetune"])
def test_an_out_folder_the_nodes_do_not_share_is_refused_on_both(command, models, tiny_classifier, tmp_path):
    # machines with their own disks at --out: the second would write its share (summaries, resume points) where
    # the first never looks, or resume from nothing; each node runs in a folder of its own, --out relative
    folders = (tmp_path / "a", tmp_path / "b")
    for folder in folders:
        folder.mkdir()
        (folder / "data.jsonl").write_text(json.dumps({"article": "The storm came.", "summary": "A storm."}) + "\n")
    args = ["summarize", "--dataset", "data.jsonl", "--model", str(models / "bart-lsg"), *GEN] \
        if command == "summarize" else _finetune(tiny_classifier)
    head, other = two_nodes(torchrun, [*args, "--out", "out"], folders, timeout=120)
    assert head.returncode and other.returncode, (head.stderr[-2000:], other.stderr[-2000:])  # launchers: 1
    assert "is not the folder the first process writes" in other.stderr
    assert "Error: process 1 (on " in head.stderr and "storage every machine mounts" in head.stderr


def stopped_together(nodes: list[subprocess.CompletedProcess], code: int) -> None:
    """Both nodes' lsgtool processes exited ``code`` (their launchers exit 1 and say which code), neither on a
    closed connection: each said why."""
    for rank, node in enumerate(nodes):
        codes = set(re.findall(r"exitcode\s*:\s*(\d+)", node.stderr))
        assert codes == {str(code)}, f"node {rank}:\n{node.stderr[-3000:]}"
        for noise in ("gloo", "Connection closed", "exit barrier", "stopped without saying why"):
            assert noise not in node.stderr, f"node {rank}:\n{node.stderr[-3000:]}"


@pytest.mark.parametrize(("texts", "head", "code"), [
    # one row, node 0's: the batch stage refuses it there (a usage error); node 1, with no row, waited for node 0
    # in a gather and died on gloo's "Connection closed by peer"
    ([""], "Error: row 0 of 'data.jsonl' has no text in column 'article'.", 2),  # issue 29, item 5
    # node 1's row: kept as that input's failure, which node 0 reports (a runtime failure); node 1 exited 0 and its
    # launcher failed on the vanished head node
    (["The storm came.", ""], "Error: 1 of 2 inputs failed: data.jsonl[1]: row 1 of 'data.jsonl' has no text in "
                              "column 'article'.", 1),  # issue 29, item 5
], ids=["batch-stage", "report"])
def test_a_dataset_row_without_text_stops_both_nodes_saying_why(texts, head, code, models, tmp_path):
    (tmp_path / "data.jsonl").write_text("".join(json.dumps({"article": t, "summary": "A storm."}) + "\n"
                                                 for t in texts))
    args = ["summarize", "--dataset", "data.jsonl", "--model", str(models / "bart-lsg"), *GEN, "--out", "out"]
    nodes = two_nodes(torchrun, args, tmp_path, timeout=120)
    stopped_together(nodes, code)
    assert head in nodes[0].stderr
    assert f"Error: process 0 (on {socket.gethostname()}) stopped: {head.removeprefix('Error: ')}" in nodes[1].stderr
    hint = "Hint: check the dataset." if code == 2 else "Hint: the other inputs were summarised"
    assert hint in nodes[0].stderr and hint in nodes[1].stderr


FULL_DISK = """
import os

if os.environ.get("LOCAL_RANK") is not None and os.environ.get("RANK") == "0":  # the head node's lsgtool only
    import lsgtool.finetune.train as train

    def save_final(*args, **kwargs):
        raise OSError(28, "No space left on device")

    train.save_final = save_final
"""


def test_a_failure_of_the_head_node_alone_after_training_stops_both_nodes_saying_why(tiny_classifier, tmp_path):
    # issue 29, item 5: only the head node writes the final model; its disk full (simulated), it stopped alone, and
    # node 1 exited 0 while its launcher failed on the head node's vanished rendezvous store
    (tmp_path / "inject").mkdir()
    (tmp_path / "inject" / "sitecustomize.py").write_text(FULL_DISK)
    env = {"PYTHONPATH": os.pathsep.join(filter(None, [str(tmp_path / "inject"), os.environ.get("PYTHONPATH")]))}
    nodes = two_nodes(torchrun, [*_finetune(tiny_classifier), "--max-steps", "1", "--out", "run"], tmp_path,
                      timeout=120, env=env)
    stopped_together(nodes, 1)
    assert "Error: OSError: [Errno 28] No space left on device" in nodes[0].stderr
    assert f"Error: process 0 (on {socket.gethostname()}) stopped: OSError: [Errno 28] No space left on device" \
        in nodes[1].stderr


CLOSED_AT_EXIT = """
import atexit
import os
import sys

import torch.distributed as dist

said = open(os.path.join(sys.argv[1], "rank" + os.environ["RANK"]), "w")
atexit.register(lambda: said.write(f"open at exit: {dist.is_initialized()}"))  # runs after what start registers
from lsgtool import distributed

distributed.start(cpu=True)
distributed.start(cpu=True)  # a second run in the same process: the group is still closed once
said.write(f"running: {distributed.running()}; ")
"""


def test_each_process_closes_the_group_before_python_tears_down(tmp_path):
    # the CI of stop 38: a 2-process finetune that trained and saved exited 1, its second process aborted in Python's
    # teardown by gloo's threads ("terminate called without an active exception") with the group never closed
    (tmp_path / "job.py").write_text(CLOSED_AT_EXIT)
    job = subprocess.run([*torchrun(0, _free_port())[:3], "--nproc_per_node", "2", "--master_port", str(_free_port()),
                          str(tmp_path / "job.py"), str(tmp_path)], env=ENV, capture_output=True, text=True,
                         timeout=120)
    assert job.returncode == 0, job.stderr[-3000:]
    for rank in (0, 1):
        assert (tmp_path / f"rank{rank}").read_text() == "running: True; open at exit: False"


EXIT_FUNCTIONS = """
import atexit
import os

atexit.register(lambda: open("exit-functions-ran-" + os.environ.get("RANK", "-"), "w").close())
"""


def test_a_failed_run_ends_each_node_with_its_exit_code_and_its_exit_functions(models, tmp_path):
    # CI of stop 42: node 0 said its error, closed the group, then aborted in the interpreter's teardown (SIGABRT,
    # "terminate called without an active exception"): a process of a group now leaves after its exit functions,
    # without the teardown (the abort itself is rare and cannot be forced here: this holds the new way out to the
    # exit code and to the exit functions every exit runs)
    (tmp_path / "inject").mkdir()
    (tmp_path / "inject" / "sitecustomize.py").write_text(EXIT_FUNCTIONS)
    (tmp_path / "data.jsonl").write_text("".join(json.dumps({"article": t, "summary": "A storm."}) + "\n"
                                                 for t in ["The storm came.", ""]))
    env = {"PYTHONPATH": os.pathsep.join(filter(None, [str(tmp_path / "inject"), os.environ.get("PYTHONPATH")]))}
    args = ["summarize", "--dataset", "data.jsonl", "--model", str(models / "bart-lsg"), *GEN, "--out", "out"]
    stopped_together(two_nodes(torchrun, args, tmp_path, timeout=120, env=env), 1)
    ran = {p.name for p in tmp_path.glob("exit-functions-ran-*")}  # "-": the launchers' own, which run them too
    assert {"exit-functions-ran-0", "exit-functions-ran-1"} <= ran
