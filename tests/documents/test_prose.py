"""The prose a summary picks from (no headings, code, tables) and sentences as it shows them (no markup), with
their spans exact in the text (issue 30, item 4)."""

import pytest

from lsgtool.documents.prose import blocks, prose_sentences, readable

MARKDOWN = """# Associated items

## Motivation
A typical example is a graph, which involves three types: nodes, edges and the graph.

In today's Rust you pass them as _parameters_:

```rust
trait Graph<N, E> {
    fn has_edge(&self, &N, &N) -> bool;
}
```

    fn indented() -> Code { here }

* **Readability.** Associated types name a whole family at once.
* See [the RFC](https://example.org/rfc) and `Iterator::next`[^1].

| kind | cost |
|------|------|
| one  | two  |

Setext heading
--------------
The last paragraph ends here.

[^1]: https://example.org/footnote
"""


def test_blocks_leave_out_headings_code_tables_and_definitions():
    shown = [" ".join(MARKDOWN[a:b].split()) for a, b in blocks(MARKDOWN)]
    assert shown == [
        "A typical example is a graph, which involves three types: nodes, edges and the graph.",
        "In today's Rust you pass them as _parameters_:",
        "* **Readability.** Associated types name a whole family at once.",
        "* See [the RFC](https://example.org/rfc) and `Iterator::next`[^1].",
        "The last paragraph ends here.",
    ]


def test_sentences_read_as_text_and_their_spans_are_exact():
    spans = prose_sentences(MARKDOWN)
    assert all(MARKDOWN[a:b] == MARKDOWN[a:b].strip() for a, b in spans)  # exact, no surrounding blanks
    assert [readable(MARKDOWN[a:b]) for a, b in spans] == [
        "A typical example is a graph, which involves three types: nodes, edges and the graph.",
        "In today's Rust you pass them as parameters:",
        "Readability. Associated types name a whole family at once.",  # syntok: no break before "**"
        "See the RFC and Iterator::next.",
        "The last paragraph ends here.",
    ]
    # the heading above the first sentence is not glued to it
    assert not any("Motivation" in MARKDOWN[a:b] for a, b in spans)


def test_a_transcript_reads_each_turn_on_its_own():
    turns = "\n".join(f"{who}: {words}" for who, words in [
        ("Grad C", "We had a long discussion about it"), ("PhD D", "It didn't move"),
        ("Grad C", "Channel three? Channel three?"), ("Professor", "So let us begin with the agenda")])
    units = [turns[a:b] for a, b in prose_sentences(turns)]
    assert units == ["Grad C: We had a long discussion about it", "PhD D: It didn't move", "Grad C: Channel three?",
                     "Channel three?", "Professor: So let us begin with the agenda"]


@pytest.mark.parametrize("raw, shown", [
    ("Use ``literal`` and :func:`load` as `the guide`_ says.", "Use literal and load as the guide says."),
    ("![a plot](plot.png) The curve rises [3].", "The curve rises."),
    ("> 1. quoted *item* with snake_case_name and 2 * 3 * 4", "quoted item with snake_case_name and 2 * 3 * 4"),
    ("See <https://example.org> and [docs][ref].", "See https://example.org and docs."),
])
def test_readable_removes_markup_and_keeps_words(raw, shown):
    assert readable(raw) == shown


def test_plain_prose_is_unchanged():
    text = "It was a simple exchange.\nRetief gave them more than they expected!\n\nII\n\nMagnan left."
    assert [text[a:b] for a, b in prose_sentences(text)] == [
        "It was a simple exchange.", "Retief gave them more than they expected!", "II", "Magnan left."]


@pytest.mark.parametrize("text, title", [
    ("# Associated items\n\n## Motivation\nText.", "Associated items"),
    ("Tide pools\n==========\n\nThe rocks.", "Tide pools"),
    ("CULTURAL EXCHANGE\n\nBY KEITH LAUMER\n\nIt was a simple exchange.", "CULTURAL EXCHANGE"),
    ("It was a simple exchange.\n\nMore.", None),  # a sentence, not a title
    ("Grad C: Yeah, we had a discussion.\n\nPhD D: It didn't move.", None),  # a transcript's turn
    ("A short line\nthat goes on as prose.", None),  # not alone: a wrapped sentence
    ("#\n\nText.", None),
])
def test_title_is_a_heading_or_a_short_line_standing_alone(text, title):
    from lsgtool.documents.prose import title_span

    span = title_span(text)
    assert (text[span[0]:span[1]] if span else None) == title


def test_a_transcript_is_told_from_prose_with_a_few_colons():
    from lsgtool.documents.prose import is_transcript

    turns = "Grad C: Yes.\nPhD D: It didn't move.\nGrad C: Channel three?\nProfessor: Let us begin.\n"
    assert is_transcript(turns)
    assert not is_transcript("Note: this is prose.\nIt goes on here.\nAnd here.\nWarning: one more line.\nEnd.\n")
