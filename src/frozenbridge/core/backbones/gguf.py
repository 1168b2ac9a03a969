"""GGUF files as frozen language models: which file a name means, its checks (magic bytes, an architecture this
transformers reads), and a safetensors copy made once under cache_root(), keyed by the file's digest and the
transformers that converted it, so that later loads skip the GGUF reader."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import torch

from frozenbridge.core.atomic import atomic_path
from frozenbridge.core.backbones.hub import file_digest, first_line
from frozenbridge.core.errors import FrozenbridgeError

log = logging.getLogger("frozenbridge.backbones")

def cache_root() -> Path:
    return Path(os.environ.get("FROZENBRIDGE_CACHE", Path.home() / ".cache" / "frozenbridge"))


def transformers_version() -> str:
    import transformers

    return transformers.__version__


GGUF_MAGIC = b"GGUF"
# what some GGUF files call an architecture that transformers' tables spell otherwise (its reader renames them)
GGUF_ARCH_ALIASES = {"qwen2moe": "qwen2_moe", "qwen3moe": "qwen3_moe", "gpt-oss": "gpt_oss",
                     "minimax-m2": "minimax_m2", "t5encoder": "t5"}


def gguf_readable_architectures() -> set[str]:
    """The GGUF architectures this transformers reads: its legacy reader's table and its newer per-arch one."""
    readable: set[str] = set()
    try:
        from transformers.modeling_gguf_pytorch_utils import GGUF_SUPPORTED_ARCHITECTURES
        readable |= set(GGUF_SUPPORTED_ARCHITECTURES) - {"general", "tokenizer"}
    except ImportError:
        pass
    try:
        from transformers.integrations.gguf import GGUF_ARCHS
        readable |= set(GGUF_ARCHS)
    except (ImportError, AttributeError):
        pass
    return readable


def _gguf_where(key: str, name: str, gguf: Path) -> str:
    """`key = 'name'` for a message, and the file when `name` is not that file (a directory, the embedded name)."""
    named = Path(name).expanduser()
    return f"{key} = {name!r}" + ("" if named == gguf or named.resolve() == gguf.resolve() else f" ({gguf})")


def check_gguf_magic(gguf: Path, where: str) -> None:
    """One line unless the file starts with GGUF's magic bytes (read before the whole file is hashed)."""
    with open(gguf, "rb") as f:
        magic = f.read(4)
    if magic != GGUF_MAGIC:
        raise FrozenbridgeError(f"{where}: not a GGUF file (it starts with {magic!r}, not {GGUF_MAGIC!r})")


def gguf_architecture(gguf: Path, where: str) -> str:
    """The GGUF's general.architecture (gguf's GGUFReader), one line unless this transformers can read it."""
    import transformers

    try:
        from gguf import GGUFReader

        field = GGUFReader(gguf).fields.get("general.architecture")
        arch = bytes(field.parts[field.data[0]]).decode() if field is not None else None
    except Exception as err:  # a truncated or corrupt file: the reader's own message, on one line
        raise FrozenbridgeError(f"{where}: unreadable GGUF file ({first_line(err)})") from None
    if arch is None:
        raise FrozenbridgeError(f"{where}: the GGUF file names no general.architecture")
    readable = gguf_readable_architectures()
    if readable and arch not in readable and GGUF_ARCH_ALIASES.get(arch) not in readable:
        raise FrozenbridgeError(f"{where}: GGUF architecture {arch!r} cannot be read by transformers "
                                f"{transformers.__version__}; readable: {', '.join(sorted(readable))}")
    return arch


def gguf_dir(gguf: Path, prefix: str, key: str = "language.name", name: str | None = None) -> tuple[Path, str]:
    """A safetensors copy of the GGUF file `gguf` and its tokenizer, made once under
    cache_root()/<prefix>-<digest>-transformers-<version> (keyed by the file's digest and by the transformers that
    converted it: an edited file gets a fresh copy, so does a new transformers, since converters change what they
    read (5.0-5.17 swapped SmolLM2's bos and eos), and a copy made from the same bytes by the same transformers under
    another prefix is reused); (that directory, the digest).

    transformers dequantizes the GGUF to float32 on load; the copy drops `quantization_config` and is rebuilt from
    the plain config, so later loads skip the GGUF reader entirely. The file's magic bytes and architecture are
    checked before anything is loaded, and a GGUF transformers cannot turn into a model is one line.
    """
    where = _gguf_where(key, str(gguf) if name is None else name, gguf)
    check_gguf_magic(gguf, where)
    digest = file_digest(gguf)
    made_by = f"{digest}-transformers-{transformers_version()}"
    target = cache_root() / f"{prefix}-{made_by}"
    if not (target / "config.json").is_file():
        # the same bytes under another name (a copy, the embedded file named by its path) reuse their copy
        same = [d for d in sorted(cache_root().glob(f"*-{made_by}")) if (d / "config.json").is_file()]
        if same:
            return same[0], digest
        gguf_architecture(gguf, where)  # before loading: an architecture transformers lacks is one line
        from transformers import AutoModelForCausalLM, AutoTokenizer

        log.info("dequantizing %s once into %s", gguf.name, target)
        dequantize = {}
        try:  # newer transformers may keep GGUF blocks packed (GgufLinear); the copy needs plain tensors
            from transformers import GgufConfig
            dequantize["quantization_config"] = GgufConfig(dequantize=True)
        except (ImportError, TypeError):
            pass
        try:
            tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
            quantized = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32,
                                                             **dequantize)
        except (OSError, ValueError, KeyError, NotImplementedError, RuntimeError) as err:
            raise FrozenbridgeError(f"{where}: transformers could not load this GGUF as a causal LM "
                                    f"({first_line(err)})") from None
        config = quantized.config
        if hasattr(config, "quantization_config"):
            del config.quantization_config
        plain = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
        plain.load_state_dict(quantized.state_dict())
        with atomic_path(target) as tmp:
            plain.save_pretrained(tmp)
            tokenizer.save_pretrained(tmp)
    return target, digest


def gguf_file(name: str, key: str = "language.name") -> Path | None:
    """The GGUF file `name` names: a file (a .gguf path; any existing file is taken for one, so a file that is not
    gets the not-a-GGUF line), or a directory holding exactly one .gguf and no config.json (a save_pretrained
    directory stays one even beside a .gguf). None when `name` names no GGUF: a hub id or a model directory."""
    path = Path(name).expanduser()
    if path.is_file():
        return path
    if name.lower().endswith(".gguf"):
        raise FrozenbridgeError(f"{key} = {name!r}: no such file")
    if not path.is_dir() or (path / "config.json").is_file():
        return None
    ggufs = sorted(p for p in path.iterdir() if p.suffix.lower() == ".gguf" and p.is_file())
    if len(ggufs) > 1:
        raise FrozenbridgeError(f"{key} = {name!r}: the directory holds {len(ggufs)} GGUF files "
                                f"({', '.join(p.name for p in ggufs)}); set {key} to the one to use")
    return ggufs[0] if ggufs else None
