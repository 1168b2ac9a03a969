"""The benchmarks: each one file here with a `main(argv)`, run as `python -m frozenbridge.bench NAME`; every one
writes rows of one format (rows.py) to bench/*.json, which `python -m frozenbridge.tools.report` puts in the
results page. No stage imports this package."""
