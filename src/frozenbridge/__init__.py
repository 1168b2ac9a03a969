"""frozenbridge: a frozen vision encoder, a frozen language model, and the small connector trained between them."""

__version__ = "0.1.0"
