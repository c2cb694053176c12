# SPDX-License-Identifier: Apache-2.0
"""Signing a browser in at /login (`kernelhub serve`): a token typed into the form gives a
session cookie that shows private repositories on pages, and nothing else. Every page is
loaded in headless Chromium; the form is filled and sent by Chromium, not by setting headers."""
import json

import pytest

from headless_browser import CHROMIUM, Browser
from serve_helpers import http, login_form, post_login

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="needs Debian's chromium (scripts/setup.sh installs it)")

SECRET = "kh-signin/secret-kernel"
PUBLIC = "kh-signin/open-kernel"


def create(server, repo_id, private):
    ns, name = repo_id.split("/")
    status, _, body = http(server, "POST", "/api/repos/create", json.dumps(
        {"organization": ns, "name": name, "type": "kernel", "private": private}),
        token=server.token, headers={"Content-Type": "application/json"})
    assert status == 200, body


def session_cookies(browser):
    return [c for c in browser.cookies() if c["name"] == "kernelhub_session"]


def listed_names(browser, url):
    return [row[0] for row in browser.load(url + "/kernels").by_id("repos").rows()]


def sign_in(browser, server, token):
    assert browser.open(server.url + "/login") == 200
    return browser.submit("login", {"token": token})


def test_signing_in_shows_private_repositories_and_signing_out_hides_them(hub_server):
    create(hub_server, PUBLIC, private=False)
    create(hub_server, SECRET, private=True)
    with Browser() as browser:
        anonymous = browser.load(hub_server.url + "/kernels")
        assert "secret-kernel" not in browser.dom()
        assert anonymous.find("a", href="/login") is not None
        assert browser.open(hub_server.url + f"/kernels/{SECRET}") == 404

        assert sign_in(browser, hub_server, hub_server.token) == 200
        cookies = session_cookies(browser)
        assert len(cookies) == 1
        cookie = cookies[0]
        # An opaque id, never the token, out of reach of scripts and of other sites' pages.
        assert hub_server.token not in cookie["value"] and len(cookie["value"]) == 64
        assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and cookie["path"] == "/"

        names = listed_names(browser, hub_server.url)
        assert any(name.startswith(SECRET) for name in names), names
        page = browser.load(hub_server.url + f"/kernels/{SECRET}")
        assert "secret-kernel" in page.find("h1").text()
        assert page.by_id("signed-in").text() == "signed in"

        assert browser.submit("sign-out-form") == 200
        assert session_cookies(browser) == []
        assert "secret-kernel" not in browser.dom()
        assert browser.open(hub_server.url + f"/kernels/{SECRET}") == 404
        # The old id is dead on the server too, not merely forgotten by the browser.
        status, _, _ = http(hub_server, "GET", f"/kernels/{SECRET}",
                            headers={"Cookie": f"kernelhub_session={cookie['value']}"})
        assert status == 404


def test_a_wrong_token_shows_the_form_again_and_sets_no_cookie(hub_server):
    create(hub_server, SECRET, private=True)
    with Browser() as browser:
        assert sign_in(browser, hub_server, hub_server.token + "x") == 200
        page = browser.load_dom()
        assert page.by_id("login") is not None
        assert "not accepted" in page.by_id("login-error").text()
        assert session_cookies(browser) == []
        assert "secret-kernel" not in browser.dom()
        assert SECRET not in " ".join(listed_names(browser, hub_server.url))


def test_the_cookie_opens_no_api_read_and_no_write(hub_server):
    create(hub_server, SECRET, private=True)
    with Browser() as browser:
        assert sign_in(browser, hub_server, hub_server.token) == 200
        (cookie,) = session_cookies(browser)
    jar = {"Cookie": f"kernelhub_session={cookie['value']}"}
    # The cookie does work for pages, so the refusals below are the cookie's limits.
    assert http(hub_server, "GET", f"/kernels/{SECRET}", headers=jar)[0] == 200
    assert http(hub_server, "GET", f"/api/kernels/{SECRET}", headers=jar)[0] == 404
    assert http(hub_server, "GET", f"/api/kernels/{SECRET}/refs", headers=jar)[0] == 404
    status, _, _ = http(hub_server, "POST", "/api/repos/create", json.dumps(
        {"organization": "kh-signin", "name": "forged", "type": "kernel"}),
        headers={**jar, "Content-Type": "application/json"})
    assert status == 401
    status, _, _ = http(hub_server, "POST", f"/api/kernels/{SECRET}/branch/forged",
                        json.dumps({}), headers={**jar, "Content-Type": "application/json"})
    assert status == 401
    refs = json.loads(http(hub_server, "GET", f"/api/kernels/{SECRET}/refs",
                           token=hub_server.token)[2])
    assert [b["name"] for b in refs["branches"]] == ["main"]
    assert http(hub_server, "GET", "/api/kernels/kh-signin/forged",
                token=hub_server.token)[0] == 404


def session_set(headers):
    return any(value.startswith("kernelhub_session=") and not value.startswith(
        "kernelhub_session=;") for name, value in headers.items() if name == "Set-Cookie")


def test_repeated_failed_sign_ins_from_one_address_are_refused_for_a_while(hub_server):
    for _ in range(5):
        status, headers, _ = post_login(hub_server, "wrong")
        assert status == 200 and not session_set(headers)
    # Even the right token is not looked at now: guessing costs a minute per five tries.
    status, headers, body = post_login(hub_server, hub_server.token)
    assert status == 429 and not session_set(headers)
    assert b"Too many failed sign-ins" in body


# Issue 20 item 7: login CSRF. A page elsewhere that posts /login with its author's token
# would sign the reader in as that author (then what the reader uploads through pages, or
# reads, is the author's to see). Only the form this server gave this browser counts.
def test_a_sign_in_not_posted_from_this_servers_form_signs_nobody_in(hub_server):
    # No form token (what a page of another site sends: it cannot read the form).
    status, headers, body = post_login(hub_server, hub_server.token, with_form=False)
    assert status == 403 and not session_set(headers)
    assert b"did not come from this server" in body
    # The form's token without its cookie, or the cookie of another form.
    _, field = login_form(hub_server)
    other_cookie, _ = login_form(hub_server)
    for cookie in ({}, other_cookie):
        status, headers, _ = http(hub_server, "POST", "/login",
                                  f"token={hub_server.token}&form={field}",
                                  headers={"Content-Type": "application/x-www-form-urlencoded",
                                           **cookie}, follow=False)
        assert status == 403 and not session_set(headers)
    # Both, but posted by a page of another origin.
    status, headers, _ = post_login(hub_server, hub_server.token,
                                    headers={"Origin": "http://attacker.example"})
    assert status == 403 and not session_set(headers)
    # The real form, from this origin: signed in.
    origin = hub_server.url
    status, headers, _ = post_login(hub_server, hub_server.token, headers={"Origin": origin})
    assert status == 303 and session_set(headers)
    # Refusals of forged posts are not failed guesses: the reader is not locked out.
    assert post_login(hub_server, hub_server.token)[0] == 303


def test_another_sites_page_cannot_sign_the_browser_in(hub_server, tmp_path):
    """The attack as a browser meets it: a page on another origin posts a form with the
    attacker's token to /login."""
    import functools
    import http.server
    import threading

    page = tmp_path / "attack.html"
    page.write_text(
        f'<html><body><form id="evil" method="post" action="{hub_server.url}/login">'
        f'<input name="token" value="{hub_server.token}"></form></body></html>')
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    attacker = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=attacker.serve_forever, daemon=True).start()
    try:
        with Browser() as browser:
            # The reader has visited the hub before, so the browser holds its form cookie.
            assert browser.open(hub_server.url + "/login") == 200
            assert browser.open(f"http://127.0.0.1:{attacker.server_port}/attack.html") == 200
            assert browser.submit("evil") == 403
            assert session_cookies(browser) == []
    finally:
        attacker.shutdown()
