"""The prose a summary picks from (no headings, code, tables) and sentences as it shows them (no markup), with
their spans exact in the text (issue 30, item 4)."""

from pathlib import Path

import pytest

from lsgtool.documents.prose import blocks, prose_sentences, readable
from lsgtool.documents.read import read_bytes
from lsgtool.documents.sentences import sentence_spans

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
        "Readability: Associated types name a whole family at once.",  # a bold run-in heading, "**Readability.**"
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
    # the speaker is a label, not part of the sentence (issue 34, item 1)
    assert units == ["We had a long discussion about it", "It didn't move", "Channel three?",
                     "Channel three?", "So let us begin with the agenda"]


@pytest.mark.parametrize("raw, shown", [
    ("Use ``literal`` and :func:`load` as `the guide`_ says.", "Use literal and load as the guide says."),
    ("![a plot](plot.png) The curve rises [3].", "The curve rises."),
    ("> 1. quoted *item* with snake_case_name and 2 * 3 * 4", "quoted item with snake_case_name and 2 * 3 * 4"),
    ("See <https://example.org> and [docs][ref].", "See https://example.org and docs."),
    ("Read _[Pro Git][progit]_ first.", "Read Pro Git first."),  # (emphasis around a link)
    # brackets against a word are no reference link: a rate law's concentrations, an array's indices
    ("The rate law is rate = k[I-][S2O8], so grid[i][j] holds it.", "The rate law is rate = k[I-][S2O8], so grid[i][j] "
     "holds it."),
    ("It is used in Transformer-XL [7]. [19] propose a masked block.",  # a sentence the splitter did not end:
     "It is used in Transformer-XL. [19] propose a masked block."),  # "[19]" is who proposes
    # code keeps what it is written with: no emphasis inside it, no link taken across two code spans
    ("Call `__init__`, ``a `b` c`` and `_catch`, not __bold__.", "Call __init__, a `b` c and _catch, not bold."),
    ("Read `the guide <https://example.org>`__ and *see `x` here*.", "Read the guide and see x here."),
    # a sentence of a longer quotation is shown with its marks paired (not an inch mark's)
    ('"Your father," he went on, "your father put the line into my hands.',
     '"Your father," he went on, "your father put the line into my hands."'),
    ('Tom Rowe saw him go."', '"Tom Rowe saw him go."'),
    ("“Come in, she said.", "“Come in, she said.”"),
    ('A 12" pipe runs under the road.', 'A 12" pipe runs under the road.'),  # an inch mark, not a quotation
    ('"Come in," she said.', '"Come in," she said.'),
    # a clause's number is not shown, a number the sentence says is
    ("2.1 Licensor grants a licence to use the Software.", "Licensor grants a licence to use the Software."),
    ("(A) Licensor has developed the Software.", "Licensor has developed the Software."),
    ("(iv) the fees are paid in full.", "the fees are paid in full."),
    ("3.5 million people live in the region.", "3.5 million people live in the region."),
    # pandoc's citations and attributes, not a bracketed aside or a formula's braces
    ("The gate scores passages [@vaswani2017; @lsg] as in [see @lsg, p. 3].", "The gate scores passages as in."),
    ("A [link](https://example.org){.external} and a set {a, b}.", "A link and a set {a, b}."),
    ("Mail a@b.org [or @joe on chat].", "Mail a@b.org [or @joe on chat]."),
    ("[0007] In some embodiments, the emitter flushes itself.", "In some embodiments, the emitter flushes itself."),
    (r"The half-life is $T_{1/2} = \frac{\ln 2}{|k|}$, since $\ln 2 \approx 0.693$.",  # TeX math as text
     "The half-life is T_1/2 = ln 2/|k|, since ln 2 ≈ 0.693."),
    ("It costs $5 and $6 at `$x$` here.", "It costs $5 and $6 at $x$ here."),  # money, and code, as written
])
def test_readable_removes_markup_and_keeps_words(raw, shown):
    assert readable(raw) == shown


@pytest.mark.parametrize("raw, shown", [
    ("However, the parser reads the module first.", "The parser reads the module first."),
    ("And the checker runs over its items.", "The checker runs over its items."),
    ("Additionally, *every* crate is read.", "Every crate is read."),
    ("So far, nothing has been read twice.", "So far, nothing has been read twice."),  # "so" of "so far" ties nothing
    ("But for this case, the order holds.", "But for this case, the order holds."),
    ("So that the checker may run, it waits.", "So that the checker may run, it waits."),
    ("And I went.", "And I went."),  # too little left: shown whole
    ("Now, iPhone sales grew.", "iPhone sales grew."),  # a word's own capitals are its own
    ("Then the king went home.", "Then the king went home."),  # "then" without a comma tells when
    ("Third, the checker runs over its items.", "The checker runs over its items."),  # a count that starts at 3
    ("On the other hand, every crate is read.", "Every crate is read."),
    ("Finally, in fact, the order holds.", "The order holds."),
    ("Second-hand books are read twice.", "Second-hand books are read twice."),
    # a run-in label, a news story's dateline: what kind of paragraph it is, where and when it was filed
    ("Background: Lemierre syndrome is rare.", "Lemierre syndrome is rare."),
    ("**TL;DR:** never lock a busy table.", "Never lock a busy table."),
    ("**BAKERSFIELD, Calif., March 4, 2025 /PRNewswire/** -- Northwind broke ground.", "Northwind broke ground."),
    ("LONDON (Reuters) - Britain's economy grew.", "Britain's economy grew."),
    ("WASHINGTON, March 3 — The Senate voted on Tuesday.", "The Senate voted on Tuesday."),
    ("NASA - the agency said so.", "NASA - the agency said so."),  # no capital after the dash: no dateline
    # a glossary's term, a note: no date, agency or wire
    ("HTTP - Hypertext Transfer Protocol carries the web.", "HTTP - Hypertext Transfer Protocol carries the web."),
    ("UPDATE, March 3 - The post was edited since.", "UPDATE, March 3 - The post was edited since."),
    ("Results of the trial: all passed.", "Results of the trial: all passed."),  # no label alone before its colon
    ("(a) In General.--Beginning in 2026, an operator shall verify ages.", "Beginning in 2026, an operator shall "
     "verify ages."),  # a bill's run-in heading
    ("(1) MINOR.--The term minor means an individual under 17.", "The term minor means an individual under 17."),
])
def test_the_words_that_only_link_a_sentence_to_the_one_before_are_left_out(raw, shown):
    assert readable(raw) == shown


def test_a_turns_opening_words_are_left_out_and_its_source_is_still_the_whole_span():
    text = "Alice: Yeah, so, um, I think we should ship the parser this week.\nBob: Okay, okay, right.\n"
    spans = prose_sentences(text, transcript=True)
    assert [readable(text[a:b], spoken=True) for a, b in spans] == [
        "I think we should ship the parser this week.", "Okay, right."]  # a back-channel alone is shown whole
    assert text[spans[0][0]:spans[0][1]] == "Yeah, so, um, I think we should ship the parser this week."


def test_plain_prose_is_unchanged():
    text = "It was a simple exchange.\nRetief gave them more than they expected!\n\nII\n\nMagnan left."
    assert [text[a:b] for a, b in prose_sentences(text)] == [
        "It was a simple exchange.", "Retief gave them more than they expected!", "Magnan left."]  # II: a heading


PAPER = """LOCOST: State-Space Models for Long Document Summarization
1 Introduction
Nowadays the design of efficient models for long texts remains an open challenge. Transformers are quadratic.
2.1 Sparse attention and its limits
Sparse attention patterns extend the context of encoder-decoder models.
"""

WRAPPED = """The committee met in the morning and heard the report. The committee then voted on
the motion of
Mr Smith, which passed.

The chair thanked the members of the committee for their work. Then John
Smith and the clerk read the minutes of the last meeting of the committee aloud.
Results and discussion
The results follow.
"""


def test_a_bare_heading_line_of_plain_text_is_not_glued_to_the_sentence_after_it():
    filing = ("PART II\n\nItem 7. Management's Discussion and Analysis of Financial Condition and Results of Operations"
              "\n\nNorthwind Logistics provides truckload transportation, dedicated fleet and contract warehousing "
              "services in North America, from 41 terminals and nine fulfillment centers.\n")  # a 10-K's labelled
    assert [filing[a:b][:19] for a, b in prose_sentences(filing)] == ["Northwind Logistics"]  # heading: longer
    amending = filing.replace("Item 7. Management's Discussion and Analysis of Financial Condition and Results of "
                              "Operations", "Section 5 of the Principal Act is amended by inserting after subsection "
                              "(2) the following subsection")  # not a title: a sentence going on
    assert [amending[a:b][:9] for a, b in prose_sentences(amending)][0] == "Section 5"
    guide = ('Welcome to the exhibition.\n\nSTOP 105 — Willem van de Velde the Younger, "The Cannon Shot," c. 1680 '
             "(Gallery 16)\nThis is the masterpiece of the exhibition, on loan from the Rijksmuseum in Amsterdam. "
             "Willem van de Velde the Younger shows a warship firing a salute in a dead calm, its smoke rolling across "
             "the water.\n")
    # a numbered stop's heading
    assert [guide[a:b][:11] for a, b in prose_sentences(guide)][:2] == ["Welcome to ", "This is the"]
    road = guide.replace("STOP 105 — Willem van de Velde the Younger", "Route 66 — the road west that my "
                         "grandfather took in the summer of 1951 with a")  # a sentence going on is no heading
    assert [road[a:b][:8] for a, b in prose_sentences(road)][:2] == ["Welcome ", "Route 66"]
    assert [PAPER[a:b] for a, b in prose_sentences(PAPER)] == [
        "Nowadays the design of efficient models for long texts remains an open challenge.",
        "Transformers are quadratic.", "Sparse attention patterns extend the context of encoder-decoder models."]
    # in a hard-wrapped paragraph a short line is a heading only where the next line's first word would have
    # fitted on it and the line before ended a sentence
    assert [" ".join(WRAPPED[a:b].split()) for a, b in prose_sentences(WRAPPED)] == [
        "The committee met in the morning and heard the report.",
        "The committee then voted on the motion of Mr Smith, which passed.",
        "The chair thanked the members of the committee for their work.",
        "Then John Smith and the clerk read the minutes of the last meeting of the committee aloud.",
        "The results follow."]


@pytest.mark.parametrize("text, title", [
    ("# Associated items\n\n## Motivation\nText.", "Associated items"),
    ("Tide pools\n==========\n\nThe rocks.", "Tide pools"),
    ("CULTURAL EXCHANGE\n\nBY KEITH LAUMER\n\nIt was a simple exchange.", "CULTURAL EXCHANGE"),
    ("It was a simple exchange.\n\nMore.", None),  # a sentence, not a title
    ("Grad C: Yeah, we had a discussion.\n\nPhD D: It didn't move.", None),  # a transcript's turn
    ("A short line\nthat goes on as prose.", None),  # not alone: a wrapped sentence
    ("#\n\nText.", None),
    ('---\ntitle: "Sparse Gated Retrieval"\nauthor:\n  - H. Kobayashi\n---\n\n# Abstract\n\nText.',
     "Sparse Gated Retrieval"),  # YAML front matter's title, not the first heading
    ("---\nauthor: H. Kobayashi\n---\n\n# Gated retrieval\n\nText.", None),  # front matter without one
    ("FOR IMMEDIATE RELEASE\n\n# Northwind Breaks Ground\n\nText.", "Northwind Breaks Ground"),  # a banner above it
    ("OPINION\n\nLibraries Are Not Warehouses\n\nBy Ruth Okonkwo\n\nText.", "Libraries Are Not Warehouses"),
    ("HEARTHSTONE MUTUAL INSURANCE COMPANY\nHOMEOWNERS POLICY\n\nText.",  # a title in capitals over two lines
     "HEARTHSTONE MUTUAL INSURANCE COMPANY\nHOMEOWNERS POLICY"),
    ("MASTER SERVICES AGREEMENT\nBETWEEN ACME LTD\nAND NORTHWIND PLC\n\nText.",
     "MASTER SERVICES AGREEMENT\nBETWEEN ACME LTD\nAND NORTHWIND PLC"),
    ("ONE\nTWO\nTHREE\nFOUR\n\nText.", None),  # more lines than a title's
    ("Ruth Okonkwo\n14 Mill Lane\n\nText.", None),  # an address, not in capitals
    ("NOTICE OF MEETING\nThe board meets on Monday.\n\nText.", None),  # a heading over its text
    ("WHEREAS:\nTHE PARTIES AGREE\n\nText.", None),  # a lead-in
    ("ACME SUPPLIES LTD\n14 HIGH STREET\nLEEDS LS1 4AB\n\nText.", None),  # an address in capitals
    ("Severe Hyponatraemia After Beer: A Case Report\n\nText.",  # a subtitle in title case: no speaker's turn
     "Severe Hyponatraemia After Beer: A Case Report"),
    ("Severe Hyponatraemia Induced by Excessive Beer Intake (Beer Potomania) in a 58-Year-Old Man: A Case "
     "Report\n\nText.", "Severe Hyponatraemia Induced by Excessive Beer Intake (Beer Potomania) in a 58-Year-Old "
     "Man: A Case Report"),  # longer in title case
    ("Dana: we should start with the budget\n\nText.", None),  # a turn
    ("Commencement Address to the Class of 2024\nDelivered by Dr. Ines Valcarcel, Chief Engineer\n"
     "Lewis & Clark Community College, May 18, 2024\n\nText.", "Commencement Address to the Class of 2024"),
    ("Jane Smith\n14 High Street\nLeeds LS1 4AB\n\nDear Sir, I write.", None),  # an address over a letter
    ("Mr John Davies\nRose Cottage\nLittle Bampton\n\nDear Mr Davies, I write.", None),  # (no byline under it)
    ("Chapter One\nThe House On The Hill\n\nText.", None),
    ("Attendees: Sam Lee, Priya Raman, Tom Hart\n\nWe agreed.", None),  # a field, not a subtitle
    ("John: Welcome Back Everyone\n\nText.", None),
    ("HEARTHSTONE MUTUAL INSURANCE\nINSURED: JOHN SMITH\n\nText.", None),
    # a title over fields or its writer's name
    ("UCAS Personal Statement\nApplicant: Priya Raghunathan\nCourse: Civil Engineering (MEng)\n\nWhen the bridge "
     "closed, I asked why.\n\nI built a model of it.\n\nThen I read about loads.\n\nI want to design bridges.",
     "UCAS Personal Statement"),
    ("Journal - Spring 2026\nTom Achterberg\n\nSunday 1 March 2026\n\nStarted this notebook.", "Journal - Spring 2026"),
    ("Tom Achterberg\nSunday 1 March 2026\n\nStarted this notebook.", None),  # a name over a date
    # a memo's kind over its subject: the subject ("CONFIDENTIAL. Do not forward." above it a banner)
    ("**CONFIDENTIAL. Do not forward.**\n\n# MEMORANDUM\n\n**To:** All staff\n**From:** Renata Osei\n"
     "**Subject:** New operating structure from 1 January\n\n---\n\nFrom 1 January we move to three divisions.",
     "New operating structure from 1 January"),
    ("MEMO\n\nWe move to three divisions.", "MEMO"),  # no subject: its kind
    ("# Memo\n\n**To:** All staff\n**From:** Sam\n\nWe close the region.\n\nRe: the old region, it shuts in May.",
     "Memo"),  # (a "Re:" in its text is no subject field)
    # a letter: its subject line over its salutation, not its sender's name
    ("Priya Raman\n14 Larkfield Road\nBristol BS6 5QT\n\n3 November 2026\n\nRe: Senior Data Engineer (Ref. 114)\n\n"
     "Dear Hiring Manager,\n\nI am writing to apply.", "Re: Senior Data Engineer (Ref. 114)"),
    ("Mr Daniel O'Connell\n\n22 Rowan Terrace\n\nFormal complaint: repeated missed bin collections\n\nDear Sir or "
     "Madam,\n\nI am writing to complain.", "Formal complaint: repeated missed bin collections"),
    ("Jane Smith\n14 High Street\n\n3 May 2026\n\nDear Sir,\n\nI write about the hedge.", None),
    ("The Letter\n\nShe opened it.\n\nDear Tom,\n\nCome home.", "The Letter"),  # a story that quotes a letter
    ("LIGHT ON THE WATER\nAudio guide script\n\nVroom painted ships like portraits.", "LIGHT ON THE WATER"),
    ("Cycle lanes save lives\n\nSir,\n\nYour report on the junction was wrong.", "Cycle lanes save lives"),
    ("LIGHT ON THE WATER\nAudio guide script\nGallery 14\n\nVroom painted ships.", None),  # more lines
    ("ACME SUPPLIES LTD\nLeeds LS1 4AB\n\nText.", None),  # an address
    ("LETTERS TO THE EDITOR\nThe Harrowgate Courier, Tuesday 3 November 2026\n\nClosing the Eastfield branch "
     "library would be a false economy\n\nSir,\n\nI write in response to your report.",  # a letter to an editor
     "Closing the Eastfield branch library would be a false economy"),
])
def test_title_is_a_heading_or_a_short_line_standing_alone(text, title):
    from lsgtool.documents.prose import title_span

    span = title_span(text)
    assert (text[span[0]:span[1]] if span else None) == title


def test_a_quotation_inside_a_quotation_closing_at_a_sentences_end_ends_it():
    """syntok read on through '.\'"' (and '.’”'): the narration after a nested quotation was glued to it."""
    text = ('Luke gives the setting. "The scribes were grumbling, \'This fellow welcomes sinners.\'" The parables '
            "that follow are an answer to that complaint. She said, “He told me, ‘Never again.’” Then she left.")
    assert [text[a:b] for a, b in sentence_spans(text)] == [
        "Luke gives the setting.", '"The scribes were grumbling, \'This fellow welcomes sinners.\'"',
        "The parables that follow are an answer to that complaint.", "She said, “He told me, ‘Never again.’”",
        "Then she left."]


def test_who_is_quoted_after_a_quotation_in_its_line_is_part_of_its_sentence():
    """A newsletter's '"An allotment shouldn't be a ten-year wait." — Priya Raman' had been shown without its
    speaker (the name alone, a fragment, never)."""
    text = ('Priya Raman started as site manager on 2 June.\n\n"An allotment shouldn\'t be a ten-year wait. A plot '
            'left to brambles should go to someone who will grow on it." — Priya Raman, site manager\n\n'
            '"Go home," she said. — and he went.\n')
    assert [text[a:b] for a, b in sentence_spans(text)][1:] == [
        '"An allotment shouldn\'t be a ten-year wait. A plot left to brambles should go to someone who will grow on '
        'it." — Priya Raman, site manager', '"Go home," she said.', "— and he went."]
    stopped = '"A plot left to brambles should go to someone else." — Priya Raman, site manager.'
    assert [stopped[a:b] for a, b in sentence_spans(stopped)] == [stopped]


def test_a_transcript_is_told_from_prose_with_a_few_colons():
    from lsgtool.documents.prose import is_transcript

    turns = "Grad C: Yes.\nPhD D: It didn't move.\nGrad C: Channel three?\nProfessor: Let us begin.\n"
    assert is_transcript(turns)
    assert not is_transcript("Note: this is prose.\nIt goes on here.\nAnd here.\nWarning: one more line.\nEnd.\n")


MEETING = """Project Manager: Okay. Uh first of all I'll start with the costs,
Project Manager: because that's going to influence our design.
Marketing: Yeah.
[00:12:31] Industrial Designer: So um we we should b build it with a kinetic dynamo.
Marketing: Mm-hmm.
"""


def test_a_transcript_turn_is_its_words_the_speaker_a_label():
    # issue 34, item 1: one speaker's consecutive lines are one turn; its sentences never hold a speaker's name
    from lsgtool.documents.prose import prose_sentences, readable, turns

    found = turns(MEETING)
    assert [t.speaker for t in found] == ["Project Manager", "Marketing", "Industrial Designer", "Marketing"]
    assert found[2].time(found[2].start) == "00:12:31" and found[0].time(found[0].start) is None
    assert MEETING[found[0].start:].startswith("Okay.") and MEETING[found[2].start:].startswith("So um")
    spans = prose_sentences(MEETING)
    shown = [readable(MEETING[a:b], spoken=True) for a, b in spans]
    assert shown == ["Okay.", "First of all I'll start with the costs, because that's going to influence our design.",
                     "Yeah.", "We should build it with a kinetic dynamo.", ""]  # a filler alone shows nothing
    # the span is exact in the text: from the first word after the label to the sentence's end, across the label
    a, b = spans[1]
    assert MEETING[a:b] == ("Uh first of all I'll start with the costs,\nProject Manager: because that's going "
                            "to influence our design.")


def test_substance_counts_content_words_not_back_channels():
    from lsgtool.documents.prose import substance

    assert substance("Yeah. Okay. Hmm.") == 0
    assert substance("Yes, it's uh, I think so, right?") == 0
    assert substance("We decided the remote gets a kinetic dynamo and rubber buttons.") >= 5


VTT = """WEBVTT

NOTE exported by a meeting tool

1
00:00:01.000 --> 00:00:04.000
<v Alice>So um we should build the the remote

2
00:00:04.000 --> 00:00:06.500
<v Alice>with fewer buttons. The budget is
twelve euros and fifty cents.

3
00:01:07.250 --> 00:01:09.000
<v Bob>Yeah.</v>
"""
SRT = VTT.replace("WEBVTT\n\nNOTE exported by a meeting tool\n\n", "").replace(".000 -->", ",000 -->").replace(
    ".500\n", ",500\n").replace(".250 -->", ",250 -->").replace(",000\n", ",000\n").replace("<v Alice>", "Alice: ") \
    .replace("<v Bob>", "Bob: ").replace("</v>", "")


@pytest.mark.parametrize("text", [VTT, SRT], ids=["vtt", "srt"])
def test_captions_are_read_as_turns_across_cues(text):
    # issue 34, item 1: cues merged into turns; a sentence over two cues spans the timing between, shown without it
    from lsgtool.documents.prose import is_captions, prose_sentences, readable, turns

    assert is_captions(text)
    found = turns(text)
    assert [t.speaker for t in found] == ["Alice", "Bob"]
    spans = prose_sentences(text)
    shown = [readable(text[a:b], spoken=True) for a, b in spans]
    assert shown == ["We should build the remote with fewer buttons.", "The budget is twelve euros and fifty cents.",
                     "Yeah."]
    assert text[spans[0][0]:].startswith("So um we") and text[:spans[0][1]].endswith("with fewer buttons.")
    # each sentence's time is that of the cue it begins in
    assert [found[0].time(spans[0][0]), found[0].time(spans[1][0]), found[1].time(spans[2][0])] == \
        ["00:00:01", "00:00:04", "00:01:07"]


def test_a_cue_that_is_only_a_sound_begins_no_sentence():
    """A talk's "(Laughter)" cue before a sentence: the sentence's source and time are its own cue's, not that one's
    (they had been 00:00:17, the laughter's)."""
    from lsgtool.documents.prose import prose_sentences, turns

    text = ("1\n00:00:12,300 --> 00:00:16,860\nFor eleven years I was a firefighter\nin northern California.\n\n"
            "2\n00:00:17,060 --> 00:00:21,620\n(Laughter)\n\n3\n00:00:21,820 --> 00:00:25,620\nWe need to put good "
            "fire back\non the land.\n")
    spans = prose_sentences(text)
    assert [text[a:b].split("\n")[0] for a, b in spans] == ["For eleven years I was a firefighter",
                                                           "We need to put good fire back"]
    assert turns(text)[0].time(spans[1][0]) == "00:00:21"


def test_a_broadcast_captions_change_of_speaker_starts_a_turn_and_is_not_shown():
    """">> " opens a new speaker's words in broadcast captions: a turn of its own (named when a label follows),
    and never part of a sentence."""
    from lsgtool.documents.prose import prose_sentences, readable, turns

    text = ("WEBVTT\n\n00:00:01.000 --> 00:00:03.000\n>> Welcome back to the show.\n\n"
            "00:00:03.000 --> 00:00:05.000\n>> Thanks for having me. Cover crops\n\n"
            "00:00:05.000 --> 00:00:07.000\nfeed the soil.\n\n00:00:07.000 --> 00:00:09.000\n>> ANNA: Tell us more.\n")
    assert [t.speaker for t in turns(text)] == [None, None, "Anna"]  # named in capitals: as a name
    shown = [readable(text[a:b], spoken=True) for a, b in prose_sentences(text)]
    assert shown == ["Welcome back to the show.", "Thanks for having me.", "Cover crops feed the soil.",
                     "Tell us more."]


@pytest.mark.parametrize("dash", ["--", "—"])
def test_a_speakers_label_may_name_a_firm_and_a_role(dash):
    """An earnings call's "Sofia Lindqvist -- Morgan Stanley -- Analyst:" is a speaker (44 characters), as is a
    label with em dashes."""
    from lsgtool.documents.prose import is_transcript, turns

    analyst = f"Sofia Lindqvist {dash} Morgan Stanley {dash} Analyst"
    text = (f"Operator: Our next question comes from Sofia Lindqvist.\n{analyst}: Thanks. How much is sustainable?\n"
            f"Jane Doe {dash} Chief Financial Officer: About two-thirds of it.\n{analyst}: That's helpful.\n")
    assert is_transcript(text)
    assert [t.speaker for t in turns(text)] == ["Operator", analyst, f"Jane Doe {dash} Chief Financial Officer",
                                                analyst]


def test_prose_is_not_captions_or_a_transcript():
    from lsgtool.documents.prose import is_captions, turns

    text = "A story.\n\nIt was 10:30 when she left --> the road was empty.\n"
    assert not is_captions(text) and turns(text) == ()


def test_the_readers_say_overrides_detection_but_not_the_caption_format():
    from lsgtool.documents.prose import reading, turns

    few = "Notes of the call.\n\nAlice: We ship on Friday.\n\nThe rest is prose, written after the call.\n\nMore prose."
    assert reading(few) == "prose" and turns(few) == ()
    assert reading(few, transcript=True) == "transcript"
    found = turns(few, True)
    assert [t.speaker for t in found] == [None, "Alice"] and len(found[1].pieces) == 3  # unlabeled lines go on
    assert reading(MEETING) == "transcript" and reading(MEETING, transcript=False) == "prose"
    assert turns(MEETING, False) == ()
    assert reading(VTT, transcript=False) == "captions"


def test_what_a_caption_file_holds_between_cues_is_not_said():
    # a cue's name and a NOTE block between two cues of one sentence are not words of it
    from lsgtool.documents.prose import prose_sentences, readable

    timing = "00:00:01.000 --> 00:00:02.500\n"
    for between in ("second-cue\n", "NOTE a private remark\nover two lines\n\n"):
        text = f"WEBVTT\n\n{timing}The budget is\n\n{between}{timing.replace('01.000', '02.500')}tight this year.\n"
        (span,) = prose_sentences(text)
        assert readable(text[span[0]:span[1]], spoken=True) == "The budget is tight this year."


@pytest.mark.parametrize("said", ["The AI aims to help.", "We ordered 2 25-inch screens.", "Send it to PR promptly.",
                                  "Keep it 30 cm from the wall."])
def test_a_stutter_is_a_lowercase_fragment_not_a_word(said):
    from lsgtool.documents.prose import readable

    assert readable(said, spoken=True) == said
    assert readable("The team b build it.", spoken=True) == "The team build it."
    # a word cut off and started over (in the ICSI meetings, 1,900 lone lowercase letters: "w how", "s uh", "t to")
    assert readable("We talked about how much w how easy we want it, um, t to be.", spoken=True) == \
        "We talked about how much how easy we want it, to be."
    assert readable("So w.", spoken=True) == "So." and readable("I think a lot.", spoken=True) == "I think a lot."
    assert readable("We sh change th the speaker tag if the theme is ok for her hero at time t and x.",
                    spoken=True) == "We change the speaker tag if the theme is ok for her hero at time and x."
    assert readable("It costs ten euros per person, et al.", spoken=True) == "It costs ten euros per person, et al."


def test_a_voice_tag_is_read_in_linear_time():
    from lsgtool.documents.prose import VOICE

    assert VOICE.match("<v" + ".a" * 40) is None  # nested quantifiers took minutes on this line
    assert VOICE.match("<v.loud.x Alice>").group(1) == "Alice"


def test_a_place_on_a_speakers_label_or_a_cue_number_is_that_turn_and_cue(tmp_path):
    # abstractive sources begin where a sentence splitter starts: on the label, on the cue's number
    from lsgtool.documents import read

    path = tmp_path / "t.txt"
    path.write_text("Alice: first line.\n[00:05] Alice: second.\nBob: we disagree here.\nAlice: then so be it.\n")
    doc = read(path)
    text = doc.text
    assert doc.place(text.index("Bob:")).speaker == "Bob" and doc.place(text.index("we disagree")).speaker == "Bob"
    assert doc.place(text.index("first")).time is None  # before any time is said
    assert doc.place(text.index("[00:05]")).time == doc.place(text.index("second")).time == "00:00:05"
    srt = tmp_path / "t.srt"
    srt.write_text("1\n00:00:01,000 --> 00:00:02,000\nAlice: So the plan\n\n2\n00:01:05,000 --> 00:01:09,000\n"
                   "Alice: is ready.\n")
    doc = read(srt)
    assert doc.place(doc.text.index("2\n00:01")).time == "00:01:05"


def test_a_caption_file_without_cues_is_refused_and_one_without_a_header_is_read(tmp_path):
    from lsgtool.documents import DocumentError, read

    (tmp_path / "empty.vtt").write_text("WEBVTT\n\n")
    with pytest.raises(DocumentError, match="no caption cues"):
        read(tmp_path / "empty.vtt")
    (tmp_path / "bare.vtt").write_text("00:00:01.000 --> 00:00:02.000\nHello there.\n")
    assert read(tmp_path / "bare.vtt").reading == "captions"


TABLES = """The results follow in the table below.

Encoder | Complexity per layer
---|---
Transformer (full) | quadratic
LOCOST | log-linear

arXiv | PubMed | BookSum
Model | R-1 | R-2

Models\tParameters
PRIMERA [38]\t447M
Classification\t\t\t

$$qk' = \\cos(\\theta) \\|q\\| \\|k\\|$$

Use `a || b` or `c || d` to join the two checks.
The second line of that paragraph has `x || y` too.
"""


def test_tables_and_formulas_of_pdf_and_markdown_text_are_not_prose():
    shown = [readable(TABLES[a:b]) for a, b in prose_sentences(TABLES)]
    assert shown == ["The results follow in the table below.", "Use a || b or c || d to join the two checks.",
                     "The second line of that paragraph has x || y too."]  # pipes in inline code are words


def test_headings_are_where_markdown_and_plain_text_sections_begin_and_code_has_none():
    from lsgtool.documents.prose import headings

    markdown = "# Title\n\nText here.\n\n```sh\n# a comment in code\nls\n```\n\nOverview\n========\n\nMore text.\n"
    assert [markdown[a:].split("\n", 1)[0] for a in headings(markdown)] == ["# Title", "Overview"]
    assert [PAPER[a:].split("\n", 1)[0] for a in headings(PAPER)] == [
        "LOCOST: State-Space Models for Long Document Summarization", "1 Introduction",
        "2.1 Sparse attention and its limits"]
    assert headings("Alice: We begin.\nBob: # not a heading\nAlice: Fine.\n") == []  # a transcript has none


def test_a_quotes_next_lines_go_on_with_its_sentence():
    text = ("* `RefCell`, which checks borrows at run time.\n\n  > Note: the prefix would be replaced if this RFC is\n"
            "  > accepted.\n\n> One quote.\n\n> Another quote here.\n")
    assert [readable(text[a:b]) for a, b in prose_sentences(text)] == [
        "RefCell, which checks borrows at run time.", "The prefix would be replaced if this RFC is accepted.",
        "One quote.", "Another quote here."]  # "Note:" a label, not shown


def test_one_tab_in_prose_a_numbered_paragraph_a_quoted_list_and_indented_code_keep_what_they_are():
    text = ("1.\tThe applicant was born in 1970 in Lyon.\n\nHAMLET.\tTo be, or not to be, that is the question.\n\n"
            "> - the first option is to keep it\n> - the second option is to drop it\n>\n> Both have costs.\n\n"
            "Run the suite:\n\n    make test\t# all of it\n    echo all tests passed here\n")
    assert [readable(text[a:b]) for a, b in prose_sentences(text)] == [
        "The applicant was born in 1970 in Lyon.", "HAMLET.", "To be, or not to be, that is the question.",
        "the first option is to keep it", "the second option is to drop it", "Both have costs.", "Run the suite:"]


def test_three_backticks_around_words_in_a_line_are_code_in_the_sentence_not_a_fence():
    """A line that opens with three backticks and holds more of them is inline code (CommonMark: a backtick fence's
    line has no other backtick), so the sentence goes on past it and the text after is still prose; a real fence
    still hides its code."""
    text = ("It is available on nightly using the\n```export NEW_FORMAT=true``` environment variable. It should\n"
            "become the default.\n\n```sh\nexport NEW_FORMAT=false\n```\n\nThe end is prose.\n")
    assert [readable(text[a:b]) for a, b in prose_sentences(text)] == [
        "It is available on nightly using the export NEW_FORMAT=true environment variable.",
        "It should become the default.", "The end is prose."]


def test_an_e_mails_quote_of_the_message_it_answers_is_not_its_senders_words():
    """A reply's summary had shown its sender's boss's quoted line as hers."""
    from lsgtool.documents.prose import quoted_replies

    reply = ("Hi Gareth,\n\nThursday at 3 pm works for me.\n\nOn Fri, 20 Nov 2026 at 09:12, Gareth Lowe wrote:\n"
             "> The client has asked us to cut the research phase\n> from six weeks to three.\n>\n> Gareth\n\n"
             "Tamsin\n")
    ((a, b),) = quoted_replies(reply)
    assert reply[a:b] == reply[reply.index("On Fri"):reply.index("> Gareth") + len("> Gareth")]
    outlook = "Yes, Thursday.\n\n-----Original Message-----\nFrom: Gareth\nSubject: Catch-up\n\nCan we meet?\n"
    assert quoted_replies(outlook) == [(outlook.index("-----"), len(outlook))]
    assert quoted_replies("> A quote in an article.\n\nIts author said so.\n") == []


def test_a_paragraph_in_brackets_is_a_note_on_the_text():
    from lsgtool.documents.prose import asides

    eulogy = ("He drove the van for twenty-six years.\n\n[After the service there will be a lunch in the hall. "
              "In lieu of flowers, give to the transport fund.]\n\n[Read the full tribute](https://example.org)\n")
    assert [eulogy[a:b] for a, b in asides(eulogy)] == [eulogy.split("\n\n")[1]]
    assert asides("ANNA: Go.\n\n[She leaves.]\n\nBEN: Wait.\nANNA: No.\n") == []  # a play's: its directions


def test_a_numbered_subsections_heading_right_after_a_list_is_a_heading():
    """An SOP's "7.2 Filling a portable dewar at the Central Dispensing Point" after the list ending 7.1 had been
    read as a sentence of the list and shown in the summary; a list's loose items stay items."""
    from lsgtool.documents.prose import headings

    sop = ("7.1 Before starting\n\n1. Check the oxygen alarm display at the door of the cryostorage room before "
           "entering it at any time of day.\n2. Put on the face shield and loose cryogenic gloves listed in Section 6 "
           "of this procedure.\n\n7.2 Filling a portable dewar at the Central Point\n\n"
           "1. Inspect the dewar for damage and a blocked vent before filling it.\n")
    assert [sop[h:sop.index("\n", h)] for h in headings(sop)] == [
        "7.1 Before starting", "7.2 Filling a portable dewar at the Central Point"]
    loose = "Steps\n\n1. Install the tool\n\n2. Run the tool\n\nNote: read the guide first\n"
    assert [loose[h:loose.index("\n", h)] for h in headings(loose)] == ["Steps"]


def test_a_documents_metadata_fields_are_not_prose_but_sentences_with_a_colon_are():
    """Two or more "Name: value" lines in a row that end no sentence (an RFC's "Feature Name", "Start Date") are
    a record, not sentences a summary picks; a list of sentences that begin with a name and a colon stays prose."""
    text = ("# Pinned\n\n- Feature Name: `unsafe_pinned`\n- Start Date: 2022-11-05\n"
            "- RFC PR: [rust-lang/rfcs#3467](https://github.com/rust-lang/rfcs/pull/3467)\n\n"
            "This type opts out of the aliasing rules.\n\n- Readability: the type says what it does.\n"
            "- Safety: no new undefined behaviour.\n\nNote: read the guide first\n")
    assert [readable(text[a:b]) for a, b in prose_sentences(text)] == [
        "This type opts out of the aliasing rules.", "Readability: the type says what it does.",
        "Safety: no new undefined behaviour.", "Read the guide first"]


def test_a_bibles_verse_labels_are_left_out_of_what_is_shown_but_a_schedules_times_are_kept():
    """``bible -f`` writes "Ge1:13 And the evening ...", Project Gutenberg's KJV "1:13 And the evening ...": a
    reader wants the verse, not its label. A schedule's "10:30 Coffee" lines are no verses: their numbers do not
    count up by one."""
    from lsgtool.documents.prose import verse_numbered

    bible = "Ge1:1 In the beginning God created the heaven.\nGe1:2 And the earth was without form,\nand void.\n" \
            "Ge1:3 And God said, Let there be light.\nGe2:1 Thus the heavens were finished.\n"
    gutenberg = bible.replace("Ge", "")
    schedule = "10:30 Coffee in the hall.\n11:15 The talks begin.\n12:00 Lunch is served.\n14:45 Questions.\n"
    assert verse_numbered(bible) and verse_numbered(gutenberg) and not verse_numbered(schedule)
    assert not verse_numbered("Ge1:1 In the beginning.\nGe1:2 And the earth.\n")  # two lines: too few to tell
    span = bible[bible.index("Ge1:2"):bible.index("void.") + 5]
    assert readable(span, verses=True) == "The earth was without form, and void."
    assert readable(span) == "Ge1:2 And the earth was without form, and void."
    assert readable("He came at 1:13 sharp.", verses=True) == "He came at 1:13 sharp."  # only a line's label


def test_a_citation_after_et_al_stays_in_its_sentence():
    """syntok ended a sentence at "Wang et al." before "(2022)", and the next one opened "(2022). Regarding ...",
    which a summary showed as ". Regarding ..."."""
    from lsgtool.documents.sentences import sentence_spans

    for cited in ("(2022)", "([2022](https://arxiv.org/html/2401.17919v3#bib.bib37))", "[37]"):
        text = f"SSMs were applied to text classification by Wang et al. {cited}. Regarding language models, many did."
        found = [text[a:b] for a, b in sentence_spans(text)]
        assert found == [text[:text.index(" Regarding")], "Regarding language models, many did."], found
    text = "Smith et al. found it. Next one."
    assert [text[a:b] for a, b in sentence_spans(text)] == ["Smith et al. found it.", "Next one."]
    # a case's or a volume's number: "No. 2:20-cv-01187" ended a sentence at "No."
    text = "See Okafor v. Harborview, Inc., No. 2:20-cv-01187 (W.D. Wash. 2021). Vol. 3 says so. It was No. Then."
    assert [text[a:b] for a, b in sentence_spans(text)] == [
        "See Okafor v. Harborview, Inc., No. 2:20-cv-01187 (W.D. Wash. 2021).", "Vol. 3 says so.", "It was No.", "Then."]


def test_a_records_fields_are_not_sentences_even_in_bold():
    """Minutes' "**Date:** ...", "**Present:** ..." lines are a record (fields), not a run-on sentence."""
    from lsgtool.documents.prose import prose_sentences

    text = ("# Board minutes\n\n**Date:** Tuesday, 14 May 2024, 6:30 p.m.\n**Location:** Community Room B\n"
            "**Present:** Helen Ashford (Chair), Samuel Oduya (Treasurer), Grace Lin (Secretary), Peter Novak, Amira "
            "Haddad, Director Kevin Brandt (ex officio)\n\nThe meeting was called to order at 6:32 p.m. by the chair.\n")
    assert [text[a:b] for a, b in prose_sentences(text)] == ["The meeting was called to order at 6:32 p.m. by the chair."]


def test_a_logs_entries_are_a_record_not_sentences():
    """A match report's minute-by-minute lines ("23' - Yellow card: ...") had taken four of a summary's nine
    sentences; two or more in a row are a record, as an agenda's times are; a sentence that opens on a time is not."""
    from lsgtool.documents.prose import prose_sentences

    text = ("Mbeumo sent Martinez the wrong way.\n\n23' - Yellow card: Douglas Luiz (Aston Villa) for a foul.\n"
            "38' - GOAL: Brentford 2-0. Mbeumo, penalty.\n45+2' - Yellow card: Christian Norgaard (Brentford).\n\n"
            "Agenda\n\n9:30 – Coffee and registration\n10:00 – Welcome by the chair\n\n"
            "10:30 - the council met in the town hall and voted to close the pool.\n\nEmery made two changes.\n\n"
            "00:01:12 - We have spent three years rebuilding the harbour wall.\n00:01:40 - It opens in May.\n\n"
            "1.01 - The Tenant shall pay the rent on the first day of each month.\n"
            "1.02 - The Landlord shall repair it.\n")
    assert [text[a:b] for a, b in prose_sentences(text)] == [  # a timed entry that ends a sentence: a turn, a clause
        "Mbeumo sent Martinez the wrong way.", "10:30 - the council met in the town hall and voted to close the pool.",
        "Emery made two changes.", "00:01:12 - We have spent three years rebuilding the harbour wall.",
        "00:01:40 - It opens in May.", "1.01 - The Tenant shall pay the rent on the first day of each month.",
        "1.02 - The Landlord shall repair it."]


@pytest.mark.parametrize("heading, own", [("## Abstract", True), ("Executive Summary", True), ("## TL;DR", True),
                                          ("### Overview", False), ("## Motivation", False),
                                          ("## What we know so far", True), ("The latest", True),  # a live blog's
                                          ("(57) ABSTRACT", True),  # a patent's field code
                                          ("1. Executive Summary", True),  # a report's numbered heading
                                          ("* Summary", False)])  # a contents list's item
def test_the_authors_own_summary_is_a_summary_heading_near_the_start_and_references_are_back_matter(heading, own):
    from lsgtool.documents.prose import back_matter, own_summary

    text = (f"# Block attention for long inputs\n\n{heading}\n\nWe read long inputs in blocks.\n\n"
            "## Method\n\nEach block attends to its neighbours.\n\n" + "More words on the method here.\n\n" * 120 +
            "## References\n\n[1] Beltagy et al. Longformer: the long-document transformer. 2020.\n")
    found = own_summary(text)
    assert (found is not None) == own
    if own:
        assert text[found[0]:found[1]].strip() == f"{heading}\n\nWe read long inputs in blocks."
    (back,) = back_matter(text)
    assert text[back[0]:back[1]].startswith("## References") and back[1] == len(text)
    late = text.replace(f"{heading}\n\nWe read long inputs in blocks.\n\n", "") + f"\n{heading}\n\nIn short: blocks.\n"
    assert own_summary(late) is None  # a summary heading far in sums up a part, not the whole
    syllabus = ("## Required materials\n\n- Morling, B. (2021). *Research Methods in Psychology* (4th ed.). Norton.\n"
                "- A calculator for the exams.\n\nThe course meets twice a week, in the main hall.\n")
    (entry,) = back_matter(syllabus)  # a reference's entry wherever it stands, not the prose about it
    assert syllabus[entry[0]:entry[1]].endswith("(4th ed.). Norton.")
    assert not back_matter(syllabus.replace("Morling, B. (2021).", "Morling's book (2021) is"))
    annotated = ("Walker, M. P. (2017). Why we sleep. Scribner. " + "Walker argues that sleep loss harms memory. " * 6)
    assert not back_matter(annotated)  # an annotated bibliography's entry goes on with prose
    review = ("Earthworms showed small effects (Judy et al., 2019) [4]. Additives matter [6]. Others [4, 7] "
              "agree.\n\n**References cited in this section**\n\n[12] Boots, B. (2019). Effects. *Env. Sci.*\n\n"
              "[4] Judy, J. D., Williams, M., Gregg, A., et al. (2019). Microplastics in municipal outputs induce "
              "minimal toxicity in key terrestrial biota. *Environmental Pollution*, 252, 522–531.\n")
    assert [readable(review[a:b]) for a, b in prose_sentences(review) if not any(
        x <= a < y for x, y in back_matter(review))][:3] == [
        "Earthworms showed small effects (Judy et al., 2019).", "Additives matter.", "Others [4, 7] agree."]
    # (a list of numbers in brackets stays: "the interval [0, 1]", "a scale of [1-5]" are no citations)
    assert [review[a:b] for a, b in back_matter(review)] == [  # each entry, "et al." too
        review[review.index("[12]"):review.index("\n\n[4]")], review[review.index("[4] Judy"):].rstrip()]


def test_a_numbered_summary_heading_on_its_own_line_is_one_but_a_contents_lists_item_is_not():
    from lsgtool.documents.prose import own_summary

    text = ("Title of the report\n\nContents\n\n1. Summary\n2. Motivation\n\n1. Summary\n\nThis does x. It does y."
            "\n\n2. Motivation\n\nBecause.\n")
    found = own_summary(text)
    assert text[found[0]:found[1]].strip() == "1. Summary\n\nThis does x. It does y."
    assert own_summary("Agenda\n\n1. Apologies\n\n2. Summary\n\n3. Finance report\n") is None  # an agenda's items
    loose = "Contents\n\n1. Overview\n\n2. Finances\n\nOverview\n\nWe fed more families this year than ever before.\n"
    found = own_summary(loose)  # a loose contents list's item is none either: the section it names is
    assert loose[found[0]:found[1]].strip() == "Overview\n\nWe fed more families this year than ever before."


def test_a_section_named_as_back_matter_or_a_summary_after_a_list_is_a_heading():
    """An EPUB chapter's "Exercises" after its "Summary"'s list (its heading kept as a bare line) heads its section:
    its prompts ("Calculate the price elasticity ...") had been picked as the chapter's matter."""
    from lsgtool.documents.prose import back_matter, headings

    text = ("Elasticity\n\nDemand is elastic when it moves more than the price does.\n\nSummary\n\n- When demand is "
            "inelastic, raising the price raises revenue.\n\nExercises\n\n1. Calculate the elasticity of the bus fare."
            "\n\n2. Classify the good.\n")
    assert text.index("Exercises") in headings(text)
    assert [text[a:b].split("\n")[0] for a, b in back_matter(text)] == ["Exercises"]
    loose = text.replace("Exercises", "Then the fare went up")  # a paragraph after the list, no heading
    assert loose.index("Then the fare") not in headings(loose)
    workout = text.replace("1. Calculate the elasticity of the bus fare.\n\n2. Classify the good.",
                           "Squats build the thighs: lower your hips until your thighs are level with the floor.")
    assert back_matter(workout) == []  # a workout's "Exercises" over its prose are its matter


def test_a_patents_summary_of_the_invention_is_its_own_summary_wherever_it_is():
    from lsgtool.documents.prose import own_summary

    background = "Squeeze bottles stored upside down sputter when they refill with air. " * 60
    patent = (f"SELF-VENTING CLOSURE\n\nBACKGROUND\n\n{background}\n\nSUMMARY OF THE INVENTION\n\n"
              "[0008] The disclosure provides a closure that vents through two flaps.\n\n"
              "DETAILED DESCRIPTION\n\n[0012] FIG. 1 shows the closure 10.\n")
    found = own_summary(patent)
    assert found is not None and patent[found[0]:found[1]].strip() == (
        "SUMMARY OF THE INVENTION\n\n[0008] The disclosure provides a closure that vents through two flaps.")
    assert own_summary(patent.replace("SUMMARY OF THE INVENTION", "THE FLAPS")) is None  # (a part's heading)


@pytest.mark.parametrize("heading, concluding", [
    ("What does the school need to do to improve?", True),  # an inspection's
    ("What the provider should do to improve", True),
    ("Areas for improvement", True),
    ("What does the school do?", False),
    ("Recommendations", True),
])
def test_an_inspections_what_to_improve_is_a_concluding_section(heading, concluding):
    from lsgtool.documents.prose import CONCLUDING

    assert (CONCLUDING.fullmatch(heading) is not None) == concluding


def test_a_concluding_section_runs_over_its_subsections_to_a_rule_or_the_next_section():
    """Conclusions, Findings, Recommendations, Lessons learned (``CONCLUDING``): each such section from its heading
    to the next heading not under it, or to a rule (an article's information after its conclusions); not a section
    that only begins with such a word, nor one in talk."""
    from lsgtool.documents.prose import concluding

    report = ("# Water in schools\n\n## 1. Introduction\n\nWe visited schools.\n\n## 4. Findings\n\n### 4.1 Access\n\n"
              "Most schools have taps.\n\n### 4.2 Use\n\nPupils use them.\n\n## 5. Conclusions and Recommendations\n\n"
              "The taps work.\n\n---\n\n**Corresponding Author:** A. Person.\n\n## Conclusion of the contract\n\n"
              "It ends.\n\n6. Lessons learned\n\nFix taps early.\n")
    assert [report[a:b].strip().splitlines()[-1] for a, b in concluding(report)] == [
        "Pupils use them.", "The taps work.", "Fix taps early."]
    assert concluding("Ana: Conclusions\nBen: The taps work.\nAna: Good.\n") == []


@pytest.mark.parametrize("text, own", [
    # a post's TL;DR, a news story's lead (its dateline), an encyclopedia's first paragraph defining its subject
    ("# Postgres migrations\n\nIntro words here.\n\n**TL;DR:** never lock a busy table. Batch the backfill.\n\n"
     "## Step 1\n\nSet a lock timeout.\n", "**TL;DR:** never lock a busy table. Batch the backfill."),
    ("FOR IMMEDIATE RELEASE\n\n# Northwind Breaks Ground\n\n**BAKERSFIELD, Calif., March 4, 2025 /PRNewswire/** -- "
     "Northwind broke ground on a battery plant.\n\nThe plant costs $610 million.\n\n### About Northwind Energy\n\n"
     "Northwind builds plants.\n", "**BAKERSFIELD, Calif., March 4, 2025 /PRNewswire/** -- Northwind broke ground on "
     "a battery plant."),
    ('Elise "Lise" Meitner (7 November 1878 – 27 October 1968) was an Austrian physicist who studied fission.[1]\n\n'
     "She was born in Vienna.\n\n## Career\n\nShe worked in Berlin.\n", 'Elise "Lise" Meitner (7 November 1878 – 27 '
     "October 1968) was an Austrian physicist who studied fission.[1]"),  # no title in the text (a web page's)
    ("# Amoxicillin capsules\n\nAmoxicillin is an antibiotic. It treats infections.\n\n## Dose\n\nTake one.\n",
     "Amoxicillin is an antibiotic. It treats infections."),
    ("The Great Molasses Flood, also known as the Boston Molasses Disaster, was a disaster in Boston in 1919.[1] A "
     "tank burst, killing 21 people.\n\n## Background\n\nMolasses was a sweetener.\n", "The Great Molasses Flood, "
     "also known as the Boston Molasses Disaster, was a disaster in Boston in 1919.[1] A tank burst, killing 21 "
     "people."),  # (a name it is also known by)
    # not: a definition under a section (an RFC's motivation), of another subject than the title's, a clause
    ("# Async iterators\n\n## Motivation\n\nAsync iterators are a core abstraction.\n", None),
    ("# Amoxicillin capsules\n\nThe pharmacist is the one to ask.\n\n## Dose\n\nTake one.\n", None),
    ("Marking a function as unsafe in this crate is one of the protections.\n\nMore.\n", None),
    ("# Tools\n\nSummary:\n\n* Add a flag\n\n## Design\n\nWords.\n", "Summary:\n\n* Add a flag"),  # a heading line
    # nor the opening of a story without a title, of one whose title's word is only a common noun, nor a summing-up
    # further in than the opening paragraphs
    ("It was a cold morning in March when the coach came.\n\nMore words.\n", None),
    ("# The Old Mill\n\nThe mill was the last building in the valley.\n\nMore words.\n", None),
    ("Intro words here.\n\n" + "Body words here.\n\n" * 10 + "In short: the pay was bad.\n\nMore.\n", None),
    ("The Eiffel Tower is a wrought-iron tower in Paris.\n\nMore words.\n",
     "The Eiffel Tower is a wrought-iron tower in Paris."),  # a name, with its article
])
def test_a_run_in_tldr_a_news_lead_and_a_first_paragraph_defining_the_subject_are_the_authors_summary(text, own):
    from lsgtool.documents.prose import back_matter, own_summary

    found = own_summary(text)
    assert (text[found[0]:found[1]].strip() if found else None) == own
    assert [text[a:b].split("\n")[0] for a, b in back_matter(text)] == (
        ["### About Northwind Energy"] if "About" in text else [])  # a press release's boilerplate
    guide = "# Python\n\n## About Python\n\nPython is a language.\n\n## Syntax\n\n" + "Words of the guide.\n\n" * 9
    assert back_matter(guide) == []  # "About ..." near the start is what the document is about


def test_a_wikis_citation_markers_end_no_sentence_and_are_not_shown():
    """".[4] With" was read as one sentence with the next, and "[14][15]" was shown as "14"."""
    from lsgtool.documents.sentences import sentence_spans

    text = ("Lake Vostok is the largest lake.[4] With an average depth of 432 m, it is deep.[14][15] "
            "It was found in 1996.[citation needed] The lake[8] lies under ice.")
    found = [text[a:b] for a, b in sentence_spans(text)]
    assert found == ["Lake Vostok is the largest lake.", "With an average depth of 432 m, it is deep.",
                     "It was found in 1996.", "The lake[8] lies under ice."]
    assert readable(found[-1]) == "The lake lies under ice."
    assert readable("It is high pressure.[14][15]") == "It is high pressure."
    # and Markdown's footnote ("... sewers.[^1] This essay ..." had been one sentence), and a question's end inside
    # emphasis ("**Can I use it?** Yes." had been one)
    text = "MPs passed a bill.[^1] This essay argues it. **Can I use it?** Yes. Pass a zone. *Is it done?* No."
    assert [readable(text[a:b]) for a, b in sentence_spans(text)] == [
        "MPs passed a bill.", "This essay argues it.", "Can I use it?", "Yes.", "Pass a zone.", "Is it done?", "No."]
    text = "Contact customer support at support@aquapure.example. Please have the serial number ready."
    assert [text[a:b] for a, b in sentence_spans(text)] == [  # (an e-mail address's end had been read on through)
        "Contact customer support at support@aquapure.example.", "Please have the serial number ready."]


def test_a_word_hyphenated_across_a_line_break_is_shown_whole():
    """A hard-wrapped text's "replace-\\nment" is shown "replacement"; a compound keeps its hyphen where the text
    writes it so elsewhere, writes both halves as words, is a number or goes on a compound ("direct-to-\\nconsumer");
    the span itself is untouched."""
    from lsgtool.documents.prose import hyphenated_words, readable

    text = ("The replace-\nment took a week, and the road-\ntest another.\nA road-test is a well-\nknown check that is "
            "well worth it: known faults show.\nIt rode forty-\nfive miles in the direct-to-\nconsumer trial.\n")
    words = hyphenated_words(text)
    assert readable(text, words=words) == ("The replacement took a week, and the road-test another. A road-test is a "
                                           "well-known check that is well worth it: known faults show. It rode "
                                           "forty-five miles in the direct-to-consumer trial.")
    assert hyphenated_words("No word is broken here,\nacross a line.") is None
    assert readable("The replace-\nment.") == "The replacement."  # without the text's words: joined


@pytest.mark.parametrize("text, page", [
    ("Remarks by the Governor at the Opening of the Rail Line\nHarlow Station, Harlow\nApril 18, 2024\n\n"
     "THE GOVERNOR: Thank you. Please, sit down.\n", "Remarks by the Governor at the Opening of the Rail Line\n"
     "Harlow Station, Harlow\nApril 18, 2024\n\n"),
    ("ASHFORD PARISH COUNCIL\n\nMINUTES OF THE MEETING\nheld on 9 January 2024\n\nPRESENT: Cllr Fenwick, Cllr Desai"
     "\n\nApologies were received from Cllr Quinn.\n", "ASHFORD PARISH COUNCIL\n\nMINUTES OF THE MEETING\nheld on 9 "
     "January 2024\n\nPRESENT: Cllr Fenwick, Cllr Desai\n\n"),
    ("The river rose in the night and the mill was lost.\n\nNo one was hurt.\n", ""),  # opens with prose
    ("Ann: Shall we start?\nBen: Yes.\nAnn: Fine.\nBen: The budget first.\n", ""),  # a transcript
    ("Line one\nLine two\n\nLine three\n", ""),  # no prose at all: nothing is a title page
    ("Lise Meitner was an Austrian physicist.[1]\n\nShe was born in Vienna.\n", ""),  # a wiki's markers end it
])
def test_the_lines_before_the_first_paragraph_of_prose_are_a_title_page(text, page):
    from lsgtool.documents.prose import title_page

    assert "".join(text[a:b] for a, b in title_page(text)) == page


def test_a_title_pages_lines_are_never_picked():
    from lsgtool.summarize.extractive import Extractive

    text = ("Remarks by the Governor at the Opening of the Clearwater Valley Rail Line\nHarlow Station, Harlow\n"
            "April 18, 2024\n\nThe line opens on Monday and the trip to the city takes fifty-one minutes by train.\n")
    spans = prose_sentences(text)
    assert Extractive.sentences(text, spans)[1] == [False, True]


def test_no_sentence_ends_inside_inline_code():
    text = ("Change the syntax for dynamically sized type parameters to\n`T: ?Sized` to resolve these issues. Call "
            "`a.b()` once.\n\n``Hello,'' he said. ``Goodbye.''\n")
    assert [text[a:b] for a, b in prose_sentences(text)] == [
        "Change the syntax for dynamically sized type parameters to\n`T: ?Sized` to resolve these issues.",
        "Call `a.b()` once.", "``Hello,'' he said.", "``Goodbye.''"]  # quotation marks as backticks are no code
    # and one ends after a code span that ends it (syntok had read on after "`{{ price }}`.")
    tag = "Use a template tag, for example `{{ price }}`. From version 4.2 the tag is escaped.\n"
    assert [tag[a:b] for a, b in prose_sentences(tag)] == [
        "Use a template tag, for example `{{ price }}`.", "From version 4.2 the tag is escaped."]


def test_a_captions_label_begins_its_sentence_and_a_caption_is_never_picked():
    """A lab report's "Table 1. Effect of initial concentrations on ..." had been split after "1.", and the caption
    picked as a sentence without its label; "... in Table 1. The rate doubled." ends there."""
    text = ("We timed each run three times.\n\nTable 1. Effect of initial concentrations on reaction time at 22.0 °C "
            "(mean of three runs).\n\nAs shown in Table 1. The rate doubled when either reactant doubled.\n")
    spans = prose_sentences(text)
    assert [text[a:b][:16] for a, b in spans] == ["We timed each ru", "Table 1. Effect ", "As shown in Tabl",
                                                  "The rate doubled"]
    assert not any("Effect of" in s for s in _picked_from(text))
    wrapped = ("We weighed the grain of every plot twice in the season, and the yields rose sharply, as shown in\n"
               "Figure 2. The treated plots gave more grain than the others did.\n")
    assert [wrapped[a:b][-10:] for a, b in prose_sentences(wrapped)] == ["\nFigure 2.", "thers did."]  # no caption


def test_a_sentence_in_bold_and_one_ending_at_a_time_of_day_end_there():
    """A memo's "**I want to be clear: ... exercise.**" and a diary's "... at 7 a.m." had each been read on into the
    next sentence; a run-in heading in bold ("**Async runtime.** Tasks ...") and "9 a.m. Monday" are read on."""
    text = ("We create 35 roles. **I want to be clear: this reorganisation is not a cost-cutting exercise.** We expect "
            "headcount to grow.\n\n**Async runtime.** Tasks are scheduled by the pool.\n\nThe rejection came by "
            "email at 7 a.m. Didn't even get an interview. The shop opens at 9 a.m. Monday to Friday. The ferry leaves "
            "at 6 p.m. Sydney time.\n\n**Why this matters for small teams today.** Most teams never measure it.\n")
    assert [text[a:b] for a, b in sentence_spans(text)] == [
        "We create 35 roles.", "**I want to be clear: this reorganisation is not a cost-cutting exercise.**",
        "We expect headcount to grow.", "**Async runtime.** Tasks are scheduled by the pool.",
        "The rejection came by email at 7 a.m.", "Didn't even get an interview.",
        "The shop opens at 9 a.m. Monday to Friday.", "The ferry leaves at 6 p.m. Sydney time.",
        "**Why this matters for small teams today.** Most teams never measure it."]  # (a run-in heading, first)


def _picked_from(text: str) -> list[str]:
    """The sentences of ``text`` a summary may pick, as it shows them."""
    from lsgtool.summarize.extractive import Extractive

    sentences, eligible = Extractive.sentences(text, prose_sentences(text))
    return [s for s, e in zip(sentences, eligible) if e]


def test_an_emails_quoted_headers_and_its_confidentiality_notice_are_never_picked():
    text = ("From: Priya Raman <p.raman@example.com>\nSent: Thursday, March 14, 2024 4:52 PM\n"
            "Subject: RE: Warehouse B\n\n"
            "Dan, I am leaning toward replacing both compressor units now.\n\n"
            "CONFIDENTIALITY NOTICE: This email and any attachments are for the exclusive use of the recipient. If "
            "you are not the intended recipient, please delete this message from your computer system.\n\n"
            "> From: Dan Okafor <d.okafor@example.com>\n> Sent: Wednesday, March 13, 2024 6:05 PM\n"
            "> To: Priya Raman <p.raman@example.com>\n> Subject: Warehouse B failure\n>\n"
            "> We lost roughly 38 pallets of frozen product on Saturday night.\n")
    assert _picked_from(text) == ["Dan, I am leaning toward replacing both compressor units now.",
                                  "We lost roughly 38 pallets of frozen product on Saturday night."]


def test_declarations_reservations_and_a_mailings_and_a_newspapers_notes_are_never_picked():
    """A witness statement's declaration of truth (it had opened the summary, before the assault it declares), a
    letter's reservation of rights, an e-mail's "view it in your browser", a newspaper's note under its letters
    (after a rule) are no one's point; what they sit beside is."""
    text = ("This statement (consisting of 3 pages each signed by me) is true to the best of my knowledge and belief "
            "and I make it knowing that I shall be liable to prosecution if I have wilfully stated anything false.\n\n"
            "I saw the man kick my neighbour once in the side while she was on the ground.\n\n"
            "I certify that the above information is true and correct to the best of my knowledge.\n\n"
            "Nothing in this letter waives any of Harbourline's rights under the policy or at law.\n\n"
            "Having trouble reading this e-mail? View it in your browser.\n\n"
            "From Wednesday 1 July, hosepipes and sprinklers will be banned on every allotment site.\n\n"
            "---\nLetters may be edited for length and clarity. Write to the Letters Editor at the usual address.\n")
    assert _picked_from(text) == [
        "I saw the man kick my neighbour once in the side while she was on the ground.",
        "From Wednesday 1 July, hosepipes and sprinklers will be banned on every allotment site."]
    kept = "I declare that the meeting is open and that the minutes of the last one are approved."
    assert _picked_from(kept) == [kept]  # a declaration of something else
    from lsgtool.documents.prose import back_matter

    for said in ("Open it in your browser. You should see the welcome page with your name at the top.",
                 "This statement is true for every even number anyone has checked so far, up to a large bound.",
                 "View it in a browser: the chart should render with the three series in their own colours."):
        assert back_matter(said) == [], said  # (the reviewer's: a tutorial's step, a proof's, a chart's)
    truth = "I believe that the facts stated in this witness statement are true."
    assert back_matter(truth) == [(0, len(truth))]  # the wording of England's Civil Procedure Rules
    panel = "Considered and decided by Reyes, Presiding Judge; Okafor, Judge; and Lindqvist, Judge."
    assert back_matter(panel) == [(0, len(panel))]  # a court's panel, once "OPINION" under it is a heading


def test_a_posts_readers_comments_after_its_count_of_them_are_back_matter():
    """A blog post saved as Markdown, its comments under "**12 comments**": a reply ("Yes, with the Uvicorn worker
    class.") had been shown as the post's own step."""
    post = ("# Stop Polling\n\nOur dashboard polled the server every two seconds, which meant many requests.\n\n"
            "## Step 1\n\nAn event stream is a long-lived response with its own content type and format.\n\n"
            "If you deploy behind Nginx, turn off proxy buffering for the stream, or updates arrive in bursts.\n\n"
            "---\n\n**12 comments**\n\n> **raj_dev** · 2 days ago: Great post! Does this work with Gunicorn?\n>\n"
            "> **Mei Tanaka** · 2 days ago: Yes, with the Uvicorn worker class. Each connection stays on one worker.\n")
    from lsgtool.documents.prose import back_matter

    assert back_matter(post) == [(post.index("**12 comments**"), len(post))]
    early = post.replace("---\n\n**12 comments**\n\n", "").replace("# Stop Polling\n\n",
                                                                "# Stop Polling\n\n**12 comments**\n\n")
    assert back_matter(early) == []  # a count at its top (a forum's thread): what it holds is the text
    survey = post.replace("**12 comments**", "48 responses")  # a survey's count over its results (the reviewer's)
    assert back_matter(survey) == [] and back_matter(post.replace("**12 comments**", "## Responses")) == []


def test_a_reading_lists_books_and_a_courses_schedule_are_back_matter_wherever_they_stand():
    """A syllabus's weekly schedule ("Week 2 (Jan 21): Africa and Europe before 1450.") and its required texts
    ("- John K. Thornton, *A Cultural History ...* (Cambridge University Press, 2012).", the title in italics or not, as
    Word's text has it) had been picked as its summary's sentences; a
    list's item about a person and a year is no book."""
    from lsgtool.documents.prose import back_matter

    books = ("- John K. Thornton, *A Cultural History of the Atlantic World, 1250–1820* (Cambridge University Press, "
             "2012).\n- Marcus Rediker, The Slave Ship: A Human History (Penguin, 2007).\n"
             "- Laurent Dubois and Ada Ferrer, “Avengers of the New World” (2004).\n")
    assert [books[a:b].split(",")[0] for a, b in back_matter(books)] == [
        "- John K. Thornton", "- Marcus Rediker", "- Laurent Dubois and Ada Ferrer"]
    schedule = ("Week 1 (Jan 12, 14): Introduction: what is Atlantic history?\n\nWeek 2 (Jan 21): Africa and Europe "
                "before 1450.\n\nWeek 3 (Jan 26, 28): Portuguese voyages and the Atlantic islands.\n\nThe final "
                "research paper is the centrepiece of the course.\n")
    assert back_matter(schedule) == [(0, schedule.index("\n\nThe final"))]  # a schedule's topics, a week a line
    assert back_matter(schedule.replace("Week 3", "Then, in week 3")) == []  # two are no schedule
    guide = ("Week 12: Your baby is the size of a plum.\n\nWeek 13: Your baby's vocal cords are forming.\n\n"
             "Week 14: Your baby can squint and frown.\n\nUnit 1: Black mould across the bathroom ceiling.\n")
    assert back_matter(guide) == []  # a pregnancy guide's weeks, an inspection's units: what it says
    items = ("- Philadelphia, USA introduced Bell's telephone to the public (the Centennial Exposition, 1876).\n"
             "- Senior Engineer, Acme Robotics Ltd, led the battery team (Cambridge, 2021).\n"
             "1. Maria Lopez, Treasurer, will present the revised budget (next meeting, 2025).\n"
             "- Tom Hart, the mayor, opened the bridge (with the council, 2019).\n"
             "- Tom Hart, Mayor of Leeds, spoke at the opening (2019).\n")
    assert back_matter(items) == []


def test_a_lists_items_under_a_lead_in_that_denies_them_are_not_shown_alone_quoted_or_last():
    """A denial letter quoting its policy's exclusions ("we do not insure for loss caused by:" over '"c. Water ...
    sump; or' and 'd. Water ... below the surface of the ground."'): alone, each item reads as what is insured,
    the last one (which goes on into no other) too."""
    text = ("We have completed our investigation of the water damage to your basement reported in September.\n\n"
            "The policy's exclusions state that we do not insure for loss caused by:\n\n"
            '"c. Water or water-borne material which overflows or is discharged from a sump or sump pump; or\n'
            'd. Water or water-borne material below the surface of the ground."\n\n'
            "Because the loss falls within these exclusions, Harbourline denies your claim in full.\n")
    assert _picked_from(text) == [
        "We have completed our investigation of the water damage to your basement reported in September.",
        "Because the loss falls within these exclusions, Harbourline denies your claim in full."]
    steps = ("If you do not receive a code within five minutes, try the following:\n\n"
             "- Ask for a new code by choosing the button that says send again.\n"
             "- Check your spam folder for a message from the bank's security team.\n")
    assert _picked_from(steps) == [  # (the reviewer's: a lead-in's "do not" in its condition denies no item) one
        "If you do not receive a code within five minutes, try the following: Ask for a new code by choosing the "
        "button that says send again. Check your spam folder for a message from the bank's security team."]  # unit
    granted = text.replace("The policy's exclusions state that we do not insure", "The policy states that we insure")
    assert "Water or water-borne material below the surface of the ground." in " ".join(_picked_from(granted))


def test_a_sentence_leading_into_a_short_list_is_one_sentence_with_its_items():
    """A leaflet's "Stop taking Dorvalin ... if you notice any of the following serious side effects:" ends on a
    colon and its items go on from it: neither could be shown, and the summary never said when to stop the drug.
    With two to six items, each a clause on its line, it is one sentence, its sources the exact span."""
    lead = ("Stop taking Dorvalin and go to the nearest hospital if you notice any of the following serious side "
            "effects:\n\n")
    items = ["- unexplained muscle pain, tenderness or weakness;", "- swelling of the face, tongue and throat;",
             "- yellowing of the skin and the whites of the eyes."]
    text = "Dorvalin lowers cholesterol.\n\n" + lead + "\n".join(items) + "\n\nStore below 30 degrees.\n"
    spans = prose_sentences(text)
    assert [text[a:b] for a, b in spans] == ["Dorvalin lowers cholesterol.", lead + "\n".join(items),
                                             "Store below 30 degrees."]
    assert readable(text[spans[1][0]:spans[1][1]]).endswith("side effects: unexplained muscle pain, tenderness or "
                                                            "weakness; swelling of the face, tongue and throat; "
                                                            "yellowing of the skin and the whites of the eyes.")
    # not a list of words, nor items of two sentences, nor seven items, nor one, nor an item going on in a line
    # without a mark, nor a list that goes on ("; and") (each still its own sentence)
    for other in (["- apples", "- pears", "- plums"], ["- Muscle pain. It may be severe.", "- Swelling."],
                  items * 2 + items[:1], items[:1], items[:2] + ["  It may be severe."] + items[2:],
                  items[:2] + ["- liver pain; and"]):
        text = lead + "\n".join(other) + "\n"
        assert len(prose_sentences(text)) > 1


def test_a_manuals_labels_are_no_speakers_and_a_faqs_question_in_prose_is_a_heading():
    from lsgtool.documents.prose import headings, is_transcript

    manual = ("IMPORTANT: Always unplug the purifier before opening the filter cover.\n"
              "Note: The filter is shipped inside the unit in a sealed bag.\n"
              "Warning: Never run the purifier without its filter in place.\n"
              "Tip: A filter lasts longer when its outer mesh is vacuumed monthly.\n")
    assert not is_transcript(manual)
    assert _picked_from(manual.replace("\n", "\n\n")) == [
        "Always unplug the purifier before opening the filter cover.",
        "The filter is shipped inside the unit in a sealed bag.",
        "Never run the purifier without its filter in place.",
        "A filter lasts longer when its outer mesh is vacuumed monthly."]
    faq = ("# Aerolux AP-500\n\nThis guide answers the questions our support team hears most often about the unit.\n\n"
           "The purifier cleans the air of a room of up to forty-five square metres five times an hour.\n\n"
           "Q: How often should I replace the filter?\n"
           "A: Under normal use the filter lasts between six and twelve months of daily running.\n")
    assert not is_transcript(faq)  # mostly prose: the question heads its answer, whose label is not shown
    assert headings(faq) == [0, faq.index("Q: How")]
    assert _picked_from(faq)[2:] == [
        "Under normal use the filter lasts between six and twelve months of daily running."]


def test_a_readmes_badges_and_a_note_boxs_label_are_not_prose():
    text = ("# driftwatch\n\n[![PyPI](https://img.shields.io/pypi/v/dw.svg)](https://pypi.org/project/dw/)\n"
            "[![CI](https://github.com/dw/dw/actions/ci.yml/badge.svg)](https://github.com/dw/dw/actions)\n\n"
            "driftwatch tells you when production data no longer looks like the training data.\n\n"
            "> **Note**\n> Version 2.0 changed the configuration format of every monitor.\n\n"
            "> [!WARNING]\n> Alerts are sent only once a monitor has seen a full day of data.\n")
    assert [readable(text[a:b]) for a, b in prose_sentences(text)] == [
        "driftwatch tells you when production data no longer looks like the training data.",
        "Version 2.0 changed the configuration format of every monitor.",
        "Alerts are sent only once a monitor has seen a full day of data."]


@pytest.mark.parametrize("sentence, shown", [
    ("Photograph: Ben Whitaker for The Northern Ledger", False),  # a photo's credit
    ("Image: Getty Images for the Ashford Town Council", False),
    ("For setup instructions, see the Quick Start Guide in the box.", False),  # a pointer elsewhere
    ("For safety, keep the purifier away from water and heat.", True),
    ("The photograph of the mill was taken by Ben Whitaker in 2022.", True),
    ("Today's remarks contain forward-looking statements within the meaning of the securities laws.", False),
    ("Thank you, operator, and good afternoon, everyone.", False),  # a greeting
    ("This episode is brought to you by Brightline Home Insurance.", False),  # an advertisement
    ("Listeners get fifteen percent off their first year at brightline dot com slash street.", False),
    ("Before we start, make sure you hit that subscribe button and the bell.", False),  # a video's own plug
    ("The following discussion should be read in conjunction with our consolidated financial statements.", False),
    ("Our actual results could differ materially from those discussed below.", False),  # a 10-K's caveats
    ("Warehousing costs differ materially between the two regions we serve.", True),
    ("The links to every paper we read are in the description below.", False),
    ("This post may contain affiliate links.", False),  # a blog's disclosure
    ("As an Amazon Associate I earn from qualifying purchases.", False),
    ("We may earn a commission when you buy through links on our site.", False),
    ("Sales staff earn a commission on every policy they sell.", True),
    ("The subscribe button was moved to the top of the page in 2023.", True),
    ("She reached past the counter to press the bell and waited for the clerk.", True),
    ("Tap the notification to open the conversation in the app.", True),
    ("Clients subscribe to the channel with the SUBSCRIBE command.", True),
    ("Each concept links roles in the description logic to their fillers.", True),
    ("This policy should be read in conjunction with the Safeguarding Policy of the school.", True),
    ("The trial found that results could differ materially between the two dosing schedules.", True),
    ("The sponsor of the bill, Senator Hale, withdrew it on Monday.", True),
    ("The bill, sponsored by Senator Jane Doe, would ban the sale of the land.", True),
    ("Adjusted EBITDA, a non-GAAP measure, rose 12% to $450 million.", True),
    ("Section 512 gives online services a safe harbor from liability for what users post.", True),
    ("To reproduce the results, use the code in the experiments folder.", True),
    ("Thanks to the new vaccine, deaths fell by half last year.", True),
    ("Welcome to the new normal, where prices never fall back.", True),
    ("For example, see how quickly the virus spread through northern Italy in March 2020.", True),
    ("I'd like to thank the council for its work this year.", False),
    ("With that, I'll turn the call over to Karen.", False),  # a hand-over
    ("I will now hand it over to our chief financial officer, Tomas.", False),
    ("The council will turn the old library over to the school district in May.", True),
    ("Good morning everyone, let's get started.", False),
    ("Hi, thanks for taking the question, and congrats on the margin.", False),  # an analyst's opening
    ("Congratulations to the lifeboat crew, who were out for eleven hours.", True),
    ("Congratulations on the new contract went out to every member of staff on Monday.", True),
    ("I want to start by thanking Council President Harold Lee and the members of the City Council who are here "
     "tonight.", False),
    ("I want to tell you where Riverbend stands and what I am asking of this council.", True),
    ("Thank you all for coming: the vote on the levee passed by nine votes to two after a long night.", True),
])
def test_credits_and_pointers_are_not_worth_showing(sentence, shown):
    from lsgtool.summarize.extractive import worth_showing

    assert worth_showing(sentence, sentence) is shown


CALL = """Fernhill Outdoor Brands Q3 2024 Earnings Call Transcript

Call participants:
Lauren Bakshi -- Vice President, Investor Relations
Karen Mitchell -- Chief Executive Officer
Rohan Desai -- Analyst, Morgan Stanley

Prepared Remarks:

Operator

Good afternoon, and welcome to the earnings conference call. Please go ahead.

Karen Mitchell -- Chief Executive Officer

Total revenue for the quarter was $412 million, down 3% from a year ago.

Gross margin was 48.6%, up 310 basis points from last year.

Questions & Answers:

Operator

Our first question comes from Rohan Desai with Morgan Stanley.

Rohan Desai -- Analyst, Morgan Stanley

How much of the wholesale decline is about the consumer?

Karen Mitchell -- Chief Executive Officer

Mostly the consumer, Rohan: our partners are cautious about the holiday season.
"""


def test_talk_under_its_speakers_names_on_lines_of_their_own_is_read_as_their_turns():
    """An earnings call's transcript names each speaker (and their role) on a line of its own above what they say:
    each line is theirs; the title, the participants and the sections' labels are said by no one."""
    from lsgtool.documents.prose import is_headed, is_transcript, turns

    assert is_headed(CALL) and is_transcript(CALL)
    said = [(turn.speaker, " ".join(CALL[a:b] for a, b in turn.pieces)) for turn in turns(CALL)]
    assert said == [
        ("Operator", "Good afternoon, and welcome to the earnings conference call. Please go ahead."),
        ("Karen Mitchell", "Total revenue for the quarter was $412 million, down 3% from a year ago. Gross margin was "
                           "48.6%, up 310 basis points from last year."),
        ("Operator", "Our first question comes from Rohan Desai with Morgan Stanley."),
        ("Rohan Desai", "How much of the wholesale decline is about the consumer?"),
        ("Karen Mitchell", "Mostly the consumer, Rohan: our partners are cautious about the holiday season.")]
    report = ("Annual Report\n\nMarket Overview\n\nSales grew in every region this year.\n\nKey Findings\n\n"
              "Margins held.\n\nNext Steps\n\nWe will open two stores.\n\nRisk Factors\n\nCosts may rise.\n")
    assert not is_headed(report)  # bare headings, each once: no speakers
    novel = "".join(f"Chapter {n} — The Storm\n\nThe rain came down on the roofs all night.\n\n" for n in "ABCDE")
    status = "".join(f"Project {n}\n\nKey Points\n\nSales grew.\n\nNext Steps\n\nWe open a store.\n\n" for n in "ABC")
    assert not is_headed(novel) and not is_headed(status)  # headings, with a subtitle or repeated: no speakers
    resume = "".join(f"{role} — {firm}, London\n*2019 – 2021*\n\n- Led a team of four engineers.\n\n"
                     for role, firm in
                     [("Senior Data Engineer", "Paylane Ltd"), ("Data Engineer", "ShopSphere"),
                      ("Graduate Software Developer", "Northgate"), ("Research Assistant", "Leeds University")])
    assert not is_headed(resume)  # jobs and their employers, each once: nobody speaks twice


def test_speakers_named_in_capitals_are_shown_as_names_unless_some_are_not():
    from lsgtool.documents.prose import turns

    capitals = "JAMIE: Welcome back to the show.\nMAYOR DELGADO: Thank you for having me.\nJAMIE: Let us begin.\n" * 2
    assert [t.speaker for t in turns(capitals)][:2] == ["Jamie", "Mayor Delgado"]
    apostrophe = capitals.replace("MAYOR DELGADO", "JAMIE'S DAD")
    assert [t.speaker for t in turns(apostrophe)][:2] == ["Jamie", "Jamie's Dad"]
    irish = capitals.replace("MAYOR DELGADO", "MAYOR O'BRIEN-WALSH")
    assert [t.speaker for t in turns(irish)][:2] == ["Jamie", "Mayor O'Brien-Walsh"]
    from lsgtool.documents.prose import _as_name

    assert _as_name("2ND OFFICER") == "2nd Officer" and _as_name("D’ARCY") == "D’Arcy"  # (a cue's name too)
    mixed = "Jamie: Welcome back to the show.\nCEO: Thank you for having me.\nJamie: Let us begin.\n" * 2
    assert [t.speaker for t in turns(mixed)][:2] == ["Jamie", "CEO"]  # one in capitals among names: as written


def test_a_plays_stage_directions_are_no_ones_words():
    """A play written "NAME: speech": a stage direction (a bracketed paragraph, over lines too) had gone on the
    turn before it and been shown as that character's words ("Agnes: (ROSE hangs her coat ...)"), a direction after
    a label as a sentence of theirs; each is no one's, and the words after a speech's "(Applause.)" its speaker's;
    "SCENE ONE" and "END OF PLAY" are no one's words either."""
    from lsgtool.documents.prose import turns

    play = ("THE KEEPER\n\nSCENE ONE\n\n(A kitchen in a lighthouse cottage.\nA storm outside.)\n\n"
            "ROSE: The road from Helston was under water.\n\nAGNES: (without turning) You should have stayed.\n\n"
            "(ROSE hangs her coat on the hook.)\n\nROSE: Trinity House wants you out.\n\nEND OF PLAY\n")
    assert [(turn.speaker, [play[a:b] for a, b in turn.pieces]) for turn in turns(play, True)] == [
        (None, ["(A kitchen in a lighthouse cottage.", "A storm outside.)"]),
        ("Rose", ["The road from Helston was under water."]), ("Agnes", ["You should have stayed."]),
        (None, ["(ROSE hangs her coat on the hook.)"]), ("Rose", ["Trinity House wants you out."])]
    wrapped = "MAYOR: We will build homes, and I think\n(as the officer said) we will pay.\n\nCLERK: Thank you.\n"
    assert [turn.speaker for turn in turns(wrapped, True)] == ["Mayor", "Clerk"]  # a turn's line, no direction
    speech = "MAYOR: We will build homes.\n\n(Applause.)\n\nAnd we will pay for them.\n\nCLERK: Thank you.\n"
    assert [(turn.speaker, [speech[a:b] for a, b in turn.pieces]) for turn in turns(speech, True)] == [
        ("Mayor", ["We will build homes."]), (None, ["(Applause.)"]), ("Mayor", ["And we will pay for them."]),
        ("Clerk", ["Thank you."])]


def test_a_transcripts_title_in_capitals_over_its_header_and_a_note_on_it_is_its_title():
    """A debate's header ("CITY COUNCIL CANDIDATES FORUM" over who hosted it, when, where, and "Official transcript.
    Prepared by ..."): the note's sentences had made the whole header a sentence, the summary's first, and the
    summary had been headed by the file's name."""
    from lsgtool.documents.prose import spoken_title, turns

    text = ("CITY COUNCIL CANDIDATES FORUM\nHosted by the Elmwood Neighbors Association\n"
            "Tuesday, May 5, 2026 - Elmwood Library\nOfficial transcript. Prepared by Carver Reporting Services.\n\n"
            "MODERATOR: Welcome. Our first question is about parking. Ms. Ruiz?\n\n"
            "RUIZ: I would build a new garage on Fifth Street with 300 spaces.\n\n"
            "KANE: A garage costs $20 million. I would rather fix the buses.\n\nMODERATOR: Thank you both.\n")
    span = spoken_title(text)
    assert text[span[0]:span[1]] == "CITY COUNCIL CANDIDATES FORUM"
    assert [turn.speaker for turn in turns(text)] == ["Moderator", "Ruiz", "Kane", "Moderator"]
    assert all("Hosted" not in text[a:b] for turn in turns(text) for a, b in turn.pieces)


def test_a_calls_header_fields_and_recording_notice_are_no_ones_turn():
    """A call centre's transcript: "Agent: Thomas Reilly (ID 4471)" and "Customer: Mrs. Gwen Ashdown, account ..."
    above the turns had been the summary's first "turn", glued to "This call was recorded for ..." under it."""
    from lsgtool.documents.prose import turns

    text = ("CALL TRANSCRIPT\nCall ID: BW-118273\nAgent: Thomas Reilly (ID 4471)\nCustomer: Mrs. Gwen Ashdown, account "
            "7730-2281-09\nTranscription: automatic, reviewed by QA\nThis call was recorded for training and quality "
            "purposes.\n\n[14:12:03] Thomas: Good afternoon, you're through to Brightwave Energy.\n"
            "[14:12:33] Gwen: I've had a bill for £1,146 for the last three months.\n"
            "[14:13:49] Thomas: Your smart meter stopped sending readings to us in February.\n"
            "[14:14:02] Gwen: So the bill is only an estimate?\n")
    found = turns(text)
    assert [turn.speaker for turn in found] == ["Thomas", "Gwen", "Thomas", "Gwen"]
    assert all("Agent" not in text[a:b] and "recorded" not in text[a:b] for turn in found for a, b in turn.pieces)
    caller = ("Caller: Hi, my tomato leaves are curling up, what should I do?\nHost: Curling leaves mean heat stress.\n"
              "Guest: Or too much water, in my experience.\nHost: Thanks for the call.\n")  # a caller who speaks once
    assert [turn.speaker for turn in turns(caller)] == ["Caller", "Host", "Guest", "Host"]
    talk = text[text.index("[14"):].replace("Thomas:", "Agent:").replace("Gwen:", "Customer:")  # roles that speak
    assert [turn.speaker for turn in turns(talk)] == ["Agent", "Customer", "Agent", "Customer"]


def test_a_how_tos_step_and_a_spoken_opening_are_no_speakers_names():
    """A video's captions: "Step two: unscrew the chrome shroud" made "Step two" a speaker, and the summary put
    "Step two:" before a later cue's sentence (a step that is not step two); "One tip:" and "So that's it:" too."""
    from lsgtool.documents.prose import prose_sentences, readable

    cues = ["Today we're replacing the cartridge in a dripping kitchen tap.", "Step two: unscrew the chrome shroud.",
            "Now you can see the cartridge under a brass nut.", "One tip: if it still drips, replace the tap.",
            "So that's it: water off, lever off, and put it all back."]
    text = "WEBVTT\n\n" + "".join(f"00:00:{4 * k:02d}.000 --> 00:00:{4 * k + 4:02d}.000\n{cue}\n\n"
                                   for k, cue in enumerate(cues))
    shown = [readable(text[a:b], spoken=True) for a, b in prose_sentences(text)]
    assert "Step two: unscrew the chrome shroud." in shown
    assert "Now you can see the cartridge under a brass nut." in shown
    assert any(s.startswith("One tip: if it") for s in shown) and any("So that's it" in s or s.startswith("That's it")
                                                                       for s in shown)
    from lsgtool.documents.prose import turns  # (a name that begins as an opener does is a speaker's)

    film = "Interviewer: Tell us about your first film.\nSo Yeon Park: It was a short about my grandmother.\n" * 2
    assert [turn.speaker for turn in turns(film)] == ["Interviewer", "So Yeon Park"] * 2


def test_a_forms_labelled_lines_are_fields_not_a_transcripts_turns():
    """A syllabus whose lines are mostly "Label: value" was read as a transcript (its paragraphs glued, one line's
    label put before another's sentence); no label is said twice there, as a speaker's is in talk."""
    from lsgtool.documents.prose import is_transcript

    syllabus = ("HIST 318: The Atlantic World\n\nInstructor: Dr. Amara Okonkwo-Bell\nOffice: Hargrove Hall 412\n"
                "Credits: 3\nPrerequisites: HIST 101 or permission of the instructor\n\n"
                "This course examines the Atlantic Ocean as a single world between 1450 and 1800.\n\n"
                "Attendance: Attendance is expected at every class.\nLate work: Papers lose five points a day.\n"
                "Electronic devices: Laptops may be used for note-taking.\n")
    assert not is_transcript(syllabus)
    talk = syllabus.replace("Electronic devices:", "Instructor:")  # one of them speaks again: turns
    assert is_transcript(talk)
    panel = ("Chair: Let us begin with the budget for next year.\nTreasurer: We are four thousand pounds short.\n"
             "Head Teacher: The roof repairs cannot wait another winter.\nGovernor Lee: I would like a second quote.\n"
             "Parent Rep: Parents asked about the breakfast club.\nStaff Rep: Staff support the repairs first.\n")
    assert is_transcript(panel)  # six speakers, once each, in sentences: a panel's turns, not a form's fields
    assert [readable(syllabus[a:b]) for a, b in prose_sentences(syllabus)][-1] == \
        "Electronic devices: Laptops may be used for note-taking."


def test_a_transcripts_title_page_is_not_glued_to_its_first_sentence():
    """A transcript's title page is no one's words: nor is a header's "TRANSCRIPT: MAYORAL DEBATE" (it had been
    the debate's first turn, by "Transcript", and its summary's first sentence) or an editor's bracketed note."""
    from lsgtool.documents.prose import is_transcript, turns

    text = ("AEROLUX AP-500 SMART AIR PURIFIER\nFrequently Asked Questions\nRevision 3 (May 2024)\n\n"
            "This guide answers the questions our support team hears most often.\n\nGETTING STARTED\n\n"
            "Q: What size of room is the AP-500 designed for?\nA: It is rated for rooms up to 45 square metres.\n"
            "Q: Where should I put the purifier?\nA: On a flat, hard surface at least 30 cm from the walls.\n"
            "Q: Can I wash the filter?\nA: No: vacuum its outer mesh every few weeks instead.\n")
    assert is_transcript(text)
    assert [readable(text[a:b], spoken=True) for a, b in prose_sentences(text)][:2] == [
        "This guide answers the questions our support team hears most often.",
        "What size of room is the AP-500 designed for?"]
    debate = ("TRANSCRIPT: MAYORAL DEBATE, CITY OF PORT ESSEX\nHosted by WKNA Public Media, October 14\n\n"
              "PARTICIPANTS:\nDana Whitcomb, City Treasurer\n\n[Transcript prepared from the broadcast feed.]\n\n"
              "OSEI: Good evening. Our first question is on housing.\n\nWHITCOMB: I would end single-family zoning.\n\n"
              "OSEI: Councillor?\n\nCALLOWAY: I would cut permit times.\n")
    assert [turn.speaker for turn in turns(debate)] == ["Osei", "Whitcomb", "Osei", "Calloway"]  # a header's label
    moderated = debate.replace("OSEI:", "MODERATOR:")  # a label that speaks again is a speaker's
    assert [turn.speaker for turn in turns(moderated)][:2] == ["Moderator", "Whitcomb"]
    hosted = debate.replace("OSEI: Good evening.", "HOST: Good evening, with me today are two guests")
    assert [turn.speaker for turn in turns(hosted)][:2] == ["Host", "Whitcomb"]  # a host who speaks once speaks
    unlabelled = "so we started the meeting late\n\nthe budget was the first thing we looked at\n\n" * 3
    assert " ".join(readable(unlabelled[a:b], spoken=True) for a, b in prose_sentences(unlabelled, True)).startswith(
        "We started the meeting late")  # no turn at all: no title page before one


PODCAST = ('THE SOIL CAST — Episode 142: "Cover Crops and the Cash Flow Problem"\n'
           "Recorded: March 4, 2025 | Released: March 11, 2025\n"
           "Host: Dana Whitfield | Guest: Marcus Oyelaran, farmer\n"
           "Transcript generated automatically. Please check against the audio before quoting.\n\n"
           "[00:00:14] DANA: Welcome back. Marcus has run cover crops on his Iowa farm since 2017.\n"
           "[00:00:52] MARCUS: [laughs] Thanks, Dana. Cover crops pay on my farm, but through the soil.\n"
           "[00:01:04] DANA: What did the carbon program pay you? (laughter)\n"
           "[00:01:10] MARCUS: I netted about five dollars an acre, and I left the program in 2023.\n")


def test_a_podcasts_header_fields_and_note_are_its_title_page_and_its_sounds_are_no_words():
    """A podcast's header had been read as turns ("Host: Dana Whitfield | Guest: ..." by "Host", its title by "THE
    SOIL CAST — Episode 142") and shown as its summary's first sentences, and the speakers' names, no longer all
    in capitals, left as "DANA"; a transcriber's "[laughs]" in a turn had been shown as words."""
    from lsgtool.documents.prose import turns

    assert [turn.speaker for turn in turns(PODCAST)] == ["Dana", "Marcus", "Dana", "Marcus"]
    said = [readable(PODCAST[a:b], spoken=True) for a, b in prose_sentences(PODCAST)]
    assert said[0] == "Welcome back." and "Thanks, Dana." in said and "What did the carbon program pay you?" in said
    assert not any("laugh" in s.lower() or "Recorded" in s or "Transcript" in s for s in said)
    assert read_bytes(PODCAST.encode(), "ep142.txt", ".txt").title == (
        'THE SOIL CAST — Episode 142: "Cover Crops and the Cash Flow Problem"')  # its title, though a field
    # a turn with a bar in it, by someone who speaks once, and "Speaker 1", are turns
    council = ("MAYOR: We have three choices | Option one: we close the east branch library.\n"
               "COUNCILLOR REED: I cannot support closing a library.\nCOUNCILLOR SHAH: Nor can I.\n"
               "COUNCILLOR REED: Then the tax it is.\nCOUNCILLOR SHAH: So be it.\n")
    assert [turn.speaker for turn in turns(council)][0] == "Mayor"
    interview = ("Speaker 1: So what happened at the Brennan plant on Tuesday night?\n"
                 "Speaker 2: A valve failed and the line flooded.\nSpeaker 3: We shut it down at nine.\n"
                 "Speaker 2: Nobody was hurt.\nSpeaker 3: The repairs take a week.\n")
    assert [turn.speaker for turn in turns(interview)][0] == "Speaker 1"
    assert read_bytes(interview.encode(), "plant.txt", ".txt").title is None


@pytest.mark.parametrize("text, title", [
    ("Corvane Logistics, Inc. (NYSE: CVLG)\nQ3 2025 Earnings Conference Call\nOctober 23, 2025, 8:30 AM ET\n\n"
     "Company Participants\n\nElena Marsh - Vice President, Investor Relations\n\nPresentation\n\nOperator\n\n"
     "Good morning, and welcome to the call.\n\nDavid Okafor -- Chief Executive Officer\n\n"
     "Revenue for the quarter was $1.42 billion.\n\nOperator\n\nOur first question comes from Ann Bell.\n\n"
     "Ann Bell -- Analyst, Northwind Securities\n\nWhat about brokerage?\n\n"
     "David Okafor -- Chief Executive Officer\n\nWe have no plans to sell it.\n",
     "Corvane Logistics, Inc. (NYSE: CVLG) — Q3 2025 Earnings Conference Call"),  # not its date
    ("LOW TIDE\n\nANNA: The sea is coming in.\nBEN: Then we move the boat.\nANNA: Tonight.\n", "LOW TIDE"),
    ("ANNA: The sea is coming in.\nBEN: Then we move the boat.\nANNA: Tonight.\n", None),  # a meeting's talk
    ("Date: 4 March 2025\n\nANNA: The sea is coming in.\nBEN: Then we move the boat.\nANNA: Tonight.\n", None),
])
def test_a_transcripts_title_is_on_its_title_page(text, title):
    """A transcript had no title (its summary headed by the file's path); its title page's first line, or first
    lines ending no sentence, name it; a call's "Company Participants" and "Presentation" are no speakers."""
    from lsgtool.documents.prose import turns

    assert read_bytes(text.encode(), "call.txt", ".txt").title == title
    if "Company Participants" in text:
        assert [turn.speaker for turn in turns(text)] == ["Operator", "David Okafor", "Operator", "Ann Bell",
                                                          "David Okafor"]


# a video's automatic captions: speech written down without a mark of punctuation or a capital
UNPUNCTUATED = (Path(__file__).parents[1] / "data" / "unpunctuated.txt").read_text(encoding="utf-8").strip()


def test_unpunctuated_speech_is_cut_into_breaths_before_the_words_a_speaker_goes_on_with():
    """A video's automatic captions had been one sentence of a thousand words (and one cut piece of it the whole
    summary); they are breaths of 10-45 words, in order, over every word, each beginning where the speaker goes on
    ("so", "okay so", "the second reason"), not inside "all but twenty"; punctuated text is sentences as before."""
    from lsgtool.documents.sentences import BREATH, breaths, sentence_spans

    text = f"Intro\n\n{UNPUNCTUATED}\n"
    spans = list(sentence_spans(text))
    pieces = [text[a:b] for a, b in spans]
    assert len(pieces) > 5 and all(BREATH[0] <= len(p.split()) <= BREATH[2] for p in pieces[1:])
    assert " ".join(pieces[1:]).split() == UNPUNCTUATED.split() and all(p == p.strip() for p in pieces)
    assert any(p.startswith("okay so the first thing") for p in pieces)
    assert any(p.startswith("the second reason is the flour") for p in pieces)
    assert not any(p.startswith("but twenty grams") or p.endswith(" and") for p in pieces)
    legal = ("The Licensee shall not modify the software or any part of it or create works based on it or give the "
             "software or any such work to any third party without the prior written consent of the Licensor and any "
             "attempt to do so shall be void and shall be a material breach of this Agreement that entitles the "
             "Licensor to end it, at once and in writing.")
    assert list(sentence_spans(legal)) == [(0, len(legal))] == list(breaths(legal, 0, len(legal)))  # two marks
    statute = legal.replace(", at once and in writing", " at once and in writing")  # its full stop its one mark
    assert list(sentence_spans(statute)) == [(0, len(statute))]
    said = " ".join(["it has been working really well for me and it took me so many attempts to get here"] * 6)
    assert not any(text[a:b].startswith(("for me", "many attempts")) for text in [said]
                   for a, b in sentence_spans(said))  # "well", "so" go on a breath only before a clause
    tails = [len(said[a:b].split()) for a, b in breaths(said, 0, len(said))]
    assert sum(tails) == len(said.split()) and min(tails) >= BREATH[0]  # no breath of a word or two at the end


def test_a_breath_of_unpunctuated_speech_is_shown_as_a_sentence():
    """Only a breath of unpunctuated speech: a sentence before a displayed formula, a title or a flattened table
    ends without a mark too, and is shown as it is."""
    from lsgtool.documents.sentences import in_breaths

    text = f"Intro\n\n{UNPUNCTUATED}\n"
    spans = list(sentence_spans(text))
    assert all(in_breaths(text, a, b) for a, b in spans[1:])
    shown = [readable(text[a:b], breath=in_breaths(text, a, b)) for a, b in spans]
    assert "It won't double so what I do in the winter is I put it in the oven with just the light on and that keeps " \
        "it around seventy eight degrees." in shown and shown[-1].endswith("we're going to check back on Friday.")
    assert "What I recommend is some whole grain flour even twenty percent rye will wake a sluggish starter right " \
        "up." in shown and shown[0] == "Intro"  # (a filler left out; a heading's one word is no breath)
    assert readable("um okay so the number one reason a starter doesn't rise is temperature", breath=True) == \
        "The number one reason a starter doesn't rise is temperature."
    assert readable("so many people told me to give up on it", breath=True) == \
        "So many people told me to give up on it."
    vtt = "WEBVTT\nKind: captions\nLanguage: en\n\n" + "".join(
        f"00:00:{k:02d}.000 --> 00:00:{k + 1:02d}.000 align:start position:0%\n{line}\n\n"
        for k, line in enumerate(UNPUNCTUATED.split(" so ")))  # YouTube's: a header, cue settings
    from lsgtool.documents.prose import said_only

    assert all(in_breaths(said_only(vtt), a, b) for a, b in prose_sentences(vtt))
    written = ("The statement that the rate of change of a quantity is proportional to its size is written\n\n$$\n"
               "\\frac{dy}{dt} = k y\n$$\n\nwhere the constant k is called the growth constant of the quantity.\n\n"
               "Why Your Sourdough Starter Is Not Rising And What To Do About It\n\nIt is cold.")
    assert not any(in_breaths(written, a, b) for a, b in sentence_spans(written))
    meeting = ("Ann: We met today to plan the bakery's winter menu, and the oven is fixed.\n"
               f"Bob: {UNPUNCTUATED}\nAnn: Thanks, that helps.\n" * 3)  # one turn its transcriber did not punctuate
    spans = prose_sentences(meeting)
    assert [in_breaths(meeting, a, b) for a, b in spans[:3]] == [False, True, True] and not in_breaths(
        meeting, *[span for span in spans if meeting[span[0]:span[1]] == "Thanks, that helps."][0])
    readme = "quickgrid is a tiny layout engine for dashboards, with no dependencies.\n\n" + "".join(
        f"- fast grid layout number {k} for small screens\n" for k in range(12))
    assert not any(in_breaths(readme, a, b) for a, b in sentence_spans(readme))  # a list among punctuated prose


def test_a_plain_texts_indented_paragraphs_are_prose_and_code_stays_code():
    """A bill indents its clauses by four spaces: read as Markdown's code blocks, 90% of one was left out unsaid;
    an indented block is code only in a text with Markdown's headings or fences, or where it does not read as prose."""
    bill = ("SEC. 3. GRANT PROGRAM.\n\n"
            "    (a) Establishment.--The Secretary shall establish a program to award grants to eligible entities.\n"
            "    (b) Amount.--The amount provided for a single household under this section may not exceed $14,000.\n"
            "\nSEC. 4. AUTHORIZATION.\n\n"
            "    There is authorized to be appropriated $1,500,000,000 for each of fiscal years 2025 through 2029.\n")
    shown = [readable(bill[a:b]) for a, b in prose_sentences(bill)]
    assert "The amount provided for a single household under this section may not exceed $14,000." in " ".join(shown)
    assert shown[-1] == "There is authorized to be appropriated $1,500,000,000 for each of fiscal years 2025 " \
                        "through 2029."
    assert not any(s.startswith("SEC.") and len(s.split()) == 1 for s in shown)  # "SEC. 3." is not cut at "SEC."
    wrapped = ("SEC. 5. DEPOSITS.\n\n    (a) Return.--The landlord shall, within thirty days of the end of the\n"
               "    lease, return the deposit to the tenant, less the cost of repairs, and\n"
               "    for each day of delay shall pay interest at the rate set by the Secretary,\n"
               "    if the tenant asks for it in writing.\n")
    assert "return the deposit to the tenant" in " ".join(readable(wrapped[a:b]) for a, b in prose_sentences(wrapped))
    code = ("The parser reads each file once and keeps the tokens it needs for the next pass.\n\n"
            "    let tokens = lex(&source);\n    let tree = parse(tokens)?;\n\n"
            "    $ cargo build --release\n\nThat is all the setup it needs before the first run.\n")
    assert [readable(code[a:b]) for a, b in prose_sentences(code)] == [
        "The parser reads each file once and keeps the tokens it needs for the next pass.",
        "That is all the setup it needs before the first run."]
    markdown = "# Usage\n\nRun it once a day.\n\n    The quick brown fox jumps over the lazy dog every day.\n"
    assert [readable(markdown[a:b]) for a, b in prose_sentences(markdown)] == ["Run it once a day."]
    for code in ('    def area(radius):\n        """Return the area of a circle with the given radius."""\n'
                 "        return 3.14159 * radius * radius\n",  # a docstring's words, a keyword
                 "    $ sudo ./install.sh --prefix /opt/app\n    Installing into /opt/app, this takes a few minutes.\n",
                 "    select name, city from people where age > 30 and city is not null;\n",
                 "    On Tue, 4 Jun 2024, Dana Whitfield wrote:\n    We need to cut the budget by ten percent now.\n"):
        text = f"The helper below is all you need to copy into your module.\n\n{code}\nCall it with a number.\n"
        assert [readable(text[a:b]) for a, b in prose_sentences(text)] == [
            "The helper below is all you need to copy into your module.", "Call it with a number."], code
    rst = "Example::\n\n    The client sends the greeting to the general channel at once.\n\nIt returns.\n"
    assert [readable(rst[a:b]) for a, b in prose_sentences(rst)] == ["Example::", "It returns."]  # a literal block
    setext = "fastcsv\n=======\n\nIt reads files.\n\n    The quick brown fox jumps over the lazy dog every day.\n"
    assert [readable(setext[a:b]) for a, b in prose_sentences(setext)] == ["It reads files."]  # Markdown's headings
    letter = ("Dear Mr. Hollis,\n\n    I write to let you know that the lease on the shop at 12 Mill Street\n"
              "will end on the thirtieth of June. We are sorry for the short notice.\n")
    assert [readable(letter[a:b]) for a, b in prose_sentences(letter)][1] == (
        "I write to let you know that the lease on the shop at 12 Mill Street will end on the thirtieth of June.")


@pytest.mark.parametrize("text, count", [
    ("FIG. 3 shows the assembly of the pump. FIGS. 4 and 5 show its valve.", 2),
    ("The grant is set in SEC. 3 of the Act. The cap is in Sec. 4.", 2),
    ("Under Ohio Rev. Code Ann. § 5721.20 (2023), the surplus goes to the State. The owner had no notice.", 2),
    ("It was enacted by Pub. L. 115-72 in 2017. See 124 Stat. 119 for the text.", 2),
    ("She gave the book to Ann. The next day she left for Paris.", 2),
    # a brief's record citations: "Id. ¶ 13; Ex. A." is one, and ends before the next sentence
    ("Greenleaf signed the bill. Id. ¶ 13; Ex. A. Each bill states the limit. Am. Compl. ¶¶ 18-22.", 4),
    ("The motion fails. Decl. at 4. Opp. 12. The court agrees.", 4),
    # a semicolon ends no sentence where the next goes on in its line; an item on a line of its own stays one
    ("You create a shipment and buy a label; Parcelwise then tracks it until delivery.", 1),
    ("The team left camp at dawn and walked north along the river for six long hours in the cold rain and the wind "
     "off the hills; They counted forty-one nesting pairs on the eastern bank of the river, more than in any year "
     "since the count began; They returned before dark with the boat, which had been repaired on the rocks by the "
     "two who stayed behind at the camp.", 2),  # (joined up to sixty words: a list of clauses stays apart)
    ("We will not pay for wear and tear;\n3.3 Escape of water while the home is empty;", 2),
    # a state's statute ("Minn. Stat. §" had been three sentences: the holding shown from "§ 504B.385 must ...")
    ("A tenant who withholds rent under Minn. Stat. § 504B.385 must deposit it with the court. The tenant did not.", 2),
    ("Under Wis. Stat. § 704.07 and Fla. Stat. Ann. § 83.60, the landlord must repair. See N.C. Gen. Stat. § 42-42 "
     "and Mich. Comp. Laws § 554.139. He moved to Va. Then he left.", 4),
    # a sentence's end syntok had read on through: a number's decimal point, a capital letter alone before "Under"
    ("The tenant relied on section 554.139. The court did not agree with him.", 2),
    ("Recharge was 96 mm at Site A and 71 mm at Site B. Under drip irrigation it was 37 mm.", 2),
    ("We met John B. Smith and Mary A. Jones in the morning. George W. Bush spoke.", 2),  # initials
    ("1.2. Scope of the work is wide and the version is 2.4.1 now.", 1),  # (a heading's number)
])
def test_a_patents_and_a_statutes_abbreviations_end_no_sentence(text, count):
    assert len(list(sentence_spans(text))) == count
    if count == 4 and "Ex. A." in text:
        assert [text[a:b] for a, b in sentence_spans(text)][1:3] == ["Id. ¶ 13; Ex. A.", "Each bill states the limit."]


@pytest.mark.parametrize("text, expected", [
    ('He said, "Ruthie, they didn\'t take the farm. The bank did." Then he went to work at the mill.',
     ['He said, "Ruthie, they didn\'t take the farm. The bank did."', "Then he went to work at the mill."]),
    ("“Come here. Now,” she said. He came at once.", ["“Come here. Now,” she said.", "He came at once."]),
    ('"Never closed. Another sentence. And more.', ['"Never closed.', "Another sentence.", "And more."]),
    ('"A speech begins here. It goes on.\n\n"It ends here." She sat.',  # a quotation over paragraphs
     ['"A speech begins here.', "It goes on.", '"It ends here."', "She sat."]),
])
def test_a_short_quotation_of_several_sentences_is_one_sentence(text, expected):
    # its first sentence alone had said the opposite of the whole ("they didn't take the farm.")
    assert [text[a:b] for a, b in sentence_spans(text)] == expected


def test_a_long_quotation_stays_apart():
    said = " ".join(f"We built the {n} barn by hand." for n in ("first", "second", "third", "fourth", "fifth",
                                                                  "sixth", "seventh", "eighth", "ninth", "tenth"))
    text = f'He said, "{said}" Then he left.'
    assert len(list(sentence_spans(text))) == 11  # (over sixty words: each is its own)


def test_a_footnote_mark_against_a_sentences_end_ends_it_and_is_not_shown():
    text = ("The cartridge removes chlorine and heavy metals.1 A UV-C lamp then kills bacteria.\n\n"
            "The lamp lasts for a year of daily use, and the light on its front turns red when it fails.2")
    assert [readable(text[a:b]) for a, b in prose_sentences(text)] == [
        "The cartridge removes chlorine and heavy metals.", "A UV-C lamp then kills bacteria.",
        "The lamp lasts for a year of daily use, and the light on its front turns red when it fails."]
    assert [readable(t) for t in ("Version 3.1 A new build.", "See p.5 The end.")] == [
        "Version 3.1 A new build.", "See p.5 The end."]  # (a number after a number's point, an abbreviation's)


def test_a_textbooks_glossary_is_no_part_of_what_it_says_and_its_objectives_are():
    from lsgtool.documents.prose import back_matter

    text = ("# Elasticity\n\n## Learning objectives\n\nDefine the price elasticity of demand and compute it.\n\n"
            "## Price elasticity\n\nWhen a good has close substitutes, its demand is elastic.\n\n## Key terms\n\n"
            "Elasticity: the percentage change in quantity over the percentage change in price.\n")
    assert [text[a:b].split("\n")[0] for a, b in back_matter(text)] == ["## Key terms"]


def test_an_opinions_parts_are_headings_and_a_pin_cite_is_no_sentence():
    from lsgtool.documents.prose import headings
    from lsgtool.summarize.extractive import worth_showing

    opinion = ("JUSTICE KAVANAUGH delivered the opinion of the Court.\n\n"
               "We hold that the notice provided here was constitutionally inadequate.\n\n"
               "JUSTICE THOMAS, with whom JUSTICE ALITO joins, dissenting.\n\n"
               "The Court today holds that a City violated the Takings Clause.\n")
    assert headings(opinion) == [0, opinion.index("JUSTICE THOMAS")]
    assert _picked_from(opinion) == ["We hold that the notice provided here was constitutionally inadequate.",
                                     "The Court today holds that a City violated the Takings Clause."]
    assert readable("Under Tyler, that is a taking for which just compensation is due. 598 U. S., at 647.") == \
        "Under Tyler, that is a taking for which just compensation is due."  # a pin cite the splitter left on it
    assert readable("The fee was 20 dollars. 3 of the 5 owners paid at 9 a.m.") == \
        "The fee was 20 dollars. 3 of the 5 owners paid at 9 a.m."
    assert readable("The crowd was loud. 3 Doors Down played at 9.") == "The crowd was loud. 3 Doors Down played at 9."
    from lsgtool.documents.prose import OPINION_PART
    assert all(OPINION_PART.match(line) for line in ("SUTTON, Circuit Judge, dissenting.",
                                                    "MR. JUSTICE BLACK delivered the opinion of the Court.",
                                                    "Judge Ruiz, concurring in part and dissenting in part:"))
    assert not OPINION_PART.match("The judge was dissenting.")
    for cite, shown in (("454 U. S., at 529-530.", False), ("Id., at 647.", False),
                        ("598 U. S., at 647 (quoting Tyler).", False), ("3 of the 5 samples failed at 40 C.", True)):
        assert worth_showing(cite, cite) is shown


def test_a_task_lists_boxes_and_a_bold_run_in_label_are_shown_as_text():
    assert readable("- [x] Replace the chain bundle at each renewal.") == "Replace the chain bundle at each renewal."
    assert readable("- **Question** Does dapagliflozin reduce readmission?") == \
        "Question: Does dapagliflozin reduce readmission?"
    assert readable("**Rust** is a language.") == "Rust is a language."  # a bold subject: no label
    assert readable("**Harbor Council** Chair Ruth Alder said the vote passed.") == \
        "Harbor Council Chair Ruth Alder said the vote passed."  # a bold name is no label
    assert readable("**Async runtime.** Tasks can now be cancelled.") == "Async runtime: Tasks can now be cancelled."
    assert readable("**It is just plain hard to read.** Experience has shown it.") == \
        "It is just plain hard to read. Experience has shown it."  # a sentence in bold is no label
    assert readable("This is **not** safe.") == "This is not safe."
    # a case report's abstract's labels and a post's edits are no part of their sentences
    assert readable("Case: We describe a 58-year-old man.") == "We describe a 58-year-old man."
    assert readable("Outcome: He recovered fully.") == "He recovered fully."
    assert readable("Edit 2: The flight was delayed.") == "The flight was delayed."


def test_a_pages_picture_captions_and_a_storys_correction_are_not_its_text(tmp_path):
    from lsgtool.documents import read

    page = tmp_path / "flood.html"
    page.write_text("<html><body><article><h1>Great Molasses Flood</h1>"
                    "<p>A storage tank burst in Boston in 1919 and a wave of molasses killed 21 people.</p>"
                    "<figure><img src='map.png'><figcaption>Map of the area affected by the flood</figcaption>"
                    "</figure><figure><blockquote>The wave came down Commercial Street like a wall of brown water."
                    "</blockquote><figcaption>A witness, 1919"
                    "</figcaption></figure>"
                    "<p class='correction'><em>This article was amended on 2 February 2024. An earlier version "
                    "gave the wrong year.</em></p><p>Correction: An earlier version gave 20 deaths.</p>"
                    "</article></body></html>")
    text = read(page).text
    assert "Map of the area" not in text and "This article was amended" not in text
    assert "A witness, 1919" in text  # a quotation's figure keeps its caption
    assert _picked_from(text) == ["A storage tank burst in Boston in 1919 and a wave of molasses killed 21 people.",
                                  "The wave came down Commercial Street like a wall of brown water."]


def test_a_parliaments_speakers_with_their_seats_and_parties_are_turns():
    from lsgtool.documents.prose import turns

    debate = ("Q1. [901234] Mr Alex Sobel (Leeds Central and Headingley) (Lab): If he will list his engagements.\n"
              "The Prime Minister (Keir Starmer): This morning, I had meetings with colleagues.\n"
              "Kemi Badenoch (North West Essex) (Con): Let me pay tribute to the firefighters in Wembley.\n"
              "The Prime Minister: I join the right hon. Lady in paying tribute to the firefighters.\n")
    assert [t.speaker for t in turns(debate)] == ["Mr Alex Sobel (Leeds Central and Headingley) (Lab)",
                                                  "The Prime Minister (Keir Starmer)",
                                                  "Kemi Badenoch (North West Essex) (Con)", "The Prime Minister"]
    assert [debate[a:b] for a, b in sentence_spans(debate, debate.index("I join"))] == [
        "I join the right hon. Lady in paying tribute to the firefighters."]  # "hon." ends no sentence
    podcast = "".join(f"[00:00:{10 * k:02d}] {who}: The reservoirs are at thirty percent of capacity now.\n"
                      for k, who in enumerate(["Host", "Maria", "Host", "Maria"]))
    assert [t.times[0] for t in turns(podcast)] == ["00:00:00", "00:00:10", "00:00:20", "00:00:30"]  # not a chat


def test_a_chat_written_a_message_a_line_is_read_by_its_handles():
    from lsgtool.documents.prose import is_transcript, turns

    chat = ("#platform-eng exported 2024-03-14\n\n----- Wednesday, March 13 -----\n"
            "[09:14] alice: morning all, the staging cluster is on 1.26 and support ends on June 11.\n"
            "[09:15] ben: is this the one where they removed the beta APIs?\n"
            "[09:16] alice: yes, we need a plan for the upgrade this quarter.\n"
            "[09:18] *** dmitri.v has joined the channel\n"
            "[09:26] ben: in-place for staging and dev, blue/green only for prod.\n"
            "  (prod is where a rollback matters)\n")
    assert is_transcript(chat)
    said = [(t.speaker, " ".join(chat[a:b] for a, b in t.pieces)) for t in turns(chat)]
    assert said == [("alice", "morning all, the staging cluster is on 1.26 and support ends on June 11."),
                    ("ben", "is this the one where they removed the beta APIs?"),
                    ("alice", "yes, we need a plan for the upgrade this quarter."),
                    ("ben", "in-place for staging and dev, blue/green only for prod. (prod is where a rollback "
                            "matters)")]
    log = "".join(f"[09:{m:02d}] INFO: worker {m} started the job and wrote its output.\n" for m in range(10))
    assert not is_transcript(log)
