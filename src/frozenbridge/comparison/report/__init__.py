"""docs/connectors.md's parts, computed from results/connectors/ and the default run's metrics/shapes/: the views'
tables (tables.py), which views and settings the folders hold (views.py), the findings per design (findings.py,
sentences.py), the papers beside them (literature.py), what survives equal training (equal_training.py) and the
figures (figure.py, learning_curves.py)."""
