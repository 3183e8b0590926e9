"""The neuron view: one hidden unit's activations, its top corpus tokens and its value."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool

from app.analysis.neuron import nearest_tokens, top_tokens
from app.api.deps import SettingsDep, lab_limits
from app.api.json_body import FastJsonRoute
from app.api.schemas.pretrained import NearTokenOut, NeuronRequest, NeuronResponse, TopTokenOut
from app.lab.pretrained import encode_text, invalid, load_model
from app.services.compute import apply_torch_threads
from app.services.corpus_cache import get_corpus_index

router = APIRouter(prefix="/api", tags=["neuron"], route_class=FastJsonRoute)

APPROXIMATION = (
    "Approximation after Geva et al. 2021 (Transformer Feed-Forward Layers Are Key-Value "
    "Memories): the unit's value vector (row of W2) compared, by cosine, with the input word "
    "embeddings. The value lives in a middle layer's residual stream, not in embedding space; "
    "read the list as a hint, not as what the unit 'means'."
)


@router.post("/neuron", response_model=NeuronResponse)
async def post_neuron(req: NeuronRequest, settings: SettingsDep) -> NeuronResponse:
    """A hidden unit's key (where it fires) and value (what it adds to the output)."""

    def work() -> NeuronResponse:
        apply_torch_threads(settings.torch_threads)  # the same numbers whatever the thread
        return _neuron(req, settings)

    return await run_in_threadpool(work)


def _neuron(req: NeuronRequest, settings: SettingsDep) -> NeuronResponse:
    model = load_model()
    tokens = activations = None
    ffn = model.encoder.layer(req.layer).ffn
    if req.text is not None:
        if len(req.text) > settings.max_text_chars or not req.text.strip():
            raise invalid(
                "text",
                f"text must have 1 to {settings.max_text_chars} characters",
            )
        encoded = encode_text(model, req.text, lab_limits(settings))
        trace = model.encoder.run_to(encoded.ids, req.layer)
        hidden = ffn.trace(trace.ffn_input).hidden  # (T, d_ff)
        tokens = encoded.tokens
        activations = [float(v) for v in hidden[:, req.unit]]
    index, source = get_corpus_index(model, settings)
    value = ffn.weights().w2[req.unit]  # (d_model,): row `unit` of W2, the unit's value
    near = nearest_tokens(value, model.encoder.word_embeddings, model.vocabulary(), req.top_k)
    return NeuronResponse(
        model=req.model,
        layer=req.layer,
        unit=req.unit,
        tokens=tokens,
        activations=activations,
        top_tokens=[
            TopTokenOut(
                token=t.token, activation=t.activation, sentence=t.sentence, position=t.position
            )
            for t in top_tokens(index, req.layer, req.unit, req.top_k)
        ],
        corpus_sentences=len(index.sentences),
        corpus_tokens=index.token_count,
        corpus_index=source,
        value_norm=float(value.norm()),
        nearest_tokens=[NearTokenOut(token=n.token, cosine=n.cosine) for n in near],
        approximation=APPROXIMATION,
    )
