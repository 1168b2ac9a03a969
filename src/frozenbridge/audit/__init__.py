"""The audit a team needs before trusting a score on its own pictures and questions. Built so far: the folder a
user writes by hand, read and checked before any work (folder.py), and an example folder (example.py). The chain
that trains on it and the page of checks (the score beside its controls, per kind, on held-out combinations, the
failures read) are not built yet."""
