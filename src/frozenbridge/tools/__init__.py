"""Commands that measure and report, above every study; no stage imports them (the benchmarks live in
frozenbridge.bench): forecast (the default training's time before it runs), repro_timing (a whole dvc repro timed),
connectors (the connector designs compared), report (the generated results page and the README's headline table),
snapshot (an on-demand experiment's metrics kept), plots_template (the offline page `dvc plots show` draws into)."""
