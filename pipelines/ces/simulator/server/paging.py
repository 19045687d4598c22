"""Opaque page tokens and page-size rules shared by every list tool.

A token is urlsafe base64 of a small JSON object: the position to resume from, a page counter
(so a deliberately empty page still hands out a new token), and a fingerprint of the request
parameters the token belongs to. AIP-158: a token used with different parameters is an error.
"""

from __future__ import annotations

import base64
import binascii
import hashlib

import orjson

from pipelines.ces.simulator.server.errors import ToolError


def fingerprint(*parts: object) -> str:
    """A short digest of the parameters that must stay the same across the pages of one listing."""
    return hashlib.sha256(orjson.dumps([str(part) for part in parts])).hexdigest()[:16]


def encode_page_token(request_fingerprint: str, position: int, page: int, *, variant: int = 0) -> str:
    """A token resuming at `position`; a nonzero `variant` makes another token for the same place."""
    fields: dict[str, object] = {"p": position, "n": page, "f": request_fingerprint}
    if variant:
        fields["v"] = variant
    raw = orjson.dumps(fields)
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def decode_page_token(token: str, request_fingerprint: str) -> tuple[int, int]:
    """(position, page number) from a token issued for the same request parameters."""
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        fields = orjson.loads(raw)
        position, page, issued_for = fields["p"], fields["n"], fields["f"]
    except (binascii.Error, ValueError, TypeError, KeyError):
        raise ToolError("INVALID_ARGUMENT", f"invalid page token {token[:40]!r}") from None
    if not (isinstance(position, int) and isinstance(page, int) and position >= 0 and page >= 0):
        raise ToolError("INVALID_ARGUMENT", f"invalid page token {token[:40]!r}")
    if issued_for != request_fingerprint:
        raise ToolError(
            "INVALID_ARGUMENT",
            "page token does not match the request: parent, filter and sources must be the same as in "
            "the request that returned it",
        )
    return position, page


def page_size(requested: object, default: int, maximum: int) -> int:
    """The effective page size: unset or 0 means `default`, larger than `maximum` is capped."""
    if requested is None or requested == 0:
        return default
    if isinstance(requested, bool) or not isinstance(requested, int):
        raise ToolError("INVALID_ARGUMENT", f"pageSize must be an integer, got {requested!r}")
    if requested < 0:
        raise ToolError("INVALID_ARGUMENT", f"pageSize must not be negative, got {requested}")
    return min(requested, maximum)
