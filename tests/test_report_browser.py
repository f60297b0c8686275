"""report.html in headless Chromium, offline: every chart draws marks, no console errors,
no network request attempted. Driven over the Chrome DevTools Protocol (websockets)."""

from __future__ import annotations

import base64
import contextlib
import json
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from test_report import MANY_ACCOUNTS, NO_REQUESTS, render_fixture
from websockets.sync.client import connect

from forensics import pipeline

pytestmark = pytest.mark.browser

CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome")
LOCAL_SCHEMES = ("file:", "data:", "blob:", "about:", "chrome:", "devtools:")

# counts the mark items Vega drew as SVG nodes in each chart container (axes and legends
# are role-axis/role-legend groups, so only the data marks are counted)
COUNT_MARKS = """
(() => {
  const out = {};
  document.querySelectorAll('.chart[data-chart]').forEach(el => {
    out[el.id] = el.querySelectorAll('svg g.role-mark > path, svg g.role-mark > line, '
      + 'svg g.role-mark > text, svg g.role-mark > rect, svg g.role-mark > g').length;
  });
  return JSON.stringify(out);
})()
"""


def chromium_path() -> str:
    """The Chromium binary; a missing browser fails the test (CI installs it)."""
    for candidate in CHROMIUM_CANDIDATES:
        found = shutil.which(candidate)
        if found:
            return found
    pytest.fail("Chromium not found: install Debian's `chromium` package (scripts/test.sh does)")


class Browser:
    """A headless Chromium with the network blocked, and one page attached over CDP."""

    def __init__(self, profile: Path, width: int = 1100, height: int = 900):
        self.proc = subprocess.Popen(
            [
                chromium_path(),
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--remote-debugging-port=0",
                f"--user-data-dir={profile}",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-extensions",
                "--no-first-run",
                "--no-default-browser-check",
                "--host-resolver-rules=MAP * ~NOTFOUND",
                "--proxy-server=127.0.0.1:9",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.events: list[dict[str, Any]] = []
        self.blocked: list[str] = []
        self._id = 0
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not (port_file.exists() and len(port_file.read_text().splitlines()) >= 2):
            if time.monotonic() > deadline or self.proc.poll() is not None:
                self.close()
                pytest.fail("Chromium did not open its DevTools port")
            time.sleep(0.1)
        port, path = port_file.read_text().splitlines()[:2]
        self._stack = contextlib.ExitStack()
        self.ws = self._stack.enter_context(
            connect(f"ws://127.0.0.1:{port}{path}", max_size=None, open_timeout=20)
        )
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)[
            "sessionId"
        ]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable", session=True)
        patterns = [{"urlPattern": p} for p in ("http://*", "https://*", "ws://*", "wss://*")]
        self.call("Fetch.enable", session=True, patterns=patterns)
        self.call(
            "Emulation.setDeviceMetricsOverride",
            session=True,
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )

    def call(self, method: str, session: bool = False, **params: Any) -> dict[str, Any]:
        """Send one CDP command and wait for its answer, keeping events that arrive meanwhile."""
        self._id += 1
        message: dict[str, Any] = {"id": self._id, "method": method, "params": params}
        if session:
            message["sessionId"] = self.session
        self.ws.send(json.dumps(message))
        while True:
            reply = json.loads(self.ws.recv(timeout=60))
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self._event(reply)

    def _event(self, event: dict[str, Any]) -> None:
        if "method" not in event:
            return
        self.events.append(event)
        if event["method"] == "Fetch.requestPaused":
            params = event["params"]
            self.blocked.append(params["request"]["url"])
            self.ws.send(
                json.dumps(
                    {
                        "id": 0,
                        "sessionId": event.get("sessionId"),
                        "method": "Fetch.failRequest",
                        "params": {
                            "requestId": params["requestId"],
                            "errorReason": "BlockedByClient",
                        },
                    }
                )
            )

    def evaluate(self, expression: str) -> Any:
        result = self.call(
            "Runtime.evaluate", session=True, expression=expression, returnByValue=True
        )
        if "exceptionDetails" in result:
            raise RuntimeError(result["exceptionDetails"])
        return result["result"].get("value")

    def open(self, url: str, ready: str, timeout: float = 90) -> None:
        """Navigate and poll until the JavaScript expression `ready` is true."""
        self.call("Page.navigate", session=True, url=url)
        deadline = time.monotonic() + timeout
        while not self.evaluate(ready):
            if time.monotonic() > deadline:
                raise TimeoutError(f"page not ready after {timeout}s: {ready}")
            time.sleep(0.25)

    def screenshot(self, path: Path) -> None:
        """A full-page PNG."""
        metrics = self.call("Page.getLayoutMetrics", session=True)["cssContentSize"]
        self.call(
            "Emulation.setDeviceMetricsOverride",
            session=True,
            width=int(metrics["width"]),
            height=int(metrics["height"]),
            deviceScaleFactor=1,
            mobile=False,
        )
        data = self.call(
            "Page.captureScreenshot", session=True, format="png", captureBeyondViewport=True
        )["data"]
        path.write_bytes(base64.b64decode(data))

    def console_errors(self) -> list[str]:
        errors = []
        for ev in self.events:
            method, params = ev["method"], ev.get("params", {})
            if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                args = params.get("args", [])
                errors.append(" ".join(str(a.get("value", a.get("description"))) for a in args))
            elif method == "Runtime.exceptionThrown":
                errors.append(json.dumps(params["exceptionDetails"].get("text")))
            elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
                errors.append(params["entry"].get("text", ""))
        return errors

    def requested_urls(self) -> list[str]:
        """Every URL the page asked for that is not local (file:, data:, ...)."""
        urls = [
            ev["params"]["request"]["url"]
            for ev in self.events
            if ev["method"] == "Network.requestWillBeSent"
        ]
        return sorted({u for u in urls + self.blocked if not u.startswith(LOCAL_SCHEMES)})

    def close(self) -> None:
        try:
            if getattr(self, "_stack", None) is not None:
                self._stack.close()
        finally:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


READY = (
    "window.__report !== undefined && "
    "window.__report.done + window.__report.failed.length === window.__report.expected"
)


def render_in_browser(html: Path, shot: Path, profile: Path) -> tuple[dict[str, int], Browser]:
    """Open `html` offline, wait for every chart, screenshot it; return marks per chart."""
    browser = Browser(profile)
    try:
        browser.open(html.resolve().as_uri(), READY)
        marks = json.loads(browser.evaluate(COUNT_MARKS))
        browser.screenshot(shot)
        return marks, browser
    finally:
        browser.close()


def test_report_renders_every_chart_offline_without_console_errors(tmp_path: Path) -> None:
    out = tmp_path / "out"
    render_fixture(out)
    profile = tmp_path / "chromium-profile"
    profile.mkdir()
    shot = tmp_path / "report.png"

    marks, browser = render_in_browser(out / "report.html", shot, profile)

    assert sorted(marks) == ["chart-daily", "chart-hourly", "chart-size", "chart-timeline"]
    assert all(n > 0 for n in marks.values()), marks
    assert browser.console_errors() == []
    assert browser.requested_urls() == []
    assert shot.stat().st_size > 20_000


@pytest.mark.parametrize("sql", ["", MANY_ACCOUNTS], ids=["account-lanes", "prompt-bands"])
def test_binned_charts_render_offline_without_console_errors(tmp_path: Path, sql: str) -> None:
    """Above the mark threshold (here 1) the timeline and the size chart draw counts per bin:
    they draw, with no console error and no network request."""
    out = tmp_path / "out"
    render_fixture(out, max_marks=1, sql=sql)
    profile = tmp_path / "chromium-profile"
    profile.mkdir()

    marks, browser = render_in_browser(out / "report.html", tmp_path / "report.png", profile)

    assert sorted(marks) == ["chart-daily", "chart-hourly", "chart-size", "chart-timeline"]
    assert all(n > 0 for n in marks.values()), marks
    assert browser.console_errors() == []
    assert browser.requested_urls() == []


def test_charts_without_data_say_no_data_and_the_timeline_still_draws(tmp_path: Path) -> None:
    out = tmp_path / "out"
    render_fixture(out, sql=NO_REQUESTS)
    profile = tmp_path / "chromium-profile"
    profile.mkdir()

    browser = Browser(profile)
    try:
        browser.open((out / "report.html").resolve().as_uri(), READY)
        marks = json.loads(browser.evaluate(COUNT_MARKS))
        empty = browser.evaluate(
            "Array.from(document.querySelectorAll('[data-empty]'))"
            ".map(e => e.id + ': ' + e.textContent).join('\\n')"
        )
        drawn = browser.evaluate(
            "Array.from(document.querySelectorAll('#chart-timeline svg text'))"
            ".map(t => t.textContent).join('\\n')"
        )
        errors, requested = browser.console_errors(), browser.requested_urls()
    finally:
        browser.close()

    assert list(marks) == ["chart-timeline"] and marks["chart-timeline"] > 0
    reason = "no exposed response and no baseline long-context request in the window"
    assert empty.splitlines() == [
        "chart-size: No data: no request in the window over the capacity, over the context "
        "window or of 200 prompt tokens or more.",
        f"chart-daily: No data: {reason}.",
        f"chart-hourly: No data: {reason}.",
    ]
    assert "No data: no exposed response in the window." in drawn.splitlines()
    assert errors == []
    assert requested == []


@pytest.fixture(scope="module")
def demo_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """report.html of the bundled GLM-5.3 case, run end to end."""
    out = tmp_path_factory.mktemp("demo")
    pipeline.demo(out)
    return out / "report.html"


def test_demo_report_renders_every_chart_offline(tmp_path: Path, demo_report: Path) -> None:
    profile = tmp_path / "chromium-profile"
    profile.mkdir()
    shot = tmp_path / "demo-report.png"

    marks, browser = render_in_browser(demo_report, shot, profile)

    # every chart drew its marks: 155 exposed ticks twice in the timeline alone
    assert marks["chart-timeline"] > 2 * 155
    assert marks["chart-size"] > 155
    assert marks["chart-daily"] > 0
    assert marks["chart-hourly"] > 0
    assert marks["chart-coverage"] > 0  # the gateway log's hours, the engine nodes' hours
    assert browser.console_errors() == []
    assert browser.requested_urls() == []
    assert shot.stat().st_size > 100_000


def test_report_of_a_case_with_hostile_account_ids_renders_every_chart(tmp_path: Path) -> None:
    """Account ids holding `<!--<script>`, control characters and U+2028 (see
    test_outputs_safety.py) stop no chart: each draws, with the ids' lanes, no console error."""
    from test_outputs_safety import HOSTILE_ACCOUNTS, hostile_case

    out = tmp_path / "out"
    pipeline.run(hostile_case(tmp_path / "case"), out)
    profile = tmp_path / "chromium-profile"
    profile.mkdir()

    browser = Browser(profile)
    try:
        browser.open((out / "report.html").resolve().as_uri(), READY)
        failed = browser.evaluate("JSON.stringify(window.__report.failed)")
        marks = json.loads(browser.evaluate(COUNT_MARKS))
        lanes = browser.evaluate(
            "Array.from(document.querySelectorAll('#chart-timeline svg text'))"
            ".map(t => t.textContent).join('\\n')"
        )
        errors, requested = browser.console_errors(), browser.requested_urls()
    finally:
        browser.close()

    assert failed == "[]"
    assert sorted(marks) == [
        "chart-coverage",
        "chart-daily",
        "chart-hourly",
        "chart-size",
        "chart-timeline",
    ]
    assert all(n > 0 for n in marks.values()), marks
    shown = lanes.splitlines()
    assert HOSTILE_ACCOUNTS["acct-bob"] in shown  # markup in an id is drawn as text
    assert "acct-\\x01carol\\x1b[31m" in shown
    assert errors == []
    assert requested == []
