"""`python -m frozenbridge.comparison`: the command of run.py (`--help` says what it trains)."""

from frozenbridge.comparison.run import main

main()
