"""Making a write durable on local disk: shared by the lake and the warehouse file, without
either's imports (the read-only commands import the warehouse alone)."""

from __future__ import annotations

import contextlib
import os


def fsync_directory(directory: str) -> None:
    """Make a rename in `directory` durable (best effort: not every filesystem allows it)."""
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
