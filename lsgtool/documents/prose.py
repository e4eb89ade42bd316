"""The prose of a document and its sentences as a reader sees them.

A summary picks sentences, and what it shows must read as text: not a heading glued to the sentence after it,
not a line of a code block, not Markdown or reStructuredText markup. Two things here:

- ``prose_sentences(text)``: the spans of the sentences of the document's prose, each inside one block. Blocks
  end at blank lines, headings (``#`` lines, a line underlined with ``===`` / ``---``, and in plain text a bare
  heading line: ``bare_heading``), list items and block quotes; code (fenced with backticks or tildes, or
  indented after a blank line), tables (rows that begin with a pipe, rows over a ``---|---`` delimiter, lines in a
  row with two pipes each, PDF text's rows with tabs between cells), displayed formulas (``$$ ... $$``), link
  reference definitions, HTML lines and rules are not prose. In a
  transcript (most lines ``Speaker: words``) each line is a turn, a block of its own.
- ``readable(span_text)``: a sentence as the summary writes it: inline markup removed (emphasis, inline code,
  links and images, footnote markers, reStructuredText roles and literals), list and quote markers dropped,
  whitespace collapsed, the words that only link it to the sentence before ("However,", "And", "Yeah, so,") left
  out (``unlinked``); in a text numbered by verses (``verse_numbered``: a Bible's ``Ge1:13`` or ``1:13``), the
  verse labels left out. The sentence's source is still its exact span in the text.

Spoken text is read as what it is (``turns``): a transcript (most lines ``Speaker: words``, an optional
``[00:12:31]`` before the speaker) or a caption file (WebVTT, SubRip: cues with timings, the speaker in a
``<v Name>`` tag or a ``Name:`` label). Its units are the sentences of its turns (one speaker's consecutive lines
or cues, merged), the speaker a label outside them; a sentence split across cues spans the timing lines between,
which ``readable(..., spoken=True)`` leaves out, with fillers ("uh", "um"), stutters and repeated words.
``substance`` counts a sentence's content words: a back-channel ("Yeah. Okay.") has none.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from itertools import islice
from typing import Iterator

from lsgtool.documents.model import SEPARATOR
from lsgtool.documents.sentences import ENDS

# an opening fence: a backtick fence's line holds no other backtick (CommonMark), and what follows the marks is an info
# string (a language, attributes), not more marks: "~~~ * ~~~" is a story's scene break
FENCE = re.compile(r" {0,3}(`{3,}(?=[^`]*$)|~{3,}(?=[^~]*$))[ \t]*(?:[\w{.=\"'+#-][^\n]*)?\r?\n?$")
CLOSING = re.compile(r" {0,3}(`{3,}|~{3,})[ \t]*\r?\n?$")  # a closing fence: its marks alone on the line
ATX = re.compile(r" {0,3}#{1,6}(?:\s|$)")
ATX_MARKS = re.compile(r" {0,3}#{1,6}\s+")  # a heading's marks, up to its text
SETEXT = re.compile(r" {0,3}(?:=+|-+)\s*$")
RULE = re.compile(r" {0,3}([-*_])(?:\s*\1){2,}\s*$")
TABLE = re.compile(r"\s*\|")
INLINE_CODE = re.compile(r"`[^`]*`")
QUOTE_MARKS = re.compile(r"^\s*(?:>\s?)+")
MATH = re.compile(r"\s*\$\$.*\$\$\s*$")  # a displayed formula on a line of its own
# a table's delimiter row without the outer pipes (``a | b`` over ``---|---``): it, the row above it and the rows
# with a pipe after it are a table
DELIMITER = re.compile(r"\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)+\|?\s*$")
DEFINITION = re.compile(r" {0,3}\[[^\]]+\]:\s*\S")
HTML = re.compile(r"\s*</?[A-Za-z!][^>]*>\s*$")
MARK = r"[-*+•]|\(?\d{1,3}[.)]|\(?[a-z][.)]"  # a list item's mark: "-", "1.", "(a)"
ITEM = re.compile(rf"\s*(?:{MARK})\s+")
QUOTE = re.compile(r"\s*>")
# a field of a document's metadata: "- Start Date: 2022-11-05", "Author: A. Name", a quoted e-mail's "> From: Dan"
# (a name of a few words, a short value that does not end a sentence); two or more in a row are a record, not prose
# (``_field_rows``)
FIELD = re.compile(r"\s*(?:>\s?)*(?:[-*+]\s+)?(\*\*|__)?[A-Za-z][\w/()-]*(?: [\w/()-]+){0,3}:(?(1)\1|)\s+\S.{0,160}"
                   r"(?:(?<![.!?:;,])|(?<=[ap]\.m\.))\s*$")  # the key may be in bold: "**Present:** Helen Ashford, ..."
# a log's entry: a match report's "23' - Yellow card: Douglas Luiz ...", "45+2' - GOAL", an agenda's "9:30 – Coffee"
# (a minute or a time, a dash or a colon, the entry): two or more in a row are a record, as fields are
LOGGED = re.compile(r"[ \t]*(?:[-*+][ \t]+)?(?:\d{1,3}(?:\+\d{1,2})?['’][ \t]*[-–—:|][ \t]+\S|(?:\d{1,2}:\d{2}"
                    r"(?:[ \t]*(?i:[ap]\.?m\.?|GMT|UTC|BST|CET|ET|PT))?|\d{1,2}\.\d{2}[ \t]*(?i:[ap]\.?m\.?))"
                    r"[ \t]*[-–—|][ \t]+[^\n]{1,60}(?<![.!?])[ \t]*$)")
# (a timed entry is short and ends no sentence: "00:01:12 - We have spent three years ..." is a transcript's turn,
# "1.01 - The Tenant shall ..." a clause)
DIRECTIVE = re.compile(r"\s*\.\. ")  # reStructuredText: .. note::, .. code-block::
# a note box's label on a line of its own: GitHub's "> [!NOTE]", "> **Warning**"
ALERT = re.compile(r"\s*>\s*(?:\[!(?i:note|tip|important|warning|caution)\]|(?:\*\*|__)(?i:note|tip|important|warning|"
                   r"caution)(?:\*\*|__):?)\s*$")
# a line of images alone: a README's badges, "[![PyPI version](https://img.shields.io/...)](https://pypi.org/...)"
BADGES = re.compile(r"(?:[ \t]*\[?!\[[^\]\n]*\]\([^)\s]*\)(?:\]\([^)\s]*\))?)+[ \t]*$")
# a FAQ's question, "Q: ...?": a heading over its answer
ASKED = re.compile(r"\s*(?:\*\*|__)?(?:Q|Question)\s*:(?:\*\*|__)?\s+\S.*\?(?:\*\*|__)?\s*$")
# an opinion's parts, each on a line of its own: "JUSTICE KAVANAUGH delivered the opinion of the Court.", "JUSTICE
# THOMAS, with whom JUSTICE ALITO joins, dissenting.", "Judge Ruiz, concurring in part and dissenting in part:":
# headings, which name whose words follow (a dissent is not the Court's holding)
OPINION_PART = re.compile(r"[ \t]*(?:(?:(?:(?:MR|Mr)\.[ \t]+)?(?:CHIEF |Chief )?(?:JUSTICE|Justice)|(?:Chief |Circuit |"
                          r"District )?Judge)[ \t]+[A-Z][\w'’-]+|[A-Z][A-Z'’-]+,[ \t]+(?:Chief |Senior )?(?:Circuit |"
                          r"District )?Judge)(?:,[^\n]{0,160}?,|,)?[ \t]+(?:delivered the opinion of the Court|"
                          r"(?:concurring|dissenting)(?: in (?:part|the judgment))?(?: and (?:concurring|dissenting)"
                          r"(?: in (?:part|the judgment))?)?)[.:]?[ \t]*$")  # ("SUTTON, Circuit Judge, dissenting.")
STAMP = r"\[?((?:\d{1,2}:)?\d{1,2}:\d{2})(?:[.,]\d+)?\]?"  # a time said before a turn: [00:12:31], 12:31
# "Speaker: words", "Jane Doe -- Chief Financial Officer: words" (a name, its firm and its role, up to 60 characters)
# (not a label: a manual's "IMPORTANT:", "Note:"; an interview's or a FAQ's "Q:" and "A:" are its speakers)
NOTICES = "note|nb|important|warning|caution|tip"  # a manual's labels (also not shown: ``LABELS``)
LEVELS = "info|warn|error|err|debug|trace|fatal|critical"  # and a log's: "[09:14] INFO: worker 3 started"
# a how-to's step, in figures or words ("Step two: unscrew the shroud"), "One tip:", and a spoken line's opening words
# ("So that's it: water off, ..."): no one's name
COUNTED = r"(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
OPENERS = r"(?:so|and|but|now|well|okay|ok|then|just|remember|here's|that's|it's)(?-i:(?:[ \t]+[a-z'’][^:\n]{0,40})?)"
# (its words go on in lower case: not a speaker "So Yeon Park:", "THEN-SENATOR OBAMA:")
LABEL = rf"(?i:(?:(?:one|another|a|final|quick|pro|top|bonus|last|my) )?(?:{NOTICES}|hint)|attention|danger|notice|" \
        rf"example|(?:step|stage|phase|tip) {COUNTED}|{OPENERS}|{LEVELS})\s*:"
TURN = re.compile(rf"\s*(?:{STAMP}\s+)?(?:Q\d{{1,3}}\.\s+)?(?:\[\d{{3,}}\]\s+)?(?!{LABEL})"
                  rf"([A-Z][\w.'’ —–-]{{0,60}}?(?:\s\((?!\d{{1,2}}:\d{{2}})[^()\n:]{{1,60}}\))*)\s*(?:\({STAMP}\))?:"
                  rf"\s+(?=\S)")
# (a parliament's "Kemi Badenoch (North West Essex) (Con):", "Q1. [901234] Mr Alex Sobel (Leeds Central) (Lab):")
# the labels of an interview's or a FAQ's asker and answerer ("Q:", "A:"): roles, which name no one
ASKER = re.compile(r"(?i:q|question|interviewer)")
ANSWERER = re.compile(r"(?i:a|answer)")
TRANSCRIPT = 0.5  # the share of a text's lines that must be turns for each line to be read as one
# a chat export's message header, on a line of its own above the message's lines: "Priya Raman  9:02 AM" (Slack),
# "Priya Raman — Today at 9:02 AM" (Discord)
CHAT_HEADER = re.compile(r"[ \t]*([A-Z][\w.'’ -]{0,40}?)(?: {2,}|[ \t]+[—–-][ \t]+)(?:(?:Today|Yesterday) at )?"
                         r"\d{1,2}:\d{2}(?::\d{2})?(?: ?[AaPp]\.?[Mm]\.?)?[ \t]*$")
# a chat's message on a line of its own after its time, by a handle that may be in lower case: an IRC log's, a Slack
# or Matrix text export's "[09:14] alice: morning all", "[2024-03-13 09:14] <dmitri.v> hi" (not a log's "[09:14]
# INFO: ..."); and its notices, "[09:18] *** dmitri.v has joined the channel", which are no one's words
CHAT_LINE = re.compile(r"[ \t]*\[(?:\d{4}-\d{2}-\d{2}[ T])?\d{1,2}:\d{2}(?::\d{2})?(?: ?[AaPp][Mm])?\][ \t]+"
                       rf"(?:<([\w.@-]{{1,40}})>|(?!{LABEL})([\w.@-]{{1,40}}):)[ \t]+(?=\S)")
DAY_RULE = re.compile(r"[ \t]*[-=]{3,}[^\n]*[-=]{3,}[ \t]*$")  # an export's "----- Wednesday, March 13 -----"
CHAT_NOTICE = re.compile(r"[ \t]*\[[^\]\n]{4,25}\][ \t]+(?:\*\*\*|-->|<--|--)[ \t]")
CHAT = 3  # message headers, each with a line of message under it: the fewest for a text to be a chat
CHAT_SHARE = 0.1  # and the least share of its lines they are
# a chat's emoji shortcode, a word of its own: ":rotating_light:", ":+1:" (not "std::vector::push_back")
EMOJI = re.compile(r"(?<!\S):(?=[\w+-]*[a-z])[a-z0-9_+-]{2,40}:(?!\S)")
# a screenplay: a scene heading ("INT. GARDA STATION - DAY"), a character's cue indented above what they say, further
# than its dialogue ("                    NORA (CONT'D)"), an actor's direction under it ("(unimpressed)")
SCENE = re.compile(r"[ \t]*(?:INT|EXT|INT\.?/EXT|I/E)\.[ \t]+\S.*$")
CUE = re.compile(r"([ \t]{8,})(?!(?:CHAPTER|ARTICLE|SECTION|PART|BOOK|ACT|SCENE|TITLE)\b|[IVXLC]+\.?[ \t]*$)"
                 r"([A-Z][A-Z0-9 .'’-]{0,30}?)(?:[ \t]*\((?:CONT'D|CONT’D|CONT|V\.O\.|O\.S\.|O\.C\.)\))?[ \t]*$")
# a name's parts that take a capital: each word, each side of a hyphen, and after an O' or a D' ("O'BRIEN")
NAME_PART = re.compile(r"\b[od]['’](?=\w{2})|(?<!\w)[^\W\d_][^\s'’-]*(?:['’][^\s'’-]*)?")
DIRECTION = re.compile(r"[ \t]*\([^()]*\)[ \t]*$")
CUES = 3  # the fewest cues a screenplay has (and a scene heading)
# a speaker's name on a line of its own, above what they say, perhaps with their role after a dash: an earnings
# call's "Karen Mitchell -- Chief Executive Officer", "Operator"
# a call transcript's section, not a speaker: "Company Participants", "Question-and-Answer Session"
CALL_SECTION = re.compile(r"(?:(?:company|corporate|conference call|call|other) )?participants|presentation|"
                          r"question[- ]and[- ]answer(?: session)?|questions and answers|q ?& ?a(?: session)?|"
                          r"prepared remarks|management discussion|forward[- ]looking statements|disclaimer",
                          re.IGNORECASE)
SPEAKER_LINE = re.compile(r"[ \t]*(Operator|[A-Z][\w.'’-]+(?: [A-Z][\w.'’-]*){1,3})"
                          r"((?:[ \t]+(?:--|—|–)[ \t]+[^\n]{1,80})?)[ \t]*$")
HEADING_WORD = re.compile(r"(?i:chapter|part|book|section|act|scene|volume|appendix|step|phase|day|week|lesson|unit|"
                          r"module|episode|round|stage|level|chapitre)\b")  # "Chapter One — The Storm": a heading
HEADED = 4  # the fewest such lines for a text to be read as its speakers' turns (two speakers at least)
SECTION_LABEL = re.compile(r"[ \t]*[A-Z][\w&' -]{0,40}:[ \t]*$")  # "Prepared Remarks:", "Questions & Answers:"
REACTIONS = re.compile(r"[ \t]*(?::[\w+-]+:[ \t]*\d+[ \t]*)+$")  # a message's emoji reactions: ":dart: 3  :100: 1"
CUE_TIME = re.compile(r"\s*((?:\d{1,2}:)?\d{1,2}:\d{2})[.,]\d{3}\s+-->\s+(?:\d{1,2}:)?\d{1,2}:\d{2}[.,]\d{3}")
VOICE = re.compile(r"<v(?:\.[\w-]+)*\s+([^>]+)>")
CHANGE = re.compile(r"\s*>>+\s*")  # a broadcast caption's change of speaker (">> Welcome back", ">> ANNA: Yes")
TAG = re.compile(r"</?[a-z][^>]*>|\{\\[^}]*\}")  # caption styling: <i>, </v>, <c.yellow>, {\an8}
# a transcriber's note of a sound in the middle of what is said: "[laughs] Every farmer has that neighbor"
SOUND = re.compile(r"[\[(](?:laughs?|laughing|laughter|chuckles?|chuckling|giggles|applause|crosstalk|coughs?|"
                   r"sighs?|music|music playing|cheers|cheering|groans|overlapping|background noise)[\])]",
                   re.IGNORECASE)


BARE_WORDS = 12  # a bare heading's most words
# a heading's label: "Item 7. Management's Discussion and Analysis of Financial Condition and Results of Operations"
# (a 10-K's), "Article IV. ...", or a numbered label and a dash: an audio guide's "STOP 101 — Hendrick Vroom, "The
# Return of the Second Expedition to the East Indies," 1599 (Gallery 14)": such a heading in title case may be longer
LABELLED = re.compile(r"(?:(?:Item|Part|PART|Section|Article|ARTICLE|Chapter|CHAPTER)\s+(?:\d{1,3}[A-Z]?|[IVXLC]+)\."
                      r"(?:\s|$)|[A-Z][A-Za-z]{1,11}\s+\d{1,4}[A-Z]?(?:\s+[—–-]\s|\s*[—–]\s*(?=\S)))")
LABELLED_WORDS = 24
BARE_SHARE = 0.6  # and most characters, a share of the text's longest line
ENDED = re.compile(r"[.!?;:,…][\"'”’)\]]*$")  # a line ending as a sentence or a clause does
OPENS = re.compile(r"[A-Z0-9]")  # how a heading, and the line after it, begin: a capital or a section's number


def _title_case(line: str) -> bool:
    """Whether most of ``line``'s words of four letters or more begin with a capital (a title's)."""
    long = [word for word in line.split() if len(word) >= 4]
    return 2 * sum(1 for word in long if word[0].isupper()) > len(long)


SUBJECT = re.compile(r"(?:re|fwd?|aw):\s.*\?", re.IGNORECASE)  # a reply's subject that asks: "Re: Is it dead?" (not
# "Re: the travel line, I think we should cut it.")


def bare_heading(line: str, before: str, after: str, width: int, heading_before: bool = False) -> bool:
    """Whether ``line`` of plain text heads what follows ("1 Introduction", "Results and discussion", a title) and
    is no part of a sentence: at most ``BARE_WORDS`` words, beginning with a capital or a number and not ending as
    a sentence or clause does (but a reply's subject that asks, ``SUBJECT``); after a blank line, a sentence's end
    or another heading (``heading_before``); and before a blank line or a line that begins as a sentence; and well
    short of the text's longest line (``width``) with room there for the next line's first word: a line of a
    hard-wrapped paragraph is not."""
    line, before, after = line.strip(), before.strip(), after.strip()
    most = LABELLED_WORDS if LABELLED.match(line) and _title_case(line) else BARE_WORDS
    if not line or len(line.split()) > most or not OPENS.match(line) \
            or (ENDED.search(line) and not SUBJECT.fullmatch(line)):
        return False
    if before and not heading_before and not ENDS.search(before):
        return False
    if len(line) > BARE_SHARE * width:
        return False
    return not after or (OPENS.match(after.lstrip("\"“'‘(")) is not None
                         and len(line) + 1 + len(after.split()[0]) < width)


def fenced(fence: str | None, line: str) -> tuple[str | None, bool]:
    """(the code fence open after ``line``, whether ``line`` is code or a fence's line), given the fence open
    before it (its marks, ``"```"``, ``"~~~~"``; None outside a fenced code block). As CommonMark closes one: a line
    of the same mark, at least as many, and nothing else (```` ```bash ```` inside ```` ```` ```` is code)."""
    if fence is not None:
        closing = CLOSING.match(line)
        done = closing is not None and closing.group(1)[0] == fence[0] and len(closing.group(1)) >= len(fence)
        return (None if done else fence), True
    opening = FENCE.match(line)
    return (opening.group(1), True) if opening else (None, False)


def _lines(text: str) -> Iterator[tuple[int, int, str]]:
    """(start, end without the line break, line) of each line."""
    start = 0
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        yield start, start + len(body), body
        start += len(line)


def _numbered_heading(text: str, start: int, end: int) -> bool:
    """Whether the numbered line at ``start:end`` is a heading ("1. Executive Summary"), not a list's item: it stands
    alone, and what follows it is a paragraph, not the next item (a loose contents list, an agenda)."""
    if not re.match(r"\s*\d{1,2}[.)]\s", text[start:end]) or not _alone(text, start, end):
        return False
    following = re.match(r"\s*([^\n]*)", text[end:end + 400])
    return not ITEM.match(following.group(1)) and len(following.group(1).split()) >= NUMBERED_WORDS


NUMBERED_WORDS = 5  # the fewest words of the paragraph under a numbered heading


def _alone(text: str, start: int, end: int) -> bool:
    """Whether the line at ``start:end`` of ``text`` stands between blank lines (or the text's ends)."""
    before = text[max(0, start - 80):start]  # (a line's own indent and the line break before it, at most)
    return (start < 80 and not before.strip() or BLANK_BEFORE.search(before) is not None) \
        and BLANK_AFTER.match(text, end) is not None


BLANK_LINE = re.compile(r"[ \t]*\r?\n[ \t]*\r?\n")  # a line's end and a blank line after it
BLANK_BEFORE = re.compile(r"\n[ \t]*\r?\n[ \t]*\Z")
BLANK_AFTER = re.compile(r"[ \t]*(?:\r?\n[ \t]*\r?\n|\s*\Z)")


def is_transcript(text: str) -> bool:
    """Whether most of ``text``'s lines are turns (``Speaker: words``): a meeting or interview transcript; or it is
    a chat export (``is_chat``)."""
    filled = [line for _, _, line in _lines(text) if line.strip()]
    labelled = [(found.group(2).strip().casefold(), line[found.end():]) for found, line in
                ((TURN.match(line), line) for line in filled) if found]
    turns = [label for label, _ in labelled]
    fields = sum(1 for _, value in labelled if not _ends_prose(value.strip()))  # "Credits: 3", "Office: Hall 412"
    return len(filled) >= 4 and len(turns) >= TRANSCRIPT * len(filled) and (
        len(turns) < FIELDS or len(set(turns)) < len(turns) or FIELD_SHARE * len(turns) > fields) or \
        is_chat(text) or is_screenplay(text) or is_headed(text)


FIELDS = 6  # this many labelled lines, no label twice, are a form's fields (a syllabus's "Instructor:", "Credits:",
# "Late work:"), not turns: in talk someone speaks twice (a short exchange's four speakers may speak once each) ...
FIELD_SHARE = 1 / 3  # ... unless fewer than this share of them end no sentence (a panel's six speakers, once each)


@lru_cache(maxsize=8)
def is_screenplay(text: str) -> bool:
    """Whether ``text`` is a screenplay: a scene heading (``SCENE``) and at least ``CUES`` characters' cues
    (``_cue``) (a novel's centred "CHAPTER I" over "THE ARRIVAL" is none)."""
    lines = [line for _, _, line in _lines(text)]
    return any(SCENE.match(line) for line in lines) and \
        sum(1 for k in range(len(lines) - 1) if _cue(lines[k], lines[k + 1])) >= CUES


def _cue(line: str, after: str) -> str | None:
    """The name a screenplay's cue ``line`` gives (``CUE``), as a name ("NORA" is "Nora"), where the line after it
    is its dialogue, indented less than the cue and more than the action; else None."""
    cue = CUE.match(line)
    indent = len(after) - len(after.lstrip())
    return _as_name(cue.group(2).strip()) if cue and after.strip() and 0 < indent < len(cue.group(1)) else None


@lru_cache(maxsize=8)
def _speaker_lines(text: str) -> dict[int, tuple[str, bool]]:
    """The indices of ``text``'s lines (``_lines``) that name a speaker above what they say (``SPEAKER_LINE``,
    alone between a blank line and words, right under it or after one blank line): the name (without the role) and
    whether a role follows it."""
    lines = list(_lines(text))
    found = {}
    for k, (_, _, line) in enumerate(lines):
        named = SPEAKER_LINE.match(line)
        if named and not HEADING_WORD.match(named.group(1)) and not CALL_SECTION.fullmatch(named.group(1).strip()) \
                and (k == 0 or not lines[k - 1][2].strip()) and not (
                k + 1 < len(lines) and SETEXT.match(lines[k + 1][2])) and (
                k + 1 < len(lines) and lines[k + 1][2].strip()
                or k + 2 < len(lines) and not lines[k + 1][2].strip() and lines[k + 2][2].strip()):
            found[k] = named.group(1), bool(named.group(2))
    return found


@lru_cache(maxsize=8)
def is_headed(text: str) -> bool:
    """Whether ``text`` is talk under its speakers' names, each on a line of its own (``SPEAKER_LINE``: an earnings
    call's transcript): ``HEADED`` such lines or more, two speakers or more, and an "Operator" or a role after the name
    on half of them at least, and someone who speaks twice (a report's "Key Points", a novel's "Chapter One — The
    Storm" are headings; a résumé's "Senior Data Engineer -- Northwind Analytics, Leeds", each once, its jobs)."""
    found = _speaker_lines(text)
    counts = Counter(name for name, _ in found.values())
    roles = sum(1 for _, role in found.values() if role)
    return len(found) >= HEADED and len(counts) >= 2 and (
        "Operator" in counts or 2 * roles >= len(found) and max(counts.values()) >= 2)


def _headed_lines(text: str) -> Iterator[tuple[int, int, str | None, None]]:
    """``_spoken_lines`` of talk under its speakers' names (``is_headed``): each line by the name above it; not
    what comes before the first name (a title, the participants) nor a section's label ("Questions & Answers:")."""
    lines = list(_lines(text))
    names = _speaker_lines(text)
    speaker = None
    for k, (start, _, line) in enumerate(lines[min(names, default=0):], min(names, default=0)):
        if k in names:
            speaker = names[k][0]
        elif line.strip() and not SECTION_LABEL.match(line) and not CALL_SECTION.fullmatch(line.strip()):
            yield start + len(line) - len(line.lstrip()), start + len(line.rstrip()), speaker, None


@lru_cache(maxsize=8)
def is_chat(text: str) -> bool:
    """Whether ``text`` is a chat export: messages under headers that name who wrote them and when
    (``CHAT_HEADER``), at least ``CHAT`` of them with a line of message right under them (an agenda's "9:00
    Welcome" lines follow one another), and ``CHAT_SHARE`` of its lines; or messages a line each after their times
    (``_chat_lined``)."""
    filled = [line for _, _, line in _lines(text) if line.strip()]
    headers = [CHAT_HEADER.match(line) is not None for line in filled]
    answered = sum(1 for k, header in enumerate(headers[:-1]) if header and not headers[k + 1])
    return answered >= CHAT and answered >= CHAT_SHARE * len(filled) or _chat_lined(filled)


def _chat_lined(filled: list[str]) -> bool:
    """Whether most of the ``filled`` lines are a chat's messages each on a line after its time (``CHAT_LINE``), by
    two people or more who each write twice or more, some of them by a handle a transcript's turn does not take
    ("alice", "<dmitri.v>"; "[00:00:15] Maria: ..." is a recording's time and a speaker's name: ``TURN``)."""
    found = [(line, message) for line in filled if (message := CHAT_LINE.match(line))]
    said = Counter(message.group(1) or message.group(2) for _, message in found)
    return sum(said.values()) >= max(CHAT, TRANSCRIPT * len(filled)) and sum(n >= 2 for n in said.values()) >= 2 \
        and any(not TURN.match(line) for line, _ in found)


@dataclass(frozen=True)
class Turn:
    """One speaker's consecutive words: ``pieces`` (start, end) in the text, labels and timings left out, each
    with the time it was said when the file gives one (a cue's start, a time before the speaker's name)."""

    pieces: tuple[tuple[int, int], ...]
    speaker: str | None
    times: tuple[str | None, ...]
    apart: bool = False  # each piece ends its sentences (a chat message's lines), not one run of words

    @property
    def start(self) -> int:
        return self.pieces[0][0]

    @property
    def end(self) -> int:
        return self.pieces[-1][1]

    def time(self, offset: int) -> str | None:
        """When the words at ``offset`` were said: the time of the piece they are in (or, between pieces, on a label
        or a cue's number and timing, of the piece after), else of the last timed piece before it."""
        at = next((i for i, (_, end) in enumerate(self.pieces) if end > offset), len(self.pieces) - 1)
        return next((time for time in reversed(self.times[:at + 1]) if time), None)


def is_captions(text: str) -> bool:
    """Whether ``text`` is a WebVTT or SubRip file (cues with ``-->`` timings)."""
    head = text[:4096].lstrip("\ufeff \t\r\n")[:300]  # a slice first: not a copy of a whole book
    if head.startswith("WEBVTT"):
        return True
    first = [line for line in head.splitlines() if line.strip()][:2]
    if first and CUE_TIME.match(first[0]):  # a cue without a header or a number
        return True
    return len(first) == 2 and first[0].strip().isdigit() and CUE_TIME.match(first[1]) is not None


# what a caption file holds that is not said: its header line, each cue's number and timing line, tags
UNSAID = re.compile(r"\A\ufeff?\s*WEBVTT[^\n]*(?:\r?\n[^\S\n]*\S[^\n]*)*"  # (and its header's lines: "Kind: captions")
                    r"|^[ \t]*\d+[ \t]*\r?$(?=\n[ \t]*(?:\d{1,2}:)?\d{1,2}:\d{2}[.,]\d)"
                    r"|^[ \t]*(?:\d{1,2}:)?\d{1,2}:\d{2}[.,]\d{3}[ \t]+-->[^\n]*|</?[a-z][^>\n]*>|\{\\[^}\n]*\}",
                    re.MULTILINE)  # (a cue's number: a number alone above a timing)


@lru_cache(maxsize=4)
def said_only(text: str) -> str:
    """``text`` as an encoder reads it: a caption file with what is not said (``UNSAID``) blanked with spaces (the
    same length, so every offset into it stays: a lecture's timings had tripled its tokens); any other as it is."""
    return UNSAID.sub(lambda found: " " * len(found.group()), text) if is_captions(text) else text


def _hms(time: str) -> str:
    """``12:31`` or ``0:12:31`` as ``00:12:31``."""
    parts = [int(p) for p in time.split(":")]
    parts = [0] * (3 - len(parts)) + parts
    return f"{parts[0]:02d}:{parts[1]:02d}:{parts[2]:02d}"


def _cues(text: str) -> Iterator[tuple[int, int, str | None, str]]:
    """(start, end, speaker, time) of each caption cue's words (one line of a cue at a time)."""
    time: str | None = None
    speaker: str | None = None
    for start, end, line in _lines(text):
        timing = CUE_TIME.match(line)
        if timing:
            time, speaker = _hms(timing.group(1)), None
            continue
        if time is None or not line.strip():  # the header, a NOTE or STYLE block; the blank line ending a cue
            time = None if not line.strip() else time
            continue
        change = CHANGE.match(line)
        voice = VOICE.match(line.strip())
        label = TURN.match(line, change.end() if change else 0)
        skip = change.end() if change else len(line) - len(line.lstrip())
        if change:
            speaker = None  # someone else speaks, unnamed unless a label follows
        if voice:
            speaker, skip = voice.group(1).strip(), skip + voice.end()
        elif label:
            speaker, skip = label.group(2).strip(), label.end()
        body = TAG.sub(lambda m: " " * len(m.group()), line[skip:])  # same length: offsets stay
        if body.strip():
            a = skip + len(body) - len(body.lstrip())
            said = "" if change and speaker is None else speaker  # "": a new turn, its speaker unnamed (``turns``)
            yield start + a, start + len(body.rstrip()) + skip, said, time


def _spoken_lines(text: str) -> Iterator[tuple[int, int, str | None, str | None]]:
    """(start, end, speaker, time) of each turn line's words in a transcript (a line that is not a turn goes on
    the turn before it; not the lines of a title page before the first turn); in a chat export (``is_chat``), of
    each line of a message, by the header above it, without its code blocks and emoji reactions."""
    if is_chat(text):
        yield from _chat_lines(text)
        return
    if is_screenplay(text):
        yield from _screenplay_lines(text)
        return
    if is_headed(text):
        yield from _headed_lines(text)
        return
    lines = list(_lines(text))
    found = [TURN.match(line) for _, _, line in lines]  # each line's speaker's label, where it has one
    labels = Counter(label.group(2).strip() for label in found if label)
    first = next((k for k, label in enumerate(found) if label and not _field(lines[k][2], label, labels)), 0)
    # (none: no title page; a header's "TRANSCRIPT: GUBERNATORIAL DEBATE" is no one's turn, unless it speaks again)
    title = {k for k in range(first) if found[k] or TRANSCRIBED.search(lines[k][2])}  # its fields, a note on it
    # and, before the first turn, the paragraphs that end no sentence: a title, a date, a heading
    paragraph: list[int] = []
    for k in range(first + 1):
        if k < first and lines[k][2].strip():
            paragraph.append(k)
            continue
        body = " ".join(lines[j][2].strip() for j in paragraph if j not in title)  # (without a line that is a
        # note on the transcript: "Official transcript. Prepared by Carver Reporting Services." under its title)
        if paragraph and (not _ends_prose(body) or body[:1] + body[-1:] == "[]") and \
                len(body.split()) <= TITLE_PAGE_WORDS:  # (and an editor's "[Transcript prepared from the feed.]")
            title.update(paragraph)
        paragraph = []
    directed = _directions(lines, found)
    speaker, resumed = None, False  # the last speaker named, and whether the line after a direction is theirs
    for k, ((start, end, line), label) in enumerate(zip(lines, found)):
        if not line.strip() or k in title or PLAY_PART.fullmatch(line.strip()):
            continue
        end = start + len(line.rstrip())
        if label:  # a direction right after the label ("AGNES: (rising) Then ...") is no one's words
            aside = OPENING_ASIDE.match(text, start + label.end(), end)
            speaker, resumed = label.group(2).strip(), False
            yield (aside.end() if aside else start + label.end()), end, speaker, label.group(1) or label.group(3)
        elif k in directed:  # a stage direction ("(The lights go out. DANIEL bursts in.)"), a speech's
            # "(Applause.)": no one's; the words after it go on the speaker's turn before it
            yield start + len(line) - len(line.lstrip()), end, "" if k - 1 not in directed else None, None
            resumed = True
        else:
            yield start + len(line) - len(line.lstrip()), end, speaker if resumed else None, None
            resumed = False


def _field(line: str, label: re.Match, labels: Counter) -> bool:
    """Whether a line with a speaker's ``label`` is a field of a transcript's header, not a turn: its label speaks
    once, and is a header's (``HEADER_LABEL``), or names no one ("THE SOIL CAST — Episode 142: ...", ``TITLED``), or
    the line is fields apart ("Host: Dana Whitfield | Guest: Marcus Oyelaran"; not a turn's "We have three choices |
    Option one: ...")."""
    name = label.group(2).strip()
    pieces = re.split(r"\s[|•·]\s", line)
    role = ROLE_FIELD.fullmatch(name) is not None and not re.search(r"[.!?][\"'”’)]*\s*$", line)
    return labels[name] == 1 and (HEADER_LABEL.fullmatch(name) is not None or role or TITLED.search(name) is not None
                                  or len(pieces) > 1 and all(FIELD_PIECE.match(piece) for piece in pieces))


TITLED = re.compile(r" [—–-] ")  # a label that is a title: "THE SOIL CAST — Episode 142" (not "Speaker 1")
FIELD_PIECE = re.compile(r"\s*[^\W\d_][\w ]{0,30}:\s*\S[^:]{0,60}(?<![.!?])$")  # "Guest: Marcus Oyelaran, farmer"


# a line before a transcript's first turn that is a note on the transcript: "Transcript generated automatically."
# (or a call centre's "This call was recorded for training and quality purposes.")
TRANSCRIBED = re.compile(r"\btranscri(?:pt|bed|ption)\b|\b(?:call|conversation)s? (?:is|are|was|were|may be|will be|"
                         r"might be) (?:being )?(?:recorded|monitored) for\b", re.IGNORECASE)
# a transcript's header's labels: "TRANSCRIPT: MAYORAL DEBATE, ...", "Date: 14 October", "Location: Rosewood Hall",
HEADER_LABEL = re.compile(r"(?i:transcript(?:ion)?|participants|present|attendees|in attendance|date|location|venue|"
                          r"time|place|subject|topic|event|recorded|source|title)")  # (not a "Host:", who speaks)
# and a call's "Agent: Thomas Reilly (ID 4471)", "Customer: Mrs. Gwen Ashdown, account 7730-2281-09" (who speak by
# name), where what follows ends no sentence (not a caller's one question: "Caller: Hi, my tomato leaves curl up?")
ROLE_FIELD = re.compile(r"(?i:agent|customer|caller|account(?: number)?|(?:case|ticket|call) (?:number|id|reference)|"
                        r"reference|duration|queue|channel)")
# a play's parts, each on a line of its own: "SCENE TWO", "ACT I", "END OF PLAY", "CURTAIN" (no one's words)
PLAY_PART = re.compile(r"(?:(?:ACT|SCENE)\s+(?:[IVX]+|\d+|[A-Z]+)\.?|END OF (?:PLAY|SCENE|ACT)|CURTAIN|BLACKOUT|"
                       r"INTERVAL|INTERMISSION)\.?")
OPENING_ASIDE = re.compile(r"\([^()\n]{1,80}\)[ \t]+(?=\S)")  # "(rising, taking her coat from the hook) Then ..."


def _directions(lines: list[tuple[int, int, str]], labels: list[re.Match | None]) -> set[int]:
    """The indices of ``lines`` in a stage direction: a paragraph of its own, of lines without a speaker's label
    (``labels``: each line's ``TURN`` match), that opens with "(" and closes with ")" (or in square brackets); not
    lines going on a turn's."""
    found: set[int] = set()
    run: list[int] = []
    going = False  # whether the lines go on a turn's, with no blank line between (no direction of their own)
    for k, (_, _, line) in enumerate([*lines, (0, 0, "")]):
        if line.strip() and not (k < len(labels) and labels[k]):
            run.append(k)
            continue
        if going:
            run = []
        going = bool(line.strip())  # a turn's line: the lines right after it are its
        ends = (lines[run[0]][2].lstrip()[:1], lines[run[-1]][2].rstrip()[-1:]) if run else ("", "")
        if ends in (("(", ")"), ("[", "]")):  # (or a transcriber's "[Transcript prepared from the feed.]")
            found.update(run)
        run = []
    return found


def _chat_lines(text: str) -> Iterator[tuple[int, int, str | None, None]]:
    """``_spoken_lines`` of a chat export: a header's time is the clock's, not a time into a recording, and is
    not kept; in one written a message a line (``CHAT_LINE``), a line that is no message is a title's or a notice's
    before the first, one that goes on a message after it."""
    lined = _chat_lined([line for _, _, line in _lines(text) if line.strip()])
    speaker, fence = None, None
    for start, _, line in _lines(text):
        fence, code = fenced(fence, line)
        header = None if code else CHAT_HEADER.match(line)
        message = None if code or not lined else CHAT_LINE.match(line)
        if header and not lined:
            speaker = header.group(1).strip()
        elif message:
            speaker = message.group(1) or message.group(2)
            yield start + message.end(), start + len(line.rstrip()), speaker, None
        elif lined and (speaker is None or CHAT_NOTICE.match(line) or DAY_RULE.match(line)):
            continue
        elif line.strip() and not code and not REACTIONS.match(line):
            yield start + len(line) - len(line.lstrip()), start + len(line.rstrip()), speaker, None


def _screenplay_lines(text: str) -> Iterator[tuple[int, int, str | None, None]]:
    """``_spoken_lines`` of a screenplay: its dialogue by the cue above it (the name as a name: "NORA" is "Nora"),
    each paragraph of action a turn of no one's; not its title page (before its first scene), scene headings or
    directions."""
    lines = list(_lines(text))
    first = next((k for k, (_, _, line) in enumerate(lines) if SCENE.match(line)), 0)
    speaker: str | None = None  # the cue's, while its dialogue goes on
    after_blank = True
    for k, (start, _, line) in enumerate(lines[first:], first):
        cue = _cue(line, lines[k + 1][2]) if k + 1 < len(lines) else None
        if not line.strip() or SCENE.match(line):
            speaker, after_blank = None, True
        elif cue:
            speaker = cue
        elif not DIRECTION.match(line):
            yield (start + len(line) - len(line.lstrip()), start + len(line.rstrip()),
                   speaker if speaker else ("" if after_blank else None), None)
            after_blank = False


def reading(text: str, transcript: bool | None = None) -> str:
    """How ``text`` is read: ``captions`` (a WebVTT or SubRip file, by its format), ``transcript`` or ``prose``;
    ``transcript``: the reader's say (``--transcript``/``--no-transcript``), None: detected (``is_transcript``)."""
    if is_captions(text):
        return "captions"
    return "transcript" if (is_transcript(text) if transcript is None else transcript) else "prose"


@lru_cache(maxsize=8)
def turns(text: str, transcript: bool | None = None) -> tuple[Turn, ...]:
    """The turns of a transcript or caption file (``reading``), in order; none for any other text. A piece
    without a speaker goes on the turn before it; consecutive pieces of one speaker are one turn."""
    how = reading(text, transcript)
    if how == "captions":
        pieces = list(_cues(text))
    elif how == "transcript":
        pieces = list(_spoken_lines(text))
    else:
        return ()
    found: list[tuple[str | None, list, list]] = []  # (speaker, pieces, times) of each turn
    for start, end, speaker, time in pieces:
        if not found or speaker == "" or (speaker is not None and speaker != found[-1][0]):
            found.append((speaker or None, [], []))
        found[-1][1].append((start, end))
        found[-1][2].append(time and _hms(time))
    apart = how == "transcript" and is_chat(text)
    named = {speaker for speaker, _, _ in found if speaker}
    if named and all(name.isupper() for name in named):  # every name in capitals ("JAMIE:", "MAYOR DELGADO:"): a
        found = [(speaker and _as_name(speaker), spans, times) for speaker, spans, times in found]  # habit
    return tuple(Turn(tuple(spans), speaker, tuple(times), apart) for speaker, spans, times in found)


def _as_name(capitals: str) -> str:
    """A name written in capitals as a name: "MAYOR DELGADO" "Mayor Delgado", "JAMIE'S DAD" "Jamie's Dad",
    "O'BRIEN" "O'Brien", "MARY-JANE" "Mary-Jane", "2ND OFFICER" "2nd Officer" (a screenplay's cues and a transcript's
    speakers alike)."""
    return NAME_PART.sub(lambda part: part.group()[:1].upper() + part.group()[1:], capitals.lower())


def speakers(text: str, offsets: list[int], transcript: bool | None = None) -> list[Turn | None]:
    """The turn of ``text`` (``turns``) each of ``offsets`` is in, or the one after (a span may begin on its
    speaker's label); None for each where ``text`` has no turns."""
    found = turns(text, transcript)
    if not found:
        return [None] * len(offsets)
    ends = _turn_ends(text, transcript)
    return [found[min(bisect.bisect_right(ends, offset), len(found) - 1)] for offset in offsets]


@lru_cache(maxsize=8)
def _turn_ends(text: str, transcript: bool | None) -> list[int]:
    """Where each of ``turns(text, transcript)`` ends: kept, as ``Document.place`` asks one offset at a time."""
    return [turn.end for turn in turns(text, transcript)]


def blocks(text: str, transcript: bool | None = None) -> list[tuple[int, int]]:
    """(start, end) of each block of prose (see the module docstring), in order; in spoken text, its turns
    (``transcript``: as ``turns`` takes it)."""
    spoken = turns(text, transcript)
    if spoken:
        return [(turn.start, turn.end) for turn in spoken]
    return list(_structure(text)[0])


def headings(text: str, transcript: bool | None = None) -> list[int]:
    """Where each heading of ``text`` begins, in order: a ``#`` line, a line underlined with ``===`` / ``---``, a
    bare heading line of plain text (``bare_heading``), a FAQ's "Q: ...?" and an opinion's "JUSTICE X, dissenting."
    (``OPINION_PART``); not a line of code. Spoken text has none."""
    return [] if turns(text, transcript) else list(_structure(text)[1])


NUMBERED = r"(?:\(?[\dIVX]+(?:\.\d+)*[.)]?\s+)?"  # a heading's section number: "2 ", "7.1 ", "IV. ", "(57) "
# a heading over the author's own summary of the document: a paper's abstract, a report's executive summary, a live
# blog's "What we know so far"
OWN_SUMMARY = re.compile(NUMBERED + r"(?:abstract|summary|executive summary|"
                         r"management summary|tl;? ?dr|synopsis|overview|in (?:brief|short)|at a glance|"
                         r"(?:the )?short version|in a nutshell|"
                         r"key (?:points|findings|takeaways|facts)|what we know(?: so far)?|the latest|"
                         r"latest (?:updates|developments))[.:]?",  # (a live blog's, at its top)
                         re.IGNORECASE)


# a patent's summary of its invention: "SUMMARY OF THE INVENTION", "BRIEF SUMMARY OF THE DISCLOSURE"
INVENTION = re.compile(r"^[ \t]*(?:#{1,2}[ \t]+)?(?:\d+\.?[ \t]+)?(?:brief )?summary of the (?:invention|disclosure)"
                       r"[ \t]*$", re.IGNORECASE | re.MULTILINE)
# the summary of the whole is near the start, after a title, its authors, a contents list: a heading line in the
# first OWN_SHARE of the text (of a short one, its first OWN_CHARS characters); a "Summary" further in, or under a
# "###" heading, sums up a part (an RFC's "### Overview" of its design: boosted, R-1 on the nine RFCs with such a
# heading fell from 35.7 to 32.8)
OWN_SHARE, OWN_CHARS = 0.2, 3000
OWN_LINE = 40  # characters: a longer line is no such heading


INID = re.compile(r"\(\d{2}\)\s")  # a patent's field code before its name: "(57) Abstract", "(54) Title"
# a news story's dateline: "BAKERSFIELD, Calif., March 4, 2025 /PRNewswire/ --", "LONDON (Reuters) -", "PARIS, Jan. 3
# (AP) —": where and when it was filed, not what happened (``readable`` leaves it out)
# (a place in capitals and a date, a news agency or a wire, then a dash; not "HTTP - Hypertext ...", "UPDATE - ...")
DATELINE = (r"(?!(?:NOTE|UPDATE|EDIT|WARNING|IMPORTANT|CAUTION)\b)[A-Z][A-Z.'’-]+(?: [A-Z][A-Z.'’-]+)*"
            r"(?:(?:, [A-Z][\w.]*\.?(?: [A-Z][\w.]*)*)*,? [A-Z][a-z]{2,8}\.? \d{1,2}(?:, \d{4})?"
            r"(?: \([A-Z][\w. ]{1,30}\))?(?: /[^/\n]{2,40}/)?|(?: \([A-Z][\w. ]{1,30}\))(?: /[^/\n]{2,40}/)?|"
            r" /[^/\n]{2,40}/)(?:\*\*|__)? ?(?:--|[-–—])(?=\s+[A-Z\"“])")
# a paragraph that opens with the author's summary of the whole: "TL;DR: ...", "In brief: ...", or a news story's
# dateline (its lead paragraph says what happened: who, what, where, when)
OWN_LABEL = r"tl;? ?dr|summary|in (?:brief|short)|bottom line"  # a run-in label over the author's own summary
RUN_IN_OWN = re.compile(rf"(?:\*\*|__)?(?:(?i:{OWN_LABEL})(?:\*\*|__)?\s*:"
                        rf"(?:\*\*|__)?[ \t]+\S|{DATELINE})")
OWN_OPENING = 3  # paragraphs of prose: such a paragraph is among the document's first
# a paragraph whose first sentence says what the document's subject is: "Lise Meitner (1878–1968) was an Austrian
# physicist ...", "The Great Molasses Flood, also known as the Boston Molasses Disaster, was a disaster ...",
# "Amoxicillin is an antibiotic.": an encyclopedia's lead, a leaflet's or a product's first words
DEFINES = re.compile(r"(?:[Tt]he |[Aa]n? )?(?P<subject>[^.!?\n,;:()\s]+(?: [^.!?\n,;:()\s]+){0,5}?)"
                     r"(?: \([^()\n]{1,120}\))?(?:, (?:also |sometimes |often )?(?:known|called|referred to) as "
                     r"[^.!?\n,;]{1,80},)?,? (?:is|was|are|were) (?:an?|the|one of)\b")
# the subject is a name: each word with a capital ('Elise "Lise" Meitner', "Amoxicillin"), not a pronoun's or a
# determiner's ("It was a cold morning", "This is a ...")
NAMED = re.compile(r"(?!(?:It|This|That|These|Those|There|Here|He|She|We|They|I|You|One|Each|Every|Some|Many|Most|"
                   r"All|Our|My|His|Her|Their|Its|Your|Such|Another|Other)\b)"
                   r"[\"'“‘]?[A-Z][^ ]*(?: [\"'“‘]?[A-Z][^ ]*)*")
DEFINES_PARAGRAPHS = 2  # the definition is in the first paragraphs of prose
CITED = re.compile(r"(?:\[[^\]\n]{1,20}\])+$")  # a wiki's citation markers after a paragraph's last sentence
TITLE_WORD = re.compile(r"[^\W\d_]{4,}")  # a word of the title the subject must hold: a name, not "the", "of", "2"


def own_summary(text: str, transcript: bool | None = None) -> tuple[int, int] | None:
    """Where ``text``'s author summed it up, near its start (its first ``OWN_SHARE``, or ``OWN_CHARS``): under a
    line holding only a summary's heading (``OWN_SUMMARY``: Abstract, Summary, TL;DR, Executive summary, Overview; a
    ``#`` or ``##`` heading, or a plain line, even right after a list, or numbered on a line of its own over a
    paragraph, ``_numbered_heading``), to the next heading after it; else a
    patent's summary of its invention anywhere (``INVENTION``); else a
    paragraph among its first ``OWN_OPENING`` of prose opening with one as a label ("TL;DR: ...") or with a news
    story's dateline (``RUN_IN_OWN``); else the paragraph among the first ``DEFINES_PARAGRAPHS`` of prose, before
    any section, whose first sentence says what the subject named in the title is (``DEFINES``, ``NAMED``; without a
    title, any name). None without any of these, or in spoken text."""
    if turns(text, transcript):
        return None
    near = text[:max(int(OWN_SHARE * len(text)), OWN_CHARS)]
    for start, end, line in _lines(near):
        if len(line) > OWN_LINE or QUOTE.match(line) \
                or ITEM.match(line) and not INID.match(line) and not _numbered_heading(text, start, end):
            continue  # a contents list's "* [Summary][summary]"; not a patent's "(57) Abstract", nor a report's
            # "1. Executive Summary" on a line of its own
        if (_level(text, start) or 0) <= 2 and OWN_SUMMARY.fullmatch(heading_words(line)):
            after = [a for a in headings(text, transcript) if a > end]
            return start, after[0] if after else len(text)
    invention = INVENTION.search(text)  # a patent's, wherever it is (after its background)
    if invention:
        after = [a for a in headings(text, transcript) if a > invention.end()]
        return invention.start(), after[0] if after else len(text)
    prose = list(islice((found for found in PARAGRAPH.finditer(near) if _ends_prose(found.group().strip())
                         and not ATX.match(found.group()) and not ITEM.match(found.group())
                         and not QUOTE.match(found.group())), OWN_OPENING))
    for found in prose:
        if RUN_IN_OWN.match(found.group().lstrip()):
            return found.start(), found.end()
    named = title_span(text, transcript)
    title = set(TITLE_WORD.findall(readable(text[named[0]:named[1]]).lower())) if named else None
    sections = [a for a in headings(text, transcript) if not named or a > named[1]]
    lead = [found for found in prose if not sections or found.start() < sections[0]]  # before the first section
    for found in lead[:DEFINES_PARAGRAPHS]:
        defined = DEFINES.match(readable(found.group()))
        subject = defined.group("subject") if defined else ""
        if NAMED.fullmatch(subject) and (title is None or title & set(TITLE_WORD.findall(subject.lower()))):
            return found.start(), found.end()  # without a title (a web page's is not in its text): a name will do
    return None


def separate_opinions(text: str, transcript: bool | None = None) -> list[tuple[int, int]]:
    """Where a court's opinion holds a judge's own opinion besides the Court's: from a heading "JUSTICE THOMAS, with
    whom JUSTICE ALITO joins, dissenting." or "..., concurring." (``OPINION_PART``) to the next such heading or the
    end. What the Court held is what its summary says; a dissent's "The Court today holds ..." is no holding."""
    if "dissenting" not in text and "concurring" not in text:  # no judge's own opinion: no heading's words to read
        return []
    starts = headings(text, transcript)
    parts = [(a, line) for a, line in zip(starts, heading_texts(text, starts)) if OPINION_PART.match(line)]
    ends = [a for a, _ in parts[1:]] + [len(text)]
    return [(a, b) for (a, line), b in zip(parts, ends) if "delivered the opinion" not in line]


# a section in which the author draws the document's threads together: what a report found and recommends, what a
# paper concludes, what a review's verdict is (a reader's summary says it: a GAO report's had been its introduction),
# what an inspection says a school should do to improve
CONCLUDING = re.compile(NUMBERED + r"(?:conclusions?|concluding (?:remarks|thoughts)|summary and conclusions?|"
                        r"(?:conclusions?|findings) and recommendations?|"
                        r"in conclusion|(?:key |main |summary of |our )?findings|what (?:we|gao) found|"
                        r"recommendations?(?: for (?:executive )?action)?|what (?:we|gao) recommends?|"
                        r"lessons learned|(?:key )?takeaways|(?:final|closing) thoughts|(?:the )?verdict|"
                        r"(?:the )?bottom line|what (?:does )?(?:the|this) \w+(?: \w+)? (?:needs? to|should) do to "
                        r"improve\??|areas? for (?:improvement|development))[.:]?", re.IGNORECASE)


# a section of what a document does not do, in a list of what it does: a PRD's non-goals (shown alone, a non-goal
# reads as a goal)
NOT_DONE = re.compile(NUMBERED + r"(?:non-?goals?|anti-?goals?|out of scope|not in scope|out-of-scope|what (?:this|"
                      r"it) is not|not (?:planned|included|covered)|(?:what )?we (?:will not|won['’]t) do)[.:]?",
                      re.IGNORECASE)


def concluding(text: str, transcript: bool | None = None) -> list[tuple[int, int]]:
    """Where ``text`` draws its threads together: each section under a heading ``CONCLUDING`` names (Conclusions,
    Findings, Recommendations, Lessons learned, Verdict). None in spoken text."""
    return sections_named(text, CONCLUDING, transcript)


def sections_named(text: str, named: re.Pattern, transcript: bool | None = None) -> list[tuple[int, int]]:
    """Each section of ``text`` under a heading ``named`` matches whole, to the next heading not under it ("## 4.
    Findings" holds "### 4.1 ...") or a rule (an article's information after its conclusions: "---", then
    "**Corresponding Author:** ..."). None in spoken text."""
    starts = headings(text, transcript)
    lines = heading_texts(text, starts)
    depths = [_depth(text, a, line) for a, line in zip(starts, lines)]
    found = []
    for k, (a, line) in enumerate(zip(starts, lines)):
        if named.fullmatch(line):
            b = next((starts[j] for j in range(k + 1, len(starts)) if depths[k] is None or depths[j] is None
                      or depths[j] <= depths[k]), len(text))
            found.append((a, next((a + start for start, _, row in _lines(text[a:b]) if RULE.match(row)), b)))
    return found


def _depth(text: str, start: int, line: str) -> int | None:
    """How deep the heading at ``start`` (its words: ``line``) is: its ``#`` marks, else the parts of its section's
    number ("4.1 Access" 2), None without either."""
    level = _level(text, start)
    number = re.match(r"\(?[\dIVX]+((?:\.\d+)*)[.)]?\s", line)
    return level if level is not None else (number.group(1).count(".") + 1 if number else None)


# sections that are no part of what a document says: its references, thanks and pointers elsewhere
BACK_MATTER = re.compile(NUMBERED + r"(?:references(?: cited(?: in this (?:section|chapter|paper|report|review))?)?|"
                         r"bibliography|works cited|"
                         r"literature cited|citations|acknowledge?ments?|further reading|external links|see also|"
                         r"footnotes|endnotes|exercises|review questions|questions for discussion|key terms|"
                         r"check your understanding)[.:]?",  # (a textbook's glossary and quiz; not its learning
                         re.IGNORECASE)  # objectives: what it teaches, as a syllabus's outcomes are its point)


# and, in a document's second half, a press release's boilerplate: who the company is, the lawyers' caveat, whom to
# call (not "About This Guide" or "About Python" near the start, nor a book's chapter "About Time")
CLOSING_MATTER = re.compile(NUMBERED + r"(?:about (?:the authors?|us|the company|(?-i:[A-Z][\w&'’.-]*(?: [A-Z]"
                            r"[\w&'’.-]*){0,4}))|forward-looking statements?|safe harbou?r statement|(?:media|press|"
                            r"investor) contacts?|contacts?|notes? to editors|disclaimer)[.:]?", re.IGNORECASE)


# a paragraph of legal boilerplate, wherever it stands: an e-mail's confidentiality notice, a disclaimer
BOILERPLATE = re.compile(r"[ \t>]*(?:\*\*|__)?(?:(?:confidentiality|privacy) (?:notice|note|statement)|"
                         r"disclaimer)(?:\*\*|__)?\s*:|[ \t>]*this (?:e-?mail|message|communication)(?: and any "
                         r"(?:attachments?|files)[^.]{0,40}?)? (?:is|are|may|contains?)\b[^.]{0,60}?\b(?:confidential|"
                         r"privileged)|[ \t>]*notice\s*:\s*this opinion is subject to formal revision|"
                         # a news story's correction: "This article was amended on 2 February 2024. An earlier ..."
                         r"[ \t>]*(?:\*\*|__|\*|_)?(?:correction\s*:|this (?:article|story|piece|report|post) (?:was|"
                         r"has been) (?:amended|corrected|updated to correct)\b|an earlier version of this (?:article|"
                         r"story|piece|report|post)\b|"
                         # a statement's declaration of truth, a letter's reservation of rights, an e-mail's "view it
                         # in your browser", a newspaper's note under its letters
                         r"[ \t>]*(?:\*\*|__)?statement of truth\b|[ \t>]*this (?:witness )?statement\b[^.]{0,80}?\bis "
                         r"true to the best of (?:my|our) knowledge|[ \t>]*I believe that the facts stated in this "
                         r"(?:witness )?statement are true|[ \t>]*I\b[^.]{0,80}?\b(?:certify|declare|affirm)\b"
                         r"[^.]{0,40}?\b(?:under penalty of perjury|that the (?:above|foregoing|information|facts|"
                         r"contents)\b[^.]{0,60}?\b(?:is|are) true)|"
                         r"[ \t>]*nothing in this (?:letter|e-?mail|notice|communication)\b[^.]{0,30}?\b(?:waives?|"
                         r"constitutes? a waiver)\b|[ \t>]*(?:having trouble (?:reading|viewing) this "
                         r"(?:e-?mail|message|newsletter)|(?:view|read|open) this (?:e-?mail|message|newsletter) "
                         r"(?:online|in (?:your|a) (?:web )?browser))|"
                         r"[ \t>]*letters (?:may|will) be (?:edited|shortened)\b|"
                         r"[ \t>]*considered and decided by\b)",  # (and a court's panel: "Considered and decided by
                         # Reyes, Presiding Judge; ...")
                         re.IGNORECASE)


# a course's schedule, a line a week or a session: "Week 2 (Jan 21): Africa and Europe before 1450." (its topics'
# titles, which a summary of the course sums up, not lists)
SCHEDULE = re.compile(r"[ \t]*(?:[-*+•][ \t]+)?(?:\*\*|__)?(?:Week|Session|Lecture|Class|Module|Unit|Seminar)[ \t]+"
                      r"\d{1,2}[ \t]+\((?:[A-Z][a-z]{2,8}\.?[ \t]+\d{1,2}|\d{1,2}[/.]\d{1,2})[^)\n]{0,30}\)"
                      r"(?:\*\*|__)?:", re.IGNORECASE)  # (its dates in brackets: not a pregnancy guide's "Week 13:
# Your baby's ...")
SCHEDULE_ROWS = 3  # this many in a row


def _schedule(text: str) -> list[tuple[int, int]]:
    """Where a schedule's runs of ``SCHEDULE`` lines are (``SCHEDULE_ROWS`` or more in a row, blank lines between
    them or not)."""
    found, run = [], []
    for start, end, line in _lines(text):
        if SCHEDULE.match(line):
            run.append((start, end))
        elif line.strip():
            found += [(run[0][0], run[-1][1])] if len(run) >= SCHEDULE_ROWS else []
            run = []
    return found + ([(run[0][0], run[-1][1])] if len(run) >= SCHEDULE_ROWS else [])


COMMENTS = re.compile(r"(?m)^[ \t]*(?:\*\*|__|#{1,6}[ \t]+)[\d,]+ comments?(?:\*\*|__)?[ \t]*$", re.IGNORECASE)
# (set apart, in bold or as a heading: not a survey's "48 responses" over its results)
RULED = re.compile(r"[ \t]*(?:[-_*=][ \t]*){3,}\n")  # a rule on the line above a paragraph: "---" over a note


def back_matter(text: str, transcript: bool | None = None) -> list[tuple[int, int]]:
    """Where ``text``'s back matter is (``BACK_MATTER``: References, Bibliography, Acknowledgements, External
    links; in its second half, ``CLOSING_MATTER``: About <Company>, Media contacts), each section from its heading
    to the next heading of its level or above (``## References`` holds its ``### Papers``; a plain heading line has
    no level: to the next heading, but a plain "Footnotes" or "Endnotes" to the end, ``NOTES``); and each paragraph
    of boilerplate (``BOILERPLATE``: "CONFIDENTIALITY NOTICE: This email ...", a slip opinion's notice, a story's
    correction)."""
    found = [(m.start(), m.end()) for m in PARAGRAPH.finditer(text)
             if BOILERPLATE.match(m.group(), ruled.end() if (ruled := RULED.match(m.group())) else 0)]
    found += [(m.start(), m.end()) for m in REFERENCE.finditer(text) if len(m.group().split()) <= REFERENCE_WORDS]
    found += [(m.start(), m.end()) for m in BOOK_ENTRY.finditer(text)]
    found += _schedule(text)
    count = COMMENTS.search(text, len(text) // 2)  # a post's "**12 comments**" line in its second half: its
    found += [(count.start(), len(text))] if count else []  # readers' comments follow, to its end
    starts = headings(text, transcript)
    levels = [_level(text, a) for a in starts]
    for k, (a, words) in enumerate(zip(starts, heading_texts(text, starts))):
        words = words.strip()
        if BACK_MATTER.fullmatch(words) or (2 * a > len(text) and CLOSING_MATTER.fullmatch(words)):
            after = [b for b, level in zip(starts[k + 1:], levels[k + 1:]) if levels[k] is None or level is None
                     or level <= levels[k]]
            if levels[k] is None and NOTES.fullmatch(words):
                after = []  # a text's notes at its end: a note's "1 Engineers' report, 2024" is no heading
            found.append((a, after[0] if after else len(text)))
    return sorted(found)


NOTES = re.compile(r"(?:foot|end)notes[.:]?", re.IGNORECASE)  # (a PDF's, moved to its end: ``pdf.FOOTNOTES``)


# a reference list's entry wherever it stands (a syllabus's textbook): "- Morling, B. (2021). *Research Methods ...*
# (4th ed.). W. W. Norton." (its pieces, split at "B." and "(2021).", had been picked without the author)
REFERENCE = re.compile(r"^[ \t]*(?:[-*+][ \t]+|\[?\d{1,3}[.\]][ \t]+)?(?:[A-Z][\w'’-]+,[ \t](?:[A-Z]\.[ \t-]?){1,3}"
                       r"(?:,[ \t]|,?[ \t]?&[ \t]|[ \t]and[ \t])?)+(?:et[ \t]al\.,?[ \t])?\(\d{4}[a-z]?\)\.[^\n]*",
                       re.MULTILINE)  # (and "Judy, J. D., Williams, M., et al. (2019).")
REFERENCE_WORDS = 40  # an entry longer than this goes on with prose (an annotated bibliography's)
# a reading list's item: its authors, a title in italics or quotation marks, its publisher and year in brackets
# ("- John K. Thornton, *A Cultural History of the Atlantic World* (Cambridge University Press, 2012).")
BOOK_ENTRY = re.compile(r"^[ \t]*(?:[-*+•][ \t]+|\d{1,3}[.)][ \t]+)[A-Z][\w.'’-]*(?:[ \t]+[A-Z][\w.'’-]*){0,3}"
                        r"(?:,?[ \t]+(?:and|&)[ \t]+[A-Z][\w.'’-]*(?:[ \t]+[A-Z][\w.'’-]*){0,3})?,[ \t]+"
                        r"(?:(?:\*[^*\n]+\*|_[^_\n]+_|[\"“][^\"”\n]+[\"”])[^\n]{0,80}?\((?:[^()\n]{2,80},[ \t]*)?"
                        r"|[A-Z][^\n()]{2,150}\([^()\n]{0,60}\b(?:Press|Books|Publish\w*|Penguin|Vintage|Verso|"
                        r"Routledge|Wiley|Norton|Knopf|Macmillan|HarperCollins|Random House|Springer|Elsevier|"
                        r"Bloomsbury|Faber|Picador)\b[^()\n]{0,40},[ \t]*)"  # (a title not marked: a publisher named)
                        r"(?:1[5-9]|20)\d\d\)\.?[ \t]*$", re.MULTILINE)
TITLE_PAGE_WORDS = 40  # a paragraph longer than this is prose, whatever it ends with
PROSE_END = re.compile(r"[.!?:…][\"'”’)\]*_]*$")  # a paragraph that ends so ends a sentence
PARAGRAPH = re.compile(r"[^\n]*\S[^\n]*(?:\n[^\n]*\S[^\n]*)*")  # lines between blank lines


def _ends_prose(paragraph: str) -> bool:
    """Whether ``paragraph`` (stripped) ends as a sentence does (``PROSE_END``), a wiki's citation markers after it
    (``CITED``: "... of nuclear fission.[1]") or not."""
    return PROSE_END.search(CITED.sub("", paragraph)) is not None


def back_chapter(title: str | None, closing: bool = False) -> bool:
    """Whether a chapter so titled is back matter (``BACK_MATTER``; a book's "Genesis — References" by its own
    name); ``closing``: a chapter near the end, where "About the Author", "Also by ..." are too (``ALSO``)."""
    name = (title or "").rpartition(SEPARATOR)[2].strip()
    return bool(name) and (BACK_MATTER.fullmatch(name) is not None or closing and ALSO.fullmatch(name) is not None)


# a book's last pages (not a chapter called "About Time" or "More from Less")
ALSO = re.compile(r"about the (?:authors?|illustrators?)|(?:also|other (?:books|titles)|more (?:books|titles)) "
                  r"(?:by|from) .{1,60}", re.IGNORECASE)


def asides(text: str, transcript: bool | None = None) -> list[tuple[int, int]]:
    """Where a paragraph of prose wholly in brackets is: a note on the text, not what it says ("[After the service
    there will be a lunch in the fellowship hall.]" under a eulogy); none in spoken text (a play's directions are
    ``_directions``)."""
    if turns(text, transcript) or "[" not in text and "(" not in text:
        return []
    return [(m.start(), m.end()) for m in PARAGRAPH.finditer(text) if BRACKETED.fullmatch(m.group().strip())]


BRACKETED = re.compile(r"\[[^\[\]]*\]|\([^()]*\)")  # a paragraph in brackets


def title_page(text: str, transcript: bool | None = None) -> list[tuple[int, int]]:
    """Where the paragraphs before ``text``'s first paragraph of prose are (one that ends a sentence, or is long):
    its title page (a title, an author's, a court's or a council's name, a place, a date, who was present), as
    ``back_matter`` gives spans; none when it opens with prose, is a transcript or holds no prose at all."""
    if turns(text, transcript):
        return []
    for found in PARAGRAPH.finditer(text):
        body = found.group().strip()
        if _ends_prose(body) or len(body.split()) > TITLE_PAGE_WORDS:
            return [(0, found.start())] if found.start() else []
    return []


def _level(text: str, start: int) -> int | None:
    """The level of the ``#`` heading at ``start`` (its marks), None for another heading."""
    marks = ATX_MARKS.match(text, start)
    return text[start:marks.end()].count("#") if marks else None


def heading_texts(text: str, starts: list[int]) -> list[str]:
    """The words of the headings beginning at ``starts`` (``headings``), as ``heading_words`` reads each line."""
    found = []
    for start in starts:
        end = text.find("\n", start)
        found.append(heading_words(text[start:end if end >= 0 else len(text)]))
    return found


def heading_words(line: str) -> str:
    """A heading line's words as a reader sees them: without its ``#`` marks (an ATX heading's closing ones too)
    or markup (code marks, emphasis, link syntax)."""
    marks = ATX_MARKS.match(line)
    words = line[marks.end():] if marks else line
    return readable(re.sub(r"(?:^|\s)#+\s*$", "", words), unlink=False)


# a plain text's paragraphs may be indented, as a bill's, a contract's or a letter's are ("    (a) Establishment.--The
# Secretary shall ..."): Markdown's rule (an indented block is code) holds in a text with Markdown's or
# reStructuredText's headings (``#``, an underline) or fences; in another, an indented paragraph is code only where it
# does not read as prose (``_prose_paragraph``), or follows a reStructuredText "Example::" or opens a quoted e-mail
PROSE_TOKEN = re.compile(r"[(\[\"'“‘]*(?:[A-Za-z][a-z'’-]*|\d[\d,.]*%?|\$[\d,.]+|§+)[.,;:!?)\]\"'”’-]*")
PROSE_TOKENS = 0.8  # the least share of its words that are words (not identifiers, operators, paths)
PROSE_LINE_WORDS = 5  # and the fewest words of its lines on average
# what prose does not hold: an operator or a bracket of code, a call ("area(radius)"; not "employee(s)", "2(a)"), a
# command's flag ("-m", "--prefix"), a prompt, a comment's mark, a docstring's quotes, a definition or an import
CODE_SIGN = re.compile(r"[{}<>=]|->|::|\(\)|\"\"\"|\'\'\'|[A-Za-z_]\w*\((?!(?:e?s|[a-z]|[ivx]+|\d+|[A-Z])\))|"
                       r"(?:^|\s)--?[a-z]|^\s*(?:[$#>%]|//|--)\s|^\s*(?:(?:def|class|fn|func|function)\s+\w+\s*[(:<{]|"
                       r"(?:import|from)\s+[\w.]+(?:\s+import\s+[\w.*, ]+)?\s*$)")
# (a keyword only as code writes it: a wrapped paragraph's line may begin "for each of ...", "return the deposit")
# a quoted e-mail's header ("On Tue, 4 Jun 2024, Dana Whitfield wrote:", Outlook's "-----Original Message-----")
REPLY = re.compile(r"\bOn\s.{4,100}?\swrote:|-{3,}\s*Original Message\s*-{3,}", re.IGNORECASE)


def quoted_replies(text: str) -> list[tuple[int, int]]:
    """Where an e-mail quotes the message it answers: the quoted lines ("> ...") under its "On Fri, ... Gareth
    wrote:", to the first line that is not quoted, and all below an "-----Original Message-----": someone else's
    words (a reply's summary had shown its sender's boss's line as hers)."""
    found = []
    for match in REPLY.finditer(text):
        if "original message" in match.group().lower():
            found.append((match.start(), len(text)))
            continue
        end = at = match.end()
        for line in text[match.end():].splitlines(keepends=True):
            if line.strip() and not line.lstrip().startswith(">"):
                break
            at += len(line)
            end = at - len(line) + len(line.rstrip("\r\n")) if line.strip() else end
        if end > match.end():
            found.append((match.start(), end))
    return found


def _prose_paragraph(lines: list[str], goes_on: bool) -> bool:
    """Whether an indented paragraph's ``lines`` read as prose: it opens as a sentence or a clause does, its words
    are words (``PROSE_TOKEN``) in lines of some length, none of them holds a sign of code (``CODE_SIGN``) or opens a
    quoted e-mail (``REPLY``), and it ends a sentence or a clause or ``goes_on`` in the line after it, not indented
    (a letter's paragraph indents its first line)."""
    filled = [line.strip() for line in lines if line.strip()]
    tokens = [token for line in filled for token in line.split()]
    return bool(filled) and re.match(r"[A-Z\"“‘'(\[]|\d{1,3}[.)]\s", filled[0]) is not None \
        and len(tokens) >= PROSE_LINE_WORDS * len(filled) \
        and sum(PROSE_TOKEN.fullmatch(token) is not None for token in tokens) >= PROSE_TOKENS * len(tokens) \
        and not any(CODE_SIGN.search(line) or REPLY.search(line) for line in filled) \
        and (goes_on or re.search(r"[.!?;:][\"'”’)]*$|\.--", filled[-1]) is not None)


def _indented_prose(lines: list[tuple[int, int, str]]) -> frozenset[int]:
    """The indices of ``lines`` in indented paragraphs of prose (``_prose_paragraph``) of a text without
    Markdown's or reStructuredText's headings or fences (there, such a paragraph is code); not one after a line
    ending "::" (reStructuredText's literal block)."""
    if any(ATX.match(line) or FENCE.match(line) or (k and SETEXT.match(line) and lines[k - 1][2].strip())
           for k, (_, _, line) in enumerate(lines)):
        return frozenset()
    found: set[int] = set()
    before = ""  # the last line of words before the paragraph
    k = 0
    while k < len(lines):
        if not _indented(lines[k][2]):
            before = lines[k][2] if lines[k][2].strip() else before
            k += 1
            continue
        end = k
        while end < len(lines) and _indented(lines[end][2]):
            end += 1
        goes_on = end < len(lines) and lines[end][2].strip() != ""
        if not before.rstrip().endswith("::") and _prose_paragraph([line for _, _, line in lines[k:end]], goes_on):
            found.update(range(k, end))
        before = lines[end - 1][2]
        k = end
    return frozenset(found)


def _indented(line: str) -> bool:
    """Whether ``line`` holds words indented as a code block's are (four spaces or a tab)."""
    return bool(line.strip()) and (len(line) - len(line.lstrip(" ")) >= 4 or line.startswith("\t"))


@lru_cache(maxsize=4)
def _structure(text: str) -> tuple[tuple[tuple[int, int], ...], tuple[int, ...]]:
    """(the prose blocks, where the headings begin) of a text read as prose."""
    lines = list(_lines(text))
    found: list[tuple[int, int]] = []
    heads: list[int] = []
    current: list[int] = []  # start and end of the block being read

    def close() -> None:
        if current:
            found.append((current[0], current[1]))
            current.clear()

    fence: str | None = None
    blank_before, in_item, code, heading = True, False, False, False
    width = max((len(line) for _, _, line in lines), default=0)
    table = _table_rows(lines)
    fields = _field_rows(lines)
    prose = _indented_prose(lines)
    for i, (start, end, line) in enumerate(lines):
        stripped = line.strip()
        was_heading, heading = heading, False
        opened = fence is None
        fence, fenced_line = fenced(fence, line)
        if fenced_line:  # a fenced code block's line, or its fence's
            if opened:
                close()
            blank_before = False
            continue
        if not stripped or QUOTE.match(line) and not QUOTE_MARKS.sub("", line).strip():  # blank, or a bare ">"
            close()
            blank_before = True
            continue
        heading_next = (not current and len(stripped) <= 80 and i + 1 < len(lines)
                        and SETEXT.match(lines[i + 1][2]) is not None)  # a heading underlined on the next line
        indented = _indented(line) and i not in prose
        in_code = indented and (code or blank_before and not in_item)  # an indented code block's line
        # a heading by its label: a FAQ's question, an opinion's part ("JUSTICE THOMAS, ..., dissenting.")
        labelled = not in_code and (ASKED.match(line) or OPINION_PART.match(line)) is not None
        if (heading_next or SETEXT.match(line) or ATX.match(line) or RULE.match(line) or TABLE.match(line)
                or not in_code and (i in table or i in fields or MATH.match(line)) or DEFINITION.match(line)
                or HTML.match(line) or DIRECTIVE.match(line) or ALERT.match(line) or BADGES.match(line) or labelled):
            close()
            if heading_next or ATX.match(line) or labelled:
                heads.append(start)
            blank_before = False
            continue
        following = next((later[2] for later in lines[i + 1:i + 3] if later[2].strip()), "")
        after_list = in_item and blank_before and not indented and (SUBSECTION.match(line) is not None  # a numbered
                                                                    or BACK_MATTER.fullmatch(stripped) is not None
                                                                    and ITEM.match(following) is not None)
        if (not in_item or after_list) and bare_heading(line, lines[i - 1][2] if i else "",  # heading after a list
                                                        lines[i + 1][2] if i + 1 < len(lines) else "", width,
                                                        was_heading):
            close()
            heads.append(start)
            blank_before, heading = False, True
            continue
        code = in_code  # an indented code block, until a line is not
        if code:
            blank_before = False
            continue
        # a list item, or a quote's first line (its next lines of words go on with it: "> Note: the prefix would
        # be\n> accepted."; not a quoted list's item, nor what follows a bare ">" between quoted paragraphs)
        item = ITEM.match(line) or QUOTE.match(line) and not (current and i and _quoted_words(lines[i - 1][2])
                                                            and _quoted_words(line))
        if item:
            close()
            in_item = bool(item) or (in_item and indented)
        elif blank_before and not indented:
            in_item = False
        if not current:
            current.extend([start + len(line) - len(line.lstrip()), end])
        else:
            current[1] = end
        blank_before = False
    close()
    return tuple((a, b) for a, b in found if text[a:b].strip()), tuple(heads)


SUBSECTION = re.compile(r"\s{0,3}\d{1,2}(?:\.\d{1,2})+\.?\s+[A-Z]")  # a subsection's number: "7.2 Filling a dewar"
# (or back matter's over its own list: a textbook's "Exercises" over "1. Calculate ..." after its summary's list)


def _quoted_words(line: str) -> bool:
    """Whether a quoted ``line`` holds words that go on a sentence: not empty, not a list item."""
    rest = QUOTE_MARKS.sub("", line)
    return bool(rest.strip()) and not ITEM.match(rest)


def _field_rows(lines: list[tuple[int, int, str]]) -> set[int]:
    """The indices of the ``lines`` that are fields of a record (``FIELD``) or a log's entries (``LOGGED``), two or
    more in a row: a document's metadata (an RFC's "Feature Name", "Start Date", an e-mail's "From", "Subject"), a
    match's events minute by minute, not sentences to summarise."""
    field = [len(line) < 200 and (FIELD.match(line) or LOGGED.match(line)) is not None for _, _, line in lines]
    return {i for i in range(len(lines))
            if field[i] and ((i and field[i - 1]) or (i + 1 < len(lines) and field[i + 1]))}


def _table_rows(lines: list[tuple[int, int, str]]) -> set[int]:
    """The indices of the ``lines`` that are rows of a table whose rows need not begin with a pipe: a delimiter row
    (``DELIMITER``), the header row above it and the rows with a pipe after it; two lines or more in a row with
    two pipes each, outside inline code; and PDF text's rows, cells apart by tabs: a tab after the first cell, on
    two lines or more in a row or twice on the line (not a list item's "1.<tab>", nor one tab in prose)."""
    rows: set[int] = set()
    piped = [len(line) < 2000 and INLINE_CODE.sub("", line).count("|") >= 2 for _, _, line in lines]
    tabbed = [_tabs(line) for _, _, line in lines]
    reach = 0  # the rows after a delimiter are read once: a text of delimiters stays linear
    for i, (_, _, line) in enumerate(lines):
        near = (i and piped[i - 1]) or (i + 1 < len(lines) and piped[i + 1])
        if piped[i] and near or tabbed[i] > 1 or tabbed[i] and (
                (i and tabbed[i - 1]) or (i + 1 < len(lines) and tabbed[i + 1])):
            rows.add(i)
        if "|" in line and len(line) < 2000 and DELIMITER.match(line):
            rows.add(i)
            if i and "|" in lines[i - 1][2]:
                rows.add(i - 1)
            j = max(i + 1, reach)
            while j < len(lines) and "|" in lines[j][2] and lines[j][2].strip():
                rows.add(j)
                j += 1
            reach = j
    return rows


def _tabs(line: str) -> int:
    """The tabs between the cells of ``line`` (none before its first cell; a list item's marker is no cell)."""
    body = line.strip()
    if not body or ITEM.match(line):
        return 0
    return len(re.findall(r"\S\t+", body)) + (1 if line.rstrip(" ").endswith("\t") and "\t" not in body else 0)


def prose_sentences(text: str, transcript: bool | None = None) -> list[tuple[int, int]]:
    """The spans of the sentences of ``text``'s prose blocks, in order (in spoken text, of its turns: a sentence
    may go on over a line or cue, and spans the label or timing between)."""
    from lsgtool.documents.sentences import sentence_spans

    spoken = turns(text, transcript)
    if not spoken:
        return _with_items(text, [span for a, b in blocks(text, False) for span in sentence_spans(text, a, b)])
    found = []
    for turn in spoken:  # split the turn's words joined by spaces, then map back to the text
        if turn.apart:
            found += [span for a, b in turn.pieces for span in sentence_spans(text, a, b)]
            continue
        joined, at = [], []  # at: (offset in the joined text, offset in the text) where each piece begins
        offset = 0
        for a, b in turn.pieces:
            if SOUND.fullmatch(text[a:b].strip()):  # a cue that is only "(Laughter)": no sentence begins there (the
                continue  # next one's source and time had been that cue's)
            at.append((offset, a))
            joined.append(text[a:b])
            offset += b - a + 1
        starts = [o for o, _ in at]

        def back(position: int, end: bool = False) -> int:  # a sentence's end maps back to its own piece
            i = bisect.bisect_right(starts, position - (1 if end else 0)) - 1
            return at[i][1] + position - at[i][0]

        found += [(back(a), back(b, end=True)) for a, b in sentence_spans(" ".join(joined))]
    return found


LEAD_ITEMS = 6  # a list of at most this many items, each a sentence, is one sentence with the line leading into it
LEAD_WORDS = 80  # of at most this many words, without the items' marks
MARK_WORD = re.compile(MARK)
ITEM_ENDS = re.compile(r"(?:[.;,!?]|[;,] (?:and|or))[\"”’)]*$")  # how such an item ends (a list of words is none)


def _with_items(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` with a sentence that leads into a list on a colon joined to the list's items, where there are two
    to ``LEAD_ITEMS`` of them, each one sentence on its own line (its mark, its words) ending as a clause does, the
    last as a sentence does, and the whole within ``LEAD_WORDS``: a leaflet's "Stop taking Dorvalin and go to ...
    if you notice any of the following serious side effects:" over three items had been neither (it ends on a
    colon; they go on from it), and is now one sentence: what it says, with what it says it of."""
    out: list[tuple[int, int]] = []
    k = 0
    while k < len(spans):
        a, b = spans[k]
        items = []
        if text[a:b].rstrip().endswith(":"):
            j = k + 1
            while j < len(spans) and len(items) <= LEAD_ITEMS and _item_alone(text, spans, j, spans[j - 1][1]):
                items.append(spans[j])
                j += 1
        words = sum(not MARK_WORD.fullmatch(w) for w in text[a:items[-1][1]].split()) if items else 0
        if 2 <= len(items) <= LEAD_ITEMS and words <= LEAD_WORDS and ENDS.search(text[a:items[-1][1]].rstrip()) \
                and all(ITEM_ENDS.search(text[x:y].rstrip()) for x, y in items) \
                and not (k + 1 + len(items) < len(spans) and _item_alone(text, spans, k + 1 + len(items),
                                                                          items[-1][1], any_line=True)):
            out.append((a, items[-1][1]))
            k += 1 + len(items)
        else:
            out.append((a, b))
            k += 1
    return out


def _item_alone(text: str, spans: list[tuple[int, int]], j: int, end: int, any_line: bool = False) -> bool:
    """Whether sentence ``j`` is a list item's whole text: it begins a line with an item's mark, right after
    ``end`` (only line breaks between), and the next sentence begins another item or paragraph (``any_line``:
    whether it begins a line with an item's mark at all, wherever the sentence before ends)."""
    a, b = spans[j]
    line = text.rfind("\n", 0, a) + 1
    if text[line:a].strip() or not ITEM.match(text, a) or QUOTE.match(text, a):
        return False
    if any_line:
        return True
    if text[end:a].strip() or text[end:a].count("\n") > 2:
        return False
    if j + 1 >= len(spans):
        return True
    after = text[b:spans[j + 1][0]]  # the next sentence is the next item's, or after a blank line (not the item's
    return "\n" in after and (ITEM.match(text, spans[j + 1][0]) is not None or after.count("\n") > 1)  # own line)


# a verse's label at the start of its line: "Ge1:13 ", "1Co13:4 " (``bible -f``), "1:13 " (Project Gutenberg's KJV)
VERSE = re.compile(r"^[ \t]*(?:[1-3]?[A-Z][a-z]{1,4})?(\d{1,3}):(\d{1,3})[ \t]+(?=\S)")
VERSE_LINES = 3  # the fewest labelled lines of a text numbered by verses
VERSE_RUN = 0.8  # and the least share of its labels that number the verse after the label before (or a chapter's 1)


@lru_cache(maxsize=4)
def verse_numbered(text: str) -> bool:
    """Whether ``text`` is numbered by verses (a Bible, as ``bible -f`` or Project Gutenberg write it): lines that
    begin with a ``chapter:verse`` label, each mostly the verse after the one before or a chapter's first. A
    schedule's times ("10:30 Coffee") do not count up by one, and are kept."""
    labels = [(int(m[1]), int(m[2])) for m in map(VERSE.match, text.splitlines()) if m]
    if len(labels) < VERSE_LINES:
        return False
    counted = sum(b == (a[0], a[1] + 1) or (b[0] != a[0] and b[1] == 1) for a, b in zip(labels, labels[1:]))
    return counted >= VERSE_RUN * (len(labels) - 1)


CODE_SPAN = re.compile(r"(`+)(.+?)\1")
KEPT = re.compile("\ue000(\\d+)\ue001")  # where a code span's text waits while the markup after it is removed
# inline TeX math as pandoc reads it: "$" before a non-space, "$" after one and before no digit ("$5 and $6" is
# money)
TEX_MATH = re.compile(r"\$(?=\S)([^$\n]+?)(?<=\S)\$(?!\d)")


def _tex_text(tex: str) -> str:
    """TeX math as text a reader reads: "T_{1/2} = \\frac{\\ln 2}{|k|}" -> "T_1/2 = ln 2/|k|" (pylatexenc)."""
    try:
        return " ".join(_tex_reader().latex_to_text(f"${tex}$").split()) or tex  # as math: "\ln 2" keeps its space
    except Exception:  # pylatexenc reads malformed TeX leniently; anything it cannot read is shown as written
        return tex


@lru_cache(maxsize=1)
def _tex_reader():
    from pylatexenc.latex2text import LatexNodes2Text

    return LatexNodes2Text(math_mode="text")


RUN_IN_LABELS = ("question|findings|meaning|importance|key points|objectives?|design|setting|participants|"
                 "results?|conclusions?|background|methods?|answer|summary|verdict|pros|cons|bottom line|takeaways?")
# a run-in heading's words: "Async runtime", "Year 1 (2025–26)" (not a name's title, "Dr.", "Mrs.", "St.")
RUN_IN_WORDS = (r"(?!(?:Dr|Mr|Mrs|Ms|Mx|Prof|St|Sr|Jr|Rev|Hon|Gen|Col|Capt|Lt|No|Fig|Vol)\.)"
                r"[A-Z][\w'’()/–-]*(?: [\w'’()/–-]+){0,3}")
INLINE = [
    # a PDF's footnote mark against a sentence's end: "... heavy metals.1" (``documents.sentences.NOTE_MARK``)
    (re.compile(r"(?<=[a-z][.!?])\d{1,2}$"), ""),
    # a wiki's citation markers against a word: "lake[4] with", "pressure.[14][15]", "[citation needed]"
    (re.compile(r"(?<=[\w.,;:!?\"”)])(?:\[(?:\d{1,3}|citation needed|clarification needed|when\?|who\?|"
                r"according to whom\?)\])+"), ""),
    # pandoc's attributes and citations: "{#fig:arch width=80%}", "{.unnumbered}", "[@vaswani2017; @lsg]", "[-@sec:x]"
    (re.compile(r"\s?\{(?:[#.][\w:.-]+|[\w-]+=\S+?)(?:\s+(?:[#.][\w:.-]+|[\w-]+=\S+?))*\}"), ""),
    (re.compile(r"\s?\[(?:[^\[\]@]*\s)?-?@[\w:.-]+(?:[;,][^\[\]]*)?\]"), ""),
    (re.compile(r"!\[([^\]]*)\]\([^)]*\)"), ""),  # an image
    (re.compile(r"\[([^\]]+)\]\((?:[^()]|\([^)]*\))*\)"), r"\1"),  # [text](url)
    # [text][ref] (not against a word: a rate law's "k[I-][S2O8]", an array's "grid[i][j]")
    (re.compile(r"(?<![A-Za-z0-9\])])\[([^\]]+)\]\[[^\]]*\]"), r"\1"),
    (re.compile(r"\[\^[^\]]+\]"), ""),  # a footnote marker [^1]
    # a reStructuredText link `text`_ or `text <url>`_
    (re.compile(r"(?<!`)`(?=[^\s`])([^`\n]+?)(?:\s*<[^<>`\n]*>)?`_{1,2}(?!\w)"), r"\1"),
    (re.compile(r":[\w:+-]+:`([^`]+)`"), r"\1"),  # reStructuredText role :func:`name`
    (re.compile(r"<(https?://[^>\s]+)>"), r"\1"),
    (CODE_SPAN, None),  # inline code, ``literal``: its text kept as written (``readable``)
    (TEX_MATH, lambda match: _tex_text(match.group(1))),  # "$\ln 2 \approx 0.693$" -> "ln 2 ≈ 0.693"
    # a run-in heading in bold before a sentence, of a few words: "**Async runtime.** Tasks can ..." -> "Async
    # runtime: Tasks can ..." (not a sentence in bold, "**It is hard to read.** ..."; a web page's or a Word
    # document's is read so, ``webpage.text_of``); a known label without its colon, "**Question** Does ..." ->
    # "Question: Does ..." (not a bold name, "**Harbor Council** Chair Ruth Alder said ...")
    (re.compile(rf"^(\*\*|__)({RUN_IN_WORDS})[.:]\1(?=[ \t]+\S)"), r"\2:"),
    (re.compile(rf"^(\*\*|__)((?i:{RUN_IN_LABELS}))\1(?=[ \t]+[A-Z])"), r"\2:"),
    (re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1"), r"\2"),  # strong
    (re.compile(r"(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])"), r"\1"),  # *emphasis*
    (re.compile(r"(?<![\w_])_(?=\S)([^_\n]+?)(?<=\S)_(?![\w_])"), r"\1"),  # _emphasis_
    # a numbered footnote marker: " [3]"; not one a sentence begins with, where it names who did what ("[19] propose")
    (re.compile(r"(?<![.!?])\s\[\d{1,3}\](?=[\s.,;:]|$)"), ""),
]
# a list's or a quotation's marks before a line's words; a clause's number before a capital ("2.1 Licensor ...",
# "(A) Licensor ...", not "3.5 million"); a patent's paragraph number ("[0007] In some embodiments ...")
MARKER = re.compile(r"^\s*(?:>\s*)*(?:(?:[-*+•]|\(?\d{1,3}[.)]|\[\d{4,5}\]|\(?[a-z][.)]|\([A-Z]\)|"
                    r"\((?:[ivx]{1,4})\))\s+(?:\[[ xX]\]\s+)?|"  # and a task list's box: "- [x] Replace ..."
                    r"\d{1,3}(?:\.\d{1,3})+\.?\s+(?=[A-Z]))?")


# an opinion's pin cite after a sentence, which the sentence splitter leaves on it: "Under Tyler, that is a taking.
# 598 U. S., at 647." (where the law is, not what it says: ``summarize.extractive.CITATION`` when it stands alone)
PIN = r"\d+ [A-Z][\w. ]{0,20}?, at \d+(?:[–-]\d+)?"  # a reporter's volume and name, a comma, a page: "454 U. S., at 5"
PIN_CITE = re.compile(rf"(?<=[.!?])\s+(?:Id\.,? at \d+(?:[–-]\d+)?|{PIN})\.$")
HYPHENS = "-\u00ad\u2010"  # a hyphen, a soft hyphen, a typographic hyphen
BROKEN = re.compile(rf"(\w+)[{HYPHENS}]\s*$")  # a line that ends inside a word hyphenated across the line break
BROKEN_ANY = re.compile(rf"\w[{HYPHENS}][ \t]*\r?\n[ \t]*[a-z]")  # a text with such a line
BROKEN_WORD = re.compile(rf"\w+[{HYPHENS}][ \t]*\r?\n[ \t]*\w+")  # a word broken so, both its halves


def word_counts(text: str, broken: re.Pattern = BROKEN_WORD) -> Counter[str]:
    """How often ``text`` writes each word and hyphenated compound (lower case), its words ``broken`` across a
    line left out (their halves are not words it writes), for ``rejoined``."""
    return Counter(w.lower() for w in re.findall(r"\w+(?:-\w+)*", broken.sub(" ", text)))


def hyphenated_words(text: str) -> Counter[str] | None:
    """``word_counts`` of a text with a word broken across a line; None for one without."""
    return word_counts(text) if BROKEN_ANY.search(text) else None


TENS = re.compile(r"(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)-(?:one|two|three|four|five|six|seven|"
                  r"eight|nine)$")  # "forty-five": a number is written with its hyphen


def rejoined(head: str, tail: str, words: Counter[str] | None, compound: bool = False) -> str:
    """A word hyphenated across a line break, rejoined by how the document (``words``) writes it: ``replacement``
    from ``replace-`` and ``ment``; a compound keeps its hyphen when the document writes it so and never as one
    word, or writes neither but both halves as words of their own (``well-known``), or is a number (``forty-five``),
    or when ``head`` is itself the last part of a compound (``compound``: ``direct-to-`` and ``consumer``)."""
    whole, kept = (head + tail).lower(), f"{head}-{tail}".lower()
    halves = words is not None and words[head.lower()] and words[tail.lower()]
    if words is not None and not words[whole] and (words[kept] or compound or halves or TENS.match(kept)):
        return f"{head}-{tail}"
    return head + tail


def readable(span: str, spoken: bool = False, unlink: bool = True, verses: bool = False,
             words: Counter[str] | None = None, breath: bool = False) -> str:
    """``span`` (a sentence's text) as a summary shows it: markup removed, whitespace collapsed. ``spoken``: a
    sentence of a transcript or captions: the labels, cue numbers and timings inside it, caption tags, fillers
    and repeated words left out; ``unlink``: the words that open it only to link it to the sentence before left
    out (``unlinked``; not for a piece that goes on a sentence cut before it); ``verses``: a sentence of a text
    numbered by verses (``verse_numbered``), its lines' verse labels left out; ``words``: the document's
    (``hyphenated_words``), a word hyphenated across a line break is rejoined by them (``rejoined``); ``breath``: a
    breath of speech written down without punctuation (``documents.sentences.breaths``), shown as a sentence
    (``restored``)."""
    if spoken:
        text = _spoken(span)
    else:
        lines = [VERSE.sub("", line, count=1) for line in span.splitlines()] if verses else span.splitlines()
        text = ""
        for line in (MARKER.sub("", line) for line in lines):
            broken, going = BROKEN.search(text), re.match(r"\s*([a-z]\w*)", line)
            if broken and going:  # "replace-" and "ment took ..."
                compound = text[max(broken.start() - 1, 0):broken.start()] in HYPHENS
                text = (text[:broken.start()] + rejoined(broken.group(1), going.group(1), words, compound)
                        + line[going.end():])
            else:
                text = f"{text} {line}" if text else line
        code: list[str] = []  # the code spans' text: no emphasis inside them (`__init__`, `_private`)

        def keep(match: re.Match) -> str:
            code.append(match.group(2))
            return f"\ue000{len(code) - 1}\ue001"

        for pattern, replacement in INLINE:
            text = pattern.sub(keep if replacement is None else replacement, text)
        text = PIN_CITE.sub("", " ".join(KEPT.sub(lambda m: code[int(m.group(1))], text).split()))
    text = _quoted(unlinked(text, spoken) if unlink else text)
    return restored(text) if breath and unlink else text


# what a breath of unpunctuated speech (``documents.sentences.breaths``) opens with only to go on from the one before
GOING_ON = re.compile(r"(?:(?:okay|ok|alright|um|uh|anyway|and|but|(?:so|well|right|like)(?= (?:i|we|you|he|she|"
                      r"they|it|there|this|that|the|a|my|our|if|when|what|let's|i'm|we're|it's|that's)\b))\s+)+",
                      re.IGNORECASE)  # ("so many people", "like a lot of people": their words)
CAPITALISED = re.compile(r"\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|april|june|"
                         r"july|august|september|october|november|december|english|american|british|french|german|"
                         r"spanish|christmas|easter)\b")  # names a speech's words keep in writing ("may": not)


def restored(text: str) -> str:
    """A breath of speech written down without punctuation (a video's automatic captions) as a sentence: what only
    goes on from the breath before left out (``GOING_ON``), a capital first and for "i" and the names of days and
    months, fillers left out, and a full stop: "so what i do on friday is ..." -> "What I do on Friday is ... ."."""
    going = GOING_ON.match(text)
    if going and len(text[going.end():].split()) >= LINKED_LEFT:
        text = text[going.end():]
    text = re.sub(r"\b(?:um|uh|uhm|umm|erm)\s+", "", text)  # fillers, as in a transcript's (``_spoken``)
    text = CAPITALISED.sub(lambda word: word.group().capitalize(), re.sub(r"\bi(?=\b|['’])", "I", text))
    return text[:1].upper() + text[1:] + "."


def _quoted(text: str) -> str:
    """``text`` with the quotation mark its sentence of a longer quotation lacks (``"Your father," he said, "put
    the line into my hands.`` ends with one); a text whose marks pair up, or that has a lone ``"`` inch mark inside,
    is left as it is."""
    if text.count("“") != text.count("”"):
        return text + "”" if text.count("“") > text.count("”") else "“" + text
    if text.count('"') % 2:
        if text.startswith('"'):
            return text + '"'
        if text.rstrip().endswith('"'):
            return '"' + text
    return text


# words that open a sentence only to tie it to the one before ("However, ...", "And the ...", "Third, ...") or to
# take a turn in talk ("Yeah, so, ..."): out of their place in a summary they read as a dangling reply or a count
# that starts at three, and are left out. With a comma after them, any of these; without, only "and", "but", "so"
# before a word that opens a clause.
LINKS = ("however|but|and|so|also|thus|therefore|hence|moreover|furthermore|additionally|in addition|besides|"
         "anyway|well|oh|okay|ok|yeah|yes|right|alright|now|um|uh")
# and in writing (in talk, "First, ..." or "Then, ..." is how a speaker goes on: the meetings of ../shared/quality
# lose 0.1 ROUGE-1 without them)
WRITTEN_LINKS = ("first|firstly|second|secondly|third|thirdly|fourth|fifth|finally|lastly|next|then|still|instead|"
                 "similarly|likewise|consequently|accordingly|meanwhile|nevertheless|nonetheless|indeed|in fact|"
                 "of course|as a result|in other words|on the other hand|in contrast|by contrast|that said|after all")
CLAUSE = (r"(?:and|but|so)(?= (?:i|we|you|he|she|it|they|there|this|these|those|the|a|an|my|our|your|his|her|"
          r"their|its|it's|i'm|we're|that's|there's|if|when|what|one|now)\b)")
SAID_LINKED = re.compile(rf"(?:(?:{LINKS}),|{CLAUSE}|(?:{NOTICES})\s*:)\s+", re.IGNORECASE)  # (a FAQ's "Note:")
# a run-in label before a paragraph's first sentence: a structured abstract's "Background:", "Conclusions:", a post's
# "TL;DR:"
LABELS = (r"(?:background|introduction|objectives?|aims?|purpose|methods?|design|setting|participants|results?|"
          r"findings|conclusions?|discussion|interpretation|case(?: (?:presentation|report|description))?|"
          r"outcomes?|(?:edit|update)(?: \d{1,2})?|"
          rf"{OWN_LABEL}|a|answer|{NOTICES})\s*:")  # and a FAQ's "A:", a manual's "Note:", a post's "Edit 2:"
# a legal text's run-in heading: "(a) In General.--", "(1) ALGORITHMIC FEED.--"
RUN_IN_HEADING = r"(?:\([a-z0-9]{1,4}\)\s*)*[A-Z][\w ,'’-]{0,50}\.(?:--|—)"
LINKED = re.compile(rf"(?:(?:{LINKS}|{WRITTEN_LINKS}),|{CLAUSE}|{LABELS}|(?-i:{DATELINE}))\s+"
                    rf"|(?-i:{RUN_IN_HEADING})\s*", re.IGNORECASE)
LINKED_LEFT = 3  # the fewest words a sentence keeps after its links; else it is shown whole


def unlinked(sentence: str, spoken: bool = False) -> str:
    """``sentence`` without the words that open it only to link it to what came before (``LINKED``; ``spoken``:
    ``SAID_LINKED``), its first letter then a capital: "However, the parser ..." -> "The parser ...", "Yeah, so, I
    think ..." -> "I think ..."."""
    text, linked = sentence, SAID_LINKED if spoken else LINKED
    while (found := linked.match(text)) and len(text[found.end():].split()) >= LINKED_LEFT:
        text = text[found.end():]
    if text is sentence:
        return sentence
    first = text.split(" ", 1)[0]
    return text[0].upper() + text[1:] if first.islower() else text


FILLERS = frozenset("uh um uhm umm uh-huh mm-hmm mhm mm hmm hm er erm ah eh".split())
# words that carry nothing on their own in speech: back-channels and the commonest function words
EMPTY = FILLERS | frozenset(
    """yeah yes yep no nope okay ok right so well oh like just sure alright all actually really you know i mean
    the a an and or but if then that this it it's is are was were be been to of in on at for with as by i we you
    he she they me us them my our your what which who there here that's there's i'm we're you're they're don't
    do does did not can can't could would should will going gonna think thing things kind sort get got
    have has had very much some something maybe also now because about up out one two""".split())
WORD = re.compile(r"[\w'’-]+")
EDGES = ",.;:!?\"'()[]…-"  # what a word is stripped of before it is compared
# real words a stutter could be mistaken for ("a", "I", "in" before a word they begin)
SHORT_WORDS = frozenset("a an i in on at is it as be by do go he me my no of or so to up us we".split())
# the words of one or two letters a speaker says; any other lowercase one is a word cut off and started over
# ("how much w how easy", "th the", "we sh change"; in the ICSI meetings of ../shared/quality, 1,900 letters and 500
# pairs)
SAID_SHORT = SHORT_WORDS | frozenset("""am if oh ok hi ha ye yo ex et al re id ma pa ah eh mm um uh hm vs ie eg tv pc
    ad ox ow mr ms dr de x y z cm km kg mg ml lb oz ft hr pm kb mb gb tb""".split())  # a formula's variables said
# aloud, units ("30 cm away")


def _spoken(span: str) -> str:
    kept = []
    lines = span.splitlines()
    note = False  # inside a WebVTT NOTE block (a comment), which ends at a blank line
    for i, line in enumerate(lines):
        note = (note or re.match(r"NOTE(?:\s|$)", line) is not None) and bool(line.strip())
        if note or CUE_TIME.match(line) or line.strip().isdigit():  # a cue's timing or number between its pieces
            continue
        if i + 1 < len(lines) and CUE_TIME.match(lines[i + 1]):  # a cue's name, on the line before its timing
            continue
        label = TURN.match(line) if kept else None  # a label inside the span: a line after the first
        voice = VOICE.match(line.strip())
        line = line[label.end():] if label else line[line.index("<v") + voice.end():] if voice else line
        kept.append(EMOJI.sub("", SOUND.sub("", TAG.sub("", line))))
    words = []
    for word in " ".join(kept).split():
        bare = word.strip(EDGES).lower()
        cut = len(bare) <= 2 and word.strip(EDGES) == bare and bare.isalpha() and bare not in SAID_SHORT
        if bare in FILLERS or cut:
            if words and word[-1] in ".?!" and words[-1][-1] not in ".?!,;:":
                words[-1] += word[-1]  # "it um." keeps the full stop
            continue
        before = words[-1].strip(EDGES) if words else ""
        last = before.lower()
        if bare and bare == last and words[-1][-1] not in ".?!":  # "it's it's" (not across a sentence end)
            words[-1] = word
            continue
        if (last and len(last) <= 2 and last not in SHORT_WORDS and bare.startswith(last) and bare != last
                and before.isalpha() and before.islower()):  # a stutter: "b build" (not "AI aims", "2 25-inch")
            words[-1] = word
            continue
        words.append(word)
    text = " ".join(words).strip(" ,;-")
    return text[:1].upper() + text[1:] if text else text


def substance(sentence: str) -> int:
    """How many of ``sentence``'s words carry content (not fillers, back-channels or function words)."""
    return sum(1 for word in WORD.findall(sentence.lower()) if word not in EMPTY and not word.isdigit())


TITLE_WORDS = 15  # a first line longer than this is prose, not a title
TITLE_WORDS_CASED = 25  # (in title case: a paper's "Severe Hyponatraemia Induced by ... in a 58-Year-Old Man: ...")
# a line above the title that says what kind of text it is or how to handle it, not what it is about: a press
# release's "FOR IMMEDIATE RELEASE", a newspaper desk's "OPINION", "CONFIDENTIAL", "DRAFT"
BANNER = re.compile(r"(?:\*\*|__)?(?:for immediate release|immediate release|embargoed\b.{0,60}|(?:news|press|media) "
                    r"release|opinion|op-ed|editorial|commentary|analysis|guest essay|confidential|strictly "
                    r"confidential|draft|for internal use only|not for distribution)(?:\*\*|__)?[.:]?|"
                    # "CONFIDENTIAL — INTERNAL USE ONLY. Do not forward.", "**CONFIDENTIAL. Do not forward.**"
                    r"(?:\*\*|__)?(?:strictly )?confidential\b ?[.:—–-][^\n]{0,80}", re.IGNORECASE)
# a title that names the kind of document, not what it is about: a memo's, over its "Subject:" field
MEMO = re.compile(r"(?:internal |interoffice |inter-office |office )?(?:memo|memorandum)", re.IGNORECASE)
SUBJECT_FIELD = re.compile(r"^[ \t]*(?:[-*+][ \t]+)?(?:\*\*|__)?(?:subject|re|regarding)(?:\*\*|__)?[ \t]*:"
                           r"(?:\*\*|__)?[ \t]*(\S[^\n]*?)[ \t]*$", re.IGNORECASE | re.MULTILINE)
MEMO_LINES = 12  # the field is among the lines after the title (fields, blank lines, a rule)
# a line that is a person's name alone, under a title: a diary's "Tom Achterberg"
NAME_LINE = re.compile(r"(?:(?:Dr|Mr|Mrs|Ms|Mx|Prof)\.? )?[A-Z][a-z'’-]+(?: [A-Z]\.)?(?: [A-Z][a-z'’-]+){1,3}")


FRONT_MATTER = re.compile(r"---[ \t]*\r?\n(.*?)\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|$)", re.DOTALL)  # YAML, at the start


def title_span(text: str, transcript: bool | None = None) -> tuple[int, int] | None:
    """Where the document's title is: its YAML front matter's ``title:``, else its first Markdown heading (``# ...``,
    or a line underlined with ``===``) when the text begins with one, else its first line when that line stands
    alone (a blank line after it), is short and does not end a sentence (``CULTURAL EXCHANGE``), or stands in title
    case over a title page whose next line is a byline (``BYLINE``); None when it has none (a transcript, prose)."""
    front = FRONT_MATTER.match(text)
    named = front and re.search(r"^title:[ \t]*([\"']?)(\S.*?)\1[ \t]*\r?$", front.group(1), re.MULTILINE)
    if named:  # YAML front matter's title: "Sparse Gated Retrieval ..."
        return front.start(1) + named.start(2), front.start(1) + named.end(2)
    lines = list(islice((line for line in _lines(text) if line[2].strip() and not BANNER.fullmatch(line[2].strip())),
                        2))
    if not lines or turns(text, transcript):
        return None
    start, end, line = lines[0]
    if MEMO.fullmatch(heading_words(line).strip(" .:")):  # a memo's "# MEMORANDUM": its subject
        subject = _subject_field(text, end)
        if subject:
            return subject
    if ATX.match(line):
        marks = ATX_MARKS.match(line)
        return (start + marks.end(), start + len(line.rstrip())) if marks and line[marks.end():].strip() else None
    letter = _letter_subject(text)
    if letter is not None:  # a letter: its subject line, or none (not the sender's name over an address)
        return letter or None
    underlined = len(lines) > 1 and SETEXT.match(lines[1][2]) is not None and not text[end:lines[1][0]].strip()
    alone = BLANK_LINE.match(text, end) is not None  # (read in place: no copy of a book's text after its line)
    if underlined or (alone and _title_line(line, subtitled=True)):
        return start + len(line) - len(line.lstrip()), start + len(line.rstrip())
    block = _title_block(text, start)
    if block:
        return start + len(line) - len(line.lstrip()), block
    if _title_case(line) and _title_line(line) and len(lines) > 1 and BYLINE.match(lines[1][2]) \
            and _title_block(text, start, capitals=False):  # a title in title case over its byline
        return start + len(line) - len(line.lstrip()), start + len(line.rstrip())
    # ("Commencement Address to the Class of 2024" over "Delivered by Dr. Ines Valcárcel, ...")
    if _title_case(line) and line != line.upper() and _title_line(line) and _over_fields(text, end):
        return start + len(line) - len(line.lstrip()), start + len(line.rstrip())  # ("UCAS Personal Statement"
        # over "Applicant: ...", a diary's "Journal - Spring 2026" over its writer's name; not an insurer's name in
        # capitals over "INSURED: JOHN SMITH", a letterhead)
    if len(lines) > 1 and _subtitled(line, lines[1][2]) and BLANK_LINE.match(text, lines[1][1]) \
            and not text[end:lines[1][0]].strip():  # a title in capitals over its subtitle, standing alone
        return start + len(line) - len(line.lstrip()), start + len(line.rstrip())
    return None


def _subject_field(text: str, end: int) -> tuple[int, int] | None:
    """Where the value of the "Subject:" (or "Re:") field is among the fields under a memo's title (its line ends
    at ``end``): the lines up to ``MEMO_LINES`` after it, blank or fields, up to the first that is neither (not a
    "Re: the old region, ..." in the memo's text)."""
    lines = text[end:].split("\n", MEMO_LINES + 1)
    start = end + len(lines[0]) + 1  # where each line begins
    for line in lines[1:MEMO_LINES + 1]:
        subject = SUBJECT_FIELD.match(line)
        if subject:
            return start + subject.start(1), start + subject.end(1)
        if line.strip() and not FIELD.match(line) and not re.fullmatch(r"\s*(?:[-*_]\s*){3,}", line):
            return None
        start += len(line) + 1
    return None


def _over_fields(text: str, end: int) -> bool:
    """Whether the lines right after ``end`` (a title's line's end), up to a blank line, are fields ("Applicant:
    Priya Raghunathan", "Course: Civil Engineering (MEng)") or a person's name alone (``NAME_LINE``): up to
    ``TITLE_LINES`` + 2 of them, a blank line after them."""
    block = re.match(r"\r?\n((?:[^\n]*\S[^\n]*(?:\r?\n|$)){1,%d})(?=[ \t]*(?:\r?\n|$))" % (TITLE_LINES + 2), text[end:])
    return block is not None and all(FIELD.match(line) or NAME_LINE.fullmatch(line.strip())
                                     for line in block.group(1).splitlines())


def _subtitled(line: str, after: str) -> bool:
    """Whether ``line`` is a title in capitals of two words or more ("LIGHT ON THE WATER") and ``after`` a short
    subtitle under it in other case ("Audio guide script"; not a sentence, a lead-in, a field, a second line in
    capitals: an address)."""
    words = re.findall(r"[^\W\d_]+", line)
    return len(words) >= 2 and line.isupper() and _title_line(line) and not after.isupper() \
        and len(after.split()) <= SUBTITLE_WORDS and TURN.match(after) is None and ADDRESS.search(after) is None \
        and not after.rstrip().endswith((".", "!", "?", ":", ";", ","))


SUBTITLE_WORDS = 8


def _letter_subject(text: str) -> tuple[int, int] | tuple[()] | None:
    """Where a letter's subject line is (the line right before its salutation, "Dear Sir or Madam,", when it is a
    "Re: ..." or reads as words: "Formal complaint: repeated missed bin collections ..."; not a date, an address or
    a name), () for a letter without one, None for a text that is no letter (no salutation after a letterhead of
    short lines in its first ``LETTER_HEAD`` characters)."""
    greeting = SALUTATION.search(text, 0, LETTER_HEAD)
    head = [line for line in _lines(text[:greeting.start()]) if line[2].strip()] if greeting else []
    if not head or any(len(line.split()) > TITLE_WORDS_CASED or re.search(r"\b[a-z]{2,}[.!?]$", line.rstrip())
                       for _, _, line in head):  # (a sentence above it: prose, a story that quotes a letter)
        return None
    start, end, line = head[-1]
    words = line.split()
    if re.match(r"\s*(?:re|subject|subj)\s*:", line, re.IGNORECASE) or (
            len(words) >= 5 and re.search(r"\b[a-z]{2,}\b", line) and not DATED.search(line)
            and not ADDRESS.search(line)):
        return start + len(line) - len(line.lstrip()), start + len(line.rstrip())
    return None if greeting.group().strip()[:1] in "SM" else ()  # (a letter to an editor: its headline, "Cycle lanes
    # save lives", as any title; a letter over "Dear ...," has none but its subject line, not its sender's name)


SALUTATION = re.compile(r"(?m)^[ \t]*(?:(?:Dear|To whom it may concern)\b[^\n]{0,60}|(?:Sir|Madam|Sirs)(?:\s*(?:or|/)"
                        r"\s*Madam)?\s*[,:]?[ \t]*)$")  # (a letter to an editor's "Sir,")
LETTER_HEAD = 1500  # characters: a letter's salutation is under its letterhead, near its start


BYLINE = re.compile(r"[ \t]*(?:(?:delivered|presented|written|prepared|given|spoken|remarks|a speech|an address|"
                    r"an essay|a lecture|a report|a sermon|preached) )?by\s+[A-Z]", re.IGNORECASE)


def spoken_title(text: str, transcript: bool | None = None) -> tuple[int, int] | None:
    """Where a transcript's title is: on its title page, before its first turn, the first line standing alone, or
    the first lines of it short and ending no sentence ("Corvane Logistics, Inc. (NYSE: CVLG)" over "Q3 2025
    Earnings Conference Call"; a screenplay's "LOW TIDE"); None without one (a meeting that opens with its talk)."""
    said = turns(text, transcript)
    head = text[:said[0].pieces[0][0]] if said else ""
    head = head[:head.rfind("\n") + 1]  # the lines before the first turn's
    lines = [line for line in _lines(head) if line[2].strip() and not BANNER.fullmatch(line[2].strip())]
    if not lines:
        return None
    start, end, line = lines[0]
    whole = start + len(line) - len(line.lstrip()), start + len(line.rstrip())
    field = TURN.match(line)
    if field:  # a field ("Date: ..."), no title; but a podcast's "THE SOIL CAST — Episode 142: ..." is one
        return whole if TITLED.search(field.group(2)) and len(line.split()) <= 2 * TITLE_WORDS else None
    if re.match(r"[ \t]*\r?\n[ \t]*(?:\r?\n|$)", head[end:]) and _title_line(line):  # alone
        return whole
    if line.isupper() and len(re.findall(r"[^\W\d_]+", line)) >= 2 and _title_line(line):  # in capitals over the
        return whole  # lines that say where and when ("MILLBROOK COUNTY MAYORAL DEBATE" over "Hosted by ...")
    block = _title_block(head, start, capitals=False)
    dated = DATED.search(head, end, block) if block else None  # a date under it is no part of it
    return (whole[0], head.rfind("\n", 0, dated.start()) if dated else block) if block else None


DATED = re.compile(r"(?m)^.*(?:\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.? \d|\b\d{1,2}:\d\d\b|"
                   r"\b\d{4}-\d\d-\d\d\b)", re.IGNORECASE)  # a line holding a date or a time


def _title_line(line: str, subtitled: bool = False) -> bool:
    """Whether ``line`` may be a title: short (longer in title case), no turn, no sentence's or lead-in's end;
    ``subtitled``: a title and its subtitle in title case either side of a colon is no turn ("Severe Hyponatraemia
    After Beer: A Case Report"; not a field, "Attendees: Sam Lee, Priya Raman", nor "John: Welcome Back")."""
    turn = TURN.match(line)
    head, _, rest = line.partition(":")
    subtitle = subtitled and len(head.split()) >= 2 and len(rest.split()) >= 2 and "," not in rest \
        and _title_case(head) and _title_case(rest)
    return (len(line.split()) <= (TITLE_WORDS_CASED if _title_case(line) else TITLE_WORDS)
            and not (turn and not subtitle) and not line.rstrip().endswith((".", "!", "?", ":", ";", ",")))


TITLE_LINES = 3  # a title set in capitals over up to this many lines
# a line of an address: a street's number first ("14 HIGH STREET"), a postcode ("LEEDS LS1 4AB", "OH 43215")
ADDRESS = re.compile(r"^\s*\d+[A-Z]?\s+[^\W\d_]|\b[A-Z]{1,2}\d[A-Z\d]?\s+\d[A-Z]{2}\s*$"
                     r"|\b[A-Z]{2}\s+\d{5}(?:-\d{4})?\s*$")


def _title_block(text: str, start: int, capitals: bool = True) -> int | None:
    """The end of a title set in capitals (``capitals``; else in any case: a transcript's title page, ``spoken_title``)
    over two to ``TITLE_LINES`` lines from ``start``, a blank line after it ("HEARTHSTONE MUTUAL INSURANCE COMPANY"
    over "HOMEOWNERS POLICY": a policy's, a contract's title page); None where the lines there are no such block (an
    address, a list, a heading over its text)."""
    block = re.match(r"(?:[^\n]*\S[^\n]*(?:\r?\n|$)){2,%d}(?=[ \t]*(?:\r?\n|$))" % TITLE_LINES, text[start:])
    lines = block.group().splitlines() if block else []
    if not lines or not all(_title_line(line) and not ITEM.match(line) and not ATX.match(line)
                            and re.search(r"[^\W\d_]{2}", line) and (line == line.upper() or not capitals)
                            for line in lines) or any(ADDRESS.search(line) for line in lines[1:]):
        return None
    return start + len(block.group().rstrip())
