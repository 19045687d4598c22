"""The errors a person can act on: the CLI shows each as one line and exits with its code, never
a traceback. A module of its own, importing nothing, so that the CLI can catch them all without
importing what raises them (Dagster, pyarrow, the MCP client): `ces-pipeline query` starts in a
fraction of a second."""

from __future__ import annotations


class ActionableError(Exception):
    """A failure the message explains (a server, a lock, the warehouse file): exit code 1."""

    exit_code = 1


class UsageError(ActionableError):
    """Something asked for cannot be done as asked (a name, an address, an option): exit code 2."""

    exit_code = 2
