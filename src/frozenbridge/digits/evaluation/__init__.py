"""Greedy captions from the frozen character LM, and how they score."""
