"""The study's tables for the report, from metrics/onetoken/; no stage imports this folder."""
