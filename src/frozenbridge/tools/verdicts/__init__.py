"""The references' claims, judged: rules fixed before any number is read (rules.py), readers that turn metrics into
each rule's cells (readers.py), and the claims with their thresholds and the table docs/results.md prints
(claims.py)."""
