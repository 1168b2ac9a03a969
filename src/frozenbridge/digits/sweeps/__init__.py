"""Measurement sweeps of the digits study, run on demand (no stage runs them)."""
