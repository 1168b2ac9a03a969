"""Commands that measure and report, above every study; no stage imports them (the benchmarks live in
frozenbridge.bench): forecast (the default training's time before it runs), repro_timing (a whole dvc repro timed),
run_floor (that run's training against its matrix products alone), connectors (the connector designs compared),
design_sweep (each design at a declared grid of settings, its learning curves and its own best, picked by a rule
written down before any run), report (the generated results page and the README's headline table), snapshot (an
on-demand experiment's metrics kept), plots_template (the offline page `dvc plots show` draws into), rerun_check
(stages rerun in a scratch copy of HEAD under chosen conditions, every output's hash against dvc.lock)."""
