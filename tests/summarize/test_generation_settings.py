"""Where a summary's generation settings come from: a model's generation_config.json, unless it only holds what
transformers' Seq2SeqTrainer writes into it after an evaluation (its old defaults, every one of them)."""

import json

from lsgtool.summarize.generation import EVALUATION_MARKS, WRITTEN_BY_EVALUATION, resolve


def _folder(tmp_path, values):
    from transformers import GenerationConfig

    GenerationConfig(**values).save_pretrained(tmp_path)
    return tmp_path


def test_a_config_holding_transformers_old_defaults_is_not_read_as_settings(tmp_path):
    folder = _folder(tmp_path, {**WRITTEN_BY_EVALUATION, "decoder_start_token_id": 0, "eos_token_id": 3})
    assert json.loads((folder / "generation_config.json").read_text())["max_length"] == 20  # as Seq2SeqTrainer left it
    generation = resolve({}, folder, "lsg")
    assert generation.values["max_new_tokens"] == 256 and generation.sources["max_new_tokens"] == "lsgtool default"
    assert generation.values["num_beams"] == 5 and generation.sources["num_beams"].startswith("LSG paper")


def test_a_models_own_settings_are_read_even_beside_old_defaults(tmp_path):
    folder = _folder(tmp_path, {**WRITTEN_BY_EVALUATION, "max_length": 142, "num_beams": 4})
    generation = resolve({}, folder, "lsg")
    assert generation.values["max_new_tokens"] == 142 and generation.values["num_beams"] == 4
    assert generation.values["length_penalty"] == 1.0  # set by the model, beside its own length and beams
    assert generation.sources["num_beams"] == "the model's generation_config.json"
    flagged = resolve({"max_new_tokens": 9}, folder, "lsg")
    assert flagged.values["max_new_tokens"] == 9 and flagged.sources["max_new_tokens"] == "flag --max-new-tokens"


def test_an_evaluations_marks_unset_the_old_defaults_a_models_own_settings_left_in_place(tmp_path):
    # the trainer fills only what is unset: a model's own beams stay beside max_length 20 and its other defaults
    folder = _folder(tmp_path, {**WRITTEN_BY_EVALUATION, **EVALUATION_MARKS, "num_beams": 4, "length_penalty": 2.0})
    generation = resolve({}, folder, "seq2seq")
    assert generation.values["max_new_tokens"] == 256 and generation.sources["max_new_tokens"] == "lsgtool default"
    assert generation.values["num_beams"] == 4 and generation.values["length_penalty"] == 2.0
    assert generation.sources["num_beams"] == "the model's generation_config.json"


def test_a_model_loaded_with_such_a_config_generates_without_its_old_defaults(tmp_path):
    import logging

    import torch
    import transformers as T

    from lsgtool.summarize.abstractive import load_abstractive
    from lsgtool.summarize.pipeline import summarize_text

    torch.manual_seed(0)
    T.BartForConditionalGeneration(T.BartConfig(
        vocab_size=99, d_model=16, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
        decoder_attention_heads=2, encoder_ffn_dim=24, decoder_ffn_dim=24, max_position_embeddings=64, pad_token_id=0,
        bos_token_id=2, eos_token_id=3, decoder_start_token_id=2, forced_eos_token_id=None)).save_pretrained(tmp_path)
    T.BertTokenizerFast(vocab={w: i for i, w in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
                                                           + [f"w{i}" for i in range(94)])}).save_pretrained(tmp_path)
    _folder(tmp_path, {**WRITTEN_BY_EVALUATION, "decoder_start_token_id": 2, "eos_token_id": 3})
    summarizer = load_abstractive(str(tmp_path), {"max_new_tokens": 24, "min_new_tokens": 24})
    assert summarizer.model.generation_config.max_length is None
    assert summarizer.model.generation_config.decoder_start_token_id == 2  # what the model does need is kept
    from transformers.utils.logging import warning_once

    warning_once.cache_clear()  # transformers says each such warning once per process: maybe already said
    seen = []
    handler = logging.Handler()
    handler.emit = lambda record: seen.append(record.getMessage())
    logger = logging.getLogger("transformers")
    logger.addHandler(handler)
    try:
        summary = summarize_text("w5 w6 w7. w8 w9 w10.", summarizer)
        ids = summarizer.encode("w5 w6 w7. w8 w9 w10.")  # with sources recorded: output_attentions passed on
        recorded = summarizer.generate(ids, bins=(torch.zeros(len(ids), dtype=torch.long), 1))
    finally:
        logger.removeHandler(handler)
    assert summary.new_tokens >= 24 and recorded.new_tokens >= 24
    assert not [m for m in seen if "seem to have been set" in m or "not valid" in m], seen
