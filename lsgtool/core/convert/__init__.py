"""Generic conversion of Hugging Face checkpoints to LSG, and loading of LSG checkpoints."""

from lsgtool.core.convert.adapters import ArchitectureAdapter, detect_adapter
from lsgtool.core.convert.api import convert, load, save

__all__ = ["ArchitectureAdapter", "convert", "detect_adapter", "load", "save"]
