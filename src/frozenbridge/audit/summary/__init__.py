"""The audit's figure."""
