"""shared_parameters' formula: 2 (or 3, gated) d_model x d_ff matrices plus biases, and
what is extra (named, with shape and size) when the count does not match."""

from __future__ import annotations

from torch import nn


def _fmt(shape: tuple[int, ...]) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


def parameter_formula(
    module: nn.Module,
    d: int,
    h: int,
    total: int,
    lengths: tuple[int, int],
    used: set[int],
) -> tuple[bool, str]:
    """Compare the parameters with 2 (or 3, gated) d_model x d_ff matrices plus biases.

    A matrix counts when it has a d_model x d_ff shape and (if the trace saw any matrix
    product, `used` = their operands' data pointers) it went into a matrix product; a
    fused [2 d_ff, d_model] gate-and-up matrix counts as two. Biases: at most one
    d_model vector (b2) and one d_ff vector per matrix into the hidden layer; anything
    else is listed as extra with its name, shape and size.

    Args:
        module: the student's FFN.
        d: d_model; h: the hidden width the hooks found.
        total: the parameter count (already checked to be the same at both lengths).
        lengths: the two lengths T it was counted at (for the detail).
        used: data pointers of the tensors that went into matrix products.

    Returns:
        (passed, detail), e.g. (True, "2,128 = 2·d_model·d_ff + d_ff + d_model (...)").
    """
    owner = {id(p): id(sub) for sub in module.modules() for p in sub.parameters(recurse=False)}
    named = list(module.named_parameters())
    units = {}  # matrix name -> how many d_model x d_ff matrices it holds
    for name, p in named:
        if p.dim() != 2 or (used and p.data_ptr() not in used):
            continue
        if sorted(p.shape) == sorted((d, h)):
            units[name] = 1
        elif sorted(p.shape) == sorted((d, 2 * h)):
            units[name] = 2
    m = sum(units.values())
    beside = {owner[id(p)] for name, p in named if name in units}
    vectors = [
        (name, p)
        for name, p in named
        if name not in units and p.dim() == 1 and p.shape[0] in (d, h, 2 * h)
    ]
    vectors.sort(key=lambda v: (owner[id(v[1])] not in beside, not v[0].endswith("bias")))
    vector_names = {name for name, _ in vectors}
    extra = [(name, p) for name, p in named if name not in units and name not in vector_names]
    room_h, room_d = (m, 0) if h == d else (max(m - 1, 0), 1 if m else 0)
    used_h = used_d = 0
    for name, p in vectors:
        size = p.shape[0]
        if h != d and size == d and used_d < room_d:
            used_d += 1
        elif size in (h, 2 * h) and used_h + size // h <= room_h:
            used_h += size // h
        else:
            extra.append((name, p))
    formula = f"{m}·d_model·d_ff"
    if used_h:
        formula += " + " + ("" if used_h == 1 else f"{used_h}·") + "d_ff"
    if used_d:
        formula += " + d_model"
    expected = m * d * h + used_h * h + used_d * d
    listed = ", ".join(f"{n} {_fmt(tuple(p.shape))} ({p.numel():,})" for n, p in extra[:3])
    if len(extra) > 3:
        listed += f" and {len(extra) - 3} more"
    sizes = f"d_model={d}, d_ff={h}"
    if m not in (2, 3):
        odd = [f"{n} {_fmt(tuple(p.shape))}" for n, p in extra if p.dim() != 1]
        if m >= 2:
            what = "more than a gated FFN's three"
        elif odd:
            what = (
                f"{odd[0]} has the wrong shape: a projection between d_model={d} and "
                f"d_ff={h} is [{h}, {d}] or [{d}, {h}]"
            )
            odd = odd[1:]
        else:
            what = "a projection is missing"
        matrices = "1 d_model×d_ff matrix" if m == 1 else f"{m} d_model×d_ff matrices"
        return False, (
            f"{total:,} parameters with {matrices} ({sizes}): an FFN has two (W1, W2), "
            f"three when gated; {what}" + (f"; also: {', '.join(odd[:3])}" if odd else "")
        )
    if extra:
        return False, (
            f"{total:,} parameters, {total - expected:,} more than {formula} = {expected:,} "
            f"({sizes}); extra: {listed}"
        )
    return True, (f"{total:,} = {formula} ({sizes}), the same at T={lengths[0]} and T={lengths[1]}")
