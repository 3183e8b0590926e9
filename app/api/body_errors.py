"""Bodies the JSON parser gives up on, said in a student's words (a 422, not a vague 400).

Python's `json` stops at a nesting depth near the interpreter's recursion limit (a
RecursionError) and at integers longer than `sys.get_int_max_str_digits()` (4,300 digits: a
ValueError). FastAPI turns both into 400 "There was an error parsing the body"; these
helpers measure what was sent (on the error path only) and name the limit.
"""

from __future__ import annotations

import json
import re
import sys
import threading
from functools import cache
from typing import Any

import numpy as np

_OPEN = np.frombuffer(b"[{", dtype=np.uint8)
_CLOSE = np.frombuffer(b"]}", dtype=np.uint8)
_DIGITS = re.compile(rb"\d+")


def nesting_depth(body: bytes) -> int:
    """The deepest nesting of [ and { in `body` (brackets inside strings count too: this is
    for a message, measured only when the parser already gave up)."""
    data = np.frombuffer(body, dtype=np.uint8)
    steps = np.isin(data, _OPEN).astype(np.int32) - np.isin(data, _CLOSE).astype(np.int32)
    return int(np.cumsum(steps).max(initial=0))


def longest_number(body: bytes) -> int:
    """The most digits in one run of digits in `body`."""
    return max((len(m) for m in _DIGITS.findall(body)), default=0)


@cache
def max_depth() -> int:
    """The deepest JSON nesting this interpreter's parser reads (found once, by bisection,
    on a thread of its own: the parser's limit counts the caller's frames too, so measured
    from a fresh stack the figure is the same whoever asks first)."""
    found: list[int] = []

    def bisect() -> None:
        low, high = 1, sys.getrecursionlimit() + 10
        while low < high:
            mid = (low + high + 1) // 2
            try:
                json.loads("[" * mid + "]" * mid)
                low = mid
            except RecursionError:
                high = mid - 1
        found.append(low)

    thread = threading.Thread(target=bisect, name="json-depth")
    thread.start()
    thread.join()
    return found[0]


def max_digits() -> int:
    """The longest integer the parser reads (Python's int_max_str_digits; 0: no limit)."""
    return sys.get_int_max_str_digits()


def parse_refusal(cause: BaseException | None, body: bytes) -> dict[str, Any] | None:
    """The 422 item for a body the parser gave up on, or None when the cause is another."""
    if isinstance(cause, RecursionError):
        limit = max_depth()
        depth = nesting_depth(body)
        return {
            "loc": ["body"],
            "msg": (
                f"the request body is nested {depth:,} levels deep in [ ] and {{ }}; JSON "
                f"bodies nested more than about {limit:,} levels are not read: send a flatter body"
            ),
            "type": "json_invalid",
            "code": "body_depth",
            "params": {"depth": depth, "limit": limit},
        }
    if isinstance(cause, ValueError) and "digits" in str(cause):
        limit = max_digits()
        digits = longest_number(body)
        return {
            "loc": ["body"],
            "msg": (
                f"the request body has a number of {digits:,} digits; numbers of at most "
                f"{limit:,} digits are read (and no field accepts one that long)"
            ),
            "type": "json_invalid",
            "code": "body_number",
            "params": {"digits": digits, "limit": limit},
        }
    return None
