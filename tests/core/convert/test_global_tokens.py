"""Converted models with global tokens against an independent computation.

The reference runs the *source* model's own layers on [global tokens | tokens] built by hand (embeddings,
the converted model's global table, the embedding LayerNorm), with attention computed by the readable
float64 LSG reference (``dense_lsg_attention`` with the loop-based selectors), then takes the global tokens
off by hand (``pool_with_global``: the first token gets the first global token's output). No conversion
hook, no fast path: if prepending, pooling, stripping or the LSG layers were wrong, the outputs would differ.
"""

import copy

import pytest
import torch
import transformers as T

from lsgtool import LSGConfig
from lsgtool.core.convert import convert
from lsgtool.core.lsg.reference import dense_lsg_attention, reference_selector
from lsgtool.core.lsg.selectors import SparseInputs

pytestmark = pytest.mark.internals  # run on the declared floor of transformers too (constraints/floor.txt)

S, G, L = 16, 2, 96  # 6 whole blocks: LSG is active (n > 2S) and no padding to a whole block is needed


def _reference_attention(config: LSGConfig):
    def attention(module, query, key, value, attention_mask, dropout=0.0, scaling=None, **kwargs):
        keep = attention_mask.bool()
        x = SparseInputs(query[:, :, G:], key[:, :, G:], value[:, :, G:], keep[:, G:], query[:, :, :1], config, scaling,
                         torch.Generator().manual_seed(config.lsh_seed))
        sparse = reference_selector(config.sparsity_type or "none", x)
        out = dense_lsg_attention(query, key, value, keep, config=config, scale=scaling, sparse=sparse)
        return out.to(query.dtype).transpose(1, 2).contiguous(), None

    return attention


def _run_layers(source, layers, hidden, keep, config):
    name = f"lsg_reference_{id(config)}"
    T.AttentionInterface.register(name, _reference_attention(config))
    source.set_attn_implementation(name)
    for layer in layers:
        hidden = layer(hidden, attention_mask=keep)
        hidden = hidden[0] if isinstance(hidden, tuple) else hidden
    return hidden


def _strip(hidden, config, t):
    if config.pass_global_tokens_to_decoder:
        return hidden[:, : G + t]
    if config.pool_with_global:
        return torch.cat([hidden[:, :1], hidden[:, G + 1 : G + t]], dim=1)
    return hidden[:, G : G + t]


def _inputs():
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(5, 99, (2, L), generator=g)
    mask = torch.ones_like(ids)
    mask[1, -21:] = 0
    return ids, mask


@pytest.mark.parametrize("sparse", ["pooling", "stride", "bos_pooling", "norm"])
@pytest.mark.parametrize("pool", [True, False])
@torch.no_grad()
def test_bert_with_global_tokens_equals_the_independent_computation(sparse, pool):
    torch.manual_seed(0)
    source = T.BertModel(T.BertConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=37,
                                      vocab_size=99, max_position_embeddings=64)).eval()
    model, _ = convert(copy.deepcopy(source), max_length=256, block_size=S, sparsity_factor=4, sparsity_type=sparse,
                       num_global_tokens=G)
    config = model.base_model.lsg_config
    config.pool_with_global = pool
    ids, mask = _inputs()
    got = model(input_ids=ids, attention_mask=mask).last_hidden_state

    emb = source.embeddings
    x = emb.word_embeddings(ids) + emb.token_type_embeddings(torch.zeros_like(ids))
    x = x + model.base_model.embeddings.position_embeddings(torch.arange(L))  # the tiled table (positions > 64)
    table = model.base_model.embeddings.global_embeddings.weight[:G]
    x = emb.LayerNorm(torch.cat([table.expand(2, -1, -1), x], dim=1))
    keep = torch.cat([torch.ones(2, G, dtype=torch.long), mask], dim=1)
    expected = _strip(_run_layers(source, source.encoder.layer, x, keep, config), config, L)

    real = mask.bool()
    assert got.shape == expected.shape == (2, L, 32)
    torch.testing.assert_close(got[real], expected[real], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("passed", [True, False])
@torch.no_grad()
def test_bart_encoder_with_global_tokens_equals_the_independent_computation(passed):
    torch.manual_seed(0)
    source = T.BartModel(T.BartConfig(d_model=32, encoder_layers=2, decoder_layers=1, encoder_attention_heads=4,
                                      decoder_attention_heads=4, encoder_ffn_dim=37, decoder_ffn_dim=37, vocab_size=99,
                                      max_position_embeddings=64)).eval()
    model, _ = convert(copy.deepcopy(source), max_length=256, block_size=S, sparsity_factor=4, sparsity_type="pooling",
                       num_global_tokens=G, pass_global_tokens_to_decoder=passed)
    config = model.base_model.lsg_config
    ids, mask = _inputs()
    got = model.get_encoder()(input_ids=ids, attention_mask=mask).last_hidden_state

    enc = source.encoder
    x = enc.embed_tokens(ids) + model.base_model.encoder.embed_positions(ids)  # the scaled word embedding
    table = model.base_model.encoder.global_embeddings.weight[:G]
    x = enc.layernorm_embedding(torch.cat([table.expand(2, -1, -1), x], dim=1))
    keep = torch.cat([torch.ones(2, G, dtype=torch.long), mask], dim=1)
    expected = _strip(_run_layers(source, enc.layers, x, keep, config), config, L)

    assert got.shape == expected.shape == (2, L + (G if passed else 0), 32)
    real = torch.cat([torch.ones(2, G, dtype=torch.bool), mask.bool()], 1) if passed else mask.bool()
    torch.testing.assert_close(got[real], expected[real], rtol=1e-4, atol=1e-4)


@torch.no_grad()
def test_decoder_cross_attends_to_passed_global_tokens():
    """With pass_global_tokens_to_decoder the decoder's cross-attention sees the global tokens as real keys."""
    torch.manual_seed(0)
    source = T.BartForConditionalGeneration(T.BartConfig(d_model=32, encoder_layers=1, decoder_layers=1,
                                                         encoder_attention_heads=4, decoder_attention_heads=4,
                                                         encoder_ffn_dim=37, decoder_ffn_dim=37, vocab_size=99,
                                                         max_position_embeddings=64)).eval()
    ids, mask = _inputs()
    decoder_ids = ids[:, :5]
    outputs = {}
    for passed in (True, False):
        model, _ = convert(copy.deepcopy(source), max_length=256, block_size=S, sparsity_factor=4,
                           num_global_tokens=G, pass_global_tokens_to_decoder=passed)
        encoded = model.get_encoder()(input_ids=ids, attention_mask=mask)
        outputs[passed] = model(encoder_outputs=encoded, attention_mask=mask, decoder_input_ids=decoder_ids).logits
        if passed:  # the same logits as handing the decoder the global tokens with a mask that knows them
            keep = torch.cat([torch.ones(2, G, dtype=mask.dtype), mask], dim=1)
            explicit = model.get_decoder()(input_ids=decoder_ids, encoder_hidden_states=encoded.last_hidden_state,
                                           encoder_attention_mask=keep).last_hidden_state
            torch.testing.assert_close(model.lm_head(explicit) + model.final_logits_bias, outputs[True])
    assert not torch.allclose(outputs[True], outputs[False])
