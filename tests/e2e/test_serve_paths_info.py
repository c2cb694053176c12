# SPDX-License-Identifier: Apache-2.0
"""huggingface_hub's get_paths_info, list_repo_tree(expand=True) and list_repo_commits against
`kernelhub serve` (issue 15 item 4): the POST form it sends, the entries it builds, lastCommit
(the newest commit that changed each path), and commit pages."""
import hashlib
import json

from serve_helpers import http, run_client


def git_blob_id(content):
    return hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()


# Three commits: a.txt and dir/ change in the first, dir/ again in the second, b.txt in the
# third, so each path's last commit is a different one.
SETUP = """
    import json
    from huggingface_hub import HfApi, CommitOperationAdd as Add
    api = HfApi()
    api.create_repo("org/p")
    first = api.create_commit("org/p", [Add("a.txt", b"alpha"), Add("dir/x.bin", b"x1")],
                              commit_message="first").oid
    second = api.create_commit("org/p", [Add("dir/y.bin", b"y")], commit_message="second").oid
    third = api.create_commit("org/p", [Add("b.txt", b"beta")], commit_message="third").oid
"""


def test_paths_info_and_expanded_tree_report_the_last_commit(hub_server, tmp_path):
    result = run_client(hub_server, tmp_path / "hf", SETUP + """
    def describe(entries):
        out = {}
        for e in entries:
            last = e.last_commit
            out[e.path] = {
                "kind": type(e).__name__,
                "oid": getattr(e, "blob_id", None) or getattr(e, "tree_id", None),
                "size": getattr(e, "size", None),
                "last": last and [last.oid, last.title, last.date.isoformat()],
                "security": getattr(e, "security", None) and e.security.status,
            }
        return out
    info = api.get_paths_info("org/p", ["a.txt", "dir", "dir/x.bin", "missing.txt"], expand=True)
    plain = api.get_paths_info("org/p", ["b.txt"])
    at_first = api.get_paths_info("org/p", ["a.txt", "b.txt"], revision=first, expand=True)
    tree = api.list_repo_tree("org/p", recursive=True, expand=True)
    print(json.dumps({"first": first, "second": second, "third": third,
                      "info": describe(info), "plain": describe(plain),
                      "at_first": describe(at_first), "tree": describe(tree)}))
    """)
    first, second, third = result["first"], result["second"], result["third"]
    info = result["info"]
    # A missing path is left out, as the Hub does, rather than failing the request.
    assert sorted(info) == ["a.txt", "dir", "dir/x.bin"]
    assert info["a.txt"]["kind"] == "RepoFile"
    assert info["a.txt"]["oid"] == git_blob_id(b"alpha")
    assert info["a.txt"]["size"] == 5
    assert info["a.txt"]["last"][:2] == [first, "first"]
    assert info["a.txt"]["last"][2].startswith("20")
    assert info["a.txt"]["security"] == "unscanned"
    assert info["dir"]["kind"] == "RepoFolder"
    assert info["dir"]["last"][:2] == [second, "second"]
    assert info["dir/x.bin"]["last"][:2] == [first, "first"]
    # Without expand, no lastCommit and no security status.
    assert result["plain"]["b.txt"]["last"] is None
    assert result["plain"]["b.txt"]["security"] is None
    assert result["plain"]["b.txt"]["oid"] == git_blob_id(b"beta")
    # At an older revision: b.txt does not exist yet.
    assert sorted(result["at_first"]) == ["a.txt"]
    assert result["at_first"]["a.txt"]["last"][0] == first
    tree = result["tree"]
    assert sorted(tree) == [".gitattributes", "a.txt", "b.txt", "dir", "dir/x.bin", "dir/y.bin"]
    assert tree["b.txt"]["last"][0] == third
    assert tree["dir/y.bin"]["last"][0] == second
    assert tree["dir"]["last"][0] == second
    assert tree["dir/x.bin"]["last"][0] == first


def test_expanded_tree_pages_keep_the_details(hub_server, tmp_path):
    # 60 files: expand=true pages at 50, so the second page must carry the details too.
    result = run_client(hub_server, tmp_path / "hf", """
    import json
    from huggingface_hub import HfApi, CommitOperationAdd as Add
    api = HfApi()
    api.create_repo("org/many")
    sha = api.create_commit("org/many", [Add(f"f{i:02d}.txt", b"%d" % i) for i in range(60)],
                            commit_message="many").oid
    tree = [e for e in api.list_repo_tree("org/many", expand=True) if e.path != ".gitattributes"]
    print(json.dumps({"sha": sha, "count": len(tree),
                      "lasts": sorted({e.last_commit.oid for e in tree})}))
    """)
    assert result["count"] == 60
    assert result["lasts"] == [result["sha"]]


def test_paths_info_reads_without_a_token_and_hides_private_repos(hub_server, tmp_path):
    run_client(hub_server, tmp_path / "hf", """
    from huggingface_hub import HfApi, CommitOperationAdd as Add
    api = HfApi()
    api.create_repo("org/open")
    api.create_commit("org/open", [Add("a.txt", b"a")], commit_message="a")
    api.create_repo("org/secret", private=True)
    api.create_commit("org/secret", [Add("a.txt", b"a")], commit_message="a")
    """)
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    status, _, body = http(hub_server, "POST", "/api/models/org/open/paths-info/main",
                           "paths=a.txt&paths=nope&expand=false", headers=form)
    assert status == 200, body
    assert [e["path"] for e in json.loads(body)] == ["a.txt"]
    status, _, body = http(hub_server, "POST", "/api/models/org/open/paths-info/main",
                           json.dumps({"paths": ["a.txt"], "expand": True}),
                           headers={"Content-Type": "application/json"})
    assert status == 200, body
    assert json.loads(body)[0]["lastCommit"]["title"] == "a"
    status, headers, _ = http(hub_server, "POST", "/api/models/org/secret/paths-info/main",
                              "paths=a.txt", headers=form)
    assert status == 404
    assert headers["X-Error-Code"] == "RepoNotFound"
    status, _, body = http(hub_server, "POST", "/api/models/org/secret/paths-info/main",
                           "paths=a.txt", token=hub_server.token, headers=form)
    assert status == 200 and json.loads(body)[0]["path"] == "a.txt"
    # A path that escapes the repository is refused, not looked up.
    status, _, _ = http(hub_server, "POST", "/api/models/org/open/paths-info/main",
                        "paths=../x", headers=form)
    assert status == 400


def test_list_repo_commits_pages_newest_first(hub_server, tmp_path):
    # 54 commits and the repository's first: two pages of 50.
    result = run_client(hub_server, tmp_path / "hf", """
    import json
    from huggingface_hub import HfApi, CommitOperationAdd as Add
    api = HfApi()
    api.create_repo("org/h")
    made = [api.create_commit("org/h", [Add("n.txt", b"%d" % i)], commit_message=f"step {i}",
                              commit_description="why" if i == 53 else None).oid
            for i in range(54)]
    listed = api.list_repo_commits("org/h")
    at_old = api.list_repo_commits("org/h", revision=made[1])
    print(json.dumps({"made": made, "ids": [c.commit_id for c in listed],
                      "titles": [c.title for c in listed[:2]], "message": listed[0].message,
                      "authors": listed[0].authors, "date": listed[0].created_at.year,
                      "old": [c.commit_id for c in at_old]}))
    """)
    made = result["made"]
    assert result["ids"][:54] == made[::-1]
    assert len(result["ids"]) == 55 == len(set(result["ids"]))
    assert result["titles"] == ["step 53", "step 52"]
    assert result["message"] == "step 53\n\nwhy"
    assert result["authors"] == ["kernelhub"]
    assert result["date"] >= 2024
    assert result["old"][:2] == [made[1], made[0]] and len(result["old"]) == 3
