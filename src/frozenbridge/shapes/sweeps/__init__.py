"""Stage-1 sweeps run on demand: how fast captions converge per setting and seed (`python -m
frozenbridge.shapes.sweeps.converge`), and the capacity check (merged vs unmerged connectors)."""
