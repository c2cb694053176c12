# SPDX-License-Identifier: Apache-2.0
"""Reviewing kernels through pull requests (issue 22 §5): upload's commit and pull request
messages, `kernelhub pr` against `kernelhub serve`, and the merge rule for variant folders."""
import json
import urllib.parse

from conftest import run
from hub_cache_support import hub_env, last_json, run_python
from serve_helpers import commit, http
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


def pr(kernelhub_bin, env, *args):
    return run([kernelhub_bin, "pr", *args], env=env)


def test_pr_cli_lists_shows_comments_closes_and_merges(kernel_builder, kernelhub_bin,
                                                       hub_server, tmp_path):
    env = upload_env(hub_server, tmp_path)
    assert run([kernel_builder, "upload", kernel_dir(tmp_path / "k1", 1), "--no-check"],
               env=env).returncode == 0
    second = kernel_dir(tmp_path / "k2", 2)
    # A new card too, so upload opens a pull request into main as well.
    (second / "build" / "CARD.md").write_text("---\nlibrary_name: kernels\n---\n# pk, faster\n")
    opened = run([kernel_builder, "upload", second, "--no-check", "--create-pr", "--pr-title",
                  "Marker two"], env=env)
    assert opened.returncode == 0, opened.stderr
    prs = pull_requests(hub_server)
    build_pr = prs["refs/heads/v1"]["num"]
    card_pr = prs["refs/heads/main"]["num"]
    assert prs["refs/heads/main"]["title"] == "Marker two (card)"

    listed = pr(kernelhub_bin, env, "list", "org/pk")
    assert listed.returncode == 0, listed.stderr
    assert f"#{build_pr}" in listed.stdout and "Marker two" in listed.stdout
    as_json = json.loads(pr(kernelhub_bin, env, "list", "org/pk", "--json").stdout)
    assert sorted(d["num"] for d in as_json) == sorted([build_pr, card_pr])
    assert all(d["status"] == "open" and d["is_pull_request"] for d in as_json)

    shown = pr(kernelhub_bin, env, "show", "org/pk", str(build_pr))
    assert shown.returncode == 0, shown.stderr
    assert "target: v1" in shown.stdout
    # The diff of the PR: the variant's __init__.py went from marker 1 to 2.
    assert "-VERSION_MARKER = 1" in shown.stdout and "+VERSION_MARKER = 2" in shown.stdout
    details = json.loads(pr(kernelhub_bin, env, "show", "org/pk", str(build_pr), "--json").stdout)
    assert details["target_branch"] == "refs/heads/v1"
    assert details["conflicting_files"] == []
    assert "+VERSION_MARKER = 2" in details["diff"]

    commented = pr(kernelhub_bin, env, "comment", "org/pk", str(build_pr), "Looks right.",
                   "--json")
    assert commented.returncode == 0, commented.stderr
    assert json.loads(commented.stdout)["content"] == "Looks right."

    closed = pr(kernelhub_bin, env, "close", "org/pk", str(card_pr), "--comment", "not now")
    assert closed.returncode == 0, closed.stderr
    merged = pr(kernelhub_bin, env, "merge", "org/pk", str(build_pr), "--comment", "ship it")
    assert merged.returncode == 0, merged.stderr
    assert f"Merged #{build_pr}" in merged.stdout

    # Differential: huggingface_hub's own client (kernel type allowed by hand, the
    # workaround our CLI does not need) reads the same pull request as `pr show --json`.
    ours = json.loads(pr(kernelhub_bin, env, "show", "org/pk", str(build_pr), "--json").stdout)
    theirs = last_json(run_python(f"""
        import json
        from huggingface_hub import HfApi, constants
        constants.REPO_TYPES.append("kernel")
        d = HfApi(token={hub_server.token!r}).get_discussion_details(
            "org/pk", {build_pr}, repo_type="kernel")
        print(json.dumps({{"num": d.num, "title": d.title, "status": d.status,
                          "author": d.author, "is_pull_request": d.is_pull_request,
                          "target_branch": d.target_branch,
                          "merge_commit_oid": d.merge_commit_oid,
                          "conflicting_files": d.conflicting_files, "diff": d.diff,
                          "events": [e.type for e in d.events]}}))
    """, env))
    assert {k: ours.get(k) for k in theirs if k != "events"} == \
        {k: v for k, v in theirs.items() if k != "events"}
    assert [e["type"] for e in ours["events"]] == theirs["events"]

    status = api_json(hub_server, f"/api/kernels/org/pk/discussions/{build_pr}")
    assert status["status"] == "merged"
    comments = [e["data"]["latest"]["raw"] for e in status["events"] if e["type"] == "comment"]
    assert "Looks right." in comments and "ship it" in comments
    assert api_json(hub_server, f"/api/kernels/org/pk/discussions/{card_pr}")["status"] == "closed"
    assert json.loads(pr(kernelhub_bin, env, "list", "org/pk", "--json").stdout) == []
    closed_list = json.loads(pr(kernelhub_bin, env, "list", "org/pk", "--status", "closed",
                                "--json").stdout)
    assert sorted(d["status"] for d in closed_list) == ["closed", "merged"]

    # Errors: a merged PR cannot be merged again, a missing one is named, a write needs a token.
    again = pr(kernelhub_bin, env, "merge", "org/pk", str(build_pr))
    assert again.returncode != 0 and "merged" in again.stderr
    missing = pr(kernelhub_bin, env, "show", "org/pk", "99")
    assert missing.returncode != 0 and "#99" in missing.stderr
    anonymous = dict(env, HF_TOKEN="")
    refused = pr(kernelhub_bin, anonymous, "comment", "org/pk", str(build_pr), "hi")
    assert refused.returncode != 0


def test_pr_subcommands_have_help(kernelhub_bin):
    for sub in ("list", "show", "comment", "merge", "close", "reopen"):
        shown = run([kernelhub_bin, "pr", sub, "--help"])
        assert shown.returncode == 0 and "REPO_ID" in shown.stdout and "--json" in shown.stdout


def create_kernel_repo(server, name):
    status, _, body = http(server, "POST", "/api/repos/create",
                           json.dumps({"name": name, "organization": "org", "type": "kernel"}),
                           token=server.token)
    assert status == 200, body


def tree_of(server, repo, revision="main"):
    """{path: text} of every file of `repo` ("kernels/org/name") on `revision` but
    .gitattributes."""
    quoted = urllib.parse.quote(revision, safe="")
    listing = api_json(server, f"/api/{repo}/tree/{quoted}?recursive=true")
    out = {}
    for entry in listing:
        if entry["type"] == "file" and entry["path"] != ".gitattributes":
            status, _, body = http(server, "GET", f"/{repo}/resolve/{quoted}/{entry['path']}",
                                   token=server.token)
            assert status == 200, entry["path"]
            out[entry["path"]] = body.decode()
    return out


def open_pr(server, repo, files, deleted=()):
    status, _, body = commit(server, repo, "main", files, summary="Replace the build",
                             deleted=deleted, query="create_pr=1")
    assert status == 200, body
    return int(json.loads(body)["pullRequestUrl"].rsplit("/", 1)[1])


def test_merge_takes_the_pull_requests_variant_folder_whole(hub_server, tmp_path):
    repo = "kernels/org/vk"
    create_kernel_repo(hub_server, "vk")
    base = {"README.md": b"# card\n", "build/torch-cpu/a.py": b"base\n",
            "build/torch-cpu/b.py": b"base\n", "build/torch-cuda/x.py": b"base\n"}
    assert commit(hub_server, repo, "main", base)[0] == 200
    num = open_pr(hub_server, repo, {"build/torch-cpu/a.py": b"pr\n",
                                     "build/torch-cpu/c.py": b"pr\n"},
                  deleted=["build/torch-cpu/b.py"])
    # The target rebuilds the same variant meanwhile: every file of it differs both ways.
    assert commit(hub_server, repo, "main", {"build/torch-cpu/a.py": b"main\n",
                                             "build/torch-cpu/b.py": b"main\n",
                                             "build/torch-cuda/x.py": b"main\n"})[0] == 200
    details = api_json(hub_server, f"/api/{repo}/discussions/{num}")
    assert details["filesWithConflicts"] == []
    status, _, body = http(hub_server, "POST", f"/api/{repo}/discussions/{num}/merge", "{}",
                           token=hub_server.token)
    assert status == 200, body
    merged = tree_of(hub_server, repo)
    # The PR's torch-cpu folder whole (b.py gone, c.py there); the target's other variant kept.
    assert merged == {"README.md": "# card\n", "build/torch-cpu/a.py": "pr\n",
                      "build/torch-cpu/c.py": "pr\n", "build/torch-cuda/x.py": "main\n"}


def test_merge_still_refuses_a_conflict_in_the_card_or_sources(hub_server, tmp_path):
    repo = "kernels/org/ck"
    create_kernel_repo(hub_server, "ck")
    assert commit(hub_server, repo, "main", {"README.md": b"# card\n",
                                             "torch-ext/ck/__init__.py": b"x = 1\n",
                                             "build/torch-cpu/a.py": b"base\n"})[0] == 200
    num = open_pr(hub_server, repo, {"README.md": b"# card from the pr\n",
                                     "torch-ext/ck/__init__.py": b"x = 2\n",
                                     "build/torch-cpu/a.py": b"pr\n"})
    main = {"README.md": b"# card from main\n", "torch-ext/ck/__init__.py": b"x = 3\n",
            "build/torch-cpu/a.py": b"main\n"}
    assert commit(hub_server, repo, "main", main)[0] == 200
    before = api_json(hub_server, f"/api/{repo}/revision/main")["sha"]
    details = api_json(hub_server, f"/api/{repo}/discussions/{num}")
    assert details["filesWithConflicts"] == ["README.md", "torch-ext/ck/__init__.py"]
    status, _, body = http(hub_server, "POST", f"/api/{repo}/discussions/{num}/merge", "{}",
                           token=hub_server.token)
    assert status == 409
    assert b"README.md" in body and b"build/torch-cpu" not in body
    assert api_json(hub_server, f"/api/{repo}/revision/main")["sha"] == before
