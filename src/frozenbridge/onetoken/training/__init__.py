"""One replicate: the pooled vector -> MLP -> prefix tokens, trained on the folder's captions."""
