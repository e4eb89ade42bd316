"""Conversion of Hugging Face checkpoints to LSG: load (``lsgtool.core.load``), apply LSG
(``lsgtool.core.lsg.engine``), save the LSG folder, verify against the original."""

from lsgtool.core.convert.api import convert, save

__all__ = ["convert", "save"]
