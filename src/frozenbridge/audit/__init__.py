"""The audit a team needs before trusting a score on its own pictures and questions (the reference's "is 90% ready?"):
the folder a user writes by hand, read and checked before any work (data/), one training run on it (training/), the
test questions answered with their picture and three controls and every number read from the answers (evaluation/),
the figure (summary/) and the page (report/). chain.py runs it all for `frozenbridge audit`; the audit_* stages of
dvc.yaml run it step by step."""
