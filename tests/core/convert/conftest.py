import pytest
import transformers as T

from lsgtool.core.lsg.adapters import OFFICIAL

KW = dict(vocab_size=99, max_position_embeddings=64)
ENCODER = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=37)
SEQ2SEQ = dict(d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4, decoder_attention_heads=4,
               encoder_ffn_dim=37, decoder_ffn_dim=37)

# model type -> (config, task model); official architectures plus generic ones found automatically
ARCHITECTURES = {
    "bert": lambda: (T.BertConfig(**ENCODER, **KW), T.BertForMaskedLM),
    "albert": lambda: (T.AlbertConfig(**ENCODER, embedding_size=16, **KW), T.AlbertForMaskedLM),
    "camembert": lambda: (T.CamembertConfig(**ENCODER, **{**KW, "max_position_embeddings": 66}), T.CamembertForMaskedLM),
    "electra": lambda: (T.ElectraConfig(**ENCODER, embedding_size=16, **KW), T.ElectraForMaskedLM),
    "roberta": lambda: (T.RobertaConfig(**ENCODER, **{**KW, "max_position_embeddings": 66}), T.RobertaForSequenceClassification),
    "xlm-roberta": lambda: (T.XLMRobertaConfig(**ENCODER, **{**KW, "max_position_embeddings": 66}), T.XLMRobertaForTokenClassification),
    "distilbert": lambda: (T.DistilBertConfig(dim=32, n_layers=2, n_heads=4, hidden_dim=37, **KW), T.DistilBertForQuestionAnswering),
    "bart": lambda: (T.BartConfig(**SEQ2SEQ, **KW), T.BartForConditionalGeneration),
    "mbart": lambda: (T.MBartConfig(**SEQ2SEQ, **KW), T.MBartForConditionalGeneration),
    "pegasus": lambda: (T.PegasusConfig(**SEQ2SEQ, **KW), T.PegasusForConditionalGeneration),
    # not in the authors' list: found automatically through the attention interface
    "ernie": lambda: (T.ErnieConfig(**ENCODER, **KW), T.ErnieForMaskedLM),
    "roberta-prelayernorm": lambda: (T.RobertaPreLayerNormConfig(**ENCODER, **{**KW, "max_position_embeddings": 66}),
                                     T.RobertaPreLayerNormForMaskedLM),
}


@pytest.fixture(params=sorted(ARCHITECTURES))
def tiny_model(request):
    import torch

    torch.manual_seed(0)
    config, cls = ARCHITECTURES[request.param]()
    return cls(config).eval()


@pytest.fixture(params=sorted(t for t in ARCHITECTURES if t in OFFICIAL))
def official_model(request):
    """(model type, tiny model) for each model type the built-in adapters declare."""
    import torch

    torch.manual_seed(0)
    config, cls = ARCHITECTURES[request.param]()
    return request.param, cls(config).eval()
