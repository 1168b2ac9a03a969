"""Frozen backbones behind one small interface each, chosen by name.

Embedded names load from installed packages with no network; any other name is a Hugging Face id or a local
directory. `load_vision(name, features, layer)` and `load_language(name)` are the two entry points; they take plain
arguments, so any study (or none) can call them.
"""

from frozenbridge.core.backbones.language import LanguageModel, load_language
from frozenbridge.core.backbones.vision import VisionEncoder, load_vision

__all__ = ["LanguageModel", "VisionEncoder", "load_language", "load_vision"]
