"""The stack on a real pretrained BERT encoder (all-MiniLM-L6-v2): its first n layers as a
`app.model.stack.Stack`, with or without their attention sub-layers."""

from __future__ import annotations

from app.lab.stack.run import attention_param_count
from app.model.bert import BertEncoder
from app.model.stack import BertAttentionOnly, Stack, StackError, StackLayer


def pretrained_stack(encoder: BertEncoder, n_layers: int, *, attention: bool) -> Stack:
    """The first `n_layers` layers of a pretrained BERT encoder (post-norm, real weights).

    attention=True: the encoder's own layers (x = LN(x + Attn(x)); x = LN(x + FFN(x)), as
    `BertEncoder.hidden_states`); attention=False: each layer's FFN and output LayerNorm
    alone, x = LN(x + FFN(x)), attention removed.

    Raises:
        StackError: n_layers outside [1, the encoder's layers].
    """
    total = encoder.config.num_hidden_layers
    if not 1 <= n_layers <= total:
        raise StackError(f"n_layers must be in [1, {total}] for this model, got {n_layers}")
    layers = []
    for block in encoder.blocks[:n_layers]:
        layers.append(
            StackLayer(
                block.ffn,
                BertAttentionOnly(block.attention) if attention else None,
                "post",
                attention_norm=block.attention.norm if attention else None,
                ffn_norm=block.norm,
            )
        )
    d_model = encoder.config.hidden_size
    attention_params = attention_param_count(d_model, True) if attention else 0
    return Stack(layers, False, attention_params=attention_params, source="pretrained")
