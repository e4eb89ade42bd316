import pytest

from lsgtool.core.errors import UsageError
from lsgtool.profiling import crossover, parse_lengths, scaling_exponent


@pytest.mark.parametrize(
    "spec, lengths",
    [
        ("1k..8k", [1024, 2048, 4096, 8192]),
        ("1k..64k:x4", [1024, 4096, 16384, 65536]),
        ("1k..10k", [1024, 2048, 4096, 8192]),
        ("16k,1k, 4k", [1024, 4096, 16384]),
        ("4096", [4096]),
        ("1m", [1048576]),
        ("512..512", [512]),
        ("1k,,", [1024]),  # empty items between commas are skipped
    ],
)
def test_good_specs(spec, lengths):
    assert parse_lengths(spec) == lengths


@pytest.mark.parametrize(
    "spec, why",
    [
        ("", "empty"),
        ("4q", "not a number like 4096"),
        ("8k..1k", "runs backwards"),
        ("1k..8k:y2", "must look like x2"),
        ("1k..8k:x1", "at least 2"),
        ("0", "at least 1"),
        (",", "empty"),
    ],
)
def test_bad_specs_say_why(spec, why):
    with pytest.raises(UsageError, match=why) as info:
        parse_lengths(spec)
    assert "1k..512k" in info.value.hint


def test_scaling_exponent_tells_linear_from_quadratic():
    lengths = [1024, 2048, 4096, 8192]
    assert scaling_exponent(lengths, [n * 3.0 for n in lengths]) == pytest.approx(1.0)
    assert scaling_exponent(lengths, [n * n * 1e-6 for n in lengths]) == pytest.approx(2.0)
    assert scaling_exponent([1024], [1.0]) is None
    assert scaling_exponent(lengths, [1.0, None, 4.0, 8.0]) == pytest.approx(1.0)


def test_crossover_is_where_the_variant_stays_faster():
    lengths = [1, 2, 4, 8]
    assert crossover(lengths, [5, 4, 3, 2], [1, 3, 5, 9]) == 4
    assert crossover(lengths, [1, 9, 1, 1], [2, 2, 2, 2]) == 4  # faster, slower, then faster for good
    assert crossover(lengths, [5, 5, 5, 5], [1, 1, 1, 1]) is None
    assert crossover(lengths, [5, 5, 5, 5], [1, 1, None, None]) == 4  # the baseline ran out of memory
