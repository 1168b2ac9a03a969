"""The core every study stands on, knowing none of them: errors, atomic writes, the params validator, device and
precision, checkpoints, the Parquet feature cache, stage helpers and the frozen backbones."""
