# SPDX-License-Identifier: Apache-2.0
"""Debian's Chromium, headless, for the web-page tests (issue 15): one browser driven over the
DevTools protocol, the page's DOM as Chromium built it, HTTP statuses, screenshots, and a
small element tree to check that DOM with.

The protocol runs over `--remote-debugging-pipe` (file descriptors 3 and 4, messages ended by
NUL), so it needs no websocket package and no port. Every wait has a deadline: a hung page
fails its test instead of the run. Pages are parsed from what Chromium serialises after
loading them (its DOM, not our server's bytes), so the checks see what a reader sees: an
unclosed tag or an unescaped `<` in our HTML changes that tree.
"""
import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from html.parser import HTMLParser
from pathlib import Path

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# In a container Chromium has no user namespaces for its sandbox and no GPU.
FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
         "--no-first-run", "--no-default-browser-check", "--disable-extensions",
         "--disable-background-networking", "--disable-sync", "--metrics-recording-only",
         "--proxy-server=direct://", "--proxy-bypass-list=*", "--hide-scrollbars"]
TIMEOUT_S = 30


class Browser:
    """One headless Chromium with one tab. `headers` go with every request of that tab (a
    bearer token: the server's own auth, which a browser has no other way to send)."""

    def __init__(self, headers=None):
        self._profile = tempfile.TemporaryDirectory(prefix="kh-chromium-")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        # Chromium reads fd 3 and writes fd 4. bash moves the pipe ends there (dash takes
        # one-digit fds only); they are first lifted above 9 so no redirection overwrites
        # the other.
        child_r = fcntl.fcntl(to_child_r, fcntl.F_DUPFD, 10)
        child_w = fcntl.fcntl(from_child_w, fcntl.F_DUPFD, 10)
        for fd in (to_child_r, from_child_w):
            os.close(fd)
        command = [CHROMIUM, *FLAGS, f"--user-data-dir={self._profile.name}",
                   "--remote-debugging-pipe", "about:blank"]
        self._process = subprocess.Popen(
            ["bash", "-c", f'exec "$@" 3<&{child_r} 4>&{child_w} {child_r}<&- {child_w}>&-',
             "bash", *command],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            pass_fds=(child_r, child_w))
        os.close(child_r)
        os.close(child_w)
        self._buffer = b""
        self._next_id = 0
        self._events = []
        try:
            target = self._call("Target.createTarget", {"url": "about:blank"})["targetId"]
            self._session = self._call("Target.attachToTarget",
                                       {"targetId": target, "flatten": True})["sessionId"]
            for domain in ("Page.enable", "Network.enable"):
                self._call(domain, session=True)
            if headers:
                self._call("Network.setExtraHTTPHeaders", {"headers": headers}, session=True)
        except BaseException:
            self.close()
            raise

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        if self._process.poll() is None:
            try:
                self._send({"id": 0, "method": "Browser.close"})
                self._process.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self._process.kill()
                self._process.wait()
        for fd in (self._to_child, self._from_child):
            try:
                os.close(fd)
            except OSError:
                pass
        self._profile.cleanup()

    # -- the protocol -------------------------------------------------------------------

    def _send(self, message):
        os.write(self._to_child, json.dumps(message).encode() + b"\0")

    def _receive(self, deadline):
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError("chromium did not answer in time")
            ready, _, _ = select.select([self._from_child], [], [], left)
            if ready:
                chunk = os.read(self._from_child, 1 << 20)
                if not chunk:
                    raise AssertionError("chromium closed its DevTools pipe")
                self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def _call(self, method, params=None, session=False, timeout=TIMEOUT_S):
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = self._session
        self._send(message)
        deadline = time.monotonic() + timeout
        while True:
            reply = self._receive(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise AssertionError(f"{method} failed: {reply['error']}")
                return reply.get("result", {})
            if "method" in reply:
                self._events.append(reply)

    def _wait_event(self, method, timeout=TIMEOUT_S):
        deadline = time.monotonic() + timeout
        while True:
            for i, event in enumerate(self._events):
                if event["method"] == method:
                    return self._events.pop(i)
            reply = self._receive(deadline)
            if "method" in reply:
                self._events.append(reply)

    # -- what the tests use -------------------------------------------------------------

    def open(self, url):
        """Navigates and waits for the load event; returns the main document's HTTP status."""
        self._events.clear()
        result = self._call("Page.navigate", {"url": url}, session=True)
        if result.get("errorText"):
            raise AssertionError(f"{url}: {result['errorText']}")
        self._wait_event("Page.loadEventFired")
        statuses = [e["params"]["response"]["status"] for e in self._events
                    if e["method"] == "Network.responseReceived"
                    and e["params"].get("type") == "Document"]
        return statuses[-1] if statuses else None

    def dom(self):
        result = self._call("Runtime.evaluate", {
            "expression": "document.documentElement.outerHTML", "returnByValue": True},
            session=True)
        return result["result"]["value"]

    def title(self):
        return self._call("Runtime.evaluate", {"expression": "document.title",
                                               "returnByValue": True},
                          session=True)["result"]["value"]

    def load(self, url):
        """The page at `url` as Chromium sees it, parsed; fails on a status other than 200."""
        status = self.open(url)
        if status != 200:
            raise AssertionError(f"{url} answered {status}")
        return parse(self.dom())

    def submit(self, form_id, fields=None):
        """Fills the form `form_id` of the page shown ({name: value}) and submits it as a
        reader would press its button; waits for the page it leads to and returns that
        page's HTTP status (the last document answer, after any redirect)."""
        self._events.clear()
        # DevTools evaluation is not the page's script, so the pages' no-script policy does
        # not stop it; the form is then sent by Chromium itself, cookies and all.
        script = ("(() => { const form = document.getElementById(%s);"
                  " if (!form) { return false; }"
                  " for (const [name, value] of Object.entries(%s)) {"
                  " form.elements[name].value = value; }"
                  " form.requestSubmit(); return true; })()"
                  % (json.dumps(form_id), json.dumps(fields or {})))
        found = self._call("Runtime.evaluate", {"expression": script, "returnByValue": True},
                           session=True)["result"]["value"]
        if not found:
            raise AssertionError(f"no form #{form_id} on the page")
        self._wait_event("Page.loadEventFired")
        statuses = [e["params"]["response"]["status"] for e in self._events
                    if e["method"] == "Network.responseReceived"
                    and e["params"].get("type") == "Document"]
        return statuses[-1] if statuses else None

    def load_dom(self):
        """The page shown now, parsed (after `submit`, say)."""
        return parse(self.dom())

    def cookies(self):
        """The browser's cookies, as DevTools lists them (name, value, httpOnly, sameSite...)."""
        return self._call("Network.getCookies", session=True)["cookies"]

    def screenshot(self, url, path: Path, width=1280):
        """The whole page at `url`, `width` pixels wide, as a PNG at `path`."""
        self.open(url)
        height = self._call("Page.getLayoutMetrics", session=True)["cssContentSize"]["height"]
        height = max(600, min(int(height) + 1, 8000))
        self._call("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
            session=True)
        data = self._call("Page.captureScreenshot", {"format": "png"}, session=True)["data"]
        self._call("Emulation.clearDeviceMetricsOverride", session=True)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
        return path


def artifacts_dir(repo_root: Path) -> Path:
    """Where screenshots go: $KERNELHUB_ARTIFACTS/screenshots, else
    build/test-artifacts/screenshots of the checkout."""
    base = os.environ.get("KERNELHUB_ARTIFACTS")
    root = Path(base) if base else repo_root / "build" / "test-artifacts"
    return root / "screenshots"


class Element:
    def __init__(self, tag, attrs, parent=None):
        self.tag = tag
        self.attrs = dict(attrs)
        self.parent = parent
        self.children = []  # Elements and strings, in document order

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def iter(self, tag=None):
        for child in self.children:
            if isinstance(child, Element):
                if tag is None or child.tag == tag:
                    yield child
                yield from child.iter(tag)

    def find_all(self, tag=None, **attrs):
        """Descendants with `tag` whose attributes equal `attrs` (class_ for class)."""
        wanted = {k.rstrip("_"): v for k, v in attrs.items()}
        return [e for e in self.iter(tag)
                if all(e.attrs.get(k) == v for k, v in wanted.items())]

    def find(self, tag=None, **attrs):
        found = self.find_all(tag, **attrs)
        return found[0] if found else None

    def by_id(self, element_id):
        return self.find(None, id=element_id)

    def rows(self):
        """A table's body rows (or this one row) as lists of cell texts."""
        body = self.find("tbody") or self
        rows = [self] if self.tag == "tr" else list(body.iter("tr"))
        return [[cell.text().strip() for cell in row.children
                 if isinstance(cell, Element) and cell.tag in ("td", "th")]
                for row in rows]


VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}


class _TreeBuilder(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Element("#document", {})
        self.current = self.root

    def handle_starttag(self, tag, attrs):
        element = Element(tag, attrs, self.current)
        self.current.children.append(element)
        if tag not in VOID:
            self.current = element

    def handle_startendtag(self, tag, attrs):
        self.current.children.append(Element(tag, attrs, self.current))

    def handle_endtag(self, tag):
        # Chromium's serialisation is well nested; close up to the matching open element.
        node = self.current
        while node is not None and node.tag != tag:
            node = node.parent
        if node is not None and node.parent is not None:
            self.current = node.parent

    def handle_data(self, data):
        self.current.children.append(data)


def parse(html: str) -> Element:
    builder = _TreeBuilder()
    builder.feed(html)
    builder.close()
    return builder.root
