"""`lsgtool finetune` end to end on tiny models built here: it learns (classification, seq2seq with LSG-BART and
LOCOST, MLM, GSG), resumes to the same loss curve after a real Ctrl-C, gives the same result on 2 processes
(gloo) as on one with the same global batch, takes its configuration in layers, and refuses bad input."""

import json
import os
import random
import signal
import subprocess
import sys

import pytest
import torch

from lsgtool.cli import create_app
from lsgtool.plugins.manager import make_plugin_manager

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [f"w{i}" for i in range(94)]
ENV = {**os.environ, "LSGTOOL_LOAD_PLUGINS": "", "HF_HUB_OFFLINE": "1"}


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    """Tiny BERT, BART and LOCOST folders sharing a WordPiece tokenizer, and the datasets of the tests."""
    import transformers as T

    from lsgtool.core.ssm.locost import LocostConfig, LocostForConditionalGeneration

    root = tmp_path_factory.mktemp("finetune")
    tokenizer = T.BertTokenizerFast(vocab={w: i for i, w in enumerate(VOCAB)}, model_max_length=128)
    torch.manual_seed(0)
    models = {
        "bert": T.BertForMaskedLM(T.BertConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                               intermediate_size=37, vocab_size=99, max_position_embeddings=128)),
        "bart": T.BartForConditionalGeneration(T.BartConfig(
            vocab_size=99, d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
            decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64, max_position_embeddings=128,
            pad_token_id=0, bos_token_id=2, eos_token_id=3, decoder_start_token_id=2, forced_eos_token_id=None)),
        "locost": LocostForConditionalGeneration(LocostConfig(
            vocab_size=99, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_decoder_layers=2, num_heads=4, d_state=8,
            pad_token_id=0, eos_token_id=3, decoder_start_token_id=0)),
    }
    for name, model in models.items():
        model.save_pretrained(root / name)
        tokenizer.save_pretrained(root / name)
    rng = random.Random(0)
    rows = []
    for i in range(240):  # the rule: every word from the first half of the vocabulary, or every word from the second
        positive = i % 2 == 0
        words = [f"w{rng.randint(0, 46) if positive else rng.randint(47, 93)}" for _ in range(rng.randint(5, 20))]
        rows.append({"text": " ".join(words), "label": "pos" if positive else "neg"})
    write(root / "cls.jsonl", rows)
    copies = []
    for _ in range(512):
        words = " ".join(f"w{rng.randint(5, 14)}" for _ in range(rng.randint(3, 5)))
        copies.append({"text": words, "summary": words})
    write(root / "copy.jsonl", copies)
    counting = []  # MLM: runs of consecutive words, so a masked word is predictable from its neighbours
    for _ in range(300):
        start = rng.randint(0, 70)
        counting.append({"text": " ".join(f"w{start + k}" for k in range(rng.randint(8, 20)))})
    write(root / "count.jsonl", counting)
    documents = []
    for _ in range(120):
        sentences = [" ".join(f"w{rng.randint(5, 30)}" for _ in range(rng.randint(3, 6))) + "." for _ in range(rng.randint(4, 8))]
        documents.append({"text": " ".join(s.capitalize() for s in sentences)})
    write(root / "docs.jsonl", documents)
    return root


def write(path, rows):
    path.write_text("\n".join(json.dumps(r) for r in rows))


@pytest.fixture
def app():
    return create_app(make_plugin_manager(load_installed=False))


def finetune(app, runner, *args):
    result = runner.invoke(app, ["finetune", *map(str, args), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


FAST = ["--set", "train.schedule=constant", "--set", "train.logging_steps=5"]


def test_a_classifier_learns_a_synthetic_rule_and_loads_back(app, runner, work, tmp_path):
    data = finetune(app, runner, "--task", "classification", "--model", work / "bert", "--data", work / "cls.jsonl",
                    "--out", tmp_path / "run", "--lr", 3e-3, "--epochs", 3, "--batch-size", 16)
    assert data["final_eval"]["eval_accuracy"] >= 0.9 and data["loss_drop"] > 0.5
    assert {"eval_f1_micro", "eval_f1_macro"} <= set(data["final_eval"])
    out = tmp_path / "run"
    assert data["best_checkpoint"] and (out / "checkpoints").is_dir()  # chosen by accuracy, kept as safetensors
    assert list((out / "checkpoints").glob("checkpoint-*/model.safetensors"))
    for name in ("config.json", "model.safetensors", "metrics.json", "curves.png", "finetune.toml", ".lsgtool.json"):
        assert (out / name).exists(), name
    assert json.loads((out / ".lsgtool.json").read_text())["state"] == "done"
    import lsgtool
    from transformers import AutoTokenizer

    model = lsgtool.load(str(out))
    tokenizer = AutoTokenizer.from_pretrained(out)
    batch = tokenizer(["w1 w2 w3 w40 w10", "w50 w60 w90 w70"], return_tensors="pt", padding=True)
    predicted = model(**batch).logits.argmax(-1).tolist()
    assert [model.config.id2label[i] for i in predicted] == ["pos", "neg"]


@pytest.mark.parametrize("model, extra", [("bart", ["--convert", "--block", 16, "--factor", 4, "--max-length", 256]),
                                          ("locost", [])])
def test_a_tiny_seq2seq_learns_to_copy(app, runner, work, tmp_path, model, extra):
    data = finetune(app, runner, "--task", "seq2seq", "--model", work / model, *extra, "--data", work / "copy.jsonl",
                    "--out", tmp_path / "run", "--lr", 5e-3, "--epochs", 30, "--batch-size", 32,
                    "--set", "data.validation_split=0", *FAST)
    assert data["loss_drop"] >= 0.8, data["log_history"][-3:]
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["model_type"] == ("lsg" if model == "bart" else "locost")
    document = tmp_path / "doc.txt"
    document.write_text("w5 w6 w7. w8 w9 w10. w11 w12 w13.")
    summary = runner.invoke(app, ["summarize", str(document), "--model", str(tmp_path / "run"), "--max-new-tokens", "8"])
    assert summary.exit_code == 0, summary.output  # the run folder is a summariser lsgtool summarize takes


def test_mlm_loss_falls(app, runner, work, tmp_path):
    data = finetune(app, runner, "--task", "mlm", "--model", work / "bert", "--data", work / "count.jsonl", "--out",
                    tmp_path / "run", "--lr", 3e-3, "--epochs", 20, "--batch-size", 16, *FAST)
    assert data["loss_drop"] > 0.4 and data["final_eval"]["eval_loss"] < data["first_loss"]


def test_gsg_pairs_train_a_locost_and_the_dry_run_shows_them(app, runner, work, tmp_path):
    shown = finetune(app, runner, "--task", "gsg", "--model", work / "locost", "--data", work / "docs.jsonl",
                     "--dry-run", "--show", 2)
    assert len(shown["pairs"]) == 2 and shown["gsg_sentinel"].startswith("[MASK]")
    assert all("[MASK]" in p["input"] and p["target"] for p in shown["pairs"])
    text = runner.invoke(app, ["finetune", "--task", "gsg", "--model", str(work / "locost"), "--data",
                               str(work / "docs.jsonl"), "--dry-run", "--show", "1"])
    assert text.exit_code == 0 and "[0] input:" in text.stdout and "[0] target:" in text.stdout
    data = finetune(app, runner, "--task", "gsg", "--model", work / "locost", "--data", work / "docs.jsonl", "--out",
                    tmp_path / "run", "--lr", 5e-3, "--epochs", 6, "--batch-size", 16, "--set", "gsg.ratio=0.15..0.45",
                    "--set", "data.validation_split=0", *FAST)
    assert data["loss_drop"] > 0.3 and data["gsg_skipped_documents"] == 0


def test_multilabel_and_token_classification_run_with_their_metrics(app, runner, work, tmp_path):
    rng = random.Random(1)
    tags, words = [], []
    for _ in range(120):
        chosen = sorted(rng.sample(["law", "tax", "art"], rng.randint(1, 2)))
        tags.append({"text": " ".join(f"w{10 * (1 + ['law', 'tax', 'art'].index(t)) + rng.randint(0, 5)}" for t in chosen),
                     "topics": chosen})
        sentence = [f"w{rng.randint(0, 93)}" for _ in range(rng.randint(4, 10))]
        words.append({"tokens": sentence, "tags": ["HIGH" if int(w[1:]) > 46 else "LOW" for w in sentence]})
    write(tmp_path / "tags.jsonl", tags)
    write(tmp_path / "words.jsonl", words)
    multi = finetune(app, runner, "--task", "multilabel", "--model", work / "bert", "--data", tmp_path / "tags.jsonl",
                     "--label-column", "topics", "--out", tmp_path / "m", "--lr", 3e-3, "--epochs", 8, "--batch-size", 8)
    assert multi["final_eval"]["eval_f1_micro"] > 0.6 and "eval_f1_macro" in multi["final_eval"]
    assert json.loads((tmp_path / "m" / "config.json").read_text())["problem_type"] == "multi_label_classification"
    token = finetune(app, runner, "--task", "token-classification", "--model", work / "bert", "--data",
                     tmp_path / "words.jsonl", "--text-column", "tokens", "--label-column", "tags", "--out",
                     tmp_path / "t", "--lr", 3e-3, "--epochs", 8, "--batch-size", 8)
    assert token["final_eval"]["eval_accuracy"] > 0.8


def test_global_only_trains_only_the_global_tokens_and_max_length_extends(app, runner, work, tmp_path):
    from safetensors.torch import load_file

    first = finetune(app, runner, "--task", "classification", "--model", work / "bert", "--convert", "--block", 16,
                     "--max-length", 256, "--data", work / "cls.jsonl", "--out", tmp_path / "lsg", "--max-steps", 5)
    assert first["notes"] == ["converted to LSG for 256 tokens"]
    second = finetune(app, runner, "--task", "classification", "--model", tmp_path / "lsg", "--train", "global-only",
                      "--max-length", 512, "--data", work / "cls.jsonl", "--out", tmp_path / "global", "--max-steps", 5,
                      "--lr", 1e-2)
    assert second["notes"] == ["positions extended to 512 (LSG warm start)"] and second["max_length"] == 512
    before, after = (load_file(tmp_path / name / "model.safetensors") for name in ("lsg", "global"))
    changed = {k for k in after if k in before and before[k].shape == after[k].shape and not torch.equal(before[k], after[k])}
    assert changed == {k for k in after if "global_embeddings" in k}
    assert second["trainable_parameters"] == sum(after[k].numel() for k in changed)


def test_configuration_layers_and_the_saved_config_round_trips(app, runner, work, tmp_path):
    run = tmp_path / "run.toml"
    run.write_text('[train]\nlr = 1e-3\nepochs = 2.0\nbatch_size = 4\n[data]\nvalidation_split = 0.0\n')
    data = finetune(app, runner, "--recipe", "lsg-classification", "--config", run, "--task", "classification",
                    "--model", work / "bert", "--data", work / "cls.jsonl", "--out", tmp_path / "a", "--batch-size", 8,
                    "--set", "train.lr=2e-3", "--max-steps", 3, "--dry-run")
    import tomllib

    from lsgtool.finetune.config import resolve

    names = {"model": {"name": str(work / "bert")}, "data": {"name": str(work / "cls.jsonl")}}
    settings = resolve("lsg-classification", run, {"train": {"batch_size": 8}, **names}, ["train.lr=2e-3"])
    assert settings.train.lr == 2e-3  # --set beats the file
    assert settings.train.batch_size == 8  # the option beats the file
    assert settings.train.epochs == 2.0  # the file beats the recipe (3)
    assert settings.train.grad_accum == 4 and settings.model.dropout == 0.1  # from the recipe
    assert data["train_examples"] == 240  # validation_split 0 from the file
    finetune(app, runner, "--task", "classification", "--model", work / "bert", "--data", work / "cls.jsonl", "--out",
             tmp_path / "b", "--max-steps", 2, "--set", "train.weight_decay=0.01")
    saved = tmp_path / "b" / "finetune.toml"
    assert tomllib.loads(saved.read_text())["train"]["weight_decay"] == 0.01
    again = resolve(None, saved, {"train": {}, "model": {}, "data": {}}, [])
    assert again == resolve(None, None, {"train": {"task": "classification", "max_steps": 2},
                                         "model": {"name": str(work / "bert")}, "data": {"name": str(work / "cls.jsonl")}},
                            ["train.weight_decay=0.01"])


@pytest.mark.parametrize("args, message", [
    (["--task", "regression"], "unknown --task 'regression'"),
    (["--label-column", "stars"], "--label-column 'stars': the train split has no such column"),
    (["--set", "train.learning_rate=1"], "unknown key train.learning_rate"),
    (["--set", "lr=1"], "is not section.key=value"),
    (["--set", "train.lr=fast"], "train.lr = 'fast' should be float"),
    (["--recipe", "lsg-pretrain"], "unknown --recipe 'lsg-pretrain'"),
    (["--train", "some"], "neither full nor global-only"),
    (["--train", "global-only"], "no global-token embeddings"),
    (["--freeze", "nothing.*"], "--freeze 'nothing.*' matches no parameter"),
    (["--resume"], "does not exist"),
    (["--max-length", "1024"], "--max-length 1024 exceeds the model's 128 positions"),
])
def test_bad_input_is_one_clear_line_and_exit_2(app, runner, work, tmp_path, args, message):
    base = ["finetune", "--model", str(work / "bert"), "--data", str(work / "cls.jsonl"), "--out", str(tmp_path / "o")]
    result = runner.invoke(app, [*base, *args])
    text = " ".join(result.stderr.split())
    assert result.exit_code == 2 and message in text and "Hint:" in text and "Traceback" not in text, text
    assert not (tmp_path / "o").exists()


def test_bad_data_is_refused_before_training(app, runner, work, tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    floats = tmp_path / "floats.jsonl"
    write(floats, [{"text": "w1 w2", "label": 0.5}, {"text": "w3", "label": 1.5}])
    for data, message in ((empty, "holds no examples"), (floats, "holds float values")):
        result = runner.invoke(app, ["finetune", "--model", str(work / "bert"), "--data", str(data), "--out",
                                     str(tmp_path / "o")])
        assert result.exit_code == 2 and message in result.stderr, result.stderr


def test_an_existing_run_needs_resume_or_overwrite_and_foreign_folders_are_untouched(app, runner, work, tmp_path):
    base = ["--task", "classification", "--model", work / "bert", "--data", work / "cls.jsonl", "--max-steps", 2]
    finetune(app, runner, *base, "--out", tmp_path / "run")
    again = runner.invoke(app, ["finetune", *map(str, base), "--out", str(tmp_path / "run")])
    assert again.exit_code == 2 and "holds a done run" in again.stderr and "--overwrite" in again.stderr
    finetune(app, runner, *base, "--out", tmp_path / "run", "--overwrite")
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep")
    refused = runner.invoke(app, ["finetune", *map(str, base), "--out", str(mine), "--overwrite"])
    assert refused.exit_code == 2 and "not a run folder of lsgtool finetune" in refused.stderr
    assert [p.name for p in mine.iterdir()] == ["notes.txt"]


def _command(work, out, *extra):
    return [sys.executable, "-m", "lsgtool", "finetune", "--task", "classification", "--model", str(work / "bert"),
            "--data", str(work / "cls.jsonl"), "--out", str(out), "--lr", "1e-3", "--max-steps", "40",
            "--batch-size", "8", "--set", "train.logging_steps=1", "--set", "train.save_steps=100",
            "--set", "data.validation_split=0", "--set", "model.dropout=0.0", *extra]


def _losses(out):
    return [h["loss"] for h in json.loads((out / "metrics.json").read_text())["log_history"] if "loss" in h]


def test_ctrl_c_then_resume_gives_the_same_loss_curve(work, tmp_path):
    whole = subprocess.run(_command(work, tmp_path / "whole"), env=ENV, capture_output=True, text=True, timeout=300)
    assert whole.returncode == 0, whole.stderr
    process = subprocess.Popen(_command(work, tmp_path / "cut"), env=ENV, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    line = ""
    while not line.startswith("step 12/40"):  # off a terminal, a line per logged step
        line = process.stderr.readline()
        assert line, "no progress lines"
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=300)
    assert process.returncode == 130, stderr
    assert "--resume" in stderr and "Traceback" not in stderr
    marker = json.loads((tmp_path / "cut" / ".lsgtool.json").read_text())
    assert marker["state"] == "interrupted" and not (tmp_path / "cut" / "model.safetensors").exists()
    stopped_at = len(_losses(tmp_path / "cut"))
    assert 12 <= stopped_at < 40
    resumed = subprocess.run(_command(work, tmp_path / "cut", "--resume"), env=ENV, capture_output=True, text=True,
                             timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert _losses(tmp_path / "cut") == pytest.approx(_losses(tmp_path / "whole"), rel=1e-5, abs=1e-6)
    assert len(_losses(tmp_path / "whole")) == 40


def test_two_processes_match_one_with_the_same_global_batch(work, tmp_path):
    sequential = ["--set", "train.sampling=sequential", "--max-steps", "8"]
    one = subprocess.run(_command(work, tmp_path / "one", *sequential), env=ENV, capture_output=True, text=True,
                         timeout=300)
    assert one.returncode == 0, one.stderr
    command = _command(work, tmp_path / "two", *sequential, "--batch-size", "4")
    two = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_port",
                          str(29500 + os.getpid() % 1000), *command[1:]], env=ENV, capture_output=True, text=True,
                         timeout=300)
    assert two.returncode == 0, two.stderr[-3000:]
    assert _losses(tmp_path / "two") == pytest.approx(_losses(tmp_path / "one"), rel=1e-4, abs=1e-5)
    from safetensors.torch import load_file

    a, b = (load_file(tmp_path / name / "model.safetensors") for name in ("one", "two"))
    assert all(torch.allclose(a[k], b[k], atol=1e-4) for k in a)


def test_on_a_terminal_the_missing_model_and_data_are_asked_for(terminal, work, tmp_path):
    args = ["finetune", "--task", "classification", "--max-steps", "2", "--out", str(tmp_path / "run")]
    run = terminal(args, answers=[("number or value", str(work / "bert")), ("Which data", str(work / "cls.jsonl"))],
                   cwd=tmp_path, env={"LSGTOOL_LOAD_PLUGINS": ""}, timeout=240)
    assert run.returncode == 0 and not run.unanswered, run.output
    assert (tmp_path / "run" / "model.safetensors").exists()


def test_early_stopping_and_gradient_checkpointing(app, runner, work, tmp_path):
    stopped = finetune(app, runner, "--task", "classification", "--model", work / "bert", "--data", work / "cls.jsonl",
                       "--out", tmp_path / "a", "--lr", 1e-12, "--max-steps", 50, "--set", "train.eval_steps=1",
                       "--set", "train.patience=2", "--set", "train.metric=loss")
    assert stopped["steps"] < 10  # evaluation loss stopped improving: early stopping ended the run
    checkpointed = finetune(app, runner, "--task", "classification", "--model", work / "bert", "--convert", "--block", 16,
                            "--max-length", 256, "--data", work / "cls.jsonl", "--out", tmp_path / "b", "--max-steps", 3,
                            "--set", "train.gradient_checkpointing=true")
    assert checkpointed["steps"] == 3 and checkpointed["train_metrics"]["train_loss"] > 0
