"""The contracts lsgtool holds with transformers: each holds here, and a changed API is named, not a TypeError."""

import re
from pathlib import Path

import pytest
import torch

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

from lsgtool.core import compat
from lsgtool.core.errors import LsgtoolError

pytestmark = pytest.mark.internals  # run on the declared floor of transformers too (constraints/floor.txt)

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("contract", compat.CONTRACTS, ids=lambda c: c.name)
def test_each_contract_holds_on_the_installed_transformers(contract):
    found = compat.broken((contract,))
    assert not found, compat.message(*found[0])


@pytest.fixture
def renamed_mask(monkeypatch):
    """T5Attention.forward as a release that renamed ``mask`` to ``attention_mask`` would have it."""
    from transformers.models.t5.modeling_t5 import T5Attention

    def forward(self, hidden_states, attention_mask=None, key_value_states=None, position_bias=None, cache=None):
        raise AssertionError("never reached: the contract is checked first")

    monkeypatch.setattr(T5Attention, "forward", forward)
    compat.require.cache_clear()
    yield
    compat.require.cache_clear()


def test_a_changed_signature_is_named_with_the_version_and_the_api(renamed_mask):
    (contract, what), = compat.broken(compat.CONTRACTS[:1], probes=False)
    text = compat.message(contract, what)
    assert contract.name == "t5_cross_attention"
    assert f"transformers {compat.version()}" in text and "T5Attention.forward" in text and "'mask'" in text
    assert f"tested with transformers {compat.tested_range()}" in text


def test_building_a_locost_model_on_a_changed_api_is_that_error_not_a_type_error(renamed_mask):
    from lsgtool import LocostConfig, LocostForConditionalGeneration

    with pytest.raises(LsgtoolError, match=r"T5Attention\.forward no longer takes 'mask' by name") as error:
        LocostForConditionalGeneration(LocostConfig(d_model=16, d_state=8, num_layers=1, num_decoder_layers=1,
                                                    num_heads=2, d_kv=8, d_ff=24, vocab_size=40))
    assert "pip install" in error.value.hint


def test_a_probe_names_outputs_that_changed(monkeypatch):
    """Cross-attention that stops returning its weights last: the sources contract says so."""
    from transformers.models.t5.modeling_t5 import T5Attention

    original = T5Attention.forward
    monkeypatch.setattr(T5Attention, "forward", lambda self, *a, **k: original(self, *a, **k)[:-1] + (None,))
    (contract, what), = compat.broken([compat.BY_NAME["cross_attention_weights"]])
    assert "T5's cross-attention no longer gives its (B H Q K) weights" in what


def test_takes_by_name_reads_keyword_only_positional_only_and_catch_alls():
    def f(a, /, b, *, c, **rest):
        pass

    assert compat.takes_by_name(f, "b", "c", "anything") is None  # **rest takes any name but a positional-only one
    assert compat.takes_by_name(f, "a") == "no longer takes 'a' by name"
    assert compat.takes_by_name(lambda b: None, "b", "d") == "no longer takes 'd' by name"


def _lower_bounds():
    """{distribution: lower bound} from pyproject.toml's dependencies and extras."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    specs = project["dependencies"] + [s for extra in project["optional-dependencies"].values() for s in extra]
    found = {}
    for spec in specs:
        match = re.match(r"([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?>=([0-9.]+)", spec)
        if match:
            found[match.group(1).lower()] = match.group(2)
    return found


def test_the_tested_floor_is_what_pyproject_declares_and_ci_pins():
    """pyproject's lower bounds, the floor CI installs (constraints/floor.txt) and TESTED agree."""
    bounds = _lower_bounds()
    pinned = dict(line.split("==") for line in (ROOT / "constraints" / "floor.txt").read_text().split("\n")
                  if "==" in line and not line.startswith("#"))
    for dist, (low, high) in compat.TESTED.items():
        if dist != "torch":  # CI can install one torch, the CPU wheel both environments use
            assert bounds[dist] == low == pinned[dist], dist
    for dist, low in bounds.items():
        if dist in pinned:
            assert pinned[dist] == _padded(low), dist


def _padded(version: str) -> str:
    return version if version.count(".") >= 2 else version + ".0" * (2 - version.count("."))


def test_generation_with_a_deeper_decoder_than_encoder_on_transformers_own_cache():
    from lsgtool import LocostConfig, LocostForConditionalGeneration

    model = LocostForConditionalGeneration(LocostConfig(d_model=16, d_state=8, num_layers=1, num_decoder_layers=3,
                                                        num_heads=2, d_kv=8, d_ff=24, vocab_size=40)).eval()
    assert model.config.get_text_config(decoder=True).num_hidden_layers == 3
    assert model.config.get_text_config(encoder=True).num_hidden_layers == 1
    out = model.generate(input_ids=torch.arange(3, 20)[None], max_new_tokens=4, min_new_tokens=4, num_beams=2)
    assert out.shape == (1, 5)
