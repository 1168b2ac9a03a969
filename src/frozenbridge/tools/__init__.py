"""Commands that measure and report, above every study; no stage imports them:
bench and bench_gpu (step time, memory, throughput), repro_timing (a whole dvc repro timed), report (the generated
results page and the README's headline table), snapshot (an on-demand experiment's metrics kept), plots_template
(the offline page `dvc plots show` draws into)."""
