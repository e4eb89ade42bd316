"""Batches grouped by length: documents generated together have similar lengths, the text is what one by one
gives, and users see the input order (outputs, records, report), with --resume, failures and Ctrl-C as before."""

import json
from types import SimpleNamespace

import pytest
import torch

from lsgtool.core.errors import Interrupted
from lsgtool.documents import Document
from lsgtool.documents.model import Chapter
from lsgtool.summarize.batch import Outputs, run
from lsgtool.summarize.grouping import Padding
from lsgtool.summarize.inputs import Job

TIMING = ("seconds",)


def _alternating(folder, text, n=8):
    """``n`` documents, short and long in turn (1 and 6 paragraphs): the worst order for padding."""
    folder.mkdir()
    for i in range(n):
        (folder / f"doc{i}.txt").write_text(text(1 if i % 2 == 0 else 6, 3))
    return folder


def _without_timing(record):
    record = {k: v for k, v in record.items() if k not in TIMING}
    record["book_summary"] = {k: v for k, v in record["book_summary"].items() if k not in TIMING}
    return record


@pytest.mark.parametrize("beams", [1, 3])
@pytest.mark.parametrize("kind", ["bart-lsg", "locost", "t5", "bart"])
def test_generating_together_gives_the_text_one_by_one_gives(models, text, kind, beams):
    from lsgtool.summarize.abstractive import load_abstractive

    summarizer = load_abstractive(str(models / kind), {"max_new_tokens": 8, "num_beams": beams})
    torch.manual_seed(0)
    with torch.no_grad():  # weights large enough that the summary depends on the input (the saved ones give '')
        for weight in summarizer.model.parameters():
            if weight.dim() > 1:
                weight.normal_(0, 0.3)
    lengths = (5, 11, 45, 30) if kind in ("bart", "t5") else (5, 11, 67, 40)  # 64 positions; 4·16+3 for LSG
    batch = [summarizer.truncate(summarizer.encode(text(4, 4)), n) for n in lengths]
    together = summarizer.generate_batch(batch)
    alone = [summarizer.generate(ids) for ids in batch]
    assert [(g.text, g.new_tokens) for g in together] == [(g.text, g.new_tokens) for g in alone]
    assert len({g.text for g in alone}) > 1, "the summaries should depend on the input"
    assert {g.padded_to for g in together} == {max(len(ids) for ids in batch)}


def _jobs(lengths):
    def document(i, n):
        return Document(f"d{i}", "text", [Chapter(None, "w " * n)], f"digest{i}")

    return [Job(f"d{i}", f"d{i}", lambda i=i, n=n: document(i, n)) for i, n in enumerate(lengths)]


def _measure(document):
    return list(range(len(document.text.split()))), True


def test_groups_are_sorted_by_length_and_results_keep_the_input_order(tmp_path):
    lengths = [3, 40, 5, 38, 4, 41, 6, 39, 20]
    groups = []

    def summarize(documents, chapters, encoded, padding):
        groups.append([len(ids) for ids in encoded])
        if len(encoded) > 1:  # as summarize_documents counts: the batches generated together
            padding.add([SimpleNamespace(input_tokens=len(ids), padded_to=max(map(len, encoded)), new_tokens=1,
                                         steps=1) for ids in encoded])
        return [{"input": d.name, "summary": f"{len(ids)} words", "method": "m", "model": "m", "input_tokens": 1,
                 "route": "one pass"} for d, ids in zip(documents, encoded)]

    outputs = Outputs(tmp_path / "out", "md")
    outcome = run(_jobs(lengths), outputs, summarize, {}, False, batch_size=2, measure=_measure)
    assert groups == [[3, 4], [5, 6], [20, 38], [39, 40], [41]]
    assert [r["input"] for r in outcome.records] == [f"d{i}" for i in range(len(lengths))]
    assert [r["summary"] for r in outcome.records] == [f"{n} words" for n in lengths]
    assert sorted(p.name for p in outputs.folder.glob("*.md")) == sorted(f"d{i}.summary.md" for i in range(9))
    report = outcome.padding.report(2, True)
    assert report["padding"] == round(21 / 176, 4) and report["padding_in_input_order"] == round(140 / 316, 4)
    unsorted = []
    run(_jobs(lengths), None, lambda d, c, e, p: unsorted.append([len(ids) for ids in e]) or
        [{"input": x.name} for x in d], {}, False, batch_size=2, measure=_measure, by_length=False)
    assert unsorted == [[3, 40], [5, 38], [4, 41], [6, 39], [20]]


def test_inputs_one_pass_cannot_take_go_alone_after_the_groups():
    groups = []

    def measure(document):
        ids, _ = _measure(document)
        return ids, len(ids) < 30  # longer ones take the overflow route

    def summarize(documents, chapters, encoded, padding):
        groups.append([len(ids) for ids in encoded])
        return [{"input": d.name} for d in documents]

    outcome = run(_jobs([50, 3, 35, 4, 5]), None, summarize, {}, False, batch_size=2, measure=measure)
    assert groups == [[3, 4], [5], [50], [35]]
    assert [r["input"] for r in outcome.records] == ["d0", "d1", "d2", "d3", "d4"]


def test_the_pool_of_inputs_read_ahead_is_bounded(monkeypatch):
    import lsgtool.summarize.batch as batch

    monkeypatch.setattr(batch, "POOL_GROUPS", 2)  # 4 inputs read ahead with groups of 2
    read, groups = [], []
    jobs = [Job(j.name, j.stem, lambda j=j: read.append(j.name) or j.read()) for j in _jobs([9, 1, 8, 2, 7, 3])]

    def summarize(documents, chapters, encoded, padding):
        groups.append((len(read), [len(ids) for ids in encoded]))
        return [{"input": d.name} for d in documents]

    run(jobs, None, summarize, {}, False, batch_size=2, measure=_measure)
    assert groups == [(4, [1, 2]), (4, [8, 9]), (6, [3, 7])]  # sorted within each pool of 4


def test_ctrl_c_keeps_the_groups_finished_and_names_the_one_cut(tmp_path):
    outputs = Outputs(tmp_path / "out", "md")

    def summarize(documents, chapters, encoded, padding):
        if len(outputs.ours()) >= 2:
            raise KeyboardInterrupt
        return [{"input": d.name, "summary": "s", "method": "m", "model": "m", "input_tokens": 1, "route": "one pass"}
                for d in documents]

    with pytest.raises(Interrupted) as caught:
        run(_jobs([30, 2, 31, 3]), outputs, summarize, {}, False, batch_size=2, measure=_measure)
    assert sorted(p.name for p in outputs.folder.glob("*.md")) == ["d1.summary.md", "d3.summary.md"]  # the short two
    assert "2 of 4 inputs written" in caught.value.message
    assert "d0: not finished" in caught.value.message and "d2: not finished" in caught.value.message


def _options(inputs, out, batch_size, **more):
    from lsgtool.summarize import SummarizeOptions

    return SummarizeOptions(**{"inputs": [str(inputs)], "out": out, "fmt": "jsonl", "batch_size": batch_size,
                               "generation": {"max_new_tokens": 4, "num_beams": 1}, **more})


def test_sorting_cuts_padding_and_changes_no_record(models, tmp_path, text):
    from lsgtool.summarize import run as summarize

    folder = _alternating(tmp_path / "docs", text)
    model = str(models / "locost")
    one = summarize(_options(folder, tmp_path / "one", 1, model=model))
    by_length = summarize(_options(folder, tmp_path / "sorted", 2, model=model))
    in_order = summarize(_options(folder, tmp_path / "unsorted", 2, model=model, by_length=False))
    expected = [_without_timing(r) for r in one.records]
    assert [r["input"] for r in expected] == [str(folder / f"doc{i}.txt") for i in range(8)]
    for result in (by_length, in_order):
        assert [_without_timing(r) for r in result.records] == expected
        lines = (result.outputs.folder / "summaries.jsonl").read_text().splitlines()
        assert [json.loads(line)["input"] for line in lines] == [r["input"] for r in expected]
    assert one.report()["batches"] is None
    sorted_report, unsorted_report = by_length.report()["batches"], in_order.report()["batches"]
    assert sorted_report["inputs_together"] == unsorted_report["inputs_together"] == 8
    assert sorted_report["padding"] < 0.1 and unsorted_report["padding"] > 0.4
    assert sorted_report["padding_in_input_order"] == unsorted_report["padding"]  # the estimate is what it was


def test_resume_and_a_failing_input_with_sorted_batches(models, tmp_path, text):
    from lsgtool.summarize import run as summarize

    folder = _alternating(tmp_path / "docs", text, n=6)
    (folder / "doc2.txt").write_bytes(b"\x00\x01 binary")
    out = tmp_path / "out"
    options = _options(folder, out, 3, model=str(models / "locost"), fmt="md")
    first = summarize(options)
    assert [f[0] for f in first.outcome.failures] == [str(folder / "doc2.txt")]
    assert [r["input"] for r in first.records] == [str(folder / f"doc{i}.txt") for i in (0, 1, 3, 4, 5)]
    for record in first.records[1:3]:  # doc1 (long) and doc3 (long) are to be done again
        (out / record["output"]).unlink()
        (out / ".lsgtool-summaries" / "records" / f"{record['output'].split('.')[0]}.{record['key']}.json").unlink()
    options.resume = True
    again = summarize(options)
    assert again.outcome.skipped == 3 and len(again.records) == 5
    assert [_without_timing(r) for r in again.records] == [_without_timing(r) for r in first.records]


def test_padding_adds_up_over_processes():
    a, b = Padding(1, 2, 10, 12, 4, 6, 10, 20), Padding(1, 1, 5, 5, 2, 2, 0, 0)
    assert a.merged([b]) == Padding(2, 3, 15, 17, 6, 8, 10, 20)
    assert a.report(2, True)["padding"] == round(2 / 12, 4) and a.report(2, True)["padding_in_input_order"] == 0.5


def test_new_tokens_end_at_the_first_end_of_sequence(models):
    from lsgtool.summarize.abstractive import load_abstractive

    summarizer = load_abstractive(str(models / "locost"), {"max_new_tokens": 8})
    eos, pad = summarizer.model.config.eos_token_id, summarizer.model.config.pad_token_id
    assert summarizer._new_tokens([5, pad, 7, eos, pad, pad]) == 4  # a pad the model chose counts; the batch's not
    assert summarizer._new_tokens([5, pad, 7]) == 3


def test_results_keep_a_name_whose_dot_is_not_a_document_suffix(tmp_path):
    """``Apache-2.0`` is summarised as ``Apache-2.0.summary.md``, not ``Apache-2.summary.md``; ``a.txt`` as ``a``."""
    from lsgtool.summarize.inputs import files

    for name in ("Apache-2.0", "notes.v2.txt", "a.txt"):
        (tmp_path / name).write_text("One sentence here. Another one there.\n")
    jobs = files([str(tmp_path / n) for n in ("Apache-2.0", "notes.v2.txt", "a.txt")])
    assert [job.stem for job in jobs] == ["Apache-2.0", "notes.v2", "a"]
    outputs = Outputs(tmp_path / "out", "md")
    assert outputs.name(jobs[0]) == "Apache-2.0.summary.md"


def test_a_folders_files_of_other_kinds_are_named_in_a_note_not_skipped_silently(tmp_path):
    """A folder's ``paper.tex`` or ``data.csv`` is not read (it would be if named): a note says how many of each kind
    were left; reference summaries (``.ref``) and hidden files and folders (``.git``) are not counted."""
    from lsgtool.summarize.inputs import files

    (tmp_path / ".git" / "objects").mkdir(parents=True)
    for name in ("a.txt", "paper.tex", "data.csv", "more.csv", "a.ref", ".hidden", "Makefile", ".git/HEAD",
                 ".git/objects/0a1b2c"):
        (tmp_path / name).write_text("One sentence here. Another one there.\n")
    notes: list[str] = []
    assert [job.stem for job in files([str(tmp_path)], note=notes.append)] == ["a"]
    assert len(notes) == 1 and "4 file(s) of other kinds not read (.csv 2, no suffix 1, .tex 1;" in notes[0]
    for name in ("paper.tex", "data.csv", "more.csv", "Makefile"):
        (tmp_path / name).unlink()
    notes.clear()
    files([str(tmp_path)], note=notes.append)
    assert notes == []


def test_an_output_that_cannot_be_written_fails_its_input_and_the_batch_goes_on(tmp_path):  # issue 29, item 4
    def summarize(documents, chapters, encoded, padding):
        return [{"input": d.name, "summary": "s", "method": "m", "model": "m", "input_tokens": 1, "route": "one pass"}
                for d in documents]

    jobs = _jobs([3, 4, 5])
    jobs[1] = Job("d1", "d" * 250, jobs[1].read)  # its output name, d...d.summary.md, is longer than 255 bytes
    jobs[2] = Job("d2", "e" * 240, jobs[2].read)  # fits: its temporary names and record must fit too
    outputs = Outputs(tmp_path / "out", "md")
    outcome = run(jobs, outputs, summarize, {}, False)
    assert [r["input"] for r in outcome.records] == ["d0", "d2"]
    assert outcome.failures == [("d1", f"cannot write '{outputs.folder / ('d' * 250 + '.summary.md')}': "
                                       "File name too long.")]
    assert sorted(p.name for p in outputs.folder.glob("*.md")) == ["d0.summary.md", "e" * 240 + ".summary.md"]
    kept = [json.loads(f.read_text()) for f in outputs.records.glob("e*.json")]  # its record, for --resume
    assert [(r["output"], r.get("pending")) for r in kept] == [("e" * 240 + ".summary.md", None)]
    assert not list(outputs.folder.rglob("*lsgtool-tmp"))


def test_a_file_given_twice_is_summarised_once_and_said(runner, app, tmp_path):
    """``a.txt a.txt`` or ``docs/a.txt docs/`` named one file twice: one summary of it, not ``a`` and ``a-2``,
    and the run says so."""
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, words in (("a.txt", "The river floods the valley every spring."), ("b.txt", "The dam holds it back.")):
        (docs / name).write_text(f"{words} The farmers plant rice on the wet fields after it.\n")
    out = tmp_path / "out"
    result = runner.invoke(app, ["summarize", str(docs / "a.txt"), str(docs / "a.txt"), str(docs), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.glob("*.md")) == ["a.summary.md", "b.summary.md"]
    assert f"'{docs / 'a.txt'}' was given twice: summarised once" in result.stderr
    assert result.stderr.count("summarised once") == 2 and "summarised once" not in result.stdout, result.output
