"""Session codes and presenter tokens.

A code is 6 characters from an alphabet without 0/O/1/I (easy to read aloud and type):
32^6 ~ 1.07e9 codes. A presenter token is 32 random bytes (URL-safe base64); only its
SHA-256 is stored.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
"""The code's characters: A-Z and 2-9 without O, I, 0 and 1."""
CODE_LENGTH = 6


def new_code() -> str:
    """A random session code, e.g. "K7QF3M"."""
    return "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))


def normal_code(text: str) -> str | None:
    """`text` as a code (upper case, spaces and dashes dropped), or None if it cannot be one."""
    code = text.strip().upper().replace(" ", "").replace("-", "")
    if len(code) != CODE_LENGTH or any(c not in ALPHABET for c in code):
        return None
    return code


def new_token() -> str:
    """A presenter token (43 URL-safe characters)."""
    return secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    """SHA-256 hex of a token (what a store keeps)."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def token_matches(token: str | None, stored_hash: str) -> bool:
    """True when `token` hashes to `stored_hash` (constant-time comparison)."""
    if not token:
        return False
    return hmac.compare_digest(token_hash(token), stored_hash)
