"""Generic conversion of Hugging Face checkpoints to LSG (loading any checkpoint: ``lsgtool.core.load``)."""

from lsgtool.core.convert.adapters import ArchitectureAdapter, detect_adapter
from lsgtool.core.convert.api import convert, save

__all__ = ["ArchitectureAdapter", "convert", "detect_adapter", "save"]
