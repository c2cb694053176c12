# SPDX-License-Identifier: Apache-2.0
"""Regressions found by an adversarial review of `kernelhub serve`'s discussions, pull requests
and web pages: each test failed on the code before its fix."""
import html
import json
import re
import urllib.parse
from html.parser import HTMLParser

import pytest

from serve_helpers import commit, http

REPO = "kernels/org/k"


def make_repo_with_a_discussion(server):
    status, _, body = http(server, "POST", "/api/repos/create",
                           json.dumps({"type": "kernel", "organization": "org", "name": "k"}),
                           token=server.token)
    assert status == 200, body
    status, _, body = commit(server, REPO, "main", {"README.md": b"# k"})
    assert status == 200, body
    status, _, body = http(server, "POST", f"/api/{REPO}/discussions",
                           json.dumps({"title": "first one", "description": "hello"}),
                           token=server.token)
    assert status == 200, body
    return server.root / "kernels" / "org" / "k.git" / "discussions.json"


# Valid JSON with a top-level "discussions" list, but entries the readers cannot use. The
# first one (no "events") crashed the whole server on a GET of the discussion before the fix.
DAMAGED = [
    {"discussions": [{"num": 1, "title": "abc", "status": "open",
                      "author": {"name": "kernelhub"}}]},
    {"discussions": [{"num": 1, "title": "abc", "status": "open", "events": []}]},
    {"discussions": [1, "x", None]},
    {"discussions": [{"num": "1", "author": {}, "events": []}]},
    {"discussions": [{"num": 1, "author": {}, "events": 5, "isPullRequest": "yes"}]},
    {"discussions": [{"num": 1, "author": {}, "events": [{"type": "comment", "data": 5}]}]},
]


@pytest.mark.parametrize("damaged", DAMAGED, ids=range(len(DAMAGED)))
def test_a_damaged_discussion_entry_is_a_named_500_and_the_server_keeps_serving(hub_server,
                                                                              damaged):
    path = make_repo_with_a_discussion(hub_server)
    text = json.dumps(damaged)
    path.write_text(text)
    reads = [f"/api/{REPO}/discussions", f"/api/{REPO}/discussions?author=x",
             f"/api/{REPO}/discussions/1", f"/api/{REPO}/discussions/1?diff=1",
             f"/{REPO}/discussions", f"/{REPO}/discussions/1"]
    for target in reads:
        status, headers, _ = http(hub_server, "GET", target)
        assert status == 500, target
        assert "\"k.git/discussions.json\" is damaged" in headers["X-Error-Message"], target
        # named relative to the hub: anonymous readers do not learn where the data lives
        assert str(hub_server.root) not in headers["X-Error-Message"], target
        # The server is still there for everyone else.
        assert http(hub_server, "GET", f"/api/{REPO}")[0] == 200, target
    writes = [(f"/api/{REPO}/discussions", {"title": "second one"}),
              (f"/api/{REPO}/discussions/1/comment", {"comment": "hi"}),
              (f"/api/{REPO}/discussions/1/status", {"status": "closed"}),
              (f"/api/{REPO}/discussions/1/merge", {})]
    for target, body in writes:
        status, headers, _ = http(hub_server, "POST", target, json.dumps(body),
                                  token=hub_server.token)
        assert status == 500, target
        assert "is damaged" in headers["X-Error-Message"], target
    status, headers, _ = commit(hub_server, REPO, "main", {"b.txt": b"b"}, query="create_pr=1")
    assert status == 500 and "is damaged" in headers["X-Error-Message"]
    # Refused writes leave the file as it was, and make no pull request ref.
    assert path.read_text() == text
    refs = json.loads(http(hub_server, "GET", f"/api/{REPO}/refs?include_prs=1")[2])
    assert refs.get("pullRequests", []) == []
    assert hub_server.process.poll() is None


# Every string a writer controls, with characters that would open a tag or end an attribute
# if a page wrote it unescaped.
HOSTILE = "<zz>\"zz'zz&zz"


class MarkupScan(HTMLParser):
    """Collects any tag or attribute the hostile string made, and script URLs."""

    def __init__(self):
        super().__init__()
        self.injected = []

    def handle_starttag(self, tag, attrs):
        if "zz" in tag:
            self.injected.append(("tag", tag))
        for name, value in attrs:
            if "zz" in name:
                self.injected.append(("attribute", tag, name))
            if name in ("href", "src") and (value or "").strip().lower().startswith("javascript"):
                self.injected.append(("script url", tag, value))


def test_every_page_escapes_what_writers_control(hub_server):
    server, repo = hub_server, "kernels/org/hostile"
    quoted = urllib.parse.quote(HOSTILE, safe="")
    assert http(server, "POST", "/api/repos/create",
                json.dumps({"type": "kernel", "organization": "org", "name": "hostile"}),
                token=server.token)[0] == 200
    variant = "build/torch29-cxx11-cu126-x86_64-linux"
    metadata = json.dumps({"license": HOSTILE, "backend": {"type": "cuda", "archs": [HOSTILE]}})
    bench = json.dumps({
        "results": [{"workload": f"{HOSTILE}.w{HOSTILE}",
                     "timingResults": {"mean_ms": 1.5, "std_ms": 0.1, "iterations": 3}}],
        "machineInfo": {"gpu": HOSTILE, "backend": HOSTILE}})
    files = {
        "README.md": (f"---\nlicense: {HOSTILE}\n---\n# {HOSTILE}\n<zz>raw</zz>\n"
                      f"[a](javascript:alert(1)) ![b]({HOSTILE})\n").encode(),
        f"{HOSTILE}.txt": HOSTILE.encode(),
        f"d{HOSTILE}/f{HOSTILE}.md": f"# {HOSTILE}".encode(),
        f"{variant}/metadata.json": metadata.encode(),
        f"{variant}/{HOSTILE}.py": b"pass",
        f"build/{HOSTILE}/metadata.json": metadata.encode(),
        f"benchmarks/torch29-cxx11-cu126-x86_64-linux/{HOSTILE}.json": bench.encode(),
        f"benchmarks/{HOSTILE}/d.json": bench.encode(),
    }
    assert commit(server, repo, "main", files, summary=HOSTILE)[0] == 200
    assert http(server, "POST", f"/api/{repo}/branch/{quoted}",
                json.dumps({"startingPoint": "main"}), token=server.token)[0] == 200
    assert http(server, "POST", f"/api/{repo}/branch/v1", json.dumps({"startingPoint": "main"}),
                token=server.token)[0] == 200
    assert http(server, "POST", f"/api/{repo}/tag/main",
                json.dumps({"tag": HOSTILE, "message": HOSTILE}), token=server.token)[0] == 200
    status, _, body = http(server, "POST", f"/api/{repo}/discussions",
                           json.dumps({"title": HOSTILE, "description": HOSTILE}),
                           token=server.token)
    assert status == 200, body
    num = json.loads(body)["num"]
    for action, payload in [("comment", {"comment": f"{HOSTILE}\n<zz>x</zz>"}),
                            ("title", {"title": HOSTILE + "2"}),
                            ("status", {"status": "closed", "comment": HOSTILE})]:
        assert http(server, "POST", f"/api/{repo}/discussions/{num}/{action}",
                    json.dumps(payload), token=server.token)[0] == 200, action
    status, _, body = commit(server, repo, "main", {f"pr{HOSTILE}.txt": b"p"}, summary=HOSTILE,
                             query="create_pr=1")
    assert status == 200, body
    pr = json.loads(body)["pullRequestUrl"].rsplit("/", 1)[1]
    assert http(server, "POST", f"/api/{repo}/discussions/{pr}/merge",
                json.dumps({"comment": HOSTILE}), token=server.token)[0] == 200

    escaped = "&lt;zz&gt;&quot;zz&#39;zz&amp;zz"
    # Pages that show a hostile string (escaped), then whatever they link to in the repo.
    showing = [f"/kernels?search={quoted}", f"/{repo}", f"/{repo}/discussions",
               f"/{repo}/commits/main", f"/{repo}/commit/main", f"/{repo}/tree/{quoted}",
               f"/{repo}/tree/main/{variant}", f"/{repo}/discussions/{num}",
               f"/{repo}/discussions/{pr}", f"/{repo}/blob/main/{quoted}.txt",
               f"/{repo}/commits/{quoted}x", f"/{repo}/discussions/{quoted}"]
    queue, seen, injected = ["/"] + showing, set(), []
    while queue and len(seen) < 400:
        target = queue.pop(0)
        if target in seen:
            continue
        seen.add(target)
        _, headers, body = http(server, "GET", target)
        assert "text/html" in headers.get("Content-Type", ""), target
        page = body.decode("utf-8", "replace")
        if target in showing:
            assert escaped in page, target
        scan = MarkupScan()
        scan.feed(page)
        injected += [(target, what) for what in scan.injected]
        for href in re.findall(r'href="([^"]*)"', page):
            href = html.unescape(href)
            if href.startswith(f"/{repo}/") and "/resolve/" not in href:
                queue.append(href)
    assert injected == []
    assert len(seen) > 50


def test_a_discussion_page_number_past_the_end_lists_nothing(hub_server):
    make_repo_with_a_discussion(hub_server)
    for _ in range(2):
        assert http(hub_server, "POST", f"/api/{REPO}/discussions",
                    json.dumps({"title": "another"}), token=hub_server.token)[0] == 200
    # 2**63 * 50 wraps round to 0 (and 2**63 + 1 to 50): page 0 came back before the fix.
    for page in (1, 2**63, 2**63 + 1, 368934881474191033, 2**64 - 1):
        status, _, body = http(hub_server, "GET", f"/api/{REPO}/discussions?p={page}")
        assert status == 200, page
        answer = json.loads(body)
        assert answer["discussions"] == [] and answer["start"] == 3 and answer["count"] == 3, page
    answer = json.loads(http(hub_server, "GET", f"/api/{REPO}/discussions?p=0")[2])
    assert [d["num"] for d in answer["discussions"]] == [3, 2, 1] and answer["start"] == 0
