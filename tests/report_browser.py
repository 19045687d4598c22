"""Headless Chromium driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`).

No WebDriver and no extra package: commands go to Chromium's fd 3 and replies come from its fd 4,
each a JSON message ended by a NUL byte. Used by the dashboard test to open the report as a
person would, with every network name unresolvable, and to collect console messages, exceptions,
failed loads and the requests the page made.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CHROMIUM = "/usr/bin/chromium"
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--host-resolver-rules=MAP * ~NOTFOUND",  # nothing the page might fetch can leave the machine
)


def ensure_chromium() -> str | None:
    """The Chromium binary, installing Debian's package when missing; None when it cannot be had."""
    found = shutil.which("chromium") or (CHROMIUM if Path(CHROMIUM).exists() else None)
    if found:
        return found
    if not shutil.which("apt-get") or os.geteuid() != 0:
        return None
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (
        ["apt-get", "update", "-qq"],
        ["apt-get", "install", "-y", "-qq", "--no-install-recommends", "chromium", "fonts-liberation"],
    ):
        try:
            subprocess.run(command, env=env, capture_output=True, timeout=600, check=True)
        except (subprocess.SubprocessError, OSError):
            return None
    return shutil.which("chromium")


@dataclass
class PageVisit:
    """What opening a page showed: messages, exceptions, failed loads, requests, chart state."""

    console: list[str] = field(default_factory=list)
    exceptions: list[str] = field(default_factory=list)
    log_entries: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    rendered: str | None = None
    render_error: str | None = None
    charts: list[dict[str, Any]] = field(default_factory=list)
    screenshot: bytes = b""


def _above_four(fd: int) -> int:
    """`fd` moved to a number above 4, so moving it onto 3 or 4 in the child cannot clobber it."""
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
    os.close(fd)
    return moved


class DevToolsPipe:
    """One Chromium process and the DevTools connection to it."""

    def __init__(self, binary: str, *, timeout: float = 60.0):
        self.timeout = timeout
        self._profile = tempfile.mkdtemp(prefix="chromium-profile-")
        command_read, self._command_write = os.pipe()
        self._reply_read, reply_write = os.pipe()
        command_read, reply_write = (_above_four(fd) for fd in (command_read, reply_write))
        # bash moves the pipe ends onto fds 3 and 4, where Chromium expects them.
        script = f'exec "$0" "$@" 3<&{command_read} 4>&{reply_write} {command_read}<&- {reply_write}>&-'
        self.process = subprocess.Popen(
            [
                "bash",
                "-c",
                script,
                binary,
                *FLAGS,
                f"--user-data-dir={self._profile}",
                "--remote-debugging-pipe",
            ],
            pass_fds=(command_read, reply_write),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(command_read)
        os.close(reply_write)
        self._next_id = 0
        self._replies: dict[int, queue.Queue] = {}
        self.events: queue.Queue = queue.Queue()
        self._lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        buffer = b""
        with os.fdopen(self._reply_read, "rb", buffering=0) as replies:
            while chunk := replies.read(65536):
                buffer += chunk
                *messages, buffer = buffer.split(b"\0")
                for raw in messages:
                    message = json.loads(raw)
                    if "id" in message and message["id"] in self._replies:
                        self._replies[message["id"]].put(message)
                    else:
                        self.events.put(message)

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> dict:
        with self._lock:
            self._next_id += 1
            message_id = self._next_id
            self._replies[message_id] = queue.Queue()
        message: dict[str, Any] = {"id": message_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._command_write, json.dumps(message).encode() + b"\0")
        reply = self._replies[message_id].get(timeout=self.timeout)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply.get("result", {})

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.send("Browser.close")
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._command_write)
        shutil.rmtree(self._profile, ignore_errors=True)


_CHART_STATE = """
Array.from(document.querySelectorAll('div.plotly-graph-div')).map(function (div) {
  var title = div.querySelector('.gtitle');
  return {
    id: div.id,
    svgs: div.querySelectorAll('svg.main-svg').length,
    traces: div.querySelectorAll('g.trace, g.hm, .heatmaplayer image').length,
    title: title ? title.textContent : '',
    xtitles: Array.from(div.querySelectorAll('.xtitle')).map(function (t) { return t.textContent; }),
    ytitles: Array.from(div.querySelectorAll('.ytitle')).map(function (t) { return t.textContent; }),
    width: div.getBoundingClientRect().width,
    height: div.getBoundingClientRect().height
  };
})
"""


def visit(binary: str, url: str, *, width: int = 1400, wait_seconds: float = 45.0) -> PageVisit:
    """Open `url`, wait until every chart reports rendered, and capture the whole page."""
    browser = DevToolsPipe(binary)
    found = PageVisit()
    try:
        target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Runtime", "Log", "Network", "Page"):
            browser.send(f"{domain}.enable", session=session)
        browser.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": False},
            session=session,
        )
        browser.send("Page.navigate", {"url": url}, session=session)

        def evaluate(expression: str) -> Any:
            reply = browser.send(
                "Runtime.evaluate", {"expression": expression, "returnByValue": True}, session=session
            )
            return reply.get("result", {}).get("value")

        deadline = time.monotonic() + wait_seconds
        while time.monotonic() < deadline:
            state = evaluate(
                "document.body ? [document.body.getAttribute('data-charts-rendered'),"
                " document.body.getAttribute('data-render-error')] : [null, null]"
            )
            found.rendered, found.render_error = state or (None, None)
            if found.rendered is not None or found.render_error is not None:
                break
            time.sleep(0.2)
        found.charts = evaluate(_CHART_STATE) or []
        metrics = browser.send("Page.getLayoutMetrics", session=session)
        size = metrics.get("cssContentSize") or metrics["contentSize"]
        height = int(size["height"]) + 1
        shot = browser.send(
            "Page.captureScreenshot",
            {
                "format": "png",
                "captureBeyondViewport": True,
                "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1},
            },
            session=session,
        )
        found.screenshot = base64.b64decode(shot["data"])
        time.sleep(0.2)  # let the last events arrive
    finally:
        browser.close()
    while not browser.events.empty():
        event = browser.events.get()
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.consoleAPICalled":
            text = " ".join(
                str(arg.get("value", arg.get("description", ""))) for arg in params.get("args", [])
            )
            found.console.append(f"{params.get('type')}: {text}")
        elif method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            found.exceptions.append(
                str(details.get("exception", {}).get("description") or details.get("text"))
            )
        elif method == "Log.entryAdded":
            entry = params.get("entry", {})
            found.log_entries.append(f"{entry.get('level')}: {entry.get('text')} {entry.get('url', '')}")
        elif method == "Network.requestWillBeSent":
            found.requests.append(params.get("request", {}).get("url", ""))
    return found
