"""Gap-sentence generation: selection equals a brute-force ROUGE reference (ind, seq), ratio and masking counts,
guards, sentinels the tokenizer really has, determinism per seed, and datasets' map."""

import itertools
import random

import pytest
from rouge_score import rouge_scorer

from lsgtool.core.errors import UsageError
from lsgtool.finetune.gsg import GSGOptions, make_pair, map_function, pairs, parse_ratio, select, sentinel_for, split

DOC = ("The cat sat on the mat. The dog chased the cat around the mat. Birds sang in the morning. "
       "The cat and the dog slept on the mat. Rain fell over the quiet town. A dog barked at the birds. "
       "The morning was cold and the town was quiet.")
SCORER = rouge_scorer.RougeScorer(["rouge1"], use_stemmer=False)


def rouge1(prediction: str, target: str) -> float:
    return SCORER.score(target, prediction)["rouge1"].fmeasure


def brute_ind(sentences, k):
    scored = [rouge1(s, " ".join(sentences[:i] + sentences[i + 1:])) for i, s in enumerate(sentences)]
    return sorted(sorted(range(len(sentences)), key=lambda i: (-scored[i], i))[:k])


def brute_seq(sentences, k):
    chosen = []
    for _ in range(k):
        def gain(i):
            picked = sorted(chosen + [i])
            rest = [s for j, s in enumerate(sentences) if j not in picked]
            return rouge1(" ".join(sentences[j] for j in picked), " ".join(rest))
        best = max((i for i in range(len(sentences)) if i not in chosen), key=lambda i: (gain(i), -i))
        chosen.append(best)
    return sorted(chosen)


def test_sentences_come_from_the_splitter():
    assert len(split(DOC)) == 7 and split(DOC)[0] == "The cat sat on the mat."


@pytest.mark.parametrize("k", [1, 2, 3])
def test_ind_equals_the_brute_force_reference(k):
    sentences = split(DOC)
    assert select(sentences, k, "ind", random.Random(0)) == brute_ind(sentences, k)


@pytest.mark.parametrize("k", [1, 2, 3])
def test_seq_equals_the_brute_force_greedy_reference(k):
    sentences = split(DOC)
    assert select(sentences, k, "seq", random.Random(0)) == brute_seq(sentences, k)


def test_seq_is_the_best_set_for_one_and_differs_from_ind_where_redundancy_matters():
    sentences = split(DOC)
    best_single = max(range(7), key=lambda i: (rouge1(sentences[i], " ".join(sentences[:i] + sentences[i + 1:])), -i))
    assert select(sentences, 1, "seq", random.Random(0)) == [best_single]
    # with several random documents, greedy sets are never scored worse than the independent top-k
    rng = random.Random(3)
    words = "cat dog mat bird rain town morning quiet cold sang barked slept".split()
    for _ in range(5):
        doc = [" ".join(rng.choice(words) for _ in range(rng.randint(3, 8))) + "." for _ in range(8)]
        for k in (2, 3):
            def score(chosen):
                rest = [s for j, s in enumerate(doc) if j not in chosen]
                return rouge1(" ".join(doc[j] for j in chosen), " ".join(rest))
            seq, ind = select(doc, k, "seq", random.Random(0)), select(doc, k, "ind", random.Random(0))
            assert score(seq) >= score(ind) - 1e-9
            exhaustive = max(score(list(c)) for c in itertools.combinations(range(8), k))
            assert score(seq) <= exhaustive + 1e-9


@pytest.mark.parametrize("strategy", ["ind", "seq", "lead", "random"])
@pytest.mark.parametrize("ratio, expected_k", [(0.3, 2), (0.15, 1), (0.5, 4)])
def test_ratio_and_masking_counts(strategy, ratio, expected_k):
    pair = make_pair(DOC, GSGOptions(strategy, ratio), "<mask_1>")
    assert len(pair.selected) == expected_k == pair.input.count("<mask_1>")  # round(0.3 * 7) = 2, ...
    sentences = split(DOC)
    assert pair.target == " ".join(sentences[i] for i in pair.selected)  # document order
    kept = [s for i, s in enumerate(sentences) if i not in pair.selected]
    assert all(s in pair.input for s in kept) and not any(sentences[i] in pair.input for i in pair.selected)
    if strategy == "lead":
        assert pair.selected == list(range(expected_k))


def test_a_sampled_ratio_stays_in_its_range_and_everything_is_deterministic_per_seed():
    docs = [DOC, DOC.replace("cat", "fox"), DOC + " One more sentence here.", DOC.upper()] * 5
    options = GSGOptions("random", (0.15, 0.45), seed=7)
    first, _ = pairs(docs, options, "[MASK]")
    again, _ = pairs(docs, options, "[MASK]")
    assert [p.selected for p in first] == [p.selected for p in again]
    assert all(1 <= len(p.selected) <= round(0.45 * p.sentences) for p in first)
    assert len({len(p.selected) for p in first}) > 1  # the ratio is drawn per document
    other, _ = pairs(docs, GSGOptions("random", (0.15, 0.45), seed=8), "[MASK]")
    assert [p.selected for p in other] != [p.selected for p in first]
    noisy = [make_pair(DOC, GSGOptions("ind", 0.3, noise=1.0, seed=s), "[MASK]").selected for s in range(6)]
    assert len({tuple(n) for n in noisy}) > 1 and noisy[0] == make_pair(DOC, GSGOptions("ind", 0.3, noise=1.0, seed=0),
                                                                          "[MASK]").selected


def test_empty_and_one_sentence_documents_are_skipped_and_counted():
    made, counts = pairs(["", "   ", "Only one sentence here.", DOC], GSGOptions(), "[MASK]")
    assert made[:3] == [None, None, None] and made[3] is not None
    assert counts == {"documents": 4, "empty": 2, "one_sentence": 1}
    two = make_pair("First sentence here. Second one there.", GSGOptions(ratio=0.9), "[MASK]")
    assert len(two.selected) == 1  # never every sentence: the input keeps at least one


def test_sentinels_the_tokenizer_really_has(tmp_path):
    from transformers import BertTokenizerFast, PreTrainedTokenizerFast
    from tokenizers import Tokenizer, models

    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the"]
    (tmp_path / "vocab.txt").write_text("\n".join(vocab))
    bert = BertTokenizerFast(vocab_file=str(tmp_path / "vocab.txt"))
    assert sentinel_for(bert) == ("[MASK]", "the tokenizer's mask token")

    def fast(tokens):
        t = Tokenizer(models.WordLevel({w: i for i, w in enumerate(tokens)}, unk_token="<unk>"))
        return PreTrainedTokenizerFast(tokenizer_object=t, unk_token="<unk>")

    assert sentinel_for(fast(["<unk>", "<pad>", "<mask_1>", "<mask_2>", "a"]))[0] == "<mask_1>"
    assert sentinel_for(fast(["<unk>", "<pad>", "<extra_id_0>", "a"]))[0] == "<extra_id_0>"
    with pytest.raises(UsageError, match="no sentence mask"):
        sentinel_for(fast(["<unk>", "a"]))


def test_bad_options_are_usage_errors():
    for kwargs in ({"strategy": "best"}, {"ratio": 0.0}, {"ratio": 1.0}, {"ratio": (0.5, 0.2)}, {"noise": -1.0}):
        with pytest.raises(UsageError):
            GSGOptions(**kwargs)
    assert parse_ratio("0.15..0.45") == (0.15, 0.45) and parse_ratio("0.3") == 0.3
    with pytest.raises(UsageError, match="--gsg-ratio"):
        parse_ratio("a lot")


def test_datasets_map_builds_the_same_pairs_and_caches_by_fingerprint(tmp_path):
    import datasets

    path = tmp_path / "docs.jsonl"
    docs = [DOC, "", DOC.replace("dog", "wolf"), "Just one."]
    import json
    path.write_text("\n".join(json.dumps({"text": d}) for d in docs))
    options = GSGOptions("ind", 0.3, seed=1)
    ds = datasets.load_dataset("json", data_files=str(path), split="train", cache_dir=str(tmp_path / "cache"))
    mapped = ds.map(map_function("text", options, "[MASK]"), batched=True, batch_size=3, with_indices=True)
    expected, _ = pairs(docs, options, "[MASK]")
    assert mapped["gsg_target"] == [p.target if p else "" for p in expected]
    again = ds.map(map_function("text", options, "[MASK]"), batched=True, batch_size=3, with_indices=True)
    assert again._fingerprint == mapped._fingerprint and again.cache_files == mapped.cache_files


def test_numbered_sentinels_mark_each_gap_and_name_it_in_the_target(tmp_path):
    """Issue 21, item 5: a T5 tokenizer's <extra_id_0>, <extra_id_1>, ... one per masked sentence, the target
    naming each as T5's span targets do; PEGASUS's <mask_1> and mask tokens mark every gap alike."""
    from transformers import BertTokenizerFast

    from lsgtool.finetune.gsg import sentinel_sequence

    extra = [f"<extra_id_{i}>" for i in range(3)]
    t5ish = BertTokenizerFast(vocab={w: i for i, w in enumerate(["[PAD]", "[UNK]", "a", *extra])})
    sentinels = sentinel_sequence(t5ish, sentinel_for(t5ish)[0])
    assert sentinels == tuple(extra)
    pair = make_pair(DOC, GSGOptions("lead", 0.5), sentinels)
    k = len(pair.selected)
    assert k >= 4 and pair.selected == list(range(k))
    sentences = split(DOC)
    marks = [*extra, *[extra[-1]] * (k - 3)]  # past the tokenizer's last sentinel, the last repeats
    assert pair.input == " ".join([*marks, *sentences[k:]])
    assert pair.target == " ".join(f"{m} {s}" for m, s in zip(marks, sentences[:k]))
    assert sentinel_sequence(t5ish, "[MASK]") == ("[MASK]",)
    plain = make_pair(DOC, GSGOptions("lead", 0.5), ("<mask_1>",))
    assert plain.input.split().count("<mask_1>") == k and "<mask_1>" not in plain.target


def test_each_split_draws_its_own_gaps():
    """Issue 21, item 5: row indices restart at 0 in every split; the draws depend on the split too, so a
    validation document is not masked as the training document at the same index."""
    docs = [DOC] * 12
    options = GSGOptions("random", 0.3, seed=3)
    train, _ = pairs(docs, options, "[MASK]", part="train")
    validation, _ = pairs(docs, options, "[MASK]", part="validation")
    assert [p.selected for p in train] != [p.selected for p in validation]
    assert [p.selected for p in train] == [p.selected for p in pairs(docs, options, "[MASK]")[0]]
