"""The audit's checks: the answers under the picture and its controls, the numbers read from them, the probe."""
