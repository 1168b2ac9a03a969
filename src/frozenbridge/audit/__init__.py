"""The audit a team needs before trusting a score on its own pictures and questions: a folder written by hand, read
and checked here, then the score set beside the scores without the picture, per kind of question, on held-out
combinations, and the failures read."""
