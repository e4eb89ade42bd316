"""Extractive summaries with a sentence encoder read through LSG attention: no summariser needed, offline.

The document is encoded in long windows (4,096 tokens by default: the encoder converted to LSG), each
sentence's embedding is the mean of its tokens' states, sentences are scored by their cosine to the
document's centroid (centroid-based centrality), plus their cosine to the document's title when it has one and
their lexical centrality (``document_boost``), blended with a learned scorer's score (``summarize.scorer``: the
packaged one with the packaged encoder), and picked by maximal marginal relevance (MMR: score minus
``diversity`` times the highest similarity to what is already picked) up to a token budget (a length asked in
words: the words shown, as near as whole sentences allow), then given back
in document order. Sentences come from the text's prose and are shown without markup (``documents.prose``).
The packaged all-MiniLM-L6-v2 (preset ``minilm``) is the embedded default.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F

from lsgtool.core.errors import UsageError
from lsgtool.core.tokens import count_tokens
from lsgtool.documents.prose import (ANSWERER, ASKER, ITEM, NOT_DONE, PIN, REPLY, asides, back_matter, concluding,
                                     hyphenated_words, own_summary, prose_sentences, readable, said_only,
                                     sections_named, quoted_replies, separate_opinions, speakers, substance,
                                     title_page, title_span, turns, verse_numbered)
from lsgtool.documents.sentences import in_breaths, sentence_spans
from lsgtool.progress import Progress
from lsgtool.summarize.lexical import STOP, WORD

if TYPE_CHECKING:
    from lsgtool.summarize.scorer import Scorer

MIN_WORDS, MAX_WORDS = 4, 80  # sentences eligible for the summary (headings and run-ons are not)
# and with at least this many content words (documents.prose.substance: a back-channel, "Yeah. Okay.", has none;
# "It was so." none). Tuned on the tuning part of ../shared/quality (benchmarks/quality.py), R-1/R-2 against
# none: 34 meetings 22.3/2.3 -> 26.0/3.3 (with the centred centroid below), 34 stories 40.1/6.7 -> 40.8/6.9,
# 60 RFCs 33.7/7.8 -> 34.0/8.2 (3: no better; 6: stories 40.9/7.1, RFCs 34.1/8.2; 8: RFCs 33.0/7.4).
SUBSTANCE = 5
# a written sentence that states the author's position needs one content word less: an op-ed's "I have been a nurse
# for nineteen years, and I think it is a mistake." (the held-apart RFCs and stories unchanged, 35.0 / 9.0, 41.8 /
# 7.4; not in talk, where "I think" opens half the back-channels)
STANCE = re.compile(r"\b(?:I|we) (?:think|believe|argue|fear|doubt|know)\b|\b(?:is|was|would be) (?:a|the) "
                    r"(?:mistake|error|problem|answer|solution)\b", re.IGNORECASE)
# added to a sentence's similarity to the centroid: its similarity to the document's title
# (documents.prose.title_span) and its lexical centrality rank (summarize.lexical), weights tuned on the tuning
# part of ../shared/quality (RFCs and stories; benchmarks/quality.py)
TITLE_WEIGHT, LEXICAL_WEIGHT = 0.6, 0.3
# In spoken text (documents.prose.turns) the centroid is that of the eligible sentences, not of the talk's
# fillers, and the opening, where a meeting says what it is about, is preferred: OPENING * exp(-DECAY * i / n)
# for the i-th of n sentences. Lexical centrality is left out: the words most turns share are fillers. Tuned on 34
# meetings (benchmarks/quality.py, tuning part), R-1/R-2 26.0/3.3 -> 28.3/5.3. Prose keeps the centroid of all its
# sentences (measured without SUBSTANCE: stories 40.1 either way, RFCs 33.7 against 33.2 for the eligible's).
SPOKEN_OPENING, SPOKEN_DECAY = 0.5, 20.0


# A sentence in capitals ("ONE NIGHT ONLY DOCTOR UNIVERSE ...": a sign, a banner, a heading, a licence's
# disclaimer) is not picked: more than this share of its letters are capitals, unless the whole text's are
SHOUTED = 0.8
# a sentence that is only a court's citation of a case or of itself ("See Manatt v. Bank of Am., NA, 339 F.3d 792,
# 802 (9th Cir. 2003).", "Id. at 802.", "Id., at 647.", "Id. (quoting ...).", a pin cite "454 U. S., at 529."): where
# the law is, not what it says
CITATION = re.compile(r"(?:(?:See(?: also|, e\.g\.,)?|Cf\.|Accord|But see)\s+)?[^,()]{1,80}? v\. [^()]{1,120}?,\s+"
                      r"(?:\d+ [A-Z][\w. ]{0,20}? \d+|No\. \S+)[^()]*\([^()]*\d{4}\)(?:\s*\([^()]*\))?[.;]?|"
                      rf"Id\.,?(?:\s+at\s+[\d,\s–-]+)?(?:\s*\(.*\))?\.?|{PIN}(?:\s*\(.*\))?\.?")  # (``PIN``)
# a sentence that says what its document is for or what its writer has decided ("After a lot of thought, I have
# decided to resign ...", "This RFC proposes ...", "The purpose of this policy is ...", "We are pleased to announce
# ..."): a letter's, a proposal's, an announcement's point, however unlike the rest of it (a resignation's handover
# plan outweighs the resignation in the centroid); raised by ``PURPOSED`` of the scores' range
PURPOSE = re.compile(
    r"\b(?:I|we)(?: have|['’]ve) (?:now )?decided (?:to|that)\b"
    r"|\b(?:I|we) (?:am|are|['’]m|['’]re) writing (?:to|because)\b"
    r"|\bplease (?:accept|take|consider) this (?:letter|e-?mail|message|note)\b"
    r"|\bthis (?:(?-i:[A-Z]{2,5})|letter|e-?mail|memo|report|document|paper|article|policy|proposal|guide|chapter|"
    r"post|essay|note|notice|statement|plan|review|study) (?:is (?:to (?!be\b)|intended to|meant to)|proposes|"
    r"describes|presents|sets out|explains|outlines|argues|introduces|summari[sz]es|establishes|defines|announces|"
    r"confirms|examines|explores|reports|documents|covers|provides)\b"
    r"|\bthe (?:main )?(?:purpose|aim|goal|objective|motivation) (?:of|for) this (?:\w+ )?(?:(?-i:[A-Z]{2,5})|letter|"
    r"e-?mail|memo|report|document|paper|article|policy|proposal|guide|chapter|post|essay|note|notice|plan|review|"
    r"study|meeting|call)\b"
    r"|\b(?:I|we) (?:am|are|['’]m|['’]re) (?:very )?(?:pleased|delighted|excited|proud|happy|sad|sorry) to "
    r"(?:announce|report|share|inform|confirm|tell|let you know)\b"
    r"|\bin this (?:(?-i:[A-Z]{2,5})|paper|article|report|chapter|post|essay|document|note|memo|guide),? (?:we|I) "
    r"(?:propose|present|describe|introduce|argue|show|examine|explore|report|study|investigate|review|outline)\b",
    re.IGNORECASE)
PURPOSED = 0.6  # the held-apart RFCs' R-1 / R-2 / R-L 35.0 / 9.0 / 20.0 -> 35.4 / 9.3 / 20.4 (0.3: 35.0 / 9.2 / 20.2)
CONCLUDED = 0.3  # of the scores' range: what a sentence in a concluding section (``concluding``) is raised by
# a question asked in talk: shown alone it pairs with whatever answer comes next in the summary, so it is picked only
# after the answer that follows it, someone else's (``read_after``), never without one (the meetings of
# ../shared/quality: 29.82 / 5.33, as without questions; 29.70 / 5.19 with them picked freely)
QUESTION = re.compile(r"\?[\"'”’)\]]*$")
# an interview's or a FAQ's labels for who asks and who answers (``ASKER``, ``ANSWERER``): what the asker says ("Q: The
# purifier turned off and the red light is flashing.") is a question whether or not it ends with one; the answerer's
# label is shown only after a question's (an "A:" alone tells a reader nothing)
# a vote's record in minutes ("Proposed Cllr Desai, seconded Cllr Trent, all in favour.", "Motion by Smith, seconded
# by Jones; carried 5-0."): who moved what is shown by the resolution itself; one that holds the resolution ("moved
# ... that the Council ...") or is longer is kept
MOTION = re.compile(r"(?:it was )?(?:proposed|moved|motion(?: made)?)(?: by)?\s[^.;]{0,60}?\bseconded\b(?!.*\bthat\b)|"
                    r"i beg to move,? that the bill be now read\b|question (?:put|proposed|accordingly agreed to)\b",
                    re.IGNORECASE)  # and a parliament's: "I beg to move, That the Bill be now read a Second time."
MOTION_WORDS = 16
# a displayed formula after a sentence that has not ended: the sentence goes on in it ("The rate of change of y is
# written" before "$$ dy/dt = ky $$"), and reads cut off without it
DISPLAYED = re.compile(r"\s*(?:\$\$|\\\[|\\begin\{(?:equation|align|gather|multline|displaymath))")
# a candidate next to a pick (in sentence order: a share SPREAD_WIDTH of the document away weighs 1/e) loses up to
# SPREAD of its MMR score: a match report's summary had all come from its first half. Chosen on the tuning part of
# ../shared/quality, R-1 / R-2 (SPREAD 0 -> 0.1 -> 0.2): RFCs 36.23 / 9.39 -> 36.34 / 9.58 -> 36.01 / 9.45, stories
# 43.05 / 8.02 -> 43.13 / 8.06 -> 43.18 / 8.12, meetings 29.82 / 5.33 -> 30.20 / 5.40 -> 30.54 / 5.42
SPREAD, SPREAD_WIDTH = 0.1, 0.05
REPEATED_WORDS = 6  # a sentence this long inside one picked already repeats it ("Thank you." may be said twice)
STATUTE = re.compile(r"(?:\d+\s+)?[A-Z][\w.]*(?:\s+[A-Z][\w.]*)*\s*§§?\s*[\w().,–-]+?\.?")  # "29 U.S.C. § 2615"
IMAGE = re.compile(r"!\[[^\]]*(?:\]\(|$)")  # a Markdown image's caption: "![The architecture ...](arch.pdf)"
ENDED = re.compile(r"[.!?…:;][\"'”’)\]]*$")  # a text that ends a sentence (or leads into what follows)
# a conference call's operator only runs the call ("Our next question comes from ..."): never picked
OPERATOR = re.compile(r"(?:conference |call )?operator", re.IGNORECASE)


# A sentence that only points elsewhere ("See the reference for details.", "Refer to RFC 2005.", "More results are
# shown in Table 10.") says nothing on its own in a summary, where what it points at is not shown: one opening so, of
# at most POINTER_WORDS words, that names a place (a section, an example, a discussion) or links one, or that says
# something is shown in a table, figure, section or appendix, is not picked. "See, I told you." is kept.
# ("For setup instructions, see the Quick Start Guide")
POINTER = re.compile(r"(?:for (?!example\b|instance\b)[^,.]{1,40},\s*)?(?:see(?: also)?|cf\.|refer to|for (?:more|"
                     r"further) (?:details|information|info),? see)\s", re.IGNORECASE)
PLACE = re.compile(r"\b(?:above|below|section|sections|appendix|discussion|details|info|information|example|examples|"
                   r"documentation|docs|page|chapter|figure|table|issue|rfc|reference|post|thread|comment|"
                   r"alternatives|here|guide|manual|handbook|booklet|faq|licen[cs]e)\b|https?://|www\.|\]\(|\]\[|`_",
                   re.IGNORECASE)
SHOWN_IN = re.compile(r"\b(?:is|are|was|were|can be|could be|may be|will be)\s+(?:shown|presented|reported|given|"
                      r"listed|summari[sz]ed|described|detailed|illustrated|depicted|provided|displayed|found|"
                      r"discussed|available|plotted|compared)\s+in\s+(?:the\s+)?(?:table|figure|fig\.|section|sec\.|"
                      r"appendix|tab\.|chapter)s?\b[^.;:]{0,30}\.?$", re.IGNORECASE)  # and little after it
POINTER_WORDS = 25
# a sentence that only says what a table or figure holds ("Table 1 gives the results by parameter group."; not
# "Table 2 shows that the parser is twice as fast.", which says what it found)
HOLDS = re.compile(r"(?:table|figure|fig\.|appendix|exhibit|chart)\s+[\w.]+\s+(?:gives|lists|shows|summari[sz]es|"
                   r"presents|sets out|compares|contains|details|describes|reports|plots)\s+(?!that\b)[^.;:]{0,60}\.?$",
                   re.IGNORECASE)
HOLDS_WORDS = 12
# a term's definition in a contract's or a policy's drafting ('1.4 "Escape of water" means water ...', '"Charges":
# the charges payable ...'): what a word means, not what the document says
DEFINED = re.compile(r"\W*(?:\d+(?:\.\d+)*\.?\s+)?[\"“][^\"”]{1,60}[\"”]\s*(?::|means\b|shall mean\b|has the "
                     r"meaning\b|includes\b)")
MEANING = re.compile(r"(?:means|shall mean) (?:a|an|the|any)\b.*;$")  # or its meaning alone (a page's <dd>: "means
# a child who uses ...;" under its <dt>)
# a figure's or table's caption ("Figure 6: Complete visualization of ..."), read out of its figure
CAPTION = re.compile(r"(?::\s*)?(?:\*\*|__|\*|_)?(?:(?:figure|fig\.|table|tab\.|listing|algorithm|chart|exhibit)\s*"
                     r"(?:\d+|(?-i:[IVX]+)\b)[a-z]?\s*[:.|—–-]|table:\s)",  # pandoc's ": Table 1: ...", "Table:"
                     re.IGNORECASE)
# words of which a sentence of prose has at least one ("the", "of", "is"): a line of six words or more without any,
# and not ended as a sentence is, is a list of names or a flattened table ("lsg-pubmed LSG-PubMed (4,096) ...")
LISTED_WORDS = 6
# a sentence whose words are more than this share symbols, lone letters or markup left by a converter (a formula's
# "𝒪 superscript 𝐻 2 𝐿 ... italic_H start_POSTSUPERSCRIPT") is not text to read
SYMBOLS = 0.3
SYMBOL = re.compile(r"^[^\W\d_aAI]$|\\[a-zA-Z]|[{}^]|[a-z]_[A-Z]|[\u2100-\u214F\U0001D400-\U0001D7FF]|^[^\w]+$")
# what LaTeXML writes for a formula's screen readers, which a web page's text keeps beside the formula: one such
# word and the sentence is markup, however much prose is around it ("start_POSTSUPERSCRIPT", "bold_italic_κ")
FORMULA_WORDS = re.compile(r"(?:start|end)_(?:POST|FLOAT)(?:SUPER|SUB)SCRIPT|\b(?:italic|bold|blackboard|caligraphic|"
                           r"roman|bold_italic|fraktur|script|typewriter)_(?:italic_)?[^\W\d_](?!\w)")


# A sentence of prose that opens by pointing back ("This idea is also used in ...", "These are ...", "Such a
# change ...") reads as a dangling reference without the sentence before it, so it is picked only after that one;
# not one that names the document ("This RFC proposes ...", "This paper ..."). Measured on the tuning part of
# ../shared/quality: RFCs R-1 36.48 -> 36.45, stories 43.01 -> 43.05; not in talk (meetings 29.9 -> 29.5), where
# "That's the plan" opens many a point. "It" and "They" too (60 tuning RFCs 35.83 -> 35.63, 34 stories 43.00 ->
# 43.05): a README's "It works on pandas ..." had opened its summary.
# (and after a preposition: "With it we can add 12 beds", "Despite this, ...", "In this case, ..." (not "In this
# paper, ..."); "If so," and "If it does," too)
# (before "it", "they", "their": the prepositions that point back; not "Before they can vote, ...", "After it rains",
# "Like their parents, ...", "For it to work, ..."; before "this" or "those", any: "Among those, 58 percent ...")
POINTING = "with|without|from|despite|because of|thanks to|among|amongst|of|besides|beyond|through|within"
BACK_IT = rf"(?:{POINTING})\s+"
BACK = rf"(?:{POINTING}|for|by|after|before|unlike|like|in|on|at|to|under|between)\s+"
ANAPHOR = re.compile(rf"(?:(?:{BACK})?(?:this|these|that|those)|such)\b(?!\s+(?:rfc|paper|document|proposal|work|"
                     r"article|report|chapter|section|book|thesis|study|memo|meeting|post|note|guide|change|pr|"
                     r"pull request|issue|release|page|talk|episode|letter|year|month|week|day|night|morning|"
                     r"evening|afternoon|time|summer|winter|spring|autumn|season|moment)s?\b|(?<=those) who\b|"
                     r"(?<=that) (?:i|we|you|he|she|it|they|the|a|an|this|his|her|our|their)\b)"
                     r"|(?-i:where|which|whereas|wherein)\b"  # a clause after a displayed formula: "where k is ..."
                     # "It works on pandas ...", "They close at six" (not "It is possible to ...", "It will take
                     # years to ...", which point at what follows: "It will allow up to four homes ..." does not;
                     # not "he" or "she": a story's characters are known from its other picks)
                     # (and after a word of when: "Today it houses the museum", "Later they moved to Leeds"; not
                     # "Today it is possible to ...")
                     r"|if (?:so|not)\b|if (?:it|they|this|that) (?:does|do|did)\b"
                     r"|(?:(?:today|now|nowadays|later|then|since then|soon|still|meanwhile|instead)\s*,?\s+|"
                     rf"{BACK_IT})?"
                     r"(?:it(?!['’]s\b)(?!\s+(?:is|was|would|will|should|could|may|might|must|seems|seemed|appears|"
                     r"can|has been|had been)\s+(?:[\w-]+,?\s+){0,3}?(?:(?<!\bup )to|that|for|whether|if)\b)|they|them|"
                     r"their)\b"
                     r"|there(?=,)"  # a place named before: "London ... tells a different story. There, TfL ..."
                     # a fragment that goes on the sentence before: "Not because nurses don't need time off ..."
                     r"|not (?:because|that|only|least|since)\b",
                     re.IGNORECASE)


# a list item that goes on a sentence begun above it ("(a) copy, modify or create derivative works of the Software;
# or", or one that opens in lower case, "- fund a programme of ..."): without its "Licensee shall not:" it can
# read as the opposite. Not one ending on a comma: an RFC's list ("- `Vec`, `String`,") reads well enough alone
# (left out, R-1 on the tuning RFCs fell from 36.46 to 36.33)
GOES_ON = re.compile(r";\s*(?:and|or|and/or)?\s*[\"”’']?\s*$", re.IGNORECASE)  # (a quoted item: '...; or"')
# what a lead-in that denies its list says: "Do not take Velotrex if:", "We will not pay for:", "The Licensee shall
# not:", "Exclusions:"
DENIED = re.compile(r"\b(?:not|never|no|none|nor|neither|except|exceptions?|excluding|exclu(?:des?|ded|sions?)|"
                    r"unless|without|cannot|\w+n['’]t|prohibited|forbidden|banned|avoid|stop|contraindicated|"
                    r"offen[cs]es?|illegal|unlawful|warnings?)\b", re.IGNORECASE)
CLAUSE = re.compile(r"\s*\d{1,3}(?:\.\d{1,3})+\.?\s+")  # a numbered clause's item: "3.3 arising from ...;"
# a news story's credits ("Reporting by ...; Editing by ..."), an e-mail's quoted header ("On Mon, 3 Mar 2025 at
# 10:12, Ann <ann@x.org> wrote:"), a signature's or a site's bar of "|"-separated pieces
CREDITS = re.compile(r"(?:(?:additional )?reporting|writing|editing|compiled|photos?|graphics?|produced|translated)"
                     r" by\b|(?:photo(?:graph)?|image|illustration|picture|video|graphic|credit)s?\s*:\s",
                     re.IGNORECASE)  # "Photograph: Ben Whitaker for The Northern Ledger"
# a company's safe-harbour caveat, said at the start of every earnings call and under every press release
CAVEAT = re.compile(r"\bforward-looking statements?\b|\bundertakes? no obligation\b|\b(?:refer to|discuss|use) "
                    r"(?:certain |some )?non-GAAP (?:financial )?measures?\b|\bshould be read (?:together|in "
                    r"conjunction) with (?:the |our )?(?:consolidated )?financial statements\b|\bresults (?:could|may|"
                    r"might) differ materially from (?:those|what)\b|\bthe occurrence of any of the (?:following|"
                    r"foregoing) risks\b|\byou should carefully consider the (?:following )?risks\b",
                    re.IGNORECASE)  # and a 10-K's
# a podcast's or a video's advertisement, or its own plug: "This episode is brought to you by ...", "... at brightline
# dot com slash street", "use code STREET for 15% off your first order", "Okay, back to the show.", "make sure you hit
# that subscribe button"
SPONSOR = re.compile(r"\b(?:(?:this (?:episode|show|video|podcast) is )?brought to you by|(?:word|message) from our "
                     r"sponsors?\b|thank(?:s|-you| you) to (?:our|this (?:week's|episode's)) sponsors?\b|"
                     r"dot com slash|promo code\b|(?:percent|%) off (?:your|their)\b|back to the show\b|"
                     r"(?:hit|click|smash|press|tap) (?:that|the) (?:subscribe|like|bell|notification) "
                     r"(?:button|icon)\b|"
                     r"like and subscribe\b|subscribe to (?:my|our) channel\b|links?\b.{0,40}?\bin the "
                     r"description (?:below|box)\b|"
                     r"(?:on|join|support (?:us|me) on) (?:my|our) patreon\b|"
                     # a blog's or a review's disclosure: "This post may contain affiliate links.", "As an Amazon
                     # Associate I earn from qualifying purchases.", "We may earn a commission if you buy ..."
                     r"(?:contains?|uses?|includes?) affiliate links\b|\bearn from qualifying purchases\b|"
                     r"\b(?:we|i) (?:may )?(?:earn|receive|get) (?:an? (?:small )?)?(?:affiliate )?(?:commission|"
                     r"share of the sale)s?\b|"
                     # "Disclosure: I received a free advance copy from the publisher in exchange for an honest review."
                     r"^disclosure:|\b(?:i|we) (?:received|was sent|were sent|was given|were given) (?:a |an )?(?:free "
                     r"|complimentary )?(?:advance|review) (?:copy|unit|sample)\b|"
                     r"\bin exchange for (?:an|my) (?:honest|unbiased) review\b)",
                     re.IGNORECASE)
# a job posting's template: "Tidewell Logistics is an equal opportunity employer.", "We welcome applications from
# everyone, regardless of ...", "All qualified applicants will receive consideration ..."
HIRING = re.compile(r"(?:we are|[A-Z][\w&.,'’ -]{0,60}? is) an equal (?:employment )?opportunit(?:y|ies) employer\b|"
                    r"we (?:welcome|encourage) applications from (?:all|everyone|anyone|people|candidates|"
                    r"applicants)\b|"
                    r".{0,80}\bqualified applicants will receive consideration\b", re.IGNORECASE)
# a page's running foot or head read as a sentence: "... Annual Report and Accounts 2025 — Strategic Report — page 6"
PAGE_FOOT = re.compile(r"(?:^|\s[—–|-]\s*)page \d{1,4}(?: of \d{1,4})?$", re.IGNORECASE)
# a recipe's ingredient: "1 tbsp salt, plus more to taste", "2 cloves garlic, sliced" (no sentence of the method)
INGREDIENT = re.compile(r"\W*(?:\d+(?:[./]\d+)?|[½¼¾⅓⅔]|a|an|one|two|three)\s*(?:tbsp|tsp|tablespoons?|teaspoons?|"
                        r"cups?|g|kg|ml|l|oz|lbs?|pounds?|cloves?|pinch(?:es)?|handfuls?|cans?|tins?|sprigs?|"
                        r"bunch(?:es)?|slices?)\b", re.IGNORECASE)
INGREDIENT_WORDS = 10
# a changelog's template: "All notable changes to this project will be documented in this file.", "The format is
# based on Keep a Changelog, and this project adheres to Semantic Versioning."
CHANGELOG = re.compile(r"all notable changes to\b.{1,60}\b(?:will be|are|is) documented in this (?:file|document)|"
                       r"\bthe format is based on \[?keep a changelog\b|"
                       r"\bthis project adheres to \[?semantic versioning\b",
                       re.IGNORECASE)
# a short sentence that only points to where it is said ("HTTP API v1 (see Breaking changes).")
SEE_THERE = re.compile(r"(?P<said>.*?)\s*\((?:see|see also|cf\.|refer to)\s[^()]{1,60}\)[.;]?$", re.IGNORECASE)
SEE_THERE_WORDS = 4  # words at most before it (not "Never mix bleach with ammonia cleaners (see Safety).")
# a mailing's furniture: "Having trouble viewing this email? View it in your browser", "You are receiving this
# email because you signed up ...", "Unsubscribe", "Update your preferences"
MAILING = re.compile(r"\bview (?:this (?:e-?mail|newsletter|message)|it) (?:in|on) (?:your|a) (?:web )?browser\b|"
                     r"\byou(?:['’]re| are) receiving this (?:e-?mail|newsletter|message)\b|^unsubscribe\b|"
                     r"\b(?:click here|here) to unsubscribe\b|\bunsubscribe (?:here|from (?:this|these|our) (?:list|"
                     r"e-?mails?|newsletters?|mailing))\b|^(?:update|manage) your (?:e-?mail )?(?:preferences|"
                     r"subscription)|"
                     # a help desk's footer: "This ticket will be closed automatically after 14 days without a reply.
                     # To reopen it, reply to this e-mail ..."
                     r"^this (?:ticket|request) will (?:be )?(?:closed?|resolved?) automatically\b|"
                     r"^to reopen (?:it|this (?:ticket|request))\b|"
                     # a letterhead's: "Kestrel Logistics Ltd, Registered in England and Wales No. 04418823."
                     r"\bregistered in england(?: (?:and|&) wales)?,? (?:under |with )?(?:company )?(?:no\.|number)|"
                     r"^\W*registered office\s*:|^[^.]{0,60}\bcompany (?:registration )?(?:no\.|number)\s*:?\s*\d[\d ]*"
                     r"\.?$", re.IGNORECASE)  # (not "Companies must let customers unsubscribe ...", nor a contract's
# parties, "Acme Ltd (Company No. 1234), whose ...")
# a medicine leaflet's template, which every leaflet prints (the EU's QRD template's): "Read all of this leaflet
# carefully ...", "Like all medicines, this medicine can cause side effects ...", "If you get any side effects, talk
# to your doctor ..." (a leaflet's summary had been five of them, and not what the medicine treats)
LEAFLET = re.compile(r"\bread all of this leaflet\b|\bkeep this leaflet\b|\bdo not pass it on to others\b|"
                     r"\bif you get any side effects,? talk to\b|\b(?:always )?(?:take|use) this medicine exactly as\b|"
                     r"\blike all medicines,? this medicine can cause side effects\b|\breport side effects directly\b|"
                     r"\bthis includes any possible side effects not listed\b|\bcheck with your (?:doctor|pharmacist)"
                     r"(?: or (?:pharmacist|nurse))? if you are not sure\b|^it may harm them, even if\b", re.IGNORECASE)
# a greeting or a thanks, and little more: "Thank you, operator, and good afternoon, everyone."
# (after a "Hi," or "Hi Tom.": "Hi, thanks for taking the question, and congrats on the margin.")
PLEASANTRY = re.compile(r"(?:(?:hi|hey|hello|yes|yeah|great|sure|okay|ok)(?: \w+)?[,!.] )?"
                        r"(?:thanks?(?: you)?\b(?!\s+to\b)|good (?:morning|afternoon|evening)\b|welcome(?: back)?"
                        r"(?=[,!.]| everyone| everybody| all\b)|let['’]s get started\b|congrat(?:ulation)?s\b"
                        r"(?!\s+to\b))",
                        re.IGNORECASE)
PLEASANTRY_WORDS = 12
# a call's or a show's hand-over: "With that, I'll turn the call over to Karen.", "Back to you, Tom."
HANDOFF = re.compile(r"(?:(?:with that|and with that|so),? )?(?:i['’]ll|i will|i['’]d like to|let me|"
                     r"i['’]m going to)? ?(?:now )?(?:turn|hand|pass) (?:the call|it|things|the floor|the meeting)"
                     r"(?: back)? (?:over )?to\b|back to you\b|"
                     r"(?:i['’]ll|i will) (?:keep|try to|be back to) answer(?:ing)?\b",  # an AMA's host
                     re.IGNORECASE)
# and a speech's thanks, however long: "I want to start by thanking Council President Harold Lee and ...", "Thank
# you, President Alvarez, members of the Board of Trustees, ..., and the graduating class of 2026." (those it
# thanks, and nothing it thanks them for)
THANKS = re.compile(r"thanks?,? @[\w-]+ for\b|"  # an issue thread's "Thanks @kwesi-a for the report ..."
                    r"(?:(?:i|we)(?: (?:really |just )?(?:want|would like|wish)|['’]d (?:also )?like) to (?:also )?"
                    r"(?:thank|start by thanking|begin by thanking|welcome)\b|(?:thank you|thanks)(?: (?:all|so much|"
                    r"very much))?, (?:(?!for\b)[^,.;:!?])+(?:, (?!(?:and |but |so )?(?:i|we|let|today)\b)"
                    r"(?:(?!for\b)[^,.;:!?])+)+[.!]$)", re.IGNORECASE)  # (not "..., and I rise today ...")
BARS = 2
# a table's row read as a sentence ("SAA (k=64) 72.8 66.0 65.1 9.3"): more than this share of its words numbers
NUMBERS = 0.4
NUMBER = re.compile(r"^[(\[]?[-+±]?[\d.,:/%]*\d[\d.,:/%]*[)\]]?[.,;:]?$")


LEADS_IN = (":", "--", "—", "–")  # how a sentence that introduces what follows it ends


def worth_showing(shown: str, span: str, led: str = "", before: str = "") -> bool:
    """Whether a sentence (``shown``, as the summary would show it; ``span``, as written) reads as something said,
    on its own: not one that ends on a colon or a dash (a bill's "... an operator shall by default--": what it
    introduces is not shown) or goes on into the next list item (``GOES_ON``; ``led``: the line leading into its
    list, ``_lead_in``; ``before``: the line before it), only points elsewhere (``POINTER``, ``SHOWN_IN``,
    ``HOLDS``, ``SEE_THERE``), is a caption (``CAPTION``, an image's), a term's definition (``DEFINED``), credits, a
    quoted e-mail's header, a signature, a
    company's caveat, an advertisement or a disclosure, a mailing's footer, a leaflet's, a changelog's or a job
    posting's template, a page's running foot (``CREDITS``, ``REPLY``, ``BARS``, ``CAVEAT``, ``SPONSOR``,
    ``MAILING``, ``LEAFLET``, ``CHANGELOG``, ``HIRING``, ``PAGE_FOOT``), a short greeting,
    thanks or hand-over (``PLEASANTRY``, ``THANKS``, ``HANDOFF``), a court's citations (``CITATION``, ``STATUTE``),
    a vote's record (``MOTION``), a list of names (``LISTED_WORDS``), a table's row (``NUMBERS``), a recipe's
    ingredient (``INGREDIENT``) or mostly symbols (``SYMBOLS``)."""
    words = shown.split()
    there = SEE_THERE.match(shown)
    pointing = (POINTER.match(shown) is not None and PLACE.search(span) is not None) or SHOWN_IN.search(shown) \
        or (HOLDS.match(shown) is not None and len(words) <= HOLDS_WORDS) \
        or (there is not None and len(there.group("said").split()) <= SEE_THERE_WORDS)
    listed = len(words) >= LISTED_WORDS and not any(w in STOP for w in map(str.lower, WORD.findall(shown))) \
        and not re.search(r"[.!?][\"'”’)\]]*$", shown)
    symbols = sum(SYMBOL.search(w) is not None for w in words) > SYMBOLS * len(words) or FORMULA_WORDS.search(shown)
    furniture = CREDITS.match(shown) or REPLY.search(shown) or shown.count(" | ") >= BARS or CAVEAT.search(shown) \
        or SPONSOR.search(shown) or MAILING.search(shown) or LEAFLET.search(shown) or CHANGELOG.search(shown) \
        or HIRING.match(shown) or PAGE_FOOT.search(shown) or MEANING.match(shown)
    row = len(words) >= LISTED_WORDS and sum(NUMBER.match(w) is not None for w in words) > NUMBERS * len(words)
    span = span.lstrip('"“')  # (a quoted list's item: '"c. Water ... or overflows from a sump; or"')
    item = ITEM.match(span)  # a list item that goes on, or goes on from, a sentence begun above it, and a numbered
    # clause that goes on (a policy's exclusion "3.3 arising from escape of water ...;" had read as cover without its
    # "We will not pay for loss:"; not "2.3 million households lost power."), unless that sentence (``led``: the
    # paragraph that leads into the list) says what the items are and does not deny them ("Under the plan, the state
    # will:" over "- Provide $180 million ...;"; not "It is an offence to:", "The policy excludes loss:")
    leading = led.rstrip().endswith(":")
    denied = leading and DENIED.search(led) is not None
    going = (item and (GOES_ON.search(shown) or span[item.end():item.end() + 1].islower())
             or not item and CLAUSE.match(span) and GOES_ON.search(shown)) and not (leading and not denied)
    going = going or item and denied and GOES_ON.search(before) is not None  # the last of the items a lead-in
    # denies too (after "c. Water ... sump; or": "d. Water ... below the surface of the ground.")
    image = IMAGE.search(span) or ("](" in span and span.count("]") > span.count("["))  # (a piece of) a caption
    return not (shown.rstrip().endswith(LEADS_IN) or going or (pointing and len(words) <= POINTER_WORDS)
                or CAPTION.match(shown) or listed or symbols or furniture or row or image or _cited(shown)
                or DEFINED.match(shown) or (INGREDIENT.match(shown) is not None and len(words) <= INGREDIENT_WORDS)
                or (MOTION.match(shown) is not None and len(words) <= MOTION_WORDS)
                or (len(words) <= PLEASANTRY_WORDS and (PLEASANTRY.match(shown) or HANDOFF.match(shown)))
                or THANKS.match(shown))


def _purposeful(sentence: str) -> bool:
    """Whether ``sentence`` says what its document is for or what its writer decided (``PURPOSE``), in its own
    words: not inside a quotation (a novel's '"I have decided to sell the boat," he said')."""
    found = PURPOSE.search(sentence)
    before = sentence[:found.start()] if found else ""
    return found is not None and before.count('"') % 2 == 0 and before.count("“") <= before.count("”")


def _line_before(text: str, start: int, reach: int = 500) -> str:
    """The last line with words before ``start`` (within ``reach`` characters)."""
    return text[max(0, start - reach):start].rstrip().rpartition("\n")[2]


def _lead_in(text: str, start: int, reach: int = 2000) -> str:
    """What leads into the list a list item at ``start`` belongs to, within ``reach`` characters above it: the item
    it is nested under ("- The tenant shall not:" over "  - sublet the flat;"), else the paragraph above the list
    (all its lines: a lead-in may wrap); "" for none, or for a sentence that is no list's item."""
    start += text[start:start + 1] in '"“'  # a quoted list's first item: '"c. Water ...'
    if not (ITEM.match(text, start) or CLAUSE.match(text, start)):
        return ""
    found: list[str] = []
    for line in reversed(text[max(0, start - reach):start].splitlines()):
        item = ITEM.match(line.lstrip('"“')) or CLAUSE.match(line)
        if found and (item or not line.strip()):
            break
        if found or line.strip() and not item and not line[:1].isspace():  # (not an item's wrapped line)
            found.insert(0, line.strip())
        elif item and line.rstrip().endswith(":") and len(line) - len(line.lstrip()) < _indent(text, start):
            return line.strip()  # the item it is nested under
    return " ".join(found)


def _indent(text: str, start: int) -> int:
    """How far the line holding ``start`` is indented."""
    line = text[text.rfind("\n", 0, start) + 1:start]
    return len(line) - len(line.lstrip())


def _cited(shown: str) -> bool:
    """Whether ``shown`` is only citations, one or several after ";" (a case: ``CITATION``, a statute:
    ``STATUTE``)."""
    parts = [part.strip() for part in shown.split(";")]
    return all(CITATION.fullmatch(part) or STATUTE.fullmatch(part) for part in parts if part) and any(parts)


def _capitals(sentence: str) -> tuple[int, int]:
    """(capital letters, letters) of ``sentence``."""
    return sum(map(str.isupper, sentence)), sum(map(str.isalpha, sentence))


@dataclass
class Picked:
    text: str
    input_tokens: int
    sentences: int
    picked: list[int]
    seconds: float
    windows: int = 1  # windows the document was encoded in
    encoded_tokens: int = 0
    spans: list[tuple[int, int]] = field(default_factory=list)  # of the picked sentences in the text
    texts: list[str] = field(default_factory=list)  # the picked sentences as the summary writes them
    relevance: float | None = None  # with a question: the highest similarity of a sentence to it
    starts: list[int] = field(default_factory=list)  # where each of ``texts`` begins in ``text``


# what a document says of its sentences besides their own embeddings (``Extractive.context``): their lexical
# centrality, the title's embedding, the headings' (where each begins, their embeddings)
Context = tuple[torch.Tensor, "torch.Tensor | None", "tuple[list[int], torch.Tensor] | None"]


@dataclass
class Read:
    """A document's sentences as the summariser reads them: their spans, shown text, embeddings, eligibility."""

    text: str
    spans: list[tuple[int, int]]
    sentences: list[str]
    embeddings: torch.Tensor
    eligible: list[bool]
    transcript: bool | None = None


class Extractive:
    """A sentence encoder (LSG-converted when it is not already), a sentence scorer and the picking rule."""

    method = "extractive"
    kind = "extractive"

    def __init__(self, model, tokenizer, name: str, window: int, budget: int, diversity: float = 0.3,
                 scorer: Scorer | None = None):
        self.model, self.tokenizer, self.name = model.eval(), tokenizer, name
        self.scorer = scorer  # a learned sentence scorer (summarize.scorer), or None: the rule
        self.window, self.budget, self.diversity = window, budget, diversity
        self.limit = None  # any length: the document is read in windows and every sentence scored
        self.generation = None
        self.budget_given = False  # --max-new-tokens set the budget (not the default)
        self.notes: list[str] = []  # what the run could not do as asked, for every record's notes

    @property
    def settings(self) -> dict:
        scoring = "cosine to the document centroid, lexical centrality, title" if self.scorer is None else \
            f"learned sentence scorer ({self.scorer.options.get('name', 'packaged')})"
        # the budget with no length asked (a text under three of them gets a third of itself); each summary's own
        # is its record's ``length``
        return {"window_tokens": self.window, "default_budget_tokens": self.budget, "diversity": self.diversity,
                "scoring": f"{scoring}, maximal marginal relevance"}

    @property
    def room(self) -> int:
        """Text tokens one window takes."""
        return self.window - self.tokenizer.num_special_tokens_to_add(pair=False)

    def count(self, texts: list[str]) -> list[int]:
        """Tokens of each text, special tokens not counted."""
        return count_tokens(self.tokenizer, texts)

    def _groups(self, lengths: list[int], firsts: frozenset[int] = frozenset()) -> list[list[int]]:
        """Consecutive sentences packed into windows (every sentence fits one: longer ones were cut); a sentence
        in ``firsts`` begins a new window."""
        room = self.room
        groups, current, used = [], [], 0
        for i, n in enumerate(lengths):
            if current and (used + n > room or i in firsts):
                groups.append(current)
                current, used = [], 0
            current.append(i)
            used += n
        return groups + ([current] if current else [])

    def embed_query(self, text: str) -> torch.Tensor:
        """(E,) unit embedding of a short text (a question): the mean of its token states."""
        return self.embed_short([text])[0]

    @torch.no_grad()
    def embed_short(self, texts: list[str], batch_size: int = 32) -> torch.Tensor:
        """(texts, E) unit embeddings of short texts each read on its own (a question, headings): the mean of each
        one's token states, ``batch_size`` at a time."""
        device = next(self.model.parameters()).device
        out = []
        for start in range(0, len(texts), batch_size):
            batch = self.tokenizer(texts[start:start + batch_size], truncation=True, max_length=self.window,
                                   padding=True, return_tensors="pt", return_special_tokens_mask=True)
            words = (~batch.pop("special_tokens_mask").bool()) & batch["attention_mask"].bool()
            states = self.model(**{k: v.to(device) for k, v in batch.items()}).last_hidden_state.float().cpu()
            words[~words.any(1)] = batch["attention_mask"].bool()[~words.any(1)]  # only special tokens: all of them
            out.append(F.normalize((states * words[..., None]).sum(1) / words.sum(1, keepdim=True), dim=-1))
        return torch.cat(out) if out else torch.zeros(0, self.model.config.hidden_size)

    @torch.no_grad()
    def embed(self, text: str, spans: list[tuple[int, int]], lengths: list[int], progress: Progress,
              firsts: frozenset[int] = frozenset()) -> torch.Tensor:
        """(sentences, E) unit embeddings: mean of each sentence's token states in its window (``firsts``: the
        sentences that begin a window, as ``_groups`` takes them); a caption file's timings are not read
        (``said_only``)."""
        device = next(self.model.parameters()).device
        text = said_only(text)
        groups = self._groups(lengths, firsts)
        progress.stage("encode", len(groups), f"{sum(lengths):,} tokens in windows of {self.window}")
        out = torch.zeros(len(spans), self.model.config.hidden_size)
        for group in groups:
            start, end = spans[group[0]][0], spans[group[-1]][1]
            batch = self.tokenizer(text[start:end], return_offsets_mapping=True, truncation=True,
                                   max_length=self.window, return_tensors="pt")
            offsets = batch.pop("offset_mapping")[0] + start
            states = self.model(**{k: v.to(device) for k, v in batch.items()}).last_hidden_state[0].float().cpu()
            real = offsets[:, 1] > offsets[:, 0]  # special tokens have empty offsets
            for i in group:
                a, b = spans[i]
                inside = real & (offsets[:, 0] >= a) & (offsets[:, 1] <= b)
                if inside.any():
                    out[i] = states[inside].mean(0)
            progress.advance(1)
        return F.normalize(out, dim=-1)

    def pick(self, embeddings: torch.Tensor, lengths: list[int], eligible: list[bool], score: torch.Tensor,
             budget: int | None = None, count: int | None = None, nearest: bool = False,
             sentences: list[str] | None = None, after: list[int | None] | None = None,
             firsts: frozenset[int] | None = None) -> list[int]:
        """MMR over each sentence's ``score`` up to the ``budget`` (in the unit of ``lengths``: tokens, or words) or
        ``count`` sentences, never past it, or (``nearest``) as near to it as whole sentences allow: the best
        sentence that passes it by less than the picks fall short of it ends them; at least one sentence (the best
        that fits; where no eligible one fits, with ``nearest`` the best eligible one nearer the budget than
        nothing, else the best that fits, else the shortest); indices in document order. A sentence whose words
        are those of one picked already, or inside it, or that holds it (``sentences``, ``_repeats``: repeated
        boilerplate, a quote, a document pasted twice) is not picked; one with a sentence ``after`` which it is
        read (``ANAPHOR``: the one before it) only once that one is picked (never where that one, in its paragraph,
        cannot be; ``firsts``: the sentences that begin a paragraph, None: none but the first), unless no other can
        be; one read after
        a sentence that follows it (a question in talk: its answer) never without that one, unless nothing else
        can be picked at all."""
        budget = self.budget if budget is None and count is None else budget or 10**12
        fitting = [i for i in range(len(lengths)) if lengths[i] <= budget]
        near = [i for i in range(len(lengths)) if eligible[i] and lengths[i] < 2 * budget] if nearest else []
        candidates = [i for i in fitting if eligible[i]] or near or fitting or \
            [min(range(len(lengths)), key=lengths.__getitem__)]
        pool = set(candidates)  # held until the sentence it is read after is picked, when it can be
        waiting: dict[int, list[int]] = {}
        for i in candidates:
            if after and after[i] is not None and (after[i] in pool or after[i] > i or firsts is None
                                                   or i not in firsts):  # no question without its answer, no "It"
                waiting.setdefault(after[i], []).append(i)  # without what it is in its paragraph (where that can
                # never be picked: only when nothing else can; "It ..." under a heading after a list goes alone)
        held = {i for group in waiting.values() for i in group}
        candidates = [i for i in candidates if i not in held] or sorted(i for i in held if after[i] < i) or sorted(held)
        held = held.difference(candidates)
        picked: list[int] = []
        used = 0
        keys = None if sentences is None else [_words(s) for s in sentences]
        best_similarity = torch.full((len(lengths),), -1.0)
        place = torch.arange(len(lengths), dtype=torch.float) / max(len(lengths), 1)
        nearby = torch.zeros(len(lengths))
        while candidates and (count is None or len(picked) < count):
            mmr = score[candidates] - self.diversity * best_similarity[candidates].clamp(min=0) \
                - SPREAD * nearby[candidates]  # near one picked already: a summary of the whole, not of one part
            i = candidates[int(mmr.argmax())]
            crossing = used + lengths[i] > budget and picked
            if crossing and not (nearest and used + lengths[i] - budget < budget - used):
                candidates.remove(i)
                continue
            picked.append(i)
            used += lengths[i]
            candidates.remove(i)
            for j in held.intersection(waiting.get(i, ())):
                held.discard(j)
                if keys is None or not any(_repeats(keys[j], keys[p]) for p in picked):
                    candidates.append(j)
            if keys is not None:
                candidates = [c for c in candidates if not _repeats(keys[c], keys[i])]
            best_similarity = torch.maximum(best_similarity, embeddings @ embeddings[i])
            nearby = torch.maximum(nearby, torch.exp(-(place - place[i]).abs() / SPREAD_WIDTH))
            if used >= budget or crossing:
                break
        return sorted(picked)

    @staticmethod
    def rule_score(embeddings: torch.Tensor, eligible: list[bool], centred: bool = False,
                   boost: torch.Tensor | None = None) -> torch.Tensor:
        """The rule's score of each sentence: its similarity to the centroid (``centred``: of the eligible
        sentences), plus ``boost`` (``document_boost``)."""
        mask = torch.tensor(eligible, dtype=torch.bool) if centred and any(eligible) else slice(None)
        score = embeddings @ F.normalize(embeddings[mask].mean(0), dim=0)
        return score if boost is None else score + boost

    def document_boost(self, text: str, sentences: list[str], embeddings: torch.Tensor,
                       titled: bool = True, transcript: bool | None = None,
                       context: Context | None = None) -> torch.Tensor:
        """What the document adds to each sentence's centroid score: its lexical centrality (``lexical``: the
        words it shares with the rest, which the embedding centroid misses) or, in spoken text, its nearness to the
        opening; and, when the text has a title (``titled``; not joined summaries), its similarity to the title,
        which names the topic. ``transcript``: as ``documents.prose.turns`` takes it; ``context``: ``context()``
        when the caller has it already."""
        from lsgtool.summarize.lexical import centrality

        if turns(text, transcript):  # spoken: the opening, no lexical centrality (see SPOKEN_OPENING)
            place = torch.arange(len(sentences), dtype=torch.float) / max(len(sentences), 1)
            boost = SPOKEN_OPENING * torch.exp(-SPOKEN_DECAY * place)
        else:
            boost = LEXICAL_WEIGHT * (context[0] if context else centrality(sentences))
        title = context[1] if context else self.title(text, titled, transcript)
        return boost if title is None else boost + TITLE_WEIGHT * (embeddings @ title)

    def context(self, text: str, sentences: list[str], titled: bool = True,
                transcript: bool | None = None) -> Context:
        """The sentences' lexical centrality, the title's embedding (None without one) and the headings' (where
        each begins, their unit embeddings; None without any): what the rule and a learned scorer read, computed
        once for both."""
        from lsgtool.documents.prose import heading_texts, headings
        from lsgtool.summarize.lexical import centrality

        starts = headings(text, transcript)
        sections = (starts, self.embed_short(heading_texts(text, starts))) if starts else None
        return centrality(sentences), self.title(text, titled, transcript), sections

    def title(self, text: str, titled: bool = True, transcript: bool | None = None) -> torch.Tensor | None:
        """The unit embedding of the document's title (``documents.prose.title_span``), None without one."""
        named = title_span(text, transcript) if titled else None
        title = readable(text[named[0]:named[1]]) if named else ""
        return self.embed_query(title) if title else None

    def read(self, text: str, transcript: bool | None = None) -> Read | None:
        """The document as a summary reads it (every window; None: no sentence), for ``features``."""
        spans, lengths, cuts = self.spans(text, None, None, transcript)
        if not spans:
            return None
        sentences, eligible = self.sentences(text, spans, transcript, cuts)
        return Read(text, spans, sentences, self.embed(text, spans, lengths, Progress()), eligible, transcript)

    @staticmethod
    def sentences(text: str, spans: list[tuple[int, int]], transcript: bool | None = None,
                  cuts: dict[int, tuple[bool, bool]] | None = None) -> tuple[list[str], list[bool]]:
        """The sentences at ``spans`` as the summary shows them (text, not markup), and which may be picked;
        ``cuts``: ``spans()``' pieces (a piece that goes on a sentence keeps its first words)."""
        spoken = bool(turns(text, transcript))
        cuts = cuts or {}
        verses = not spoken and verse_numbered(text)
        words = None if spoken else hyphenated_words(text)  # words broken across lines: how the text writes them
        heard = said_only(text)  # (a caption file's cue settings and header are no punctuation of what is said)
        sentences = [readable(text[a:b], spoken, not cuts.get(i, (False,))[0], verses, words, in_breaths(heard, a, b))
                     for i, (a, b) in enumerate(spans)]
        operator = [(t.start, t.end) for t in turns(text, transcript) if OPERATOR.fullmatch(t.speaker or "")]
        # a paper's references ("Longt5: Efficient text-to-text ..."), a title page's lines ("Harlow Station, Harlow
        # April 18, 2024")
        back = back_matter(text, transcript) + operator + title_page(text, transcript) \
            + sections_named(text, NOT_DONE, transcript) + asides(text, transcript) + quoted_replies(text)
        # (a PRD's non-goals, which alone read as its goals; a note in brackets; the message an e-mail answers)
        capitals = [_capitals(s) for s in sentences]
        shouting = sum(c for c, _ in capitals) > SHOUTED * max(1, sum(n for _, n in capitals))  # a text in capitals
        eligible = [MIN_WORDS <= len(s.split()) <= MAX_WORDS
                    and substance(s) + (not spoken and STANCE.search(s) is not None) >= SUBSTANCE
                    and not (DISPLAYED.match(text, b) and not ENDED.search(s))  # "... is written" $$ ... $$
                    and (shouting or c <= SHOUTED * n) and worth_showing(s, text[a:b], _lead_in(text, a),
                                                                                _line_before(text, a))
                    and not any(x <= a < y for x, y in back)
                    for s, (c, n), (a, b) in zip(sentences, capitals, spans)]
        said = [turn and turn.speaker for turn in speakers(text, [a for a, _ in spans], transcript)]
        asked = _asked(sentences, said) if spoken else [False] * len(sentences)
        answered = [i + 1 < len(sentences) and eligible[i + 1] and not asked[i + 1] and said[i + 1] != said[i]
                    for i in range(len(sentences))]
        # a question in talk only with its answer: the sentence after it, someone else's (``read_after``)
        return sentences, [e and (answered[i] or not asked[i]) for i, e in enumerate(eligible)]

    def features(self, read: Read, titled: bool = True, context: Context | None = None) -> torch.Tensor:
        """(sentences, features) of what ``read`` holds, as a learned scorer takes them (``summarize.scorer``);
        ``context``: ``context()`` when the caller has it already."""
        from lsgtool.summarize.scorer import features

        lexical, title, sections = context or self.context(read.text, read.sentences, titled, read.transcript)
        return features(read.text, read.spans, read.sentences, read.embeddings, read.eligible, lexical, title,
                        bool(turns(read.text, read.transcript)), sections)

    def spans(self, text: str, budget: int | None = None, units: list[tuple[int, int]] | None = None,
              transcript: bool | None = None) -> tuple[list[tuple[int, int]], list[int], dict[int, tuple[bool, bool]]]:
        """Sentence spans (``units`` when given), their tokens, and the pieces of a sentence among them (index ->
        whether it was cut before it, after it): a sentence longer than the ``budget`` (default: the summariser's)
        or a window is cut at word, else token boundaries, so each piece can be picked and encoded whole."""
        from lsgtool.summarize.windows import token_runs

        spans = [(a, b) for a, b in (prose_units(text, transcript) if units is None else units) if text[a:b].strip()]
        text = said_only(text)  # tokens of what is said (a caption file's timings are none)
        lengths = self.count([" ".join(text[a:b].split()) for a, b in spans])
        longest = max(1, min(self.budget if budget is None else budget, self.room))
        if all(n <= longest for n in lengths):
            return spans, lengths, {}
        cut, cut_lengths, pieces = [], [], {}
        for (a, b), n in zip(spans, lengths):
            runs = [(a, b)] if n <= longest else token_runs(text, a, b, self.count, longest)
            if runs != [(a, b)]:
                pieces.update({len(cut) + k: (k > 0, k < len(runs) - 1) for k in range(len(runs))})
            cut += runs
            cut_lengths += [n] if len(runs) == 1 and runs[0] == (a, b) else \
                self.count([" ".join(text[c:d].split()) for c, d in runs])  # only the pieces are counted anew
        return cut, cut_lengths, pieces

    def summarize(self, text: str, progress: Progress | None = None, overflow: str = "auto", budget: int | None = None,
                  count: int | None = None, query: torch.Tensor | None = None, apart: bool = False,
                  units: list[tuple[int, int]] | None = None, transcript: bool | None = None,
                  question: str | None = None, words: int | None = None) -> Picked:
        """Pick sentences; a document longer than one window is read in windows (``overflow`` auto or chunk),
        refused (error) or read up to its first window (truncate). ``budget`` tokens or ``count`` sentences
        (the summariser's budget when neither is given); ``query``: the embedding of a question to focus on;
        ``apart``: each paragraph is read on its own (separate summaries joined: a book's chapter summaries);
        ``units``: the text's sentences when they are known (the picks of those summaries, a piece of a long
        sentence among them, which a sentence splitter would join to the sentence before it); ``transcript``: read
        as one (True), as prose (False) or as detected (None; ``documents.prose.reading``); ``question``: the
        words of the question ``query`` embeds (``focus.focused``); ``words``: the budget is this many words of the
        summary as it is written (speakers' names counted), not ``budget`` tokens, met as nearly as whole sentences
        allow: a length asked in words is kept whatever the text's tokens per word (code and markup have many, and
        the summary shows neither)."""
        progress = progress or Progress()
        start = time.perf_counter()
        spans, lengths, pieces = self.spans(text, None if count else budget, units, transcript)
        if not spans:
            return Picked("", 0, 0, [], 0.0, 0)
        total, groups = sum(lengths), self._groups(lengths)
        if len(groups) > 1 and overflow == "error":
            raise UsageError(f"the input is {total:,} tokens and the encoder reads {self.room:,} at once.",
                             "pass --overflow auto (the document read in windows) or truncate (the first window).")
        if len(groups) > 1 and overflow == "truncate":
            spans, lengths = spans[:len(groups[0])], lengths[:len(groups[0])]
            progress.note(f"truncated to the first {sum(lengths):,} of {total:,} tokens (one window of the encoder): "
                          f"{total - sum(lengths):,} dropped")
        spoken = bool(turns(text, transcript))
        sentences, eligible = self.sentences(text, spans, transcript, pieces)
        begun = paragraph_firsts(text, spans)  # the sentences that begin a paragraph
        firsts = begun if apart else frozenset()  # (where each paragraph is read apart)
        embeddings = self.embed(text, spans, lengths, progress, firsts)
        # the document's own salience (the learned scorer's, blended with the rule's; else the rule's)
        context = None if self.scorer is None else self.context(text, sentences, units is None, transcript)
        boost = self.document_boost(text, sentences, embeddings, units is None, transcript, context)
        score = self.rule_score(embeddings, eligible, spoken, boost)
        if self.scorer is not None:
            read = Read(text, spans, sentences, embeddings, eligible, transcript)
            score = self.scorer.score(self.features(read, units is None, context), score)
        whole = units is None and query is None  # the document's own summary, not a question's answer
        own = own_summary(text, transcript) if whole else None
        concluded = concluding(text, transcript) if whole and not own else []
        if concluded:  # what the author concludes, found, recommends: a summary's matter (``CONCLUDING``), where
            # the author wrote no summary of their own
            score = score + _within(spans, concluded) * CONCLUDED * float(score.max() - score.min())
        purposed = [float(whole and eligible[i] and _purposeful(s)) for i, s in enumerate(sentences)]
        if any(purposed):  # what the document is for, what its writer decided (``PURPOSE``)
            score = score + torch.tensor(purposed) * PURPOSED * float(score.max() - score.min())
        if own:  # the author's own summary (a paper's Abstract, a report's Executive summary) first: a reader asking
            # for a summary of a paper wants its abstract (the RFCs of ../shared/quality have theirs taken out)
            score = score + _within(spans, [own]) * (float(score.max() - score.min()) + self.diversity)  # above all
        apart_from = separate_opinions(text, transcript) if whole else []
        if apart_from:  # a dissent or a concurrence: after all the Court's own sentences
            score = score - _within(spans, apart_from) * (float(score.max() - score.min()) + self.diversity)
        similarity = None if query is None else embeddings @ query
        said = speakers(text, [a for a, _ in spans], transcript)
        if similarity is not None:  # with a question, its similarity, words and speakers mixed in (``focus.focused``)
            from lsgtool.summarize.focus import focused, named
            from lsgtool.summarize.lexical import shared

            score = focused(score, similarity, shared(question, sentences) if question else None,
                            named(question, [turn and turn.speaker for turn in said]) if question and spoken else None)
        sizes = lengths if words is None else \
            [len(s.split()) + len(((turn and turn.speaker) or "").split()) for s, turn in zip(sentences, said)]
        picked = self.pick(embeddings, sizes, eligible, score, budget if words is None else words, count,
                           nearest=words is not None, sentences=sentences,
                           after=None if units is not None else read_after(sentences, spoken, text, spans,
                                                                          [turn and turn.speaker for turn in said]),
                           firsts=begun)
        texts = [_marked(sentences[i], pieces.get(i), i - 1 in picked, i + 1 in picked) for i in picked]
        relevance = None if similarity is None else float(similarity.max())
        asking = any(ASKER.fullmatch(turn.speaker or "") for turn in turns(text, transcript))
        summary, starts = labelled(texts, [said[i] and said[i].speaker for i in picked], asking,
                                   _interrupted(turns(text, transcript), [said[i] for i in picked]))
        return Picked(summary, total, len(sentences), picked, time.perf_counter() - start,
                      len(self._groups(lengths, firsts)), sum(lengths), [spans[i] for i in picked], texts, relevance,
                      starts)


def _within(spans: list[tuple[int, int]], parts: list[tuple[int, int]]) -> torch.Tensor:
    """1.0 for each of ``spans`` that begins inside one of ``parts``, else 0.0."""
    return torch.tensor([any(x <= a < y for x, y in parts) for a, _ in spans], dtype=torch.float)


def _asked(sentences: list[str], said: list[str | None]) -> list[bool]:
    """Which of a transcript's ``sentences`` (``said``: each one's speaker) ask: end with a question mark, or are
    said by an asker (``ASKER``)."""
    return [QUESTION.search(s) is not None or ASKER.fullmatch(who or "") is not None for s, who in zip(sentences, said)]


def read_after(sentences: list[str], spoken: bool, text: str = "", spans: list[tuple[int, int]] | None = None,
               said: list[str | None] | None = None) -> list[int | None]:
    """The sentence each one is read after, where it has one (``Extractive.pick`` holds it until that one is
    picked): in prose, one that opens by pointing back (``ANAPHOR``), or goes on with a quotation an earlier
    sentence of its paragraph opened and does not say who speaks (``_quoting``: "Northwind listened to residents."
    after '"We heard them," said Ferreira.'), after the one before it (past a transcriber's "(Applause.)"); in
    talk, a question (``QUESTION``) after its answer, the sentence after it (``sentences`` makes it eligible only
    where that is someone else's; ``said``: each sentence's speaker, where known, for an asker's question without
    its mark, ``_asked``)."""
    if spoken:
        asked = _asked(sentences, said or [None] * len(sentences))
        return [i + 1 if ask else None for i, ask in enumerate(asked)]
    going = _quoting(text, spans) if spans else [False] * len(sentences)
    before = [None] + list(range(len(sentences) - 1))  # the sentence before each, past a speech's "(Applause.)"
    for i in range(1, len(sentences)):
        if ASIDE.fullmatch(sentences[i - 1].strip()):
            before[i] = before[i - 1]
    return [before[i] if i > 0 and (ANAPHOR.match(s) or _dated_before(s) or (going[i] and not SAYS.search(s)))
            else None for i, s in enumerate(sentences)]


# a year named by an earlier sentence ("The Transport Act of that year deregulated buses", "in the following year"):
# the sentence does not say which alone, unless it names a year itself before that
WHEN_BEFORE = re.compile(r"\b(?:(?:of|in|by|later|earlier|until|since|during) that|the (?:same|following|"
                         r"preceding)) year\b", re.IGNORECASE)  # (not "over the next year": from now)
YEAR = re.compile(r"\b(?:1[0-9]|20)\d\d\b")


def _dated_before(sentence: str) -> bool:
    """Whether ``sentence`` dates what it says by a year only an earlier sentence names (``WHEN_BEFORE``)."""
    found = WHEN_BEFORE.search(sentence)
    return found is not None and YEAR.search(sentence, 0, found.start()) is None


ASIDE = re.compile(r"[(\[][^()\[\]]*[)\]]\.?")  # a sentence all in brackets: a transcriber's "(Applause.)"


SAYS = re.compile(r"\b(?:said|says|say|asked|asks|told|tells|replied|added|according to|wrote|writes)\b",
                  re.IGNORECASE)  # a sentence that says who speaks


def _quoting(text: str, spans: list[tuple[int, int]]) -> list[bool]:
    """Whether each of the sentences at ``spans`` (in order) goes on with someone's words: it begins inside a
    quotation opened before it in its paragraph (more “ than ” before it, or an odd number of straight double
    quotes), or opens one right after a sentence of the paragraph that quoted someone and said who ('"This is a big
    deal," Ferreira said. "These are good jobs."'). The text is read once (a book without blank lines is one
    paragraph)."""
    out, curly, straight, at, previous = [], 0, 0, 0, ""
    for a, b in spans:
        gap = text[at:a]
        cut = gap.rfind("\n\n")
        if cut >= 0:  # a new paragraph: its quotations start over
            curly, straight, previous, gap = 0, 0, "", gap[cut:]
        curly += gap.count("“") - gap.count("”")
        straight += gap.count('"')
        out.append(curly > 0 or straight % 2 == 1 or (text[a:a + 1] in '"“' and SAYS.search(previous) is not None
                                                         and any(mark in previous for mark in '"“”')))
        previous, at = text[a:b], a
    return out


def _marked(sentence: str, cut: tuple[bool, bool] | None, before: bool, after: bool) -> str:
    """A sentence as the summary shows it: a piece of a sentence longer than the budget (``cut``: cut before it,
    after it) with "…" where it was cut, unless the piece on that side is picked too (``before``, ``after``: then
    the two read on as the sentence does)."""
    if cut is None or not sentence:
        return sentence
    return ("…" if cut[0] and not before else "") + sentence + ("…" if cut[1] and not after else "")


def _interrupted(every: list, picked: list) -> list[bool]:
    """For each of the ``picked`` turns (in order; None: no turn), whether someone else spoke between it and the one
    picked before it (of all the text's turns, ``every``)."""
    place = {id(turn): k for k, turn in enumerate(every)}
    out, last = [], None
    for turn in picked:
        k = place.get(id(turn)) if turn is not None else None
        out.append(k is not None and last is not None and any(
            other.speaker != turn.speaker for other in every[last + 1:k]))
        last = k if k is not None else last
    return out


def labelled(texts: list[str], speakers: list[str | None], asking: bool = False,
             interrupted: list[bool] | None = None) -> tuple[str, list[int]]:
    """The picked ``texts`` as the summary writes them, and where each begins in it: joined by spaces, except that
    a transcript's sentence said by another speaker than the one before it begins a line with its speaker's name
    (``Grad B: ...``): who said it is part of what a meeting's summary tells; a text said by no one after a speaker's
    (a screenplay's action after a speech) begins a line of its own, and the speaker's next is labelled again; a
    text that does not end a sentence (a list item, "Fresh cilantro and rice, to serve") is a line of its own, not to
    run into the next nor the one before into it; where someone asks (``asking``: an "interviewer" or a "Q",
    ``ASKER``), an answerer's label (``ANSWERER``: "A") is written only after an asker's (a speaker named "A" in a
    dialogue of A and B keeps it);
    a speaker's sentence after others spoke (``interrupted``: a debate's answers to two questions) is labelled
    again, on a line of its own."""
    out, starts, last = "", [], None
    for text, speaker, again in zip(texts, speakers, interrupted or [False] * len(texts)):
        if asking and speaker and speaker != last and ANSWERER.fullmatch(speaker) and not ASKER.fullmatch(last or ""):
            out += "\n" if out else ""  # an "A:" not after a "Q:" names no one: the answer begins a line unlabelled
        elif speaker and (speaker != last or again):
            out += ("\n" if out else "") + f"{speaker}: "
        elif out:  # (and a text that ends no sentence begins one: not "... wins. 4 barges and 40 tokens")
            out += " " if ENDED.search(out) and ENDED.search(text) and not (last and not speaker) else "\n"
        starts.append(len(out))
        out += text
        last = speaker
    return out, starts


def paragraph_firsts(text: str, spans: list[tuple[int, int]]) -> frozenset[int]:
    """The indices of the ``spans`` (in order) that begin a paragraph of ``text``."""
    from lsgtool.documents.sentences import paragraphs

    starts = [a for a, _ in paragraphs(text)]
    firsts, p = set(), 0
    for i, (a, _) in enumerate(spans):
        while p < len(starts) and starts[p] <= a:
            firsts.add(i)
            p += 1
    return frozenset(firsts)


def _words(sentence: str) -> str:
    """A sentence's words, lower-cased, without punctuation or spacing, a space either side (so one's words are
    found inside another's as whole words): what two copies of it share."""
    return " " + " ".join(re.findall(r"\w+", sentence.lower())) + " "


def _repeats(words: str, other: str) -> bool:
    """Whether a sentence's ``words`` (``_words``) are another's, or all of them are inside the other's and are
    ``REPEATED_WORDS`` or more: a quoted post in a forum ("kestrel_fan wrote: I'm using ..."), a warning a leaflet
    prints in two places, one a bullet of the other."""
    shorter, longer = sorted((words, other), key=len)
    return shorter == longer or shorter.count(" ") - 1 >= REPEATED_WORDS and shorter in longer


def load_extractive(source="minilm", window: int = 4096, budget: int = 256, device: str = "cpu",
                    diversity: float = 0.3, tokenizer: str | None = None, dtype: str | None = None,
                    scorer: str | None = None) -> Extractive:
    """An encoder (the ``Source`` the run resolved, or any name ``lsgtool.load`` takes); converted to LSG for
    ``window`` tokens unless it reads that many; with the sentence scorer ``scorer`` names (``scorer.load_scorer``:
    None, the default, is the packaged one for the packaged encoder)."""
    from lsgtool.core.convert.api import convert
    from lsgtool.core.lsg.engine import model_positions
    from lsgtool.core.load import Source, load, load_tokenizer, resolve
    from lsgtool.summarize.scorer import load_scorer

    if not isinstance(source, Source):
        source = resolve(source)
    encoder = load(source, task="base", **({"dtype": dtype} if dtype else {}))
    tokenizer = load_tokenizer(source, tokenizer=tokenizer)
    if (model_positions(encoder) or 0) < window:
        encoder, tokenizer = convert(encoder, max_length=window, block_size=128, sparsity_factor=2,
                                     sparsity_type="norm", num_global_tokens=1, tokenizer=tokenizer)
    tokenizer.model_max_length = window
    learned = load_scorer(scorer, source.name, encoder.config.hidden_size)
    return Extractive(encoder.to(device), tokenizer, source.name, window, budget, diversity, learned)


def prose_units(text: str, transcript: bool | None = None) -> list[tuple[int, int]]:
    """The sentences a summary picks from: those of the text's prose (``documents.prose``: no headings, code or
    tables; a transcript's turns), or every sentence of a text that has no prose at all."""
    return prose_sentences(text, transcript) or list(sentence_spans(text))
