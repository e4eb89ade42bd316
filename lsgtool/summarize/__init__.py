"""Summaries of documents and whole books: ``run(SummarizeOptions(...))`` is what ``lsgtool summarize`` calls."""

from lsgtool.summarize.run import SummarizeOptions, SummarizeResult, run

__all__ = ["SummarizeOptions", "SummarizeResult", "run"]
