# SPDX-License-Identifier: Apache-2.0
"""Regressions found by an adversarial review of `kernelhub serve`'s discussions, pull requests
and web pages: each test failed on the code before its fix."""
import json

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
        assert "discussions.json\" is damaged" in headers["X-Error-Message"], target
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
