"""The digits study: two tiny models trained here that never met, a digit classifier and a character-level language
model that only ever read "the digit is <word>", joined by a small adapter, the only part that trains after them.

The same arrangement as the shapes study at a size a student can watch move on a laptop (reference:
tiny-models-digit-captioning): the classifier's accuracy is the ceiling the captions climb toward.
"""
