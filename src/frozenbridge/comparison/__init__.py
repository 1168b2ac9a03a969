"""The connector comparison: the four ways to connect a picture, side by side under the same frozen backbones, on
paired replicates of the shapes study. Read in the order a comparison runs:

    settings.py    what each view trains: every design at the MLP's settings, at its own best, or at equal steps
    sweep/         the declared sweep that picks each design's own best (`python -m frozenbridge.comparison.sweep`)
    workspace.py   whether an experiment may start here, and the workspace put back after it
    pipeline.py    which default run a replicate pairs with (its pipeline key)
    replicates.py  each replicate kept one by one, and where it was made
    run.py         the command (`python -m frozenbridge.comparison`): a view's settings, a `dvc exp run` each
    report/        the tables, findings and figures of docs/connectors.md (`python -m frozenbridge.tools.report`)

It stands above the studies (it runs the shapes study's stages and reads its metrics) and below tools/ and bench/;
no stage imports it, so a change here reruns nothing.
"""
