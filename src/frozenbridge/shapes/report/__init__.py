"""The study's tables and readings for the report (python -m frozenbridge.tools.report): every number and sentence
computed from metrics/shapes/ and bench/. No stage imports this folder, so a change here reruns nothing."""
