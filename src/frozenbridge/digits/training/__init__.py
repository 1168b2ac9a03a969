"""The three trained parts (the digit classifier, the character LM, the adapter between them) and their training."""
