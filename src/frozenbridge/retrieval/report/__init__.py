"""The study's tables and reading for the report, from metrics/retrieval/; no stage imports this folder."""
