"""Test builders, not part of any run: tiny random-weight backbones saved with save_pretrained, for the tests and
for benchmarks that need a model of a given shape without a download."""
