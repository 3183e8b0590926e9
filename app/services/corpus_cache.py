"""The neuron view's corpus index: computed once, kept in memory and on disk.

The corpus is app/data/corpus.txt (package data). The index is saved as
`<cache_dir>/neuron-index-<key>.npz`, where the key hashes the corpus, the weights file's
size and the index format, so a changed corpus or model is never read from a stale file.
`cache_dir` is the `cache_dir` setting, else $XDG_CACHE_HOME/ffn-lab, else ~/.cache/ffn-lab.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
from importlib import resources
from pathlib import Path

import numpy as np

from app.analysis.neuron import CorpusIndex, index_corpus
from app.config import Settings
from app.model.pretrained import Pretrained

FORMAT = 1
TOP_K = 32


def corpus_sentences() -> list[str]:
    """The bundled sentences (comments and blank lines dropped)."""
    text = resources.files("app").joinpath("data/corpus.txt").read_text(encoding="utf-8")
    return [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]


def cache_dir(settings: Settings) -> Path:
    """Where computed data goes (never inside the repository)."""
    if settings.cache_dir is not None:
        return settings.cache_dir
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ffn-lab"


def _key(model: Pretrained, sentences: list[str]) -> str:
    digest = hashlib.sha256()
    digest.update(json.dumps([FORMAT, TOP_K, sentences]).encode())
    digest.update(str((model.folder / "model.safetensors").stat().st_size).encode())
    return digest.hexdigest()[:16]


def _load(path: Path, sentences: list[str]) -> CorpusIndex | None:
    try:
        with np.load(path, allow_pickle=False) as data:
            tokens = json.loads(str(data["tokens"]))
            return CorpusIndex(
                values=data["values"],
                sentence=data["sentence"],
                position=data["position"],
                sentences=sentences,
                tokens=tokens,
            )
    except (OSError, KeyError, ValueError):
        return None  # unreadable or partial: compute again


def _save(path: Path, index: CorpusIndex) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".npz.tmp")
        with os.fdopen(fd, "wb") as f:
            np.savez(
                f,
                values=index.values,
                sentence=index.sentence,
                position=index.position,
                tokens=np.array(json.dumps(index.tokens)),
            )
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only home still works, from memory


_lock = threading.Lock()
_memory: dict[str, CorpusIndex] = {}


def get_corpus_index(model: Pretrained, settings: Settings) -> tuple[CorpusIndex, str]:
    """The index, and where it came from: "memory", "disk" or "computed" (~4 s, once)."""
    sentences = corpus_sentences()
    key = _key(model, sentences)
    with _lock:
        if key in _memory:
            return _memory[key], "memory"
        path = cache_dir(settings) / f"neuron-index-{key}.npz"
        index = _load(path, sentences) if path.is_file() else None
        source = "disk"
        if index is None:
            index = index_corpus(model, sentences, TOP_K)
            _save(path, index)
            source = "computed"
        _memory[key] = index
        return index, source
