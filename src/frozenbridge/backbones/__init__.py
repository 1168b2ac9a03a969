"""Frozen backbones behind one small interface each, chosen by name.

Embedded names load from installed packages with no network; any other name is a Hugging Face id or a local
directory. `load_vision(params.vision)` and `load_language(params.language)` are the two entry points.
"""

from .language import LanguageModel, load_language
from .vision import VisionEncoder, load_vision

__all__ = ["LanguageModel", "VisionEncoder", "load_language", "load_vision"]
