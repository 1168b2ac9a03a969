"""The pictures and their words: the vocabulary, scenes, drawing, the splits they are written to, and reading
them back with their cached features. Every shapes stage reads this folder; it imports no model."""
