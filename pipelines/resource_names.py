"""CES resource names, one pattern per kind, all built on the app's: every module that reads a
name (the settings, the lake's paths, the flatteners) matches it here, with `fullmatch`."""

from __future__ import annotations

import re
from collections.abc import Iterable

_APP = r"projects/[^/]+/locations/[^/]+/apps/[^/]+"

APP = re.compile(r"projects/([^/]+)/locations/([^/]+)/apps/([^/]+)")
"""An app: its project, location and app id."""
CONVERSATION = re.compile(rf"({_APP})/conversations/([^/]+)")
"""A conversation: its app, its id."""
EVALUATION_RUN = re.compile(rf"({_APP})/evaluationRuns/([^/]+)")
"""An evaluation run: its app, its id."""
EVALUATION_RESULT = re.compile(rf"({_APP}/evaluations/[^/]+)/results/[^/]+")
"""An evaluation result: the evaluation it belongs to."""


def apps_named(name: str, apps: Iterable[str]) -> list[str]:
    """The apps among `apps` that `name` stands for: the one of that full resource name, or each
    whose app id it is (several projects may share an id)."""
    return [app for app in apps if name in (app, app.rsplit("/", 1)[-1])]


def name_of(obj: object) -> str | None:
    """The `name` of a JSON object when it is a string (the resource it is), else None: what a
    reject records of a bad object, and how listed objects are told apart."""
    name = obj.get("name") if isinstance(obj, dict) else None
    return name if isinstance(name, str) else None
