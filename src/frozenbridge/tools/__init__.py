"""Commands that measure and report, above every study and the connector comparison; no stage imports them (the
benchmarks live in frozenbridge.bench): forecast (the default training's time before it runs), repro_timing (a whole
dvc repro timed), run_floor (that run's training against its matrix products alone), report (the generated results
page and the README's headline table), snapshot (an on-demand experiment's metrics kept), plots_template (the offline
page `dvc plots show` draws into), rerun_check (stages rerun in a scratch copy of HEAD under chosen conditions, every
output's hash against dvc.lock). The comparison's own commands are frozenbridge.comparison's."""
