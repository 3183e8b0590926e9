"""One hidden unit of a pretrained FFN: where it fires in a corpus, and what it writes.

Geva et al. 2021, "Transformer Feed-Forward Layers Are Key-Value Memories": in
FFN(x) = f(x W1 + b1) W2 + b2, column i of W1 is a *key* (the unit fires when x matches
it) and row i of W2 is its *value* (the vector added to the output, scaled by the unit's
activation). Reading a value as vocabulary tokens by comparing it with the input word
embeddings is an approximation: the value lives in the residual stream of a middle layer,
not in the embedding space (Geva et al. project through the output embedding of a
language model; this encoder's input embeddings are the closest stand-in it has).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import torch

from app.model.pretrained import Pretrained

_NOT_WORDS = re.compile(r"^\[(unused\d+|PAD|UNK|CLS|SEP|MASK)\]$")


@dataclass(frozen=True)
class CorpusIndex:
    """The strongest activations of every unit of every layer over a corpus.

    Attributes:
        values: float32 [layers, k, d_ff], the k largest activations of each unit, best first.
        sentence: int32 [layers, k, d_ff], which sentence each came from.
        position: int32 [layers, k, d_ff], which token of that sentence.
        sentences: the corpus.
        tokens: the tokens of each sentence (with [CLS] and [SEP], which are never counted).
    """

    values: npt.NDArray[np.float32]
    sentence: npt.NDArray[np.int32]
    position: npt.NDArray[np.int32]
    sentences: list[str]
    tokens: list[list[str]]

    @property
    def token_count(self) -> int:
        """Word tokens in the corpus ([CLS]/[SEP] excluded)."""
        return sum(len(t) - 2 for t in self.tokens)


def index_corpus(model: Pretrained, sentences: Sequence[str], k: int = 32) -> CorpusIndex:
    """Run every sentence through the encoder once and keep each unit's top-k activations.

    Cost: one forward pass per sentence (~10 ms each for short sentences on 2 cores).

    Raises:
        ValueError: for an empty corpus or k < 1.
    """
    if not sentences or k < 1:
        raise ValueError(f"need at least one sentence and k >= 1, got {len(sentences)}, {k}")
    layers = model.config.num_hidden_layers
    d_ff = model.config.intermediate_size
    best = torch.full((layers, k, d_ff), -torch.inf)
    where = torch.full((layers, k, d_ff, 2), -1, dtype=torch.int64)
    all_tokens: list[list[str]] = []
    for s, text in enumerate(sentences):
        encoded = model.encode(text)
        all_tokens.append(encoded.tokens)
        special = torch.tensor(encoded.special)
        t = len(encoded.tokens)
        positions = torch.arange(t)
        origin = torch.stack([torch.full((t,), s), positions], dim=1)  # (T, 2)
        for layer, trace in enumerate(model.encoder.hidden_states(encoded.ids)):
            with torch.inference_mode():
                hidden = model.encoder.layer(layer).ffn.trace(trace.ffn_input).hidden  # (T, d_ff)
            hidden = hidden.masked_fill(special[:, None], -torch.inf)
            values = torch.cat([best[layer], hidden])  # (k + T, d_ff)
            origins = torch.cat([where[layer], origin[:, None, :].expand(t, d_ff, 2)])
            top, index = values.topk(k, dim=0)  # (k, d_ff)
            best[layer] = top
            where[layer] = torch.gather(origins, 0, index[..., None].expand(k, d_ff, 2))
    return CorpusIndex(
        values=best.numpy().astype(np.float32),
        sentence=where[..., 0].numpy().astype(np.int32),
        position=where[..., 1].numpy().astype(np.int32),
        sentences=list(sentences),
        tokens=all_tokens,
    )


@dataclass(frozen=True)
class TopToken:
    """One of a unit's strongest activations in the corpus."""

    token: str
    activation: float
    sentence: str
    position: int


def top_tokens(index: CorpusIndex, layer: int, unit: int, limit: int) -> list[TopToken]:
    """The unit's strongest activations, one per distinct token string, best first."""
    out: list[TopToken] = []
    seen: set[str] = set()
    for rank in range(index.values.shape[1]):
        value = float(index.values[layer, rank, unit])
        s = int(index.sentence[layer, rank, unit])
        if s < 0 or not np.isfinite(value):
            break
        p = int(index.position[layer, rank, unit])
        token = index.tokens[s][p]
        if token in seen:
            continue
        seen.add(token)
        out.append(TopToken(token, value, index.sentences[s], p))
        if len(out) == limit:
            break
    return out


@dataclass(frozen=True)
class NearToken:
    """A vocabulary token and the cosine of its embedding with a value vector."""

    token: str
    cosine: float


def nearest_tokens(
    vector: torch.Tensor, embeddings: torch.Tensor, vocabulary: Sequence[str], limit: int
) -> list[NearToken]:
    """Vocabulary tokens whose embeddings have the highest cosine with `vector`.

    Args:
        vector: float32 [d_model], e.g. a row of W2 (paper orientation): a unit's value.
        embeddings: float32 [vocab, d_model], the input word embeddings.
        vocabulary: [vocab] token strings; [unusedN] and special tokens are skipped.
        limit: how many to return.

    Raises:
        ValueError: when the shapes do not fit.
    """
    if embeddings.dim() != 2 or vector.shape != embeddings.shape[1:]:
        raise ValueError(
            f"vector {list(vector.shape)} does not fit embeddings {list(embeddings.shape)}"
        )
    norms = torch.linalg.vector_norm(embeddings, dim=1) * torch.linalg.vector_norm(vector)
    cosine = (embeddings @ vector) / norms.clamp_min(1e-12)  # (vocab,)
    order = torch.argsort(cosine, descending=True)
    out: list[NearToken] = []
    for i in order.tolist():
        token = vocabulary[i]
        if _NOT_WORDS.match(token):
            continue
        out.append(NearToken(token, float(cosine[i])))
        if len(out) == limit:
            break
    return out
