"""Lake paths: an app name is one percent-encoded segment, so no `..` or `/` climbs out of the root."""

from __future__ import annotations

from datetime import date
from urllib.parse import quote, unquote

from pipelines import resource_names


def _encode(part: str) -> str:
    return quote(part, safe="-_").replace(".", "%2E")


def app_segment(app: str) -> str:
    """`projects/p/locations/l/apps/a` → `p.l.a` (each part percent-encoded)."""
    match = resource_names.APP.fullmatch(app)
    if match is None:
        raise ValueError(f"not an app resource name: {app[:200]!r}")
    return ".".join(_encode(part) for part in match.groups())


def app_from_segment(segment: str) -> str:
    project, location, app = (unquote(part) for part in segment.split("."))
    return f"projects/{project}/locations/{location}/apps/{app}"


def partition_dir(*parts: str, app: str, day: date) -> str:
    """`<parts...>/app=<segment>/date=<YYYY-MM-DD>` relative to the lake root."""
    return "/".join((*parts, f"app={app_segment(app)}", f"date={day.isoformat()}"))
