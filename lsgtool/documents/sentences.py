"""Paragraphs and sentences with their character spans (syntok: a rule-based, dependency-free segmenter).

Chosen for quality at acceptable speed: it keeps "U.S. policy" and "Dr. Smith" whole where blingfire splits or
merges them, and reads the 4.4 MB King James Bible in about 3.5 s on this CPU (blingfire 0.3 s, pysbd ~10 s).
"""

from __future__ import annotations

import re
from typing import Iterator

PARAGRAPH = re.compile(r"\n\s*\n")
# "Wang et al. (2022)": syntok ends a sentence at "al." before a bracket, and the next one then opens "(2022). ...";
# the full stop is hidden from it there (a character for a character: the offsets stay the text's)
ET_AL = re.compile(r"(?<=\bet al)\.(?=\s*[(\[])|(?:(?<=\b(?:No|pp|Ch|Eq))|(?<=\b(?:Nos|Vol|Art|FIG|Fig|SEC|Sec|Ref|Tab|"
                   r"Eqs))|(?<=\b(?:FIGS|Figs|Secs|Refs|Para|para|Stat|Supp)))\.(?=\s*\d)|"
                   r"(?<=\b(?:Rev|Pub))\.(?=\s*(?:Code|Stat|L)\b)|(?<=\bAnn)\.(?=\s*§)|(?<=\b[Hh]on)\.(?=\s+\w)|"
                   r"(?:(?<=\b(?:Ex|Id|Br|Tr))|(?<=\b(?:Exs|Mot|Opp|Aff))|(?<=\bDecl)|(?<=\bCompl))"
                   r"\.(?=\s*(?:¶|\d|at\b))|"
                   r"(?:(?<=\bEx)|(?<=\bExs))\.(?=\s*[A-Z]{1,2}(?:[.,;)-]|\s+(?:¶|at\b)))|(?<=\bAm)\.(?=\s*Compl\b)|"
                   r"(?:(?<=\b(?:Ga|La|Md|Mo|Or|Pa|Vt|Va|Ky))|(?<=\b(?:Ala|Ark|Cal|Del|Fla|Haw|Ill|Ind|Kan|Neb|Nev|Tex|"
                   r"Wis|Wyo))|(?<=\b(?:Ariz|Colo|Conn|Mass|Mich|Minn|Miss|Mont|Okla|Tenn|Wash)))"
                   r"\.(?=\s*(?:Stat|Rev|Gen|Comp|Code|Admin|Const)\b)|"
                   r"(?:(?<=\b(?:Gen|Rev))|(?<=\b(?:Stat|Comp|Laws|Code))|(?<=\bAdmin))"
                   r"\.(?=\s*(?:§|Ann\b|Stat\b|Laws\b|Code\b))")
# ... and in "Okafor v. Harborview Logistics, Inc., No. 2:20-cv-01187", "Vol. 3", "pp. 12-19", a patent's "FIG. 3",
# a bill's "SEC. 2.", a statute's "124 Stat. 119", "Ohio Rev. Code Ann. § 5721.20", "Pub. L. 115-72" before a number,
# a parliament's "the right hon. Lady"; a brief's record citations: "Id. ¶ 13; Ex. A.", "Am. Compl. ¶ 18", "Decl. at 4";
# a state's statute: "Minn. Stat. § 504B.385", "Fla. Stat. Ann. § 83.60", "N.C. Gen. Stat. §", "Mich. Comp. Laws §"
# a caption's label at its line's start ("Table 1. Effect of initial concentrations on ..."): its full stop ends no
# sentence (the caption had been read as "Effect of ...", a sentence without its label; not "... in Table 1. The")
CAPTION_LABEL = re.compile(r"^[ \t]*(?:\*\*|__|\*|_)?(?:Table|TABLE|Figure|FIGURE|Fig\.|FIG\.|Chart|Exhibit|Listing|"
                           r"Plate|Map|Scheme|Algorithm)[ \t]+(?:\d{1,3}|[IVX]{1,5})[a-z]?(?:\.\d{1,2})?(\.)"
                           r"(?=[ \t]+\S)", re.MULTILINE)
JOINED_WORDS = 60  # a sentence joined across its semicolons is at most this long (a list of clauses stays apart)
EXHIBIT = re.compile(r"\b(?:Exs?\.|Exhibits?)\s+[A-Z]{1,2}(?:-\d+)?\.(?=\s+[A-Z])")  # a record's "Ex. A." ends a cite
# a wiki's citation markers right after a sentence's end (".[4] With", ".[14][15]", ".[citation needed]"): syntok
# reads on through them; hidden from it (blanks for characters), they fall between the sentences
CITED = re.compile(r"(?<=[.!?\"”])(?:\[(?:\d{1,3}|[a-z]|\^[^\]\s]{1,20}|citation needed|clarification needed|"
                   r"when\?|who\?|according to whom\?|note \d{1,3})\])+")  # (and Markdown's "[^1]")
# a question's end inside emphasis that closes after it (a FAQ's "**Can I use it?** Yes."): syntok reads on through
# the closing marks; set before the end instead (the same characters, so the sentence keeps its span); not a full
# stop's: "**Async runtime.** Tasks ..." is a run-in heading, read with its sentence
EMPHASIS_END = re.compile(r"([!?])(\*\*|__|\*|_)(?=\s)")
# ... and a whole sentence in bold after another ("... 35 roles. **I want to be clear: this is not a cost-cutting
# exercise.** We expect ..."): a run of BOLD_SENTENCE words or more there is no run-in heading
BOLD = re.compile(r"(\*\*|__)(?=\S)((?:(?!\1)[^\n]){1,400}?)\.\1(?=\s)")
BOLD_SENTENCE = 6
# a quotation inside a quotation that both close at a sentence's end ('... eats with them.\'" The parables ...'):
# syntok reads on through the two marks; the end set after them (the same characters, the same span)
NESTED_END = re.compile(r"([.!?])(['’][\"”])(?=\s)")
# a PDF's footnote mark set against a sentence's end ("... heavy metals.1 A UV-C lamp ..."): it ends the sentence too
NOTE_MARK = re.compile(r"(?<=[a-z][.!?])\d{1,2}(?=\s+[A-Z])")
# where syntok reads on through a sentence's end (``_split_after``): after a number with a decimal point ("...
# under § 554.139. The tenant"), or a capital letter alone ("... at Site B. Under drip irrigation"; syntok takes it
# for an initial) before a word no name is ("Under", not "John B. Smith"), or a citation's number ("... (Judy et al.,
# 2019) [4]. Additives ..."), or an e-mail address
MISSED_END = re.compile(r"(?<=\d\.\d)\d*\.(?=[ \t]+[A-Z][a-z])|(?<=\d\])\.(?=[ \t]+[A-Z][a-z])|"
                        r"(?<=\s[A-Z])\.(?=[ \t]+(?:The|This|These|That|Those|It|Its|In|Under|On|At|For|From|With|"
                        r"Without|When|While|After|Before|During|Since|We|Our|They|Their|There|Here|But|And|However|"
                        r"Thus|Then|As|If|By|Both|All|Each|No|Not)\b)|"
                        # "... at help@shop.co.uk. Please"
                        r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[a-z]{2,}\.(?=[ \t]+[A-Z][a-z])|"
                        # a time's "a.m." or "p.m." before a word a sentence opens with ("... by email at 7 a.m.
                        # Didn't even ..."; not "7 a.m. Monday", "6 p.m. Sydney time")
                        r"(?<=\d[ \t][ap]\.m)\.(?=[ \t]+(?:I|We|He|She|They|It|You|The|This|That|There|Then|But|And|So|"
                        r"My|Our|His|Her|Their|Its|A|An|No|Not|Nothing|Nobody|Everyone|Still|By|After|Before|When|"
                        r"Didn't|Don't|Couldn't|Wasn't|Got|Went|Came|Woke)\b)")
# inline code on one line ("`T: ?Sized`", "`a.b()`"), not a pair of quotation marks written as backticks
# ("``Hello,'' he said."): its punctuation ends no sentence
CODE = re.compile(r"(?<!`)`(?=\S)[^`\n]{1,80}?(?<=\S)`(?!`)")
# a full stop, question or exclamation mark of Chinese and Japanese (syntok splits at spaces, which they lack),
# with the closing quotes and brackets that belong to the sentence
CJK_END = re.compile(r"[。！？](?:[」』）】〕》”’]*)")
# speech written down without punctuation (a video's automatic captions: "so today we're going to be talking about
# sourdough starter and ..."): a "sentence" of at least RUN_ON words that does not end as one does, with no more
# than one mark in PER_MARK words, is cut into breaths of BREATH words or so (``breaths``), before the words a speaker
# goes on with ("okay", "um", "but", "so i", ...), so that each can be read, weighed and picked (one 3,000-word
# sentence had been a summary); a long sentence that ends with its full stop is a sentence
RUN_ON, PER_MARK = 60, 100
BREATH = (10, 22, 45)  # the fewest words of a breath, the most wanted, the most
MARK = re.compile(r"[.,;:!?](?!\d)")
WORD = re.compile(r"\S+")
UNMARKED_END = re.compile(r"[.,;:!?](?!\d)|\n")  # where a run of words without a mark ends (a line's end too)
AROUND = 400  # characters either side of a sentence that tell whether it is in unpunctuated speech (``in_breaths``)
GOES_ON = frozenset("okay ok alright um uh anyway but because".split())  # a new breath after
# and these, only before a word that opens a clause ("so i do", "well we"; not "so many", "really well for me")
GOES_ON_BEFORE = frozenset("so well now then".split())
OPENS_CLAUSE = frozenset("""i we you he she they it there here this that these those the a an my our your his her
    their if when what let's i'm we're you're it's that's there's i've we've i'll we'll""".split())
NOT_GOING_ON = {("but", "all"), ("but", "nothing"), ("but", "anything"), ("but", "last")}  # "all but 20 grams"
ENDS = re.compile(r"[.!?…][\"'”’)\]]*\Z")  # a span that ends as a sentence does
# "... the second reason is"
ORDINALS = frozenset("first second third fourth fifth number".split())
SOFT = frozenset("and which when if where while since or".split())  # a worse place, better than mid-phrase
CUT_BEFORE = GOES_ON | GOES_ON_BEFORE | SOFT  # a breath ends before a run of these, not inside it ("okay so")


def paragraphs(text: str) -> list[tuple[int, int]]:
    """(start, end) of each non-blank paragraph (blank lines separate them)."""
    spans, start = [], 0
    for match in PARAGRAPH.finditer(text):
        spans.append((start, match.start()))
        start = match.end()
    spans.append((start, len(text)))
    return [(a, b) for a, b in spans if text[a:b].strip()]


def sentence_spans(text: str, start: int = 0, end: int | None = None) -> Iterator[tuple[int, int]]:
    """(start, end) of each sentence of ``text[start:end]``, in absolute offsets."""
    import syntok.segmenter as segmenter

    end = len(text) if end is None else end
    part = CITED.sub(lambda m: " " * len(m.group()), ET_AL.sub("_", text[start:end]))
    part = NOTE_MARK.sub(lambda m: " " * len(m.group()), part)
    part = CAPTION_LABEL.sub(lambda m: m.group()[:-1] + "_" if _begins(part, m.start()) else m.group(), part)
    part = NESTED_END.sub(r"\2\1", EMPHASIS_END.sub(r"\2\1", part))
    part = BOLD.sub(lambda m: m.group(1) + m.group(2) + m.group(1) + "." if len(m.group(2).split()) >= BOLD_SENTENCE
                    and re.search(r"[.!?][\"'”’)]*[ \t]+$", part[:m.start()]) else m.group(), part)  # (after a
    # sentence in its line: a run-in heading of six words at a paragraph's start is read with its sentence)
    # no sentence ends inside `T: ?Sized`, and one ends after `{{ price }}`. (a code span is one word to syntok)
    part = CODE.sub(lambda m: "`" + "x" * (len(m.group()) - 2) + "`", part)
    spans: list[tuple[int, int]] = []
    for paragraph in segmenter.analyze(part):
        for sentence in paragraph:
            tokens = list(sentence)
            if tokens:
                last = tokens[-1]
                a, b = start + tokens[0].offset, start + last.offset + len(last.value)
                if spans and text[spans[-1][1] - 1] == ";" and "\n" not in text[spans[-1][1]:a] \
                        and len(text[spans[-1][0]:b].split()) <= JOINED_WORDS:
                    spans[-1] = (spans[-1][0], b)  # a semicolon ends no sentence ("... buy a label; Parcelwise
                else:  # then tracks it"), where the next goes on in its line (a list's item on its own stays one)
                    spans.append((a, b))
    spans = _attributed(text, spans)
    for a, b in _quotations(text, spans):
        for exhibit in EXHIBIT.finditer(text, a, b):  # a brief's "Ex. A." ends a citation ("Ex. A. Each bill ...")
            if text[exhibit.end():b].strip():
                yield from _sentence_pieces(text, a, exhibit.end())
                a = exhibit.end() + len(text[exhibit.end():b]) - len(text[exhibit.end():b].lstrip())
        yield from _sentence_pieces(text, a, b)


# who is quoted, after the quotation in its line: '"An allotment shouldn't be a ten-year wait." — Priya Raman, site
# manager'
ATTRIBUTION = re.compile(r"[—–-]{1,2}[ \t]*[A-Z][\w.'’-]*(?:[ \t]+[A-Z][\w.'’-]*){0,4}(?:,[ \t]*[^\n.!?]{1,60})?\.?")


def _begins(text: str, at: int) -> bool:
    """Whether the line at ``at`` begins a paragraph or follows one that ends a sentence or a lead-in (a caption's
    label there is no sentence's words: not "... as shown in" over "Figure 2. The treated plots ...")."""
    before = text[:at].rstrip()
    return not before or "\n\n" in text[len(before):at + 1] or before.endswith((".", "!", "?", ":", '"', "”", ")"))


def _attributed(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` with a quotation's attribution (``ATTRIBUTION``) joined to the quotation it follows in its line: the
    summary shows who said it, not a quotation alone, nor a name alone."""
    out: list[tuple[int, int]] = []
    for a, b in spans:
        if out and text[out[-1][1] - 1] in '"”' and "\n" not in text[out[-1][1]:a] \
                and ATTRIBUTION.fullmatch(text, a, b):
            out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
    return out


def _open(quoted: str) -> bool:
    """Whether ``quoted`` leaves a quotation open: more “ than ”, or an odd number of straight double quotes."""
    return quoted.count("“") > quoted.count("”") or quoted.count('"') % 2 == 1


def _quotations(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` with the sentences of a quotation that one opens and one after it in its paragraph closes joined,
    up to ``JOINED_WORDS`` words (He said, "Ruthie, they didn't take the farm. The bank did." is one sentence: its
    first alone says the opposite); a longer quotation, or one that does not close, stays apart."""
    joined, i = [], 0
    while i < len(spans):
        a, k = spans[i][0], i
        if _open(text[a:spans[i][1]]):
            for j in range(i + 1, len(spans)):
                if "\n\n" in text[spans[j - 1][1]:spans[j][0]] or len(text[a:spans[j][1]].split()) > JOINED_WORDS:
                    break
                if not _open(text[a:spans[j][1]]):
                    k = j
                    break
        joined.append((a, spans[k][1]))
        i = k + 1
    return joined


def _sentence_pieces(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """A sentence's span cut after each CJK sentence end and, in speech without punctuation, into breaths."""
    for x, y in _split_after(text, start, end, CJK_END):
        for u, v in _split_after(text, x, y, MISSED_END, 3):  # (not a heading's "1.2. Scope")
            yield from breaths(text, u, v)


def _split_after(text: str, start: int, end: int, ends: re.Pattern, words: int = 0) -> Iterator[tuple[int, int]]:
    """``text[start:end]`` split after each match of ``ends`` (a CJK sentence end, one syntok reads on through:
    ``MISSED_END``) with at least ``words`` words before it and words after it (the whole span when it has none)."""
    for match in ends.finditer(text, start, end):
        rest = text[match.end():end]
        if rest.strip() and (not words or len(text[start:match.start()].split()) >= words):
            yield start, match.end()
            start = match.end() + len(rest) - len(rest.lstrip())
    yield start, end


def sparse(span: str) -> bool:
    """Whether ``span`` has ``RUN_ON`` words or more and no more than one mark of punctuation in ``PER_MARK``."""
    words = len(WORD.findall(span))
    return words >= RUN_ON and len(MARK.findall(span)) * PER_MARK <= words


def unpunctuated(span: str) -> bool:
    """Whether ``span`` (a sentence) is speech written down without punctuation (``RUN_ON``): ``sparse``, and not
    ending as a sentence does."""
    return sparse(span) and not ENDS.search(span.rstrip())


def in_breaths(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` (a sentence) is a breath of unpunctuated speech (``breaths``): words with no mark,
    on a line with a run of ``RUN_ON`` words or more without one (a turn of a meeting's transcript that its
    transcriber did not punctuate), or with the text about it unpunctuated (``sparse``: a caption file's cues); a
    sentence before a displayed formula also ends without a mark, a title has none."""
    if not (text[start:start + 1].isalpha() and text.count(" ", start, end) >= 3 and not MARK.search(text, start, end)):
        return False  # (four words or more, the first a word: not a heading, nor a list's item)
    before = [m.end() for m in UNMARKED_END.finditer(text, max(0, start - 2 * AROUND), start)]
    after = UNMARKED_END.search(text, end, end + 2 * AROUND)
    run = text[before[-1] if before else max(0, start - 2 * AROUND):after.start() if after else end + 2 * AROUND]
    return len(WORD.findall(run)) >= RUN_ON or sparse(text[max(0, start - AROUND):end + AROUND])


def breaths(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """``text[start:end]`` as one sentence, or, when it is unpunctuated speech (``unpunctuated``), cut into breaths:
    each of ``BREATH`` words, ending before the word nearest the wanted length that a speaker goes on with
    (``GOES_ON``; ``GOES_ON_BEFORE`` before a clause; "the second ..."), else ``SOFT``, else at the most words."""
    if end - start < 4 * RUN_ON or not unpunctuated(text[start:end]):
        yield start, end
        return
    words = [(m.start(), m.end()) for m in WORD.finditer(text, start, end)]
    said = [text[a:b].lower() for a, b in words] + [""]  # (an empty word after the last)
    fewest, wanted, most = BREATH
    k = 0
    while len(words) - k > most:
        window = range(k + fewest, k + most + 1)
        goes_on = [i for i in window if said[i] in GOES_ON and (said[i], said[i - 1]) not in NOT_GOING_ON
                   or said[i] in GOES_ON_BEFORE and said[i + 1] in OPENS_CLAUSE
                   or said[i] == "the" and said[i + 1] in ORDINALS]
        cut = min(goes_on or [i for i in window if said[i] in SOFT] or [k + most], key=lambda i: abs(i - k - wanted))
        while cut - 1 >= k + fewest and said[cut - 1] in CUT_BEFORE:
            cut -= 1  # "okay so", "and then": before both
        if len(words) - cut < fewest:  # no breath of a word or two at the end: the last two share the words
            cut = k + (len(words) - k) // 2
        yield words[k][0], words[cut - 1][1]
        k = cut
    yield words[k][0], words[-1][1]


def sentences(text: str) -> list[str]:
    """The sentences of ``text``, whitespace inside each collapsed."""
    return [" ".join(text[a:b].split()) for a, b in sentence_spans(text)]
