"""The study's tables for the report, from metrics/digits/; no stage imports this folder."""
