"""The trainable parts (picture projection, text towers), the contrastive loss and loop, and one training run."""
