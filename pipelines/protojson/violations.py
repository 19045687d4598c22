"""The error every decoder of CES's proto3 JSON raises for a value that breaks its schema: the
enum readers here and the flatteners above share it, so a reject records one kind of reason."""

from __future__ import annotations


class SchemaViolation(ValueError):
    """An object does not match the API schema; the message says where and why."""
