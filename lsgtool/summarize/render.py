"""A summary record as the output formats write it: plain text, Markdown, JSON or a JSON line."""

from __future__ import annotations

import json
from typing import Any

FORMATS = ("text", "md", "json", "jsonl")
SUFFIX = {"text": ".txt", "md": ".md", "json": ".json", "jsonl": ".jsonl"}


def _sections(record: dict[str, Any]) -> list[tuple[str | None, str]]:
    return [(c.get("title") or f"Chapter {i + 1}", c["text"]) for i, c in enumerate(record.get("chapters", []))]


def render(record: dict[str, Any], fmt: str) -> str:
    """The record in ``fmt``; text and Markdown keep the chapter titles after the whole summary."""
    if fmt == "json":
        return json.dumps(record, indent=2, ensure_ascii=False) + "\n"
    if fmt == "jsonl":
        return json.dumps(record, ensure_ascii=False) + "\n"
    title = record.get("title") or record["input"]
    chapters = _sections(record)
    if fmt == "md":
        lines = [f"# {title}", "", f"*{record['method']} summary by {record['model']}; {record['input_tokens']:,} input "
                                   f"tokens, {record['route']}*", "", record["summary"], ""]
        for chapter_title, text in chapters:
            lines += [f"## {chapter_title}", "", text, ""]
        return "\n".join(lines)
    parts = [record["summary"]]
    parts += [f"{chapter_title}\n{text}" for chapter_title, text in chapters]
    return "\n\n".join(parts) + "\n"
