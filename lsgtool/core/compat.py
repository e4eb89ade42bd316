"""What lsgtool relies on inside transformers, stated once, each with a check that names what changed.

lsgtool subclasses, registers into or reads the outputs of a few transformers internals. Each is a
``Contract`` here: what lsgtool uses, for what, and a check of the installed transformers. A broken contract
is reported as "transformers X.Y.Z: <API> <what changed>", not as a TypeError from inside ``generate``.
``require`` runs the cheap (signature) checks where a feature is built; ``broken`` runs them all (tests,
``lsgtool doctor``), including the probes that run a tiny model.

``TESTED`` is the range the suite has passed on: the floor is ``pyproject.toml``'s lower bounds and
``constraints/floor.txt`` (CI runs the contract tests there), the top is the newest release CI last passed on.
"""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass
from importlib import metadata
from typing import Callable

from lsgtool.core.errors import LsgtoolError

# (oldest, newest) each package has passed the suite with; the oldest is what pyproject.toml declares
TESTED = {
    "transformers": ("5.0.0", "5.24.0"),
    "torch": ("2.13.0", "2.13.0"),
    "huggingface-hub": ("1.3.0", "2.4.0"),
    "safetensors": ("0.4.3", "0.8.0"),
    "datasets": ("4.2.0", "5.2.0"),
    "accelerate": ("1.3.0", "1.15.0"),
    "torchao": ("0.18.0", "0.18.0"),  # summarize --dtype int8 only (the int8 extra)
}


# what a forward or generate() call is passed for modules to give their attention weights: T5 before transformers
# 5.16 returns them only when asked (else its last output is the position bias, of the same shape)
RECORD_ATTENTION = {"output_attentions": True}


@dataclass(frozen=True)
class Contract:
    """One thing lsgtool relies on: ``api`` (dotted name), ``use`` (what lsgtool does with it), ``check`` (None
    when it holds, else what changed), ``probe`` (the check runs a tiny model: not run by ``require``)."""

    name: str
    api: str
    use: str
    check: Callable[[], str | None]
    probe: bool = False


def version(dist: str = "transformers") -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def _parameters(function) -> dict[str, inspect.Parameter]:
    return dict(inspect.signature(function).parameters)


def takes_by_name(function, *names: str) -> str | None:
    """None if ``function`` accepts each of ``names`` as a keyword argument, else which it does not."""
    parameters = _parameters(function)
    if any(p.kind is p.VAR_KEYWORD for p in parameters.values()):
        missing = [n for n in names if n in parameters and parameters[n].kind is parameters[n].POSITIONAL_ONLY]
    else:
        missing = [n for n in names
                   if n not in parameters or parameters[n].kind not in (inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                                                         inspect.Parameter.KEYWORD_ONLY)]
    return f"no longer takes {', '.join(repr(n) for n in missing)} by name" if missing else None


def _t5_attention():
    from transformers.models.t5.modeling_t5 import T5Attention

    return takes_by_name(T5Attention.forward, "hidden_states", "mask", "key_value_states", "position_bias")


def _decoder_text_config():
    from transformers import PretrainedConfig

    return takes_by_name(PretrainedConfig.get_text_config, "decoder", "encoder")


def _attention_interface():
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface

    for registry in (AttentionInterface, AttentionMaskInterface):
        if not callable(getattr(registry, "register", None)):
            return f"{registry.__name__} has no register()"
    from transformers import PreTrainedModel

    if not callable(getattr(PreTrainedModel, "set_attn_implementation", None)):
        return "PreTrainedModel has no set_attn_implementation()"
    from transformers.integrations.sdpa_attention import sdpa_attention_forward
    from transformers.masking_utils import sdpa_mask

    return (takes_by_name(sdpa_attention_forward, "module", "query", "key", "value", "attention_mask")
            or takes_by_name(sdpa_mask, "attention_mask"))


def _auto_register():
    from transformers import AutoConfig, AutoModel

    return takes_by_name(AutoConfig.register, "exist_ok") or takes_by_name(AutoModel.register, "exist_ok")


def _loading_info():
    from transformers import PreTrainedModel

    return takes_by_name(PreTrainedModel.from_pretrained, "output_loading_info")


def _cross_attention_weights():
    """A tiny T5 and a tiny BART, run eagerly and asked for attentions: their cross-attention modules give the
    (B H Q K) softmax weights last."""
    import torch
    import transformers as T

    models = {
        "T5": T.T5ForConditionalGeneration(T.T5Config(d_model=16, d_kv=4, d_ff=24, num_layers=1, num_heads=4,
                                                      vocab_size=40, decoder_start_token_id=0)),
        "BART": T.BartForConditionalGeneration(T.BartConfig(d_model=16, encoder_layers=1, decoder_layers=1,
                                                            encoder_attention_heads=4, decoder_attention_heads=4,
                                                            encoder_ffn_dim=24, decoder_ffn_dim=24, vocab_size=40,
                                                            max_position_embeddings=32)),
    }
    for label, model in models.items():
        seen = []
        names = ("EncDecAttention", "encoder_attn")
        modules = [m for n, m in model.eval().get_decoder().named_modules() if n.split(".")[-1] in names]
        for config in {id(m.config): m.config for m in modules if getattr(m, "config", None) is not None}.values():
            config._attn_implementation = "eager"  # as the recorder does: the modules' own configs, where they have one
        hooks = [m.register_forward_hook(lambda mod, args, out: seen.append(out)) for m in modules]
        with torch.no_grad():
            model(input_ids=torch.arange(3, 10)[None], decoder_input_ids=torch.tensor([[0, 5, 6]]), **RECORD_ATTENTION)
        for hook in hooks:
            hook.remove()
        weights = seen[0][-1] if seen and isinstance(seen[0], tuple) else None
        if (weights is None or tuple(weights.shape) != (1, 4, 3, 7)
                or not torch.allclose(weights.sum(-1), torch.ones(()), atol=1e-5)):  # a softmax over the keys
            return f"{label}'s cross-attention no longer gives its (B H Q K) weights as its last output"
    return None


def _trainer_resume():
    """The Trainer methods ``finetune``'s exact resume overrides (``lsgtool.finetune.resumable``), each taking what
    it is passed, and the loss-window state it carries over a checkpoint."""
    from transformers import Trainer

    hooks = {"_get_train_sampler": ("train_dataset",), "_load_rng_state": ("checkpoint",),
             "_save_rng_state": ("output_dir",), "get_batch_samples": ("epoch_iterator", "num_batches", "device"),
             "_get_num_items_in_batch": ("batch_samples", "device"), "_maybe_log_save_evaluate": ("tr_loss",),
             "prediction_step": ("model", "inputs"), "evaluate": ()}
    for name, arguments in hooks.items():
        method = getattr(Trainer, name, None)
        if not callable(method):
            return f"Trainer has no {name}()"
        changed = takes_by_name(method, *arguments)
        if changed:
            return f"Trainer.{name} {changed}"
    body = inspect.getsource(Trainer._maybe_log_save_evaluate)
    missing = [name for name in ("_globalstep_last_logged", "_total_loss_scalar") if name not in body]
    return f"Trainer._maybe_log_save_evaluate no longer keeps {', '.join(missing)}" if missing else None


CONTRACTS = (
    Contract("t5_cross_attention", "transformers.models.t5.modeling_t5.T5Attention.forward",
             "LOCOST's decoder cross-attention subclasses it and passes its arguments on by name", _t5_attention),
    Contract("decoder_text_config", "transformers.PretrainedConfig.get_text_config",
             "LOCOST gives the decoder's depth to the decoding cache through get_text_config(decoder=True)",
             _decoder_text_config),
    Contract("attention_backend", "transformers.AttentionInterface / masking_utils.AttentionMaskInterface",
             "LSG attention is registered as the 'lsg' attention and mask functions", _attention_interface),
    Contract("auto_classes", "transformers.AutoConfig.register / AutoModel*.register",
             "the 'lsg' and 'locost' model types load through AutoModel*.from_pretrained", _auto_register),
    Contract("loading_info", "transformers.PreTrainedModel.from_pretrained(output_loading_info=True)",
             "the loader reports missing and unexpected weights by name", _loading_info),
    Contract("cross_attention_weights", "cross-attention modules' outputs (T5 EncDecAttention, BART encoder_attn)",
             "summary sources read the attention weights with forward hooks", _cross_attention_weights, probe=True),
    Contract("trainer_resume", "transformers.Trainer's sampler, random-state, batch and logging hooks",
             "finetune --resume overrides them to continue exactly where its checkpoint stopped", _trainer_resume),
)
BY_NAME = {contract.name: contract for contract in CONTRACTS}


def tested_range(dist: str = "transformers") -> str:
    low, high = TESTED[dist]
    return f"{low}–{high}"


def message(contract: Contract, what: str) -> str:
    return (f"transformers {version()}: {contract.api} {what}; lsgtool relies on it ({contract.use}). "
            f"lsgtool is tested with transformers {tested_range()}.")


def hint() -> str:
    low, high = TESTED["transformers"]
    return f'install a tested transformers: pip install "transformers>={low},<={high}", and report this break.'


def broken(contracts=CONTRACTS, probes: bool = True) -> list[tuple[Contract, str]]:
    """Every contract that does not hold in this environment, with what changed (an exception in a check counts)."""
    found = []
    for contract in contracts:
        if contract.probe and not probes:
            continue
        try:
            what = contract.check()
        except Exception as exc:  # an API gone is exactly what a check is for
            what = f"is not usable as lsgtool expects ({type(exc).__name__}: {exc})"
        if what:
            found.append((contract, what))
    return found


@functools.cache
def require(name: str) -> None:
    """Raise an ``LsgtoolError`` naming the version and the API when contract ``name`` does not hold (checked once
    per process; probes are not run here)."""
    contract = BY_NAME[name]
    for contract, what in broken((contract,), probes=False):
        raise LsgtoolError(message(contract, what), hint())


def compatibility_report(probes: bool = True) -> dict:
    """Installed versions against the tested range, the contracts that do not hold, and what to do (doctor)."""
    from packaging.version import InvalidVersion, Version

    def within(installed: str, low: str, high: str) -> bool | None:
        try:
            return Version(low) <= Version(installed.split("+")[0]) <= Version(high)
        except InvalidVersion:  # "not installed"
            return None

    versions = {dist: {"installed": version(dist), "tested": f"{low}–{high}", "within": within(version(dist), low, high)}
                for dist, (low, high) in TESTED.items()}
    failures = [message(contract, what) for contract, what in broken(probes=probes)]
    outside = [dist for dist, v in versions.items() if v["within"] is False]
    if failures:
        advice = hint()
    elif outside:
        advice = (f"{', '.join(outside)} outside the tested range, and every contract holds: it should work; if "
                  "something breaks, install a tested version and report it.")
    else:
        advice = "everything is within the tested range."
    return {"versions": versions, "broken_contracts": failures, "advice": advice}
