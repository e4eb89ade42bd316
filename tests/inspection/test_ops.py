"""The operator breakdown: kinds of aten operators, and one profiled forward of tiny variants."""

import json

from lsgtool.inspection.ops import KINDS, breakdown, kind_of
from lsgtool.profiling.variants import Setup


def test_operator_kinds():
    assert kind_of("aten::addmm") == kind_of("aten::bmm") == kind_of("aten::mm") == "matmul"
    assert kind_of("aten::_fft_r2c") == "fft"
    assert kind_of("aten::_scaled_dot_product_flash_attention_for_cpu") == kind_of("aten::_softmax") == "softmax/sdpa"
    assert kind_of("aten::copy_") == kind_of("aten::cat") == kind_of("aten::gather") == "gather/copy"
    assert kind_of("aten::native_layer_norm") == "norm"
    assert kind_of("aten::gelu") == kind_of("aten::mul") == "elementwise"
    assert kind_of("aten::empty") == "other"


def test_breakdown_of_tiny_layers_writes_traces(tmp_path):
    setup = Setup(32, 4, 1, "layer", 1, 16, 4)
    points = breakdown(["full", "lsg-norm", "locost-s4d_lin"], [256], setup=setup, traces=tmp_path)
    assert [p.variant for p in points] == ["full", "lsg-norm", "locost-s4d_lin"]
    for p in points:
        assert p.error is None and p.total_ms > 0 and set(p.by_kind) == set(KINDS)
        assert abs(sum(p.by_kind.values()) - p.total_ms) < 0.01 * p.total_ms + 0.01
        assert p.by_kind["matmul"] > 0 and p.top and p.top[0]["ms"] >= p.top[-1]["ms"]
        assert "traceEvents" in json.loads((tmp_path / p.trace).read_text())
    fft = {p.variant: p.by_kind["fft"] for p in points}
    assert fft["locost-s4d_lin"] > 0 and fft["full"] == 0  # only the SSM convolves through the FFT
    sdpa = {p.variant: p.by_kind["softmax/sdpa"] for p in points}
    assert sdpa["full"] > 0 and sdpa["locost-s4d_lin"] == 0


def test_a_whole_model_and_a_point_past_its_positions(tiny_folder):
    from lsgtool.profiling.models import resolve_model

    target = vars(resolve_model(str(tiny_folder)))  # a BERT of 64 positions
    points = breakdown(["model"], [32, 128], setup=Setup(block=16, factor=4), target=target)
    assert points[0].error is None and points[0].by_kind["matmul"] > 0
    assert "longer than the model's 64 positions" in points[1].error and points[1].total_ms == 0
