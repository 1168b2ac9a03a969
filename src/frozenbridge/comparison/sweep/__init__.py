"""A design's own best, chosen by a rule written down before any run: the sweep's plan (plan.py: the grid of
settings per design, the cap, the early stop and the picking rule, read from results/connectors/sweep/plan.yaml),
its learning curves (curves.py: steps to a share, best within the cap, flat or still learning), the pick of one
design's setting by the declared rule (pick.py). The section-9 claims judged at three views of these curves are the
verdicts' (tools/verdicts/regime.py). Pure logic: no model is loaded here."""
