"""Reading documents for summarisation: text, Markdown, PDF and EPUB files, standard input, dataset rows.

``read(path)`` returns a ``Document``: its text in chapters (one chapter when it has no structure), its
title, what the extraction did (``notes``) and a digest of the bytes it came from. A file that cannot give
text (empty, binary, encrypted, undecodable, a PDF without a text layer) raises ``DocumentError`` naming it.
"""

from lsgtool.documents.model import Chapter, Document, DocumentError
from lsgtool.documents.read import SUFFIXES, read, read_bytes, supported

__all__ = ["Chapter", "Document", "DocumentError", "SUFFIXES", "read", "read_bytes", "supported"]
