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

# A run resumed inside an epoch with dropout follows the uninterrupted curve exactly from transformers 5.24 (found
# by bisecting 5.0-5.24 with the MLM test below: 5.23 and older drift from the first resumed step, by 4e-5 relative
# for MLM, 4e-4 for the classifier): the random state reaches that step otherwise there. Strict: it is known.
EXACT_RESUME = pytest.mark.xfail(
    tuple(int(part) for part in __import__("transformers").__version__.split(".")[:2]) < (5, 24),
    reason="transformers < 5.24: the resumed step's random state differs (dropout)", raises=AssertionError,
    strict=True)


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


def test_a_generating_evaluation_leaves_the_saved_model_summarising_as_before(app, runner, work, tmp_path):
    # transformers' Seq2SeqTrainer filled the model's generation config with its old defaults (max_length 20,
    # num_beams 1, ...) at each generating evaluation: saved, they made every summary of the model 20 tokens long
    finetune(app, runner, "--task", "seq2seq", "--model", work / "locost", "--data", work / "copy.jsonl", "--out",
             tmp_path / "run", "--max-steps", 4, "--batch-size", 8, "--set", "train.eval_steps=2",
             "--set", "train.generate_length=8", "--set", "data.validation_split=0.05", *FAST)
    saved = json.loads((tmp_path / "run" / "generation_config.json").read_text())
    assert "max_length" not in saved and "num_beams" not in saved, saved
    document = tmp_path / "doc.txt"
    document.write_text("w5 w6 w7. w8 w9 w10. w11 w12 w13.")
    result = runner.invoke(app, ["summarize", str(document), "--model", str(tmp_path / "run"), "--json"])
    assert result.exit_code == 0, result.output
    settings = json.loads(result.stdout)["settings"]
    assert settings["max_new_tokens"] == 256 and settings["sources"]["max_new_tokens"] == "lsgtool default"


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
    # issue 21, item 9 (--epochs 0 wrote an untrained "final model": tests/commands/test_numeric_options.py); the
    # TOML / --set path is checked like the options
    (["--set", "train.epochs=0"], "--epochs (train.epochs) must be more than 0, got 0.0"),
    (["--set", "train.logging_steps=0"], "train.logging_steps must be at least 1, got 0"),
    # issue 21, item 16: this raised after the run folder was marked running
    (["--set", "train.save_steps=5"], "train.save_steps 5 with an evaluation split needs train.eval_steps"),
    (["--set", "train.save_steps=5", "--set", "train.eval_steps=2"], "train.save_steps 5 is not a multiple"),
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
    # issue 29, item 16: one class trained a regression (MSE, "accuracy 1.0") and exited 0
    one_class = tmp_path / "one.jsonl"
    write(one_class, [{"text": "w1 w2", "label": "pos"}, {"text": "w3", "label": "pos"}])
    for data, message in ((empty, "holds no examples"), (floats, "holds float values"),
                          (one_class, "--label-column 'label' holds 1 class ('pos'): classification needs at least two")):
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


def _stopped_and_resumed(command, tmp_path, at: str) -> tuple[dict, dict]:
    """``command(out, *extra)`` run whole, and run again stopped by a real Ctrl-C (SIGINT) once its progress shows
    ``step {at}``, then resumed; the metrics.json of both."""
    whole = subprocess.run(command(tmp_path / "whole"), env=ENV, capture_output=True, text=True, timeout=300)
    assert whole.returncode == 0, whole.stderr
    process = subprocess.Popen(command(tmp_path / "cut"), env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    line = ""
    while not line.startswith(f"step {at}"):  # off a terminal, a line per logged step
        line = process.stderr.readline()
        assert line, "no progress lines"
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=300)
    assert process.returncode == 130, stderr
    assert "--resume" in stderr and "Traceback" not in stderr
    marker = json.loads((tmp_path / "cut" / ".lsgtool.json").read_text())
    assert marker["state"] == "interrupted" and not (tmp_path / "cut" / "model.safetensors").exists()
    stopped = json.loads((tmp_path / "cut" / "metrics.json").read_text())
    resumed = subprocess.run(command(tmp_path / "cut", "--resume"), env=ENV, capture_output=True, text=True,
                             timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    return *(json.loads((tmp_path / name / "metrics.json").read_text()) for name in ("whole", "cut")), stopped


def _evaluations(metrics: dict) -> dict[int, float]:
    """Evaluation loss by step (an evaluation logged twice at a step would show in the count of its logs)."""
    found = [(h["step"], h["eval_loss"]) for h in metrics["log_history"] if "eval_loss" in h]
    assert len(found) == len(dict(found)), found
    return dict(found)


@EXACT_RESUME
def test_ctrl_c_inside_an_epoch_then_resume_gives_the_same_curve_evaluations_and_weights(work, tmp_path):
    """A run stopped by Ctrl-C inside its first epoch and resumed trains as one never stopped: the same loss at
    every step, the same evaluations, the same final weights. Issue 29, item 15: the Trainer left its loop through
    the epoch's end, whose evaluation (each epoch, the default) was added at the stopped step and drew from the
    random state the checkpoint then kept, so with dropout the resumed curve left the uninterrupted one (0.6529 vs
    0.6626 at step 7). Item 11: dropout 0.1, so a random state lost or restored at another point shows."""
    # issue 29, items 15 and 11
    def command(out, *extra):  # 216 training examples, batch 8: 27 steps an epoch; 12 steps end inside it
        return [sys.executable, "-m", "lsgtool", "finetune", "--task", "classification", "--model", str(work / "bert"),
                "--data", str(work / "cls.jsonl"), "--out", str(out), "--lr", "1e-3", "--max-steps", "12",
                "--batch-size", "8", "--set", "train.logging_steps=1", "--set", "model.dropout=0.1", *extra]

    whole, cut, stopped = _stopped_and_resumed(command, tmp_path, "6/12")
    assert 6 <= stopped["steps"] < 12 and _evaluations(stopped) == {}  # no evaluation from the interruption
    assert len(_losses(tmp_path / "whole")) == 12
    assert _losses(tmp_path / "cut") == pytest.approx(_losses(tmp_path / "whole"), rel=1e-6, abs=1e-7)
    assert _evaluations(cut) == pytest.approx(_evaluations(whole), rel=1e-6) and len(_evaluations(whole)) == 1
    from safetensors.torch import load_file

    a, b = (load_file(tmp_path / name / "model.safetensors") for name in ("whole", "cut"))
    assert a.keys() == b.keys() and max((a[k] - b[k]).abs().max().item() for k in a) <= 1e-6


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


def _spy_on_training(monkeypatch) -> dict:
    """What the trainer had at each step: whether the model ran with gradient checkpointing."""
    from transformers import TrainerCallback

    from lsgtool.finetune import train

    seen = {"checkpointing": []}

    class Spy(TrainerCallback):
        def on_step_end(self, args, state, control, model=None, **kwargs):
            name = "is_activation_checkpointing" if hasattr(type(model), "is_activation_checkpointing") else \
                "is_gradient_checkpointing"  # transformers 5 renamed it
            seen["checkpointing"].append(bool(getattr(model, name)))

    original = train.callbacks
    monkeypatch.setattr(train, "callbacks", lambda *a: [*original(*a), Spy()])
    return seen


def test_early_stopping_and_gradient_checkpointing(app, runner, work, tmp_path, monkeypatch):
    stopped = finetune(app, runner, "--task", "classification", "--model", work / "bert", "--data", work / "cls.jsonl",
                       "--out", tmp_path / "a", "--lr", 1e-12, "--max-steps", 50, "--set", "train.eval_steps=1",
                       "--set", "train.patience=2", "--set", "train.metric=loss")
    assert stopped["steps"] < 10  # evaluation loss stopped improving: early stopping ended the run
    seen = _spy_on_training(monkeypatch)
    checkpointed = finetune(app, runner, "--task", "classification", "--model", work / "bert", "--convert", "--block", 16,
                            "--max-length", 256, "--data", work / "cls.jsonl", "--out", tmp_path / "b", "--max-steps", 3,
                            "--set", "train.gradient_checkpointing=true")
    assert checkpointed["steps"] == 3 and checkpointed["train_metrics"]["train_loss"] > 0
    assert seen["checkpointing"] == [True] * 3  # it reached the model: every step ran with it


def _spy_on(monkeypatch, module, name) -> list:
    """Calls ``module.name`` as before and keeps what each call returned."""
    kept, original = [], getattr(module, name)

    def spy(*args, **kwargs):
        kept.append(original(*args, **kwargs))
        return kept[-1]

    monkeypatch.setattr(module, name, spy)
    return kept


def test_a_cut_target_still_ends_with_the_end_token(app, runner, work, tmp_path, monkeypatch):
    """Issue 21, item 2: targets cut at data.target_length (GSG targets, 30% of a document, almost always are)
    end with the end token, so a truncated example does not teach the model never to stop; cuts are counted."""
    from lsgtool.finetune import data as D

    encoded = _spy_on(monkeypatch, D, "encode")
    result = finetune(app, runner, "--task", "seq2seq", "--model", work / "bart", "--data", work / "copy.jsonl",
                      "--out", tmp_path / "run", "--max-steps", 1, "--set", "data.target_length=4", "--set",
                      "data.validation_split=0")
    train, _, _ = encoded[0]
    labels = train["labels"]
    assert result["truncated_examples"] == sum(len(row) == 4 for row in labels) > 100
    assert all(row[-1] == 3 for row in labels), [row for row in labels if row[-1] != 3][:3]  # [SEP], BART's eos here


@pytest.mark.internals  # transformers' Trainer hooks (compat "trainer_resume"): run on the floor too
@EXACT_RESUME
def test_mlm_stopped_inside_a_logging_window_resumes_to_the_same_curve(app, runner, work, tmp_path, monkeypatch):
    """Issue 29, item 15, beyond the classifier's curve: MLM masks were drawn in the collator, which accelerate's
    loader runs a batch ahead, so the first batch after the checkpoint was masked before it and the resumed run
    masked it from another random state; the loss summed since the last log (logging_steps 5) was lost, so the
    first log after the resume averaged fewer steps. The stop is what Ctrl-C sets (the two tests above send a
    real SIGINT), asked during step 7: in-process, three runs take seconds."""
    # issue 29, item 15
    from transformers import TrainerCallback

    from lsgtool.finetune import train

    stopping, original = {"at": None}, train.callbacks

    def with_a_stop(stop, *rest):
        class StopAt(TrainerCallback):
            def on_step_begin(self, args, state, control, **kwargs):
                stop.requested = stop.requested or state.global_step + 1 == stopping["at"]

        return [*original(stop, *rest), StopAt()]

    monkeypatch.setattr(train, "callbacks", with_a_stop)
    base = ["finetune", "--task", "mlm", "--model", str(work / "bert"), "--data", str(work / "count.jsonl"), "--lr",
            "1e-3", "--max-steps", "12", "--batch-size", "8", "--set", "train.logging_steps=5", "--set",
            "model.dropout=0.1", "--json"]
    finetune(app, runner, *base[1:-1], "--out", tmp_path / "whole")
    stopping["at"] = 7
    stopped = runner.invoke(app, [*base, "--out", str(tmp_path / "cut")])
    assert stopped.exit_code == 130 and "interrupted at step 7 of 12" in stopped.stderr, stopped.output
    stopping["at"] = None
    finetune(app, runner, *base[1:-1], "--out", tmp_path / "cut", "--resume")
    one, two = (json.loads((tmp_path / name / "metrics.json").read_text()) for name in ("whole", "cut"))
    assert [h["step"] for h in two["log_history"] if "loss" in h] == [5, 10]
    assert _losses(tmp_path / "cut") == pytest.approx(_losses(tmp_path / "whole"), rel=1e-6, abs=1e-7)
    assert _evaluations(two) == pytest.approx(_evaluations(one), rel=1e-6) and len(_evaluations(one)) == 1
    from safetensors.torch import load_file

    a, b = (load_file(tmp_path / name / "model.safetensors") for name in ("whole", "cut"))
    assert max((a[k] - b[k]).abs().max().item() for k in a) <= 1e-6


def test_resume_in_a_later_epoch_gives_the_same_curve_best_checkpoint_and_evaluations(work, tmp_path):
    """Issue 21, item 3: with the default sampling (group_by_length) a run stopped by Ctrl-C in its second epoch
    and resumed trains on the same order: same losses, same evaluations, same best checkpoint. Issue 29, item 11:
    with dropout, so the random state's restore is exercised too."""
    # issue 29, item 11
    def command(out, *extra):  # 216 training examples, batch 8: 27 steps an epoch
        return [sys.executable, "-m", "lsgtool", "finetune", "--task", "classification", "--model", str(work / "bert"),
                "--data", str(work / "cls.jsonl"), "--out", str(out), "--lr", "1e-3", "--max-steps", "40",
                "--batch-size", "8", "--set", "train.logging_steps=1", "--set", "train.eval_steps=10", "--set",
                "train.save_steps=10", "--set", "model.dropout=0.1", *extra]

    one, two, stopped = _stopped_and_resumed(command, tmp_path, "33/40")
    assert 33 <= stopped["steps"] < 40
    assert _losses(tmp_path / "cut") == pytest.approx(_losses(tmp_path / "whole"), rel=1e-6, abs=1e-7)
    assert _evaluations(two) == pytest.approx(_evaluations(one), rel=1e-6) and len(_evaluations(one)) == 4
    assert two["best_checkpoint"].replace("cut", "whole") == one["best_checkpoint"]
    assert two["final_eval"] == pytest.approx(one["final_eval"], rel=1e-6)


def test_a_resume_with_changed_settings_is_refused_and_the_model_files_are_readable(app, runner, work, tmp_path,
                                                                                    monkeypatch):
    """Issue 21, item 4: a resumed run continues with its checkpoint's scheduler and optimizer, so a changed
    setting would not take effect while finetune.toml said it did: refused before the model loads. Item 17: the
    final model's files get the permissions a normal file gets (convert's 0644, not 0600)."""
    import stat

    base = ["--task", "classification", "--model", work / "bert", "--data", work / "cls.jsonl", "--out",
            tmp_path / "run", "--lr", 1e-3, "--max-steps", 2, "--set", "train.save_steps=1", "--set",
            "data.validation_split=0"]
    finetune(app, runner, *base)
    umask = os.umask(0)
    os.umask(umask)
    for name in ("model.safetensors", "config.json", "tokenizer.json"):
        assert stat.S_IMODE((tmp_path / "run" / name).stat().st_mode) == 0o666 & ~umask, name
    saved = (tmp_path / "run" / "finetune.toml").read_text()
    import lsgtool.core.load as load

    monkeypatch.setattr(load, "resolve", lambda *a, **k: pytest.fail("the model was looked up"))
    result = runner.invoke(app, ["finetune", *map(str, base), "--resume", "--lr", "5e-2"])
    text = " ".join(result.stderr.split())
    assert result.exit_code == 2, result.output
    assert "Error: --resume with train.lr 0.05, but the run was started with 0.001." in text
    assert "Hint:" in text and "finetune.toml" in text and "Traceback" not in text
    assert (tmp_path / "run" / "finetune.toml").read_text() == saved


def test_a_resume_knows_its_data_by_content_not_by_how_its_path_is_typed(app, runner, work, tmp_path, monkeypatch):
    """Issue 29, item 10: ``--data ./cls.jsonl`` resumed with its absolute path was refused (the paths were compared
    as strings), and the same file edited since the run started was taken."""
    # issue 29, item 10
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cls.jsonl").write_bytes((work / "cls.jsonl").read_bytes())
    base = ["--task", "classification", "--model", work / "bert", "--out", "run", "--max-steps", 2, "--set",
            "train.save_steps=1", "--set", "data.validation_split=0"]
    finetune(app, runner, *base, "--data", "./cls.jsonl")
    (tmp_path / "copy").mkdir()
    (tmp_path / "copy" / "cls.jsonl").write_bytes((work / "cls.jsonl").read_bytes())
    finetune(app, runner, *base, "--data", "copy/cls.jsonl", "--resume")  # the same data, elsewhere
    finetune(app, runner, *base, "--data", tmp_path / "cls.jsonl", "--resume")  # the same file, another path
    rows = (tmp_path / "cls.jsonl").read_text().splitlines()
    (tmp_path / "cls.jsonl").write_text("\n".join([rows[0].replace('"pos"', '"neg"'), *rows[1:]]))
    kept = {name: (tmp_path / "run" / name).read_text() for name in ("finetune.toml", ".lsgtool.json")}
    import lsgtool.core.load as load

    monkeypatch.setattr(load, "resolve", lambda *a, **k: pytest.fail("the model was looked up"))
    for data in ("./cls.jsonl", str(tmp_path / "cls.jsonl")):
        result = runner.invoke(app, ["finetune", *map(str, base), "--data", data, "--resume"])
        text = " ".join(result.stderr.split())
        assert result.exit_code == 2, result.output
        assert f"Error: --data {data} changed since the run started" in text, text
        assert "Hint:" in text and "--out" in text and "Traceback" not in text
    assert {name: (tmp_path / "run" / name).read_text() for name in kept} == kept


def test_gsg_splits_draw_their_own_gaps_and_t5_sentinels_are_numbered(app, runner, work, tmp_path, monkeypatch):
    """Issue 21, item 5: a dataset's validation split restarts its row indices at 0 and drew the training split's
    gaps; a T5 tokenizer got <extra_id_0> for every masked sentence."""
    import datasets
    import transformers as T

    from lsgtool.finetune import data as D

    documents = [json.loads(line) for line in (work / "docs.jsonl").read_text().splitlines()][:24]
    table = datasets.Dataset.from_list(documents)
    datasets.DatasetDict({"train": table, "validation": table}).save_to_disk(str(tmp_path / "twice"))
    built = _spy_on(monkeypatch, D, "gsg_pairs")
    finetune(app, runner, "--task", "gsg", "--model", work / "locost", "--data", tmp_path / "twice", "--out",
             tmp_path / "run", "--max-steps", 1, "--set", "gsg.strategy=random")
    pairs, _ = built[0]
    assert pairs["train"]["gsg_input"] != pairs["validation"]["gsg_input"]  # the same documents, other gaps
    extra = [f"<extra_id_{i}>" for i in range(100)]
    t5 = tmp_path / "t5ish"
    tokenizer = T.BertTokenizerFast(vocab={w: i for i, w in enumerate(VOCAB + extra)}, additional_special_tokens=extra)
    tokenizer.save_pretrained(t5)
    (t5 / "config.json").write_text((work / "locost" / "config.json").read_text())
    shown = finetune(app, runner, "--task", "gsg", "--model", t5, "--data", work / "docs.jsonl", "--dry-run", "--show", 3,
                     "--set", "gsg.strategy=lead", "--set", "gsg.ratio=0.5")
    assert shown["gsg_sentinel"].startswith("<extra_id_0>, <extra_id_1>, …")
    for pair in shown["pairs"]:
        gaps = [w for w in pair["input"].split() if w.startswith("<extra_id_")]
        assert gaps == extra[:len(gaps)] and len(gaps) >= 2, pair
        assert pair["target"].startswith("<extra_id_0> ") and "<extra_id_1> " in pair["target"]


def test_data_and_config_errors_say_what_is_wrong(app, runner, work, tmp_path, monkeypatch):
    """Issue 21, item 16: a file that cannot be read is a permission problem, not a format one (tests run as
    root, where chmod 000 does not block reading: the read raises instead); --config given a folder says so;
    an unknown Hub dataset is one quick probe, not ~28 s of retries."""
    import errno

    import datasets
    import huggingface_hub.constants as hub

    from lsgtool.core.load import source

    base = ["finetune", "--model", str(work / "bert"), "--out", str(tmp_path / "o")]
    run = tmp_path / "run"
    run.mkdir()
    (run / "finetune.toml").write_text("[train]\n")
    result = runner.invoke(app, [*base, "--data", str(work / "cls.jsonl"), "--config", str(run)])
    assert result.exit_code == 2 and f"--config {run} is a folder" in result.stderr
    assert f"--config {run / 'finetune.toml'}" in result.stderr
    monkeypatch.setattr(source, "hub_unreachable", lambda timeout=3.0: "huggingface.co: Network is unreachable")
    monkeypatch.setattr(hub, "HF_HUB_OFFLINE", False)
    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.setattr(datasets, "load_dataset", lambda *a, **k: pytest.fail("datasets looked the name up"))
    result = runner.invoke(app, [*base, "--data", "someone/reviews"])
    assert result.exit_code == 2 and "the Hub cannot be reached" in " ".join(result.stderr.split()), result.output

    def denied(*args, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied", str(work / "cls.jsonl"))

    monkeypatch.setattr(datasets, "load_dataset", denied)
    result = runner.invoke(app, [*base, "--data", str(work / "cls.jsonl")])
    text = " ".join(result.stderr.split())
    assert result.exit_code == 2 and "permission denied reading" in text and "format" not in text, text
    assert not (tmp_path / "o").exists()
