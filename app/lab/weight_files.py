"""A layer's FFN weights from a file: .safetensors, .npz or a PyTorch state_dict (.pt).

Nothing in a file is executed: safetensors and .npz (`allow_pickle=False`) hold only arrays,
and a .pt is read with `torch.load(weights_only=True)`, which refuses any pickled object
that is not a tensor or a plain container. Names are mapped by the families of
`lab.from_module` (torch's `nn.Linear` stores [out, in]; turned to the paper's [in, out]):

- FFN Lab's own: `w1`, `b1`, `w2`, `b2`, `w_gate`, `b_gate` in the paper's orientation (the
  API's `weights`), or our module's state_dict (`w1.weight`, ...);
- BERT: `*intermediate.dense.{weight,bias}` and `*output.dense.{weight,bias}`;
- GPT-2: `*c_fc.{weight,bias}`, `*mlp.c_proj.{weight,bias}` (Conv1D: [in, out] already);
- LLaMA: `*gate_proj.weight`, `*up_proj.weight`, `*down_proj.weight`; Meta's `w1`/`w3`/`w2`;
- T5: `*wi.weight`, `*wo.weight`; gated `*wi_0.weight` (gate), `*wi_1.weight` (up).

A file holds one layer: a whole model's state_dict is refused with the layers found named.
"""

from __future__ import annotations

import io
import pickle
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import torch

from app.lab.errors import InvalidValue
from app.lab.file_bounds import FileBounds, check_pt, check_safetensors, check_zip, refuse
from app.lab.layer_checks import check_limits, check_plain, check_shapes, check_values

Array = npt.NDArray[np.float32]
FORMATS = (".safetensors", ".npz", ".pt", ".pth", ".bin")
SUGGESTED = {
    "ffn-lab": "relu",
    "bert": "gelu",
    "gpt2": "gelu_tanh",
    "llama": "swiglu",
    "meta-llama": "swiglu",
    "t5": "relu",
    "t5-gated": "geglu_tanh",
}
"""The activation each family's reference model uses (the file itself does not say)."""


@dataclass(frozen=True)
class LayerFile:
    """The FFN weights found in one uploaded file.

    Attributes:
        family: which naming was recognised (a key of `SUGGESTED`).
        format: "safetensors", "npz" or "pt".
        weights: float32 arrays in the paper's orientation (w1 [d_model, d_ff], w2
            [d_ff, d_model], w_gate; b1, b2, b_gate when the file has biases).
        found: every tensor name in the file, as given.
    """

    family: str
    format: str
    weights: dict[str, Array]
    found: list[str]

    @property
    def d_model(self) -> int:
        return int(self.weights["w1"].shape[0])

    @property
    def d_ff(self) -> int:
        return int(self.weights["w1"].shape[1])

    @property
    def gated(self) -> bool:
        return "w_gate" in self.weights

    @property
    def bias(self) -> bool:
        return "b1" in self.weights

    @property
    def activation(self) -> str:
        """The family's activation; FFN Lab's own gated files default to SwiGLU."""
        if self.family == "ffn-lab" and self.gated:
            return "swiglu"
        return SUGGESTED[self.family]


_refuse = refuse


def read_tensors(
    data: bytes, filename: str, bounds: FileBounds | None = None
) -> tuple[str, dict[str, torch.Tensor]]:
    """(format, tensors by name) of a file, by its extension; nothing in it is executed.

    With `bounds`, what the file declares (zip member sizes, .npy and .safetensors headers)
    is checked first (`app.lab.file_bounds`), before any tensor is read.

    Raises:
        InvalidValue: an unknown extension, a file that does not parse, one that declares
            more than `bounds` allow, or one without tensors (the message names what was
            found and what was expected).
    """
    name = filename.lower()
    try:
        if name.endswith(".safetensors"):
            from safetensors.torch import load

            if bounds is not None:
                check_safetensors(data, filename, bounds)
            return "safetensors", dict(load(data))
        if name.endswith(".npz"):
            if bounds is not None:
                check_zip(data, filename, bounds, "npz")
            with np.load(io.BytesIO(data), allow_pickle=False) as npz:
                # each npz[k] is a fresh array read from its member: no second copy
                return "npz", {k: torch.from_numpy(npz[k]) for k in npz.files}
        if name.endswith((".pt", ".pth", ".bin")):
            if bounds is not None:
                check_pt(data, filename, bounds)
            loaded = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
            return "pt", _state_dict(loaded)
    except InvalidValue:
        raise
    except pickle.UnpicklingError:
        raise _refuse(
            f"{filename!r} holds objects other than tensors (a pickled class or function); "
            "FFN Lab reads a state_dict with torch.load(weights_only=True) and runs nothing "
            "from a file: save one with torch.save(module.state_dict(), path)",
            "pickle",
            name=filename,
        ) from None
    except Exception as exc:  # any other failure to parse is a bad file, never a 500
        kind = name.rsplit(".", 1)[-1]
        first = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
        raise _refuse(
            f"{filename!r} is not a readable .{kind} file of tensors: {first}",
            "unreadable",
            name=filename,
            kind=kind,
        ) from None
    raise _refuse(
        f"{filename!r} has an extension FFN Lab does not read; use one of {', '.join(FORMATS)}",
        "extension",
        name=filename,
        formats=", ".join(FORMATS),
    )


def _state_dict(loaded: Any) -> dict[str, torch.Tensor]:
    if isinstance(loaded, Mapping):
        for key in ("state_dict", "model"):
            inner = loaded.get(key)
            if isinstance(inner, Mapping) and len(loaded) == 1:
                loaded = inner
        tensors = {str(k): v for k, v in loaded.items() if isinstance(v, torch.Tensor)}
        if tensors:
            return tensors
    raise _refuse(
        f"the .pt file holds a {type(loaded).__name__}, not a state_dict of tensors "
        "(save one with torch.save(module.state_dict(), path))",
        "not_state_dict",
        kind=type(loaded).__name__,
    )


def _t(x: torch.Tensor) -> torch.Tensor:
    return x.T if x.ndim == 2 else x


def _same(x: torch.Tensor) -> torch.Tensor:
    return x


Turn = Callable[[torch.Tensor], torch.Tensor]

FAMILIES: dict[str, list[tuple[str, str, Turn]]] = {
    # family: (our name, the file name's suffix, how to turn it to the paper's orientation)
    "bert": [
        ("w1", "intermediate.dense.weight", _t),
        ("b1", "intermediate.dense.bias", _same),
        ("w2", "output.dense.weight", _t),
        ("b2", "output.dense.bias", _same),
    ],
    "gpt2": [
        ("w1", "c_fc.weight", _same),
        ("b1", "c_fc.bias", _same),
        ("w2", "mlp.c_proj.weight", _same),
        ("b2", "mlp.c_proj.bias", _same),
    ],
    "llama": [
        ("w_gate", "gate_proj.weight", _t),
        ("w1", "up_proj.weight", _t),
        ("w2", "down_proj.weight", _t),
        ("b_gate", "gate_proj.bias", _same),
        ("b1", "up_proj.bias", _same),
        ("b2", "down_proj.bias", _same),
    ],
    "meta-llama": [
        ("w_gate", "w1.weight", _t),
        ("w1", "w3.weight", _t),
        ("w2", "w2.weight", _t),
    ],
    "t5-gated": [
        ("w_gate", "wi_0.weight", _t),
        ("w1", "wi_1.weight", _t),
        ("w2", "wo.weight", _t),
    ],
    "t5": [("w1", "wi.weight", _t), ("w2", "wo.weight", _t)],
    "ffn-lab-module": [
        ("w1", "w1.weight", _t),
        ("b1", "w1.bias", _same),
        ("w2", "w2.weight", _t),
        ("b2", "w2.bias", _same),
        ("w_gate", "w_gate.weight", _t),
        ("b_gate", "w_gate.bias", _same),
    ],
    "ffn-lab": [(n, n, _same) for n in ("w1", "b1", "w2", "b2", "w_gate", "b_gate")],
}
REQUIRED = {
    "bert": ("w1", "w2"),
    "gpt2": ("w1", "w2"),
    "llama": ("w_gate", "w1", "w2"),
    "meta-llama": ("w_gate", "w1", "w2"),
    "t5-gated": ("w_gate", "w1", "w2"),
    "t5": ("w1", "w2"),
    "ffn-lab-module": ("w1", "w2"),
    "ffn-lab": ("w1", "w2"),
}
EXPECTED = (
    "FFN Lab's w1/b1/w2/b2 (w_gate/b_gate); BERT intermediate.dense + output.dense; "
    "GPT-2 c_fc + mlp.c_proj; LLaMA gate_proj/up_proj/down_proj (Meta: w1/w3/w2); "
    "T5 wi/wo or wi_0/wi_1/wo"
)


def _matches(names: list[str], suffix: str) -> list[str]:
    out = []
    for name in names:
        if name == suffix or name.endswith("." + suffix):
            if suffix.startswith("output.dense.") and ".attention.output." in f".{name}":
                continue  # BERT's attention output projection, not the FFN's
            out.append(name)
    return out


def map_names(
    tensors: Mapping[str, torch.Tensor], sources: dict[str, str] | None = None
) -> tuple[str, dict[str, torch.Tensor]]:
    """(family, tensors by our names, paper orientation) for the first family that fits;
    `sources`, when given, receives our name -> the file's name of each tensor used.

    Raises:
        InvalidValue: no family fits (the names found and the ones expected are listed), or
            the file holds several layers of one (the layers are named).
    """
    names = sorted(tensors)
    for family, rules in FAMILIES.items():
        if family == "meta-llama" and not _matches(names, "w3.weight"):
            continue
        if family == "t5" and _matches(names, "wi_0.weight"):
            continue
        if family == "ffn-lab-module" and _matches(names, "w3.weight"):
            continue
        found: dict[str, torch.Tensor] = {}
        for ours, suffix, turn in rules:
            hits = _matches(names, suffix)
            if len(hits) > 1:
                shown = ", ".join(hits[:6]) + (" ..." if len(hits) > 6 else "")
                raise _refuse(
                    f"the file holds {len(hits)} layers' {suffix} ({shown}); upload one "
                    "layer's FFN weights",
                    "many_layers",
                    count=len(hits),
                    names=shown,
                )
            if hits:
                found[ours] = turn(tensors[hits[0]])
                if sources is not None:
                    sources[ours] = hits[0]
        if all(name in found for name in REQUIRED[family]):
            return ("ffn-lab" if family == "ffn-lab-module" else family), found
    shown = ", ".join(names[:12]) + (f" ... ({len(names)} in all)" if len(names) > 12 else "")
    raise _refuse(
        f"no FFN layer found: the file has {shown or 'no tensors'}; expected {EXPECTED}",
        "no_layer",
        names=shown or "-",
        expected=EXPECTED,
    )


def read_layer(
    data: bytes, filename: str, max_abs_value: float, bounds: FileBounds | None = None
) -> LayerFile:
    """The FFN weights of an uploaded file, checked: floating-point, finite, consistent shapes.

    With `bounds`, the file's declared sizes are checked before anything is read, and d_model,
    d_ff and the parameter count must be within the server's limits.

    Raises:
        InvalidValue: a file FFN Lab cannot read, no known naming, a tensor that is not a plain
            dense CPU floating-point array of its own (meta, sparse, quantized, complex, bool,
            0-dim, non-contiguous, a view sharing storage), shapes that do not fit together
            ([d_model, d_ff] then [d_ff, d_model]) or the server's limits, biases on only some
            maps, or a value that is not finite or over `max_abs_value`. Every refusal names
            the file (param `file`).
    """
    try:
        return _read_layer(data, filename, max_abs_value, bounds)
    except InvalidValue as error:
        if "file" not in error.params:
            error.params = {"file": filename, **error.params}
            if not error.message.startswith(repr(filename)):
                error.message = f"{filename!r}: {error.message}"
                error.args = (f"{error.field}: {error.message}",)
        raise


def _read_layer(
    data: bytes, filename: str, max_abs_value: float, bounds: FileBounds | None
) -> LayerFile:
    kind, tensors = read_tensors(data, filename, bounds)
    sources: dict[str, str] = {}
    family, found = map_names(tensors, sources)
    check_plain({sources[name]: tensors[sources[name]] for name in found}, views=kind == "pt")
    weights: dict[str, Array] = {}
    for name, tensor in found.items():
        check_values(name, tensor, max_abs_value)
        weights[name] = np.ascontiguousarray(tensor.detach().to(torch.float32).numpy())
    check_shapes(weights)
    if bounds is not None:
        check_limits(weights, bounds)
    return LayerFile(family=family, format=kind, weights=weights, found=sorted(tensors))
