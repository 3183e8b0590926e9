"""Request bodies of many numbers, read straight into NumPy arrays by simdjson.

A forward request with its own tokens at 32 x 1024 carries 32,768 numbers (340 kB of JSON).
Read the usual way (orjson, Pydantic's check of every number, `np.asarray`) each number
passes through a Python float: ~2 ms on this machine, most of the FFN's own forward at that
size (~2.5 ms). simdjson (pysimdjson) parses the same body in ~0.3 ms and copies an array of
numbers into a buffer in C, never making a Python float.

`read(body, fields)` is that fast path for the fields a request model names in its
`array_fields` (a path such as "tokens" or "weights.w1", and its number of dimensions). It
returns the body's object with each such field as a float64 ndarray, or None whenever the
body is anything but the plain case; the body is then read the usual way
(`app.api.json_body.loads`), whose values and errors stay the reference. None for a body:

- shorter than `MIN_BYTES` (the usual way is fast already);
- that simdjson does not parse (malformed JSON, NaN, numbers past float64, integers past
  64 bits, invalid UTF-8, ...) or that is not an object;
- with an object that has a key twice (`json.loads` keeps the last value);
- nested deeper than `json.loads` reads (`app.api.body_errors.max_depth`);
- where a named field is not a rectangular array of numbers of its dimensions: ragged,
  empty, nested deeper, or holding booleans, nulls or strings.

A request model takes such an array as it is (`ParsedMatrix`, `ParsedVector` in
`app.api.schemas.values`) and checks it as it checks a list (`app.lab.values.as_float_array`):
the same limits, the same words.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt
import simdjson

from app.api.body_errors import max_depth, nesting_depth

MIN_BYTES = 32 * 1024
"""Bodies shorter than this are read the usual way (under ~3,000 numbers: ~0.2 ms)."""

REUSE_MAX_BYTES = 1024 * 1024
"""Bodies up to this size are parsed by a parser kept per thread, which keeps its buffers
(~3x the largest such body): a fresh parser's new memory costs ~0.4 ms at 340 kB. Larger
bodies get a parser of their own, freed with them."""

_kept = threading.local()


def _parse(body: bytes) -> Any:
    """simdjson's document for `body` (a proxy; raises as `Parser.parse` does)."""
    if len(body) > REUSE_MAX_BYTES:
        return simdjson.Parser().parse(body)
    parser = getattr(_kept, "parser", None)
    if parser is None:
        parser = _kept.parser = simdjson.Parser()
    try:
        return parser.parse(body)
    except RuntimeError:  # still referenced by a document that was not released: replace it
        _kept.parser = simdjson.Parser()
        return _kept.parser.parse(body)


class _NotPlain(Exception):
    """The body is not the plain case: read it the usual way."""


def read(
    body: bytes, fields: Mapping[str, int], min_bytes: int = MIN_BYTES
) -> dict[str, Any] | None:
    """The body's top-level object with the `fields` (path -> ndim) that it has as float64
    ndarrays, everything else as `json.loads` gives it; None when the body must be read the
    usual way (see the module docstring). Memory: the parser holds a padded copy of the
    body and its tape (about 3x the body, as the Python floats of the usual way do); see
    `REUSE_MAX_BYTES`."""
    if len(body) < min_bytes or not fields:
        return None
    limit = max_depth()
    opens = body.count(b"[")
    if opens + body.count(b"{") > limit and nesting_depth(body) > limit:
        return None
    try:
        doc = _parse(body)
    except (ValueError, RuntimeError, TypeError):
        return None
    if not isinstance(doc, simdjson.Object):
        return None
    try:
        value, arrays = _object(doc, "", fields)
    except _NotPlain:
        return None
    # Every "[" in the body opens an array that was counted, unless one sits inside a string
    # or inside a named field's rows (which as_buffer would flatten): either way, not plain.
    return value if arrays == opens else None


def _object(obj: Any, prefix: str, fields: Mapping[str, int]) -> tuple[dict[str, Any], int]:
    """A simdjson Object as a dict, and the number of arrays in it."""
    keys = list(obj.keys())
    if len(set(keys)) != len(keys):
        raise _NotPlain
    out: dict[str, Any] = {}
    arrays = 0
    for key in keys:
        item = obj[key]
        path = prefix + key
        if path in fields:
            if not isinstance(item, simdjson.Array):
                raise _NotPlain
            out[key], count = _numbers(item, fields[path])
        elif isinstance(item, simdjson.Object):
            out[key], count = _object(item, path + ".", fields)
        elif isinstance(item, simdjson.Array):
            out[key] = item.as_list()
            count = _lists(out[key])
        else:
            out[key], count = item, 0
        arrays += count
    return out, arrays


def _numbers(array: Any, ndim: int) -> tuple[npt.NDArray[np.float64], int]:
    """A rectangular array of numbers of `ndim` dimensions (1 or 2) as float64, and the
    number of JSON arrays it is made of."""
    rows = len(array)
    if rows == 0:
        raise _NotPlain
    width = 0
    if ndim == 2:
        lengths = {len(row) if isinstance(row, simdjson.Array) else -1 for row in array}
        if len(lengths) != 1 or (width := lengths.pop()) <= 0:
            raise _NotPlain
    try:
        flat = np.frombuffer(array.as_buffer(of_type="d"), dtype=np.float64)
    except (TypeError, ValueError):  # a boolean, null, string or object among the numbers
        raise _NotPlain from None
    shape = (rows, width) if ndim == 2 else (rows,)
    if flat.size != int(np.prod(shape)) or not np.isfinite(flat).all():
        raise _NotPlain
    return flat.reshape(shape), rows + 1 if ndim == 2 else 1


def _lists(value: Any) -> int:
    """How many lists `value` holds, itself included."""
    if isinstance(value, list):
        return 1 + sum(_lists(item) for item in value)
    if isinstance(value, dict):
        return sum(_lists(item) for item in value.values())
    return 0
