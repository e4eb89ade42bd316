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


def _outermost_aten_ms(trace) -> float:
    """The trace's own total: durations of the aten operators not nested in another, per thread. Summed self times
    of every operator come to the same, whatever the nesting; inclusive times (counted twice) would not."""
    events = [e for e in json.loads(trace.read_text())["traceEvents"]
              if e.get("ph") == "X" and str(e.get("name", "")).startswith("aten::")]
    total, ends = 0.0, {}
    for e in sorted(events, key=lambda e: (e["tid"], e["ts"], -e["dur"])):
        if e["ts"] >= ends.get(e["tid"], float("-inf")):
            total += e["dur"]
            ends[e["tid"]] = e["ts"] + e["dur"]
    return total / 1000


def test_breakdown_of_tiny_layers_writes_traces(tmp_path):
    setup = Setup(32, 4, 1, "layer", 1, 16, 4)
    points = breakdown(["full", "lsg-norm", "locost-s4d_lin"], [256], setup=setup, traces=tmp_path)
    assert [p.variant for p in points] == ["full", "lsg-norm", "locost-s4d_lin"]
    for p in points:
        assert p.error is None and p.total_ms > 0 and set(p.by_kind) == set(KINDS)
        # the groups' milliseconds add up to the pass the trace recorded (not to themselves: issue 21)
        assert abs(_outermost_aten_ms(tmp_path / p.trace) - p.total_ms) <= 0.1 * p.total_ms + 0.05, p
        assert p.by_kind["matmul"] > 0 and p.top and p.top[0]["ms"] >= p.top[-1]["ms"]
    fft = {p.variant: p.by_kind["fft"] for p in points}
    assert fft["locost-s4d_lin"] > 0 and fft["full"] == 0  # only the SSM convolves through the FFT
    sdpa = {p.variant: p.by_kind["softmax/sdpa"] for p in points}
    assert sdpa["full"] > 0 and sdpa["locost-s4d_lin"] == 0


def _least_ms(setup, lengths, passes=5):
    """Per length, each kind's least milliseconds over a few profiled passes: a pass the OS preempted (the cores are
    shared) inflates whichever operator ran then, the least of five is the work itself."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # one thread: an op never waits for a sibling thread the OS put aside
    try:
        runs = [breakdown(["full"], lengths, setup=setup) for _ in range(passes)]
    finally:
        torch.set_num_threads(threads)
    return [{k: min(run[i].by_kind[k] for run in runs) for k in KINDS} for i in range(len(lengths))]


def test_shares_follow_the_work_matmul_in_a_wide_layer_attention_at_length():
    [wide] = _least_ms(Setup(256, 4, 1, "layer", 1, 16, 4), [256])
    assert max(wide, key=wide.get) == "matmul", wide  # projections and FFN at width 256
    short, long = _least_ms(Setup(32, 4, 1, "attention", 1, 16, 4), [128, 2048])
    share = [ms["softmax/sdpa"] / sum(ms.values()) for ms in (short, long)]
    # dense attention is quadratic, its projections linear: at 16x the length SDPA takes most of the pass
    assert share[1] > max(0.8, share[0] + 0.2), (short, long)


def test_a_whole_model_and_a_point_past_its_positions(tiny_folder):
    from lsgtool.profiling.models import resolve_model

    target = vars(resolve_model(str(tiny_folder)))  # a BERT of 64 positions
    points = breakdown(["model"], [32, 128], setup=Setup(block=16, factor=4), target=target)
    assert points[0].error is None and points[0].by_kind["matmul"] > 0
    assert "longer than the model's 64 positions" in points[1].error and points[1].total_ms == 0
