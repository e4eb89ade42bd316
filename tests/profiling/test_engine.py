"""Profile engine: find-max bisection, the memory watchdog, peers padded like their models, one-line reasons."""

import pytest
import torch

from lsgtool.profiling import engine
from lsgtool.profiling.engine import Plan, Point, find_max, run_point
from lsgtool.profiling.variants import Setup, mixer

TINY = Setup(hidden=32, heads=4, block=32)


class _Tried(list):
    """Lengths tried, in order; ``limits``: the memory limit each was given."""

    def __init__(self):
        super().__init__()
        self.limits = []


def _fake_machine(monkeypatch, fits_up_to: int, mb_per_token: float = 0.01):
    """run_point replaced by a machine where a point fits when its length is at most ``fits_up_to``."""
    tried = _Tried()

    def fake(plan, variant, length, repeats=None, limit_mb=None):
        tried.append(length)
        tried.limits.append(limit_mb)
        if length > fits_up_to:
            return Point(variant, length, error=f"over the {limit_mb:.0f} MB memory limit")
        return Point(variant, length, time_s=length * 1e-6, tokens_per_s=1e6, peak_mb=length * mb_per_token)

    monkeypatch.setattr(engine, "run_point", fake)
    return tried


def test_find_max_doubles_then_bisects_to_the_grid(monkeypatch):
    tried = _fake_machine(monkeypatch, fits_up_to=5000)
    plan = Plan([1024, 65536], ["full"], TINY, memory_limit_mb=1e6)
    found = find_max(plan, "full")
    assert tried == [1024, 2048, 4096, 8192, 6144, 5120]
    assert found.length == 4096 and found.point.peak_mb == pytest.approx(40.96)
    assert found.limited_by == "over the 1000000 MB memory limit"


def test_find_max_resolution_is_a_sixteenth_of_the_answer(monkeypatch):
    tried = _fake_machine(monkeypatch, fits_up_to=300_000)
    found = find_max(Plan([1024, 2**20], ["full"], TINY, memory_limit_mb=1e6), "full")
    assert 300_000 - 300_000 / 16 <= found.length <= 300_000
    assert len(tried) <= 19 + 5  # doubling to 512K, then a handful of bisection steps


def test_find_max_reports_the_top_of_the_range_and_nothing_fitting(monkeypatch):
    _fake_machine(monkeypatch, fits_up_to=10**9)
    top = find_max(Plan([1024, 3000], ["full"], TINY, memory_limit_mb=1e6), "full")
    assert top.length == 3000 and top.limited_by == "the top of the range (3000)"
    _fake_machine(monkeypatch, fits_up_to=10)
    none = find_max(Plan([1024, 4096], ["full"], TINY, memory_limit_mb=1e6), "full")
    assert none.length is None and none.point is None and none.limited_by.startswith("over the")


def test_find_max_does_not_start_points_estimated_far_over_the_limit(monkeypatch):
    tried = _fake_machine(monkeypatch, fits_up_to=10**9, mb_per_token=1.0)
    found = find_max(Plan([1024, 2**20], ["full"], TINY, memory_limit_mb=5000), "full")
    assert found.limited_by.startswith("estimated ") and max(tried) <= 8192


def test_a_point_over_its_memory_limit_is_ended_with_the_reason():
    plan = Plan([4096], ["full"], Setup(hidden=256, heads=4), mode="train", repeats=1)
    point = run_point(plan, "full", 4096, limit_mb=1)
    assert point.error.startswith("over the 1 MB memory limit") and point.time_s is None
    fits = run_point(plan, "full", 4096, limit_mb=4000)
    assert fits.error is None and 0 < fits.peak_mb < 4000


def test_peak_memory_counts_weights_and_steps_not_libraries():
    # transformers is imported to build the peer; its ~150 MB of modules must not count as the point's memory
    plan = Plan([512], ["longt5"], TINY, repeats=1)
    point = run_point(plan, "longt5", 512)
    assert point.error is None and point.peak_mb < 60


def test_a_failing_point_reports_one_line():
    point = run_point(Plan([64], ["lsg-nope"], TINY), "lsg-nope", 64)
    assert point.error and "\n" not in point.error and "nope" in point.error


@pytest.mark.parametrize("name", ["longformer", "bigbird", "longt5", "led"])
def test_peers_take_any_length_and_ignore_their_padding(name):
    torch.manual_seed(0)
    layer = mixer(name, TINY).eval()
    x = torch.randn(1, 700, 32)
    with torch.no_grad():
        out = layer(x)
        longer = layer(torch.cat([x, torch.randn(1, 100, 32)], 1))  # different padding, different extra tokens
    assert out.shape == x.shape and torch.isfinite(out).all()
    if name in ("longformer", "led"):  # windowed (one side: 256, 512): the first tokens cannot see the tail
        torch.testing.assert_close(out[:, 1:150], longer[:, 1:150], atol=1e-5, rtol=1e-4)


def test_run_skips_points_estimated_over_the_limit_and_longer_ones(monkeypatch):
    _fake_machine(monkeypatch, fits_up_to=10**9, mb_per_token=1.0)
    points = engine.run(Plan([1024, 2048, 65536, 131072], ["full"], TINY, memory_limit_mb=20_000))
    assert [p.error for p in points[:2]] == [None, None]
    assert points[2].error.startswith("estimated 65536 MB > 20000 MB")  # linear growth measured, extrapolated
    assert points[3].error == f"skipped: {points[2].error} at 65536"


def test_one_measured_point_is_extrapolated_linearly_and_every_point_runs_under_the_limit(monkeypatch):
    # 1 GB at 1K: 16K needs 16 GB if linear, 256 GB if quadratic; the guard must not refuse what may fit
    tried = _fake_machine(monkeypatch, fits_up_to=10**9, mb_per_token=1.0)
    monkeypatch.setattr(engine, "available_mb", lambda device="cpu": 20_000.0)
    points = engine.run(Plan([1024, 16384, 32768], ["full"], TINY))
    assert tried == [1024, 16384] and [p.error for p in points[:2]] == [None, None]
    assert points[2].error.startswith("estimated 32768 MB > 20000 MB")
    assert tried.limits == [20_000.0, 20_000.0]  # no --memory-limit: the memory available, for the watchdog
