# SPDX-License-Identifier: Apache-2.0
"""The token file while `kernelhub serve` runs (issue 20 item 4): emptying it, leaving only
comments in it or deleting it revokes every token, for reads of private repositories, for
writes and for browser sessions; a file that exists but is not a list of tokens keeps the
tokens read before and says so on stderr."""
import json
import signal
import time

import pytest

from serve_helpers import Served, http, post_login, start_serve, stop_serve

TOKENS = ("kh-alpha-token", "kh-beta-token")
SECRET = "kernels/team/secret"


def wait_for(predicate, seconds=10):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


def private_read(url, token):
    return http(Served(url), "GET", f"/api/{SECRET}", token=token)[0]


def create_repo(url, token, name):
    return http(Served(url), "POST", "/api/repos/create", json.dumps(
        {"organization": "team", "name": name, "type": "kernel", "private": True}),
        token=token, headers={"Content-Type": "application/json"})[0]


@pytest.fixture
def hub(kernelhub_bin, tmp_path):
    token_file = tmp_path / "tokens"
    token_file.write_text("# the team\n" + "\n".join(TOKENS) + "\n")
    process, url = start_serve(kernelhub_bin, tmp_path / "root", "--token-file", token_file)
    assert create_repo(url, TOKENS[0], "secret") == 200
    assert private_read(url, TOKENS[1]) == 200
    state = {"process": process, "url": url, "tokens": token_file, "stderr": None}
    yield state
    if state["stderr"] is None:
        stop_serve(process)


def revoked(url):
    return all(private_read(url, token) == 404 for token in TOKENS)


@pytest.mark.parametrize("how", ["empty", "comments only", "deleted"])
def test_emptying_or_deleting_the_token_file_revokes_every_token(hub, how):
    url, token_file = hub["url"], hub["tokens"]
    # A browser session opened with a token ends with it.
    status, headers, _ = post_login(Served(url), TOKENS[0])
    assert status == 303
    session = headers["Set-Cookie"].split(";")[0]
    assert http(Served(url), "GET", f"/{SECRET}", headers={"Cookie": session})[0] == 200
    if how == "empty":
        token_file.write_text("")
    elif how == "comments only":
        token_file.write_text("# everyone's access revoked\n\n")
    else:
        token_file.unlink()
    # The change check (once a second, on a request) sees it; SIGHUP reads it at once. The
    # session is what is polled: wrong bearer tokens would count against this address.
    if how != "empty":
        hub["process"].send_signal(signal.SIGHUP)
    assert wait_for(lambda: http(Served(url), "GET", f"/{SECRET}",
                                 headers={"Cookie": session})[0] == 404)
    assert revoked(url), "the old tokens still read the private repository"
    # No writer at all: a read-only hub.
    status, headers, _ = http(Served(url), "POST", "/api/repos/create", json.dumps(
        {"organization": "team", "name": "after", "type": "kernel"}), token=TOKENS[0],
        headers={"Content-Type": "application/json"})
    assert status == 403 and "read-only" in headers["X-Error-Message"]
    # Writing tokens again gives access again.
    token_file.write_text(TOKENS[1] + "\n")
    hub["process"].send_signal(signal.SIGHUP)
    assert wait_for(lambda: private_read(url, TOKENS[1]) == 200)
    assert private_read(url, TOKENS[0]) == 404


def test_a_token_file_that_is_not_a_list_of_tokens_keeps_the_old_ones_and_says_so(hub):
    url, token_file = hub["url"], hub["tokens"]
    token_file.write_text(f"{TOKENS[0]}\nkh-new token with blanks\n")
    hub["process"].send_signal(signal.SIGHUP)
    time.sleep(1.5)
    assert private_read(url, TOKENS[1]) == 200, "a damaged file must not lock everyone out"
    hub["stderr"] = stop_serve(hub["process"])
    assert "error: the token file cannot be used, so the 2 token(s) read before stay valid" \
        in hub["stderr"], hub["stderr"]
    assert f"{token_file}:2: a token is printable ASCII without blanks" in hub["stderr"]


def test_a_broken_config_toml_does_not_keep_a_revoked_token_valid(hub):
    url, token_file = hub["url"], hub["tokens"]
    root = hub["tokens"].parent / "root"
    (root / "config.toml").write_text("[organizations.team\n")
    token_file.write_text("")
    hub["process"].send_signal(signal.SIGHUP)
    assert wait_for(lambda: revoked(url))
    hub["stderr"] = stop_serve(hub["process"])
    assert "config.toml was not read, its previous settings stay in force" in hub["stderr"]


def test_a_server_started_with_an_empty_token_file_is_read_only(kernelhub_bin, tmp_path):
    token_file = tmp_path / "tokens"
    token_file.write_text("# nobody yet\n")
    process, url = start_serve(kernelhub_bin, tmp_path / "root", "--token-file", token_file)
    try:
        assert create_repo(url, "anything", "x") == 403
        token_file.write_text(TOKENS[0] + "\n")
        process.send_signal(signal.SIGHUP)
        assert wait_for(lambda: create_repo(url, TOKENS[0], "x") == 200)
    finally:
        stderr = stop_serve(process)
    assert "(read-only: the token file holds no token)" in stderr
    # A path that does not exist at start is a typo, not a read-only hub.
    missing = tmp_path / "no-such-tokens"
    with pytest.raises(AssertionError, match="does not exist"):
        start_serve(kernelhub_bin, tmp_path / "root2", "--token-file", missing)


# Issue 20 item 7: wrong bearer tokens are counted per address, as failed sign-ins are.
def test_wrong_bearer_tokens_from_an_address_get_it_throttled(hub):
    url = hub["url"]
    public = "kernels/team/open"
    status, _, _ = http(Served(url), "POST", "/api/repos/create", json.dumps(
        {"organization": "team", "name": "open", "type": "kernel"}), token=TOKENS[0],
        headers={"Content-Type": "application/json"})
    assert status == 200
    for guess in range(5):
        assert private_read(url, f"kh-guess-{guess}") == 404
    # Now no token from this address is looked at, the right one included: a write is 429
    # before its body is read, a private repository is hidden as from anyone...
    assert create_repo(url, TOKENS[0], "during") == 429
    status, headers, _ = http(Served(url), "POST", f"/api/{SECRET}/branch/b", "{}",
                              token=TOKENS[0], headers={"Content-Type": "application/json"})
    assert status == 429 and "too many requests with a wrong token" in headers["X-Error-Message"]
    assert private_read(url, TOKENS[0]) == 404
    # ...and reads of public repositories go on (a client with a stale HF_TOKEN still
    # downloads).
    assert http(Served(url), "GET", f"/api/{public}", token="kh-stale")[0] == 200
    assert http(Served(url), "GET", f"/api/{public}", token=TOKENS[0])[0] == 200
    assert http(Served(url), "GET", f"/api/{public}")[0] == 200
