"""The audit's training: stage 1 on the training captions when there are any, then the training questions."""
