# SPDX-License-Identifier: Apache-2.0
"""Pull requests and discussions on `kernelhub serve` driven by huggingface_hub's own HfApi
(issue 15 item 2): create_commit(create_pr=True) opens refs/pr/<N>, readable as a revision
everywhere; list, details (events, diff), comment, edit, rename, close/reopen and merge; and
`kernel-builder upload --create-pr`, whose merged PR makes the version branch serve the new
build."""
import json
import subprocess

from conftest import run
from hub_cache_support import hub_env, last_json, run_python
from serve_helpers import http, run_client


def test_create_pr_commit_is_a_readable_ref_and_merges_into_main(hub_server, tmp_path):
    result = run_client(hub_server, tmp_path / "hf", """
        import json
        from huggingface_hub import HfApi, CommitOperationAdd as Add, hf_hub_download
        api = HfApi()
        api.create_repo("org/m")
        base = api.create_commit("org/m", [Add("a.txt", b"main")], commit_message="base").oid
        pr = api.create_commit("org/m", [Add("b.txt", b"from the pr")],
                               commit_message="Add b", commit_description="please review",
                               create_pr=True)
        out = {"base": base, "pr_url": pr.pr_url, "pr_revision": pr.pr_revision,
               "pr_num": pr.pr_num, "pr_oid": pr.oid}
        out["main_has_b"] = api.file_exists("org/m", "b.txt")
        out["pr_file"] = open(hf_hub_download("org/m", "b.txt", revision=pr.pr_revision)).read()
        out["pr_info_sha"] = api.model_info("org/m", revision=pr.pr_revision).sha
        out["pr_tree"] = sorted(e.path for e in api.list_repo_tree("org/m", revision=pr.pr_revision))
        refs = api.list_repo_refs("org/m", include_pull_requests=True)
        out["pr_refs"] = [(r.ref, r.target_commit) for r in refs.pull_requests]
        # a second commit pushed to the PR's ref
        second = api.create_commit("org/m", [Add("c.txt", b"more")], commit_message="Add c",
                                   revision=pr.pr_revision)
        out["second"] = second.oid
        listed = list(api.get_repo_discussions("org/m"))
        out["listed"] = [(d.num, d.title, d.status, d.is_pull_request, d.git_reference)
                         for d in listed]
        comment = api.comment_discussion("org/m", 1, "looks good")
        edited = api.edit_discussion_comment("org/m", 1, comment.id, "looks very good")
        out["edited"] = [edited.content, edited.edited, edited.id == comment.id]
        spam = api.comment_discussion("org/m", 1, "spam")
        hidden = api.hide_discussion_comment("org/m", 1, spam.id)
        out["hidden"] = [hidden.hidden, "spam" in json.dumps(hidden._event)]
        renamed = api.rename_discussion("org/m", 1, "Add b and c")
        out["renamed"] = [renamed.old_title, renamed.new_title]
        details = api.get_discussion_details("org/m", 1)
        out["details"] = {
            "title": details.title, "status": details.status,
            "target": details.target_branch, "conflicts": details.conflicting_files,
            "events": [e.type for e in details.events],
            "commits": [[e.summary, e.oid] for e in details.events if e.type == "commit"],
            "comments": [e.content for e in details.events if e.type == "comment"],
            "diff": details.diff,
        }
        api.merge_pull_request("org/m", 1, comment="merging")
        merged = api.get_discussion_details("org/m", 1)
        main_sha = api.model_info("org/m").sha
        out["merged"] = {"status": merged.status, "merge_oid": merged.merge_commit_oid,
                         "main_sha": main_sha, "last": merged.events[-1].type,
                         "last_status": merged.events[-1].new_status}
        out["main_files"] = sorted(e.path for e in api.list_repo_tree("org/m"))
        out["main_c"] = open(hf_hub_download("org/m", "c.txt", revision=main_sha)).read()
        print(json.dumps(out))
    """)
    assert result["pr_revision"] == "refs/pr/1" and result["pr_num"] == 1
    assert result["pr_url"] == f"{hub_server.url}/org/m/discussions/1"
    assert result["main_has_b"] is False
    assert result["pr_file"] == "from the pr"
    assert result["pr_info_sha"] == result["pr_oid"]
    assert result["pr_tree"] == [".gitattributes", "a.txt", "b.txt"]
    assert result["pr_refs"] == [["refs/pr/1", result["pr_oid"]]]
    assert result["listed"] == [[1, "Add b", "open", True, "refs/pr/1"]]
    assert result["edited"] == ["looks very good", True, True]
    assert result["hidden"] == [True, False]
    assert result["renamed"] == ["Add b", "Add b and c"]
    details = result["details"]
    assert details["title"] == "Add b and c"
    assert details["status"] == "open"
    assert details["target"] == "refs/heads/main"
    assert details["conflicts"] == []
    assert details["events"] == ["comment", "commit", "commit", "comment", "comment",
                                 "title-change"]
    assert details["commits"] == [["Add b", result["pr_oid"]], ["Add c", result["second"]]]
    assert details["comments"] == ["please review", "looks very good",
                                   "This comment has been hidden"]
    assert "+++ b/b.txt" in details["diff"] and "+from the pr" in details["diff"]
    assert "+++ b/c.txt" in details["diff"] and "a.txt" not in details["diff"]
    merged = result["merged"]
    assert merged["status"] == "merged"
    assert merged["merge_oid"] == merged["main_sha"]
    assert merged["last"] == "status-change" and merged["last_status"] == "merged"
    assert result["main_files"] == [".gitattributes", "a.txt", "b.txt", "c.txt"]
    assert result["main_c"] == "more"


def test_close_reopen_drafts_filters_and_pages(hub_server, tmp_path):
    result = run_client(hub_server, tmp_path / "hf", """
        import json
        from huggingface_hub import HfApi, CommitOperationAdd as Add
        from huggingface_hub.errors import HfHubHTTPError
        api = HfApi()
        api.create_repo("org/d")
        talk = api.create_discussion("org/d", "A question", description="why?")
        draft = api.create_pull_request("org/d", "Draft change")
        out = {"talk": [talk.num, talk.status, talk.is_pull_request],
               "draft": [draft.num, draft.status, draft.is_pull_request, draft.target_branch]}
        closed = api.change_discussion_status("org/d", 1, "closed", comment="answered")
        out["closed"] = closed.new_status
        out["closed_list"] = [d.num for d in api.get_repo_discussions("org/d", discussion_status="closed")]
        out["open_list"] = [d.num for d in api.get_repo_discussions("org/d", discussion_status="open")]
        out["prs"] = [d.num for d in api.get_repo_discussions("org/d", discussion_type="pull_request")]
        try:
            api.change_discussion_status("org/d", 1, "closed")
            out["again"] = "accepted"
        except HfHubHTTPError as e:
            out["again"] = e.response.status_code
        out["reopened"] = api.change_discussion_status("org/d", 1, "open").new_status
        try:
            api.merge_pull_request("org/d", 2)
            out["draft_merge"] = "accepted"
        except HfHubHTTPError as e:
            out["draft_merge"] = e.response.status_code
        # A draft is filled by pushing to its ref, then opened and merged.
        api.create_commit("org/d", [Add("x.txt", b"x")], commit_message="fill",
                          revision="refs/pr/2")
        api.change_discussion_status("org/d", 2, "open")
        api.merge_pull_request("org/d", 2)
        out["after_merge"] = api.file_exists("org/d", "x.txt")
        try:
            api.change_discussion_status("org/d", 2, "closed")
            out["merged_close"] = "accepted"
        except HfHubHTTPError as e:
            out["merged_close"] = e.response.status_code
        for i in range(53):
            api.create_discussion("org/d", f"topic {i:02d}")
        every = [d.num for d in api.get_repo_discussions("org/d")]
        out["count"] = len(every)
        out["distinct"] = len(set(every))
        out["first"] = every[0]
        print(json.dumps(out))
    """)
    assert result["talk"] == [1, "open", False]
    assert result["draft"] == [2, "draft", True, "refs/heads/main"]
    assert result["closed"] == "closed"
    assert result["closed_list"] == [1]
    assert result["open_list"] == [2]
    assert result["prs"] == [2]
    assert result["again"] == 400
    assert result["reopened"] == "open"
    assert result["draft_merge"] == 400
    assert result["after_merge"] is True
    assert result["merged_close"] == 400
    # 55 discussions over two pages of 50: every one once, newest first.
    assert result["count"] == result["distinct"] == 55
    assert result["first"] == 55


def test_conflicting_pull_request_is_refused_and_main_stays(hub_server, tmp_path):
    result = run_client(hub_server, tmp_path / "hf", """
        import json
        from huggingface_hub import HfApi, CommitOperationAdd as Add
        from huggingface_hub.errors import HfHubHTTPError
        api = HfApi()
        api.create_repo("org/c")
        api.create_commit("org/c", [Add("f.txt", b"one\\n")], commit_message="base")
        pr = api.create_commit("org/c", [Add("f.txt", b"two\\n")], commit_message="pr side",
                               create_pr=True)
        main = api.create_commit("org/c", [Add("f.txt", b"three\\n")], commit_message="main side").oid
        details = api.get_discussion_details("org/c", pr.pr_num)
        try:
            api.merge_pull_request("org/c", pr.pr_num)
            status = "accepted"
        except HfHubHTTPError as e:
            status = [e.response.status_code, str(e)]
        print(json.dumps({"status": status, "conflicts": details.conflicting_files,
                          "main": main, "after": api.model_info("org/c").sha,
                          "pr_status": api.get_discussion_details("org/c", 1).status}))
    """)
    assert result["conflicts"] == ["f.txt"]
    assert result["status"][0] == 409 and "f.txt" in result["status"][1]
    assert result["after"] == result["main"]
    assert result["pr_status"] == "open"


def test_discussion_writes_need_a_write_token_and_survive_a_restart(hub_server, kernelhub_bin,
                                                                   tmp_path):
    run_client(hub_server, tmp_path / "hf", """
        from huggingface_hub import HfApi
        api = HfApi()
        api.create_repo("org/w")
        api.create_discussion("org/w", "kept across restarts")
        api.create_repo("org/hidden", private=True)
        api.create_discussion("org/hidden", "secret topic")
    """)
    body = json.dumps({"title": "anonymous", "pullRequest": False})
    status, _, _ = http(hub_server, "POST", "/api/models/org/w/discussions", body)
    assert status == 401
    status, _, _ = http(hub_server, "POST", "/api/models/org/w/discussions", body,
                        token="not-the-token")
    assert status == 401
    status, _, _ = http(hub_server, "POST", "/api/models/org/w/discussions/1/comment",
                        json.dumps({"comment": "hi"}))
    assert status == 401
    status, _, _ = http(hub_server, "POST", "/api/models/org/w/discussions/1/status",
                        json.dumps({"status": "closed"}), token="wrong")
    assert status == 401
    # Anyone reads a public repo's discussions; a private one's are hidden as the repo is.
    status, _, listed = http(hub_server, "GET", "/api/models/org/w/discussions")
    assert status == 200 and json.loads(listed)["count"] == 1
    status, headers, _ = http(hub_server, "GET", "/api/models/org/hidden/discussions/1")
    assert status == 404 and headers["X-Error-Code"] == "RepoNotFound"
    status, _, _ = http(hub_server, "GET", "/api/models/org/w/discussions/7")
    assert status == 404

    # The list lives in the repository's storage: a new server on the same root has it.
    hub_server.process.terminate()
    hub_server.process.wait(timeout=10)
    token_file = tmp_path / "tokens-again"
    token_file.write_text(hub_server.token + "\n")
    process = subprocess.Popen(
        [str(kernelhub_bin), "serve", "--root", str(hub_server.root), "--port", "0",
         "--token-file", str(token_file)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    try:
        hub_server.url = process.stdout.readline().strip()
        hub_server.process = process
        status, _, listed = http(hub_server, "GET", "/api/models/org/w/discussions")
        assert status == 200
        assert [d["title"] for d in json.loads(listed)["discussions"]] == ["kept across restarts"]
    finally:
        process.terminate()
        process.wait(timeout=10)


def kernel_dir(folder, marker):
    """A pure-Python kernel (no compiled library, so nothing to build) whose VERSION_MARKER
    tells which upload a load got."""
    variant = folder / "build" / "torch-cpu"
    variant.mkdir(parents=True, exist_ok=True)
    (folder / "build.toml").write_text(
        '[general]\nname = "pk"\nversion = 1\nbackends = ["cpu"]\nedition = 5\n'
        'license = "apache-2.0"\n\n[general.hub]\nrepo-id = "org/pk"\n\n[torch-noarch]\n')
    (variant / "metadata.json").write_text(json.dumps(
        {"id": "_pk_cpu_1234567", "name": "pk", "version": 1, "license": "apache-2.0",
         "python-depends": [], "backend": {"type": "cpu"}}))
    (variant / "__init__.py").write_text(f"VERSION_MARKER = {marker}\n")
    (folder / "build" / "CARD.md").write_text("---\nlibrary_name: kernels\n---\n# pk\n")
    return folder


LOAD_MARKER = """
    import json, kernelhub
    k = kernelhub.get_kernel("org/pk", {where}, backend="cpu", trust_remote_code=True)
    print(json.dumps(k.VERSION_MARKER))
"""


def test_kernel_builder_create_pr_then_merge_serves_the_new_build(kernel_builder, hub_server,
                                                                  tmp_path):
    env = hub_env(hub_server.url, tmp_path / "hf-cache")
    env["HF_TOKEN"] = hub_server.token
    first = run([kernel_builder, "upload", kernel_dir(tmp_path / "k1", 1), "--no-check"], env=env)
    assert first.returncode == 0, first.stderr
    report = tmp_path / "pr.json"
    opened = run([kernel_builder, "upload", kernel_dir(tmp_path / "k2", 2), "--no-check",
                  "--create-pr", "--output-json", report], env=env)
    assert opened.returncode == 0, opened.stderr
    outcome = json.loads(report.read_text())
    assert outcome["status"] == "pull_request_created"
    pr_url = next(pr["url"] for pr in outcome["pull_requests"] if pr["branch"] == "v1")
    assert f"Pull request created: {pr_url}" in opened.stdout
    assert pr_url.startswith(f"{hub_server.url}/kernels/org/pk/discussions/")

    def load_marker(cache, where="version=1"):
        loaded = run_python(LOAD_MARKER.format(where=where),
                            hub_env(hub_server.url, tmp_path / cache), check=False)
        assert loaded.returncode == 0, loaded.stderr
        return last_json(loaded)

    # Until the PR is merged, version 1 is still the first upload; the PR's build can be
    # loaded for review by its ref.
    assert load_marker("cache-before") == 1
    pr_ref = "refs/pr/" + pr_url.rsplit("/", 1)[1]
    assert load_marker("cache-review", f"revision={pr_ref!r}") == 2
    merged = last_json(run_python(f"""
        import json
        from huggingface_hub import HfApi, constants
        # huggingface_hub's discussion calls check REPO_TYPES, which lacks "kernel" although
        # the Hub serves kernel repos' discussions at the same /api/kernels/... URLs.
        constants.REPO_TYPES.append("kernel")
        api = HfApi(token={hub_server.token!r})
        prs = [d for d in api.get_repo_discussions("org/pk", repo_type="kernel",
                                                   discussion_type="pull_request")]
        target = [d for d in prs
                  if api.get_discussion_details("org/pk", d.num, repo_type="kernel").target_branch
                  == "refs/heads/v1"]
        api.merge_pull_request("org/pk", target[0].num, repo_type="kernel")
        print(json.dumps({{"prs": len(prs), "url": target[0].url,
                          "status": api.get_discussion_details("org/pk", target[0].num,
                                                               repo_type="kernel").status}}))
    """, env))
    assert merged["status"] == "merged"
    assert merged["url"] == pr_url
    assert load_marker("cache-after") == 2
