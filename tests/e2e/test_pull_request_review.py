# SPDX-License-Identifier: Apache-2.0
"""Reviewing kernels through pull requests (issue 22 §5): upload's commit and pull request
messages, `kernelhub pr` against `kernelhub serve`, and the merge rule for variant folders."""
import json
import urllib.parse

from conftest import run
from hub_cache_support import hub_env
from serve_helpers import http
from test_serve_pull_requests import kernel_dir


def upload_env(server, tmp_path):
    env = hub_env(server.url, tmp_path / "hf-cache")
    env["HF_TOKEN"] = server.token
    return env


def api_json(server, path):
    status, _, body = http(server, "GET", path, token=server.token)
    assert status == 200, body
    return json.loads(body)


def pull_requests(server, repo="kernels/org/pk"):
    """{target branch: details} of every pull request of `repo`."""
    listed = api_json(server, f"/api/{repo}/discussions?type=pull_request")["discussions"]
    out = {}
    for discussion in listed:
        details = api_json(server, f"/api/{repo}/discussions/{discussion['num']}")
        out[details["changes"]["base"]] = details
    return out


def commit_titles(server, branch):
    quoted = urllib.parse.quote(branch, safe="")
    return [c["title"] for c in api_json(server, f"/api/kernels/org/pk/commits/{quoted}")]


def test_upload_default_title_says_what_was_uploaded(kernel_builder, hub_server, tmp_path):
    env = upload_env(hub_server, tmp_path)
    first = run([kernel_builder, "upload", kernel_dir(tmp_path / "k1", 1), "--no-check"], env=env)
    assert first.returncode == 0, first.stderr
    assert commit_titles(hub_server, "v1")[0] == "Upload pk version 1: torch-cpu"
    assert commit_titles(hub_server, "main")[0] == "Update the card of pk (version 1)"

    opened = run([kernel_builder, "upload", kernel_dir(tmp_path / "k2", 2), "--no-check",
                  "--create-pr"], env=env)
    assert opened.returncode == 0, opened.stderr
    prs = pull_requests(hub_server)
    assert prs["refs/heads/v1"]["title"] == "Upload pk version 1: torch-cpu"
    # The opening comment lists the variants.
    comments = [e["data"]["latest"]["raw"] for e in prs["refs/heads/v1"]["events"]
                if e["type"] == "comment"]
    assert comments and "- `torch-cpu`" in comments[0]


def test_upload_commit_message_and_pr_title_and_description(kernel_builder, hub_server,
                                                            tmp_path):
    env = upload_env(hub_server, tmp_path)
    first = run([kernel_builder, "upload", kernel_dir(tmp_path / "k1", 1), "--no-check",
                 "--commit-message", "First build of pk"], env=env)
    assert first.returncode == 0, first.stderr
    assert commit_titles(hub_server, "v1")[0] == "First build of pk"
    assert commit_titles(hub_server, "main")[0] == "First build of pk"

    opened = run([kernel_builder, "upload", kernel_dir(tmp_path / "k2", 2), "--no-check",
                  "--create-pr", "--pr-title", "Faster pk for review",
                  "--pr-description", "Benchmarks: 2x on H100."], env=env)
    assert opened.returncode == 0, opened.stderr
    prs = pull_requests(hub_server)
    assert prs["refs/heads/v1"]["title"] == "Faster pk for review"
    comments = [e["data"]["latest"]["raw"] for e in prs["refs/heads/v1"]["events"]
                if e["type"] == "comment"]
    assert comments == ["Benchmarks: 2x on H100."]

    # --pr-title means nothing without --create-pr: refused before anything is sent.
    refused = run([kernel_builder, "upload", kernel_dir(tmp_path / "k3", 3), "--no-check",
                   "--pr-title", "x"], env=env)
    assert refused.returncode != 0 and "--create-pr" in refused.stderr

