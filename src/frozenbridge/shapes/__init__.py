"""The shapes study: generated colored-shape pictures, captions and questions, training recipes, controls,
held-out color-kind pairs, and the summaries, figures and report tables of the results.

    params.py paths.py   its view of params.yaml, where its stages read and write
    interface.py         what the other studies may read of it (and nothing else)
    data/ training/ evaluation/ sweeps/ summary/ report/
"""
