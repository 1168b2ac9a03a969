"""The core every study stands on, knowing none of them: errors, atomic writes, the params validator and the params
every study shares, seeds, learning-rate schedules, device and precision, checkpoints, the Parquet feature cache,
saved modules, stage helpers, measurement and the frozen backbones."""
