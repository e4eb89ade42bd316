"""The memory estimate counts what a pass holds: without the cross-attention cache, the encoder output and, on a
CPU from the products' tuning length, the packed copies of it the decoding step may stream."""

from types import SimpleNamespace


from lsgtool import LocostConfig, LocostForConditionalGeneration
from lsgtool.core.ssm import products
from lsgtool.summarize.memory import MB, estimate


def _summarizer():
    config = LocostConfig(vocab_size=50, d_model=32, d_kv=8, d_ff=37, num_layers=1, num_decoder_layers=2, num_heads=4,
                          d_state=8, pad_token_id=0, eos_token_id=1, decoder_start_token_id=0)
    return SimpleNamespace(model=LocostForConditionalGeneration(config), method="abstractive", kind="locost",
                           generation=SimpleNamespace(values={"num_beams": 2}))


def test_the_packed_copies_of_the_encoder_output_are_counted_from_the_tuning_length():
    summarizer, bytes_per_token = _summarizer(), 32 * 4
    short, long = products.TUNE_LENGTH - 1, products.TUNE_LENGTH
    assert estimate(summarizer, short, cache=False).encoder_output_mb == short * bytes_per_token / MB
    copies = products.COPIES if products._onednn() else 0
    assert estimate(summarizer, long, cache=False).encoder_output_mb == (1 + copies) * long * bytes_per_token / MB
    assert estimate(summarizer, long, cache=True).encoder_output_mb == 3 * 2 * long * bytes_per_token / MB
