# SPDX-License-Identifier: Apache-2.0
"""The web pages of `kernelhub serve` (issue 15 item 1, and the benchmark chart of item 3),
loaded in Debian's headless Chromium.

One hub serves the whole module: a kernel with two versions (variants, a card with hostile
HTML, benchmark results uploaded as `kernelhub benchmark --upload` stores them, an open pull
request, a discussion), a second kernel with a merged pull request, a model, a dataset, and
private repositories. Every check reads the DOM Chromium
built, not our HTML: the elements, their text and their links. Screenshots of every page
kind go to $KERNELHUB_ARTIFACTS/screenshots (default build/test-artifacts/screenshots).
"""
import json
import subprocess
import urllib.parse
from pathlib import Path

import pytest

from conftest import REPO_ROOT, HubServer
from headless_browser import CHROMIUM, Browser, artifacts_dir, parse
from serve_helpers import commit, http, wait_for_variant_checks

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="needs Debian's chromium (scripts/setup.sh installs it)")

TOKEN = "kh-web-token"
KERNEL = "kh-web/relu"
CPU = "torch215-cxx11-cpu-x86_64-linux"
CUDA = "torch215-cxx11-cu128-x86_64-linux"
UNIVERSAL = "torch-universal"
STABLE = "torch-stable-abi211-cu126-x86_64-linux"
ODD_FILE = 'docs/a<b>&"c".txt'
ODD_BRANCH = "exp<i>x"
ODD_WORKLOAD = "ReluBenchmark.<large>"
CU130 = "torch215-cxx11-cu130-x86_64-linux"
PR_FILES = {"README.md": b"# relu, version 2 with cu130\n",
            f"build/{CU130}/metadata.json": None}  # filled below, once metadata() exists
PR_DELETED = f"build/{UNIVERSAL}/__init__.py"
PR_COMMENT = "Looks **good** <script>document.title = 'pwned'</script>"
# Names an anonymous reader must never see anywhere.
SECRETS = ["secret-kernel", "kh-hidden", "hidden-model"]

CARD = """---
library_name: kernels
license: apache-2.0
---

# relu, version {version}

A kernel for <b>tests</b>. <script>document.title = "pwned"</script>
<img src="x" onerror="document.title='pwned'">

| op | dtype |
|----|-------|
| relu | float32 |

See [the benchmark script](benchmarks/benchmark.py), https://example.org/autolinked and
[a bad link](javascript:alert(1)).
"""


def metadata(backend, archs=None, license="Apache-2.0"):
    body = {"name": "relu", "id": f"_relu_{backend}_abc", "version": 1, "license": license,
            "python-depends": [], "kernel-depends": [], "backend": {"type": backend},
            "digest": {"algorithm": "sha256",
                       "files": {"__init__.py": "AAAA", "_ops.py": "BBBB"}}}
    if archs:
        body["backend"]["archs"] = archs
    return json.dumps(body, indent=2).encode()


def bench_result(means, backend, gpu):
    results = [{"workload": name, "verified": True, "timingResults": {
        "mean_ms": mean, "std_ms": mean / 10, "min_ms": mean * 0.9, "max_ms": mean * 1.2,
        "q1_ms": mean * 0.95, "q3_ms": mean * 1.05, "iqr_ms": mean / 10, "outliers": 0,
        "iterations": 20}} for name, mean in means.items()]
    return json.dumps({"results": results, "machineInfo": {
        "gpu": gpu, "backend": backend, "pytorchVersion": "2.15.0", "os": "Linux",
        "cpu": "Test CPU"}, "kernelCommitSha": "abc", "benchmarkScriptPath": "benchmarks"}
    ).encode()


PR_FILES[f"build/{CU130}/metadata.json"] = metadata("cuda", ["10.0"])


def ok(response):
    status, _, body = response
    assert status == 200, body
    return json.loads(body or b"{}")


def create(server, repo_type, repo_id, private=False):
    ns, name = repo_id.split("/")
    ok(http(server, "POST", "/api/repos/create", json.dumps(
        {"organization": ns, "name": name, "type": repo_type, "private": private}),
        token=server.token, headers={"Content-Type": "application/json"}))


def branch(server, repo_path, name, start):
    ok(http(server, "POST", f"/api/{repo_path}/branch/{urllib.parse.quote(name, safe='')}",
            json.dumps({"startingPoint": start}), token=server.token,
            headers={"Content-Type": "application/json"}))


def put(server, repo_path, revision, files, summary):
    ok(commit(server, repo_path, revision, files, summary=summary))


@pytest.fixture(scope="module")
def hub(kernelhub_bin, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("web")
    root = tmp / "root"
    (tmp / "tokens").write_text(TOKEN + "\n")
    process = subprocess.Popen(
        [str(kernelhub_bin), "serve", "--root", str(root), "--port", "0", "--token-file",
         str(tmp / "tokens")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    url = process.stdout.readline().strip()
    if not url.startswith("http://"):
        process.kill()
        pytest.fail(f"kernelhub serve did not start: {process.stderr.read()}")
    server = HubServer(url, TOKEN, root, process)
    server.files = {}
    try:
        create(server, "kernel", KERNEL)
        kpath = f"kernels/{KERNEL}"
        # main's card has no relative link: main holds no benchmarks/ for it to name.
        put(server, kpath, "main", {"README.md": b"# relu\n\nSee the versions.\n"},
            "Add the card")
        branch(server, kpath, "v1", "main")
        v1_files = {
            "README.md": CARD.format(version=1).encode(),
            f"build/{CPU}/__init__.py": b"from ._ops import ops\n",
            f"build/{CPU}/metadata.json": metadata("cpu"),
            "benchmarks/benchmark.py": b"# the benchmark script\n",
        }
        put(server, kpath, "v1", v1_files, "Publish v1")
        branch(server, kpath, "v2", "v1")
        v2_files = {
            "README.md": CARD.format(version=2).encode(),
            f"build/{CUDA}/__init__.py": b"from ._ops import ops\n",
            f"build/{CUDA}/metadata.json": metadata("cuda", ["8.0", "9.0+PTX"]),
            f"build/{UNIVERSAL}/__init__.py": b"def relu(x):\n    return x.clamp(min=0)\n",
            f"build/{STABLE}/metadata.json": metadata("cuda", ["9.0"]),
            ODD_FILE: b"odd name\n",
        }
        put(server, kpath, "v2", v2_files, "Publish v2 with <cuda>")
        put(server, kpath, "v2", {
            f"benchmarks/{CPU}/cpu-x86_64.json": bench_result(
                {"ReluBenchmark.small": 0.012, ODD_WORKLOAD: 0.9}, "CPU", "N/A"),
            f"benchmarks/{CUDA}/cuda-h100.json": bench_result(
                {"ReluBenchmark.small": 0.004, ODD_WORKLOAD: 0.05}, "CUDA 12.8",
                "NVIDIA H100"),
        }, "Benchmark results")
        branch(server, kpath, ODD_BRANCH, "v2")
        server.files = {**v1_files, **v2_files}
        # An open pull request to v2 (#1), commented on, and a plain discussion (#2).
        ok(commit(server, kpath, "v2", PR_FILES, summary="Add cu130", deleted=[PR_DELETED],
                  query="create_pr=1"))
        ok(http(server, "POST", f"/api/{kpath}/discussions/1/comment",
                json.dumps({"comment": PR_COMMENT}), token=server.token,
                headers={"Content-Type": "application/json"}))
        ok(http(server, "POST", f"/api/{kpath}/discussions",
                json.dumps({"title": "Question <b>", "description": "Does it run on ROCm?"}),
                token=server.token, headers={"Content-Type": "application/json"}))

        create(server, "kernel", "kh-web/gelu")
        branch(server, "kernels/kh-web/gelu", "v1", "main")
        put(server, "kernels/kh-web/gelu", "v1", {
            f"build/{CPU}/metadata.json": metadata("cpu", license="MIT")}, "Publish v1")
        # A merged pull request: its page still shows what it brought.
        ok(commit(server, "kernels/kh-web/gelu", "v1", {"NOTES.md": b"notes\n"},
                  summary="Add notes", query="create_pr=1"))
        ok(http(server, "POST", "/api/kernels/kh-web/gelu/discussions/1/merge", "{}",
                token=server.token, headers={"Content-Type": "application/json"}))

        create(server, "model", "kh-web/tiny-model")
        put(server, "models/kh-web/tiny-model", "main", {
            "README.md": b"---\nlicense: mit\n---\n# Tiny model\n\nWeights for tests.\n",
            "config.json": b'{"hidden_size": 8}\n'}, "Add the model")
        create(server, "dataset", "kh-web/tiny-data")
        put(server, "datasets/kh-web/tiny-data", "main", {
            "README.md": b"# Tiny data\n", "data/train.csv": b"x,y\n1,2\n"}, "Add the data")

        create(server, "kernel", "kh-web/secret-kernel", private=True)
        branch(server, "kernels/kh-web/secret-kernel", "v1", "main")
        # A folder larger than a listing shows (private, so the crawl does not visit each).
        many = {f"many/f{i:04}.txt": b"x" for i in range(1001)}
        put(server, "kernels/kh-web/secret-kernel", "v1", {
            f"build/{CPU}/metadata.json": metadata("cpu"), **many}, "Publish v1")
        # The hub checks each commit's variants after answering it, in order: once the last
        # kernel commit is checked, every page shows what the checks found.
        wait_for_variant_checks(server, "kernels/kh-web/secret-kernel", "v1", token=TOKEN)
        create(server, "model", "kh-hidden/hidden-model", private=True)
        create(server, "dataset", "kh-hidden/hidden-data", private=True)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="module")
def browser():
    with Browser() as chromium:
        yield chromium


@pytest.fixture(scope="module")
def token_browser():
    """A browser that sends the server's token with every request."""
    with Browser(headers={"Authorization": f"Bearer {TOKEN}"}) as chromium:
        yield chromium


def refs(server, repo_path):
    return ok(http(server, "GET", f"/api/{repo_path}/refs", token=server.token))


def branch_sha(server, repo_path, name):
    return next(b["targetCommit"] for b in refs(server, repo_path)["branches"]
                if b["name"] == name)


def links(doc):
    return [a.attrs.get("href") for a in doc.iter("a") if a.attrs.get("href")]


# ---------------------------------------------------------------------------------------
# The listing


def test_index_lists_kernels_with_newest_version_backends_and_licence(hub, browser):
    doc = browser.load(hub.url + "/")
    table = doc.by_id("repos")
    assert [th.text() for th in table.iter("th")] == ["Kernel", "Newest version", "Backends",
                                                      "Licence"]
    rows = {row[0]: row for row in table.rows()}
    assert set(rows) == {"kh-web/gelu", "kh-web/relu"}
    relu_row = next(tr for tr in table.find("tbody").iter("tr")
                    if tr.find("a", class_="repo").text() == KERNEL)
    assert relu_row.find("td", class_="version").text() == "v2"
    assert relu_row.find("td", class_="version").find("a").attrs["href"] == \
        f"/kernels/{KERNEL}/tree/v2"
    backends = [chip.text() for chip in relu_row.find("td", class_="backends").iter("span")]
    assert backends == ["cpu", "cuda", "universal"]
    assert relu_row.find("td", class_="license").text() == "Apache-2.0"
    assert rows["kh-web/gelu"][1:] == ["v1", "cpu", "MIT"]
    # No script on any page: the search is a GET form the server filters.
    assert doc.find_all("script") == []
    form = doc.find("form", class_="search")
    assert form.attrs["method"] == "get" and form.find("input").attrs["name"] == "search"


def test_search_filters_on_the_server(hub, browser):
    doc = browser.load(hub.url + "/?search=RELU")
    assert [row[0] for row in doc.by_id("repos").rows()] == [KERNEL]
    assert doc.find("input", name="search").attrs["value"] == "RELU"
    doc = browser.load(hub.url + "/kernels?search=" + urllib.parse.quote("<nothing>"))
    assert doc.by_id("repos").rows() == []
    assert doc.by_id("none").text() == 'No kernels match "<nothing>".'


# ---------------------------------------------------------------------------------------
# The kernel page


def test_kernel_page_shows_card_versions_variants_benchmarks_and_how_to_load(hub, browser):
    doc = browser.load(f"{hub.url}/kernels/{KERNEL}")
    assert doc.by_id("repo-id").text().strip() == KERNEL
    assert doc.by_id("shown-revision").text() == "v2"
    card = doc.by_id("card")
    assert card.find("h1").text() == "relu, version 2"
    # Front matter is not shown; the GFM table and the autolink are rendered.
    assert "library_name" not in card.text()
    assert card.find("table").rows() == [["relu", "float32"]]
    assert "https://example.org/autolinked" in links(card)
    # The card's relative link goes to that file of the version shown.
    script_link = next(a for a in card.iter("a") if a.text() == "the benchmark script")
    assert script_link.attrs["href"] == f"/kernels/{KERNEL}/blob/v2/benchmarks/benchmark.py"

    assert [row[0] for row in doc.by_id("version-list").rows()] == ["v2 shown", "v1"]

    matrix = doc.by_id("variant-matrix")
    assert [th.text() for th in matrix.find("thead").iter("th")] == \
        ["Framework", "cpu", "cu126", "cu128", "universal"]
    cells = [row for row in matrix.rows()]
    assert cells == [["torch 2.15", "x86_64-linux", "", "x86_64-linux", ""],
                     ["torch stable ABI 2.11", "", "x86_64-linux", "", ""],
                     ["torch (any)", "", "", "", "any"]]
    details = {tr.attrs["data-variant"]: tr for tr in doc.by_id("variant-details").iter("tr")
               if "data-variant" in tr.attrs}
    assert set(details) == {CPU, CUDA, UNIVERSAL, STABLE}
    # The hub checks the files against the digest itself (issue 20 item 9): these variants'
    # metadata names files they do not have.
    mismatch = "sha256 over 2 files: files do not match: Missing file: __init__.py (and 1 more)"
    [stable_row] = details[STABLE].rows()
    assert stable_row[:5] == [STABLE, "9.0", "yes", mismatch, "no"]
    # Checked after the commit that brought it, which the cell links to.
    assert stable_row[5].startswith("at upload (")
    commit_link = details[STABLE].find_all("a")[-1].attrs["href"]
    assert commit_link.startswith(f"/kernels/{KERNEL}/commit/")
    # Every variant whose files differ from its digest is named above the table too.
    assert doc.by_id("variant-mismatch").text().startswith(
        "Files do not match the digest in their metadata.json, so loaders refuse these variants:")
    assert details[STABLE].attrs["class"] == "mismatch"
    assert [c.text() for c in details[CUDA].iter("span") if c.attrs.get("class") == "chip"] == \
        ["8.0", "9.0+PTX"]
    [cpu_row] = details[CPU].rows()
    assert cpu_row[:3] + cpu_row[4:5] == [CPU, "—", "no", "no"]
    assert cpu_row[3].startswith("sha256 over 2 files: files do not match: File hash mismatch "
                                 "for __init__.py: expected: AAAA, got: ")
    assert "no metadata.json" in details[UNIVERSAL].text()
    assert details[CUDA].find("a").attrs["href"] == f"/kernels/{KERNEL}/tree/v2/build/{CUDA}"

    # For this hub (issue 22 §8): its URL, and trust_remote_code since config.toml does not
    # trust the publisher; tests/e2e/test_card_snippets.py runs such snippets.
    assert doc.by_id("load-python").text() == (
        f'import os\n\nos.environ["HF_ENDPOINT"] = "{hub.url}"  # this hub; set before kernels '
        f'is imported\n\nfrom kernels import get_kernel\n\n# {KERNEL.split("/")[0]} is not a '
        f'trusted kernel publisher on this hub: loading runs its code.\n'
        f'kernel = get_kernel("{KERNEL}", version=2, trust_remote_code=True)')
    lock = json.loads(doc.by_id("load-lock").text())
    assert lock == {"dependency": {"repo-id": KERNEL, "version": 2},
                    "lock": {"commit": branch_sha(hub, f"kernels/{KERNEL}", "v2")}}


def test_kernel_page_draws_the_uploaded_benchmarks_as_svg(hub, browser):
    doc = browser.load(f"{hub.url}/kernels/{KERNEL}")
    svg = doc.find("figure", class_="chart").find("svg")
    assert svg is not None and svg.attrs["class"] == "benchmark-chart"
    # One bar per (variant, device) and workload, longest for the slowest run.
    bars = {bar.find("title").text().split(":")[0] + " " + bar.find("title").text().split("(")[-1]:
            float(bar.attrs["width"]) for bar in svg.find_all("rect", class_="bar")}
    assert len(bars) == 4
    widths = sorted(bars.values())
    assert widths[-1] == max(bars.values()) and widths[0] < widths[-1] / 10
    slowest = max(bars, key=bars.get)
    assert slowest.startswith(ODD_WORKLOAD) and CPU in slowest
    legend = [g.find("text").text() for g in svg.find_all("g", class_="legend")]
    assert legend == [f"{CPU} · cpu-x86_64 · Test CPU (CPU)",
                      f"{CUDA} · cuda-h100 · NVIDIA H100 (CUDA 12.8)"]
    labels = [g.find("text").text() for g in svg.find_all("g", class_="workload")]
    # Named with their class, as the table and the local chart name them (issue 22 §6).
    assert labels == ["ReluBenchmark.small", ODD_WORKLOAD]
    rows = doc.by_id("benchmark-table").rows()
    assert [r[:4] for r in rows] == [
        [CPU, "cpu-x86_64", "ReluBenchmark.small", "0.0120"],
        [CPU, "cpu-x86_64", ODD_WORKLOAD, "0.9000"],
        [CUDA, "cuda-h100", "ReluBenchmark.small", "0.0040"],
        [CUDA, "cuda-h100", ODD_WORKLOAD, "0.0500"]]


def test_a_hostile_card_runs_nothing_and_names_are_escaped(hub, browser):
    # Pages forbid scripts outright, whatever their text: the second line of defence.
    for path in (f"/kernels/{KERNEL}", "/kernels/kh-web/no-such-kernel"):
        csp = http(hub, "GET", path)[1]["Content-Security-Policy"]
        assert "default-src 'none'" in csp and "script-src" not in csp, csp
    doc = browser.load(f"{hub.url}/kernels/{KERNEL}")
    # The card's <script>, <img onerror> and javascript: link are gone, not run.
    assert doc.find_all("script") == []
    assert doc.find("title").text() == f"{KERNEL} · kernelhub"
    assert all(not name.startswith("on") for e in doc.iter() for name in e.attrs)
    assert not any(href.lower().startswith("javascript:") for href in links(doc))
    assert doc.by_id("card").find_all("img") == []
    assert doc.by_id("card").find_all("b") == []
    # A branch named with "<" is text, not markup.
    chips = [a.text() for a in doc.by_id("refs").iter("a")]
    assert ODD_BRANCH in chips and doc.by_id("refs").find_all("i") == []
    # The file named with <, & and " lists as exactly that name.
    tree = browser.load(f"{hub.url}/kernels/{KERNEL}/tree/v2/docs")
    [row] = tree.by_id("files").find("tbody").find_all("tr", class_="file")
    assert row.find("a").text() == "a<b>&\"c\".txt"
    assert row.find_all("b") == []
    blob = browser.load(hub.url + row.find("a").attrs["href"])
    assert blob.by_id("file-text").text() == "odd name\n"


# ---------------------------------------------------------------------------------------
# The file browser and the history


def test_the_tree_url_upload_prints_lists_files_with_sizes_and_downloads(hub, browser):
    doc = browser.load(f"{hub.url}/kernels/{KERNEL}/tree/v1")
    files = doc.by_id("files").find("tbody")
    dirs = [tr.find("a").text() for tr in files.find_all("tr", class_="dir")]
    assert dirs == ["benchmarks/", "build/"]
    [readme] = [tr for tr in files.find_all("tr", class_="file") if tr.find("a").text() == "README.md"]
    download = readme.find("a", class_="download").attrs["href"]
    assert download == f"/kernels/{KERNEL}/resolve/v1/README.md"
    status, _, body = http(hub, "GET", download)
    assert status == 200 and body == CARD.format(version=1).encode()
    assert int(readme.find("td", class_="num").attrs["data-bytes"]) == len(body)
    # The root of a version shows its own variants and card.
    assert [tr.attrs["data-variant"] for tr in doc.by_id("variant-details").iter("tr")
            if "data-variant" in tr.attrs] == [CPU]
    assert doc.by_id("card").find("h1").text() == "relu, version 1"

    inner = browser.load(f"{hub.url}/kernels/{KERNEL}/tree/v1/build/{CPU}")
    names = [tr.find("a").text() for tr in inner.by_id("files").find_all("tr", class_="file")]
    assert names == ["__init__.py", "metadata.json"]
    crumbs = [a.text() for a in inner.by_id("path").iter("a")]
    assert crumbs == ["v1", "build", CPU]

    # A Markdown file reads rendered, its source a click away, its links relative to it.
    card = browser.load(f"{hub.url}/kernels/{KERNEL}/blob/v1/README.md")
    assert card.by_id("file-markdown").find("h1").text() == "relu, version 1"
    assert card.by_id("file-text").text() == CARD.format(version=1)
    assert card.find("details").find("summary").text() == "Source"
    script = next(a for a in card.by_id("file-markdown").iter("a")
                  if a.text() == "the benchmark script")
    assert script.attrs["href"] == f"/kernels/{KERNEL}/blob/v1/benchmarks/benchmark.py"

    blob = browser.load(f"{hub.url}/kernels/{KERNEL}/blob/v1/build/{CPU}/metadata.json")
    assert json.loads(blob.by_id("file-text").text()) == json.loads(metadata("cpu"))
    assert blob.by_id("file-markdown") is None
    assert blob.by_id("download").attrs["href"] == \
        f"/kernels/{KERNEL}/resolve/v1/build/{CPU}/metadata.json"


def test_commits_page_lists_the_history_newest_first(hub, browser):
    doc = browser.load(f"{hub.url}/kernels/{KERNEL}/commits/v2")
    titles = [row[1] for row in doc.by_id("commits").rows()]
    assert titles[:4] == ["Benchmark results", "Publish v2 with <cuda>", "Publish v1",
                          "Add the card"]
    first = doc.by_id("commits").find("tbody").find("a")
    assert first.attrs["href"] == \
        f"/kernels/{KERNEL}/commit/{branch_sha(hub, f'kernels/{KERNEL}', 'v2')}"


def test_commit_page_lists_the_files_a_commit_changed(hub, browser):
    history = browser.load(f"{hub.url}/kernels/{KERNEL}/commits/v2").by_id("commits")
    links_by_title = {tr.rows()[0][1]: tr.find("a").attrs["href"]
                      for tr in history.find("tbody").iter("tr")}
    doc = browser.load(hub.url + links_by_title["Publish v2 with <cuda>"])
    assert doc.by_id("commit-title").text() == "Publish v2 with <cuda>"
    rows = doc.by_id("changes").find("tbody").iter("tr")
    changes = {tr.find("td").text(): [tr.attrs["class"]] + [
        int(span.attrs["data-bytes"]) for span in tr.iter("span") if "data-bytes" in span.attrs]
        for tr in rows}
    added = [ODD_FILE, f"build/{CUDA}/__init__.py", f"build/{CUDA}/metadata.json",
             f"build/{UNIVERSAL}/__init__.py", f"build/{STABLE}/metadata.json"]
    assert changes == {
        **{path: ["added", len(hub.files[path])] for path in added},
        "README.md": ["modified", len(CARD.format(version=1).encode()),
                      len(CARD.format(version=2).encode())]}
    parent = next(a for a in doc.by_id("commit-info").iter("a") if a.text() != "browse files")
    assert parent.attrs["href"] == links_by_title["Publish v1"]
    root = browser.load(hub.url + links_by_title["initial commit"])
    assert "the first commit" in root.by_id("commit-info").text()
    assert [row[:2] for row in root.by_id("changes").rows()] == [[".gitattributes", "added"]]


def test_the_commit_url_the_api_answers_is_a_page(hub, browser):
    status, _, body = commit(hub, "kernels/kh-web/gelu", "main", {"x.txt": b"x"},
                             summary="One more file")
    assert status == 200, body
    url = json.loads(body)["commitUrl"]
    assert url.startswith(hub.url + "/kernels/kh-web/gelu/commit/")
    doc = browser.load(url)
    assert doc.by_id("commit-title").text() == "One more file"
    assert doc.by_id("changes").rows() == [["x.txt", "added", "—", "1 B"]]


def test_models_and_datasets_have_the_same_pages(hub, browser):
    model = browser.load(f"{hub.url}/kh-web/tiny-model")
    assert model.by_id("repo-id").text().strip() == "kh-web/tiny-model"
    assert model.by_id("card").find("h1").text() == "Tiny model"
    models = browser.load(hub.url + "/models")
    assert models.by_id("repos").rows() == [["kh-web/tiny-model", models.by_id("repos").rows()[0][1],
                                              "mit"]]
    data = browser.load(f"{hub.url}/datasets/kh-web/tiny-data/tree/main/data")
    [row] = data.by_id("files").find_all("tr", class_="file")
    assert row.find("a", class_="download").attrs["href"] == \
        "/datasets/kh-web/tiny-data/resolve/main/data/train.csv"
    assert [r[0] for r in browser.load(hub.url + "/datasets").by_id("repos").rows()] == \
        ["kh-web/tiny-data"]


# ---------------------------------------------------------------------------------------
# Discussions and pull requests


def test_community_page_lists_pull_requests_and_discussions(hub, browser):
    doc = browser.load(f"{hub.url}/kernels/{KERNEL}/discussions")
    rows = doc.by_id("discussions").rows()
    assert [r[:4] for r in rows] == [["2", "Question <b>", "discussion", "open"],
                                     ["1", "Add cu130", "pull request", "open"]]
    assert doc.by_id("discussions").find_all("b") == []
    link = doc.by_id("discussions").find("a")
    assert link.attrs["href"] == f"/kernels/{KERNEL}/discussions/2"


def test_pull_request_page_shows_the_files_it_changes_and_its_heads_variants(hub, browser):
    doc = browser.load(f"{hub.url}/kernels/{KERNEL}/discussions/1")
    title = doc.by_id("discussion-title")
    assert title.text().split() == ["Add", "cu130", "#1", "open"]
    refs_links = [a.attrs["href"] for a in doc.by_id("pr-refs").iter("a")]
    assert refs_links == [f"/kernels/{KERNEL}/tree/refs%2Fpr%2F1", f"/kernels/{KERNEL}/tree/v2"]
    changes = {tr.find("td").text(): tr for tr in doc.by_id("changes").find("tbody").iter("tr")}
    assert {path: tr.attrs["class"] for path, tr in changes.items()} == {
        "README.md": "modified", f"build/{CU130}/metadata.json": "added",
        PR_DELETED: "deleted"}
    sizes = [int(span.attrs["data-bytes"]) for span in changes["README.md"].iter("span")]
    assert sizes == [len(CARD.format(version=2).encode()), len(PR_FILES["README.md"])]
    assert changes[PR_DELETED].find("a") is None
    assert changes["README.md"].find("a").attrs["href"] == \
        f"/kernels/{KERNEL}/blob/refs%2Fpr%2F1/README.md"
    # The variant matrix is the PR head's: cu130 added, the universal variant's only file gone.
    variants = [tr.attrs["data-variant"] for tr in doc.by_id("variant-details").iter("tr")
                if "data-variant" in tr.attrs]
    assert variants == [STABLE, CPU, CUDA, CU130]
    assert doc.by_id("variants").text() == "Variants of refs/pr/1"
    # Events: the commit, then the comment, rendered safely.
    events = [li.attrs["class"] for li in doc.by_id("events").iter("li")]
    assert events == ["event commit", "event comment"]
    comment = doc.by_id("events").find("div", class_="comment")
    assert comment.find("strong").text() == "good"
    assert doc.find_all("script") == []
    assert browser.title() == f"{KERNEL} · #1 Add cu130 · kernelhub"


def diff_lines(doc):
    """(class, text) of each line of the page's text diff."""
    return [(span.attrs["class"], span.text()) for span in doc.by_id("diff").iter("span")]


def test_community_page_shows_each_pull_requests_target_and_status(hub, browser):
    # Issue 22 §5: a reviewer sees where each pull request would go.
    doc = browser.load(f"{hub.url}/kernels/{KERNEL}/discussions")
    rows = doc.by_id("discussions").rows()
    assert [r[3:5] for r in rows] == [["open", "—"], ["open", "v2"]]
    target = doc.by_id("discussions").find_all("td", class_="target")[1].find("a")
    assert target.attrs["href"] == f"/kernels/{KERNEL}/tree/v2"
    merged = browser.load(f"{hub.url}/kernels/kh-web/gelu/discussions").by_id("discussions")
    assert [r[3:5] for r in merged.rows()] == [["merged", "v1"]]


def test_pull_request_page_shows_a_text_diff(hub, browser):
    doc = browser.load(f"{hub.url}/kernels/{KERNEL}/discussions/1")
    lines = diff_lines(doc)
    assert ("file", f"diff --git a/{PR_DELETED} b/{PR_DELETED}") in lines
    assert ("del", "-    return x.clamp(min=0)") in lines
    assert ("add", "+# relu, version 2 with cu130") in lines
    # The card's hostile HTML is diff text, never markup.
    assert ("del", '-A kernel for <b>tests</b>. <script>document.title = "pwned"</script>') \
        in lines
    assert doc.find_all("script") == [] and doc.by_id("diff").find_all("b") == []
    assert browser.title() == f"{KERNEL} · #1 Add cu130 · kernelhub"


def test_commit_page_shows_a_text_diff(hub, browser):
    history = browser.load(f"{hub.url}/kernels/{KERNEL}/commits/v2").by_id("commits")
    links_by_title = {tr.rows()[0][1]: tr.find("a").attrs["href"]
                      for tr in history.find("tbody").iter("tr")}
    lines = diff_lines(browser.load(hub.url + links_by_title["Publish v2 with <cuda>"]))
    assert ("del", "-# relu, version 1") in lines and ("add", "+# relu, version 2") in lines
    assert ("add", "+def relu(x):") in lines
    assert ("file", f"diff --git a/build/{UNIVERSAL}/__init__.py b/build/{UNIVERSAL}/__init__.py") \
        in lines
    merged = diff_lines(browser.load(f"{hub.url}/kernels/kh-web/gelu/discussions/1"))
    assert ("add", "+notes") in merged


def test_a_merged_pull_request_still_shows_what_it_brought(hub, browser):
    doc = browser.load(f"{hub.url}/kernels/kh-web/gelu/discussions/1")
    assert doc.find("span", class_="chip status-merged").text() == "merged"
    assert [row[:2] for row in doc.by_id("changes").rows()] == [["NOTES.md", "added"]]
    assert browser.open(f"{hub.url}/kernels/kh-web/gelu/discussions/9") == 404
    assert browser.open(f"{hub.url}/kernels/kh-web/gelu/discussions/x") == 404


# ---------------------------------------------------------------------------------------
# Privacy, links, screenshots


def crawl(hub, browser, start_paths, limit=1000):
    """Every page reachable from `start_paths` by following the hrefs of this site, each
    loaded in Chromium; file downloads (/resolve/, which a browser saves rather than shows)
    are fetched for their status only. Returns ({path: DOM}, {path: status})."""
    pages, statuses, seen = {}, {}, set()
    queue = list(start_paths)
    here = urllib.parse.urlsplit(hub.url).netloc
    while queue:
        path = queue.pop(0)
        if path in seen:
            continue
        seen.add(path)
        assert len(seen) <= limit, "the crawl did not end: more pages than the test hub has"
        if "/resolve/" in path:
            statuses[path] = http(hub, "GET", path)[0]
            continue
        statuses[path] = browser.open(hub.url + path)
        if statuses[path] != 200:
            continue
        doc = parse(browser.dom())
        pages[path] = doc
        for href in links(doc):
            parsed = urllib.parse.urlsplit(urllib.parse.urljoin(hub.url + path, href))
            if parsed.netloc != here:
                continue  # an external link of a card
            target = parsed.path + (f"?{parsed.query}" if parsed.query else "")
            if target not in seen:
                queue.append(target)
    return pages, statuses


def test_link_checker_finds_no_broken_link_and_anonymous_readers_see_no_private_name(
        hub, browser):
    pages, statuses = crawl(hub, browser, ["/", "/models", "/datasets"])
    broken = {path: status for path, status in statuses.items() if status != 200}
    assert broken == {}
    # It saw every page kind: listings, overviews, trees, blobs, commits, downloads.
    for part in ("/kernels/kh-web/relu", "/tree/v2", "/tree/v1/build", "/blob/v2/",
                 "/commits/v2", "/resolve/v1/", "/kh-web/tiny-model", "/datasets/kh-web",
                 f"/kernels/{KERNEL}/discussions/1", "/tree/refs%2Fpr%2F1",
                 f"/kernels/{KERNEL}/commit/"):
        assert any(part in path for path in statuses), part
    assert len(pages) >= 30
    for path, doc in pages.items():
        words = doc.text() + " ".join(v or "" for e in doc.iter() for v in e.attrs.values())
        leaked = [name for name in SECRETS if name in words]
        assert leaked == [], f"{path} shows {leaked}"
    # Asked for directly, a private repository's pages are the 404 of a missing one.
    for path in ("/kernels/kh-web/secret-kernel", "/kernels/kh-web/secret-kernel/tree/v1",
                 "/kh-hidden/hidden-model", "/datasets/kh-hidden/hidden-data/commits/main"):
        assert browser.open(hub.url + path) == 404, path
    missing = http(hub, "GET", "/kernels/kh-web/no-such-kernel")
    private = http(hub, "GET", "/kernels/kh-web/secret-kernel")
    assert missing[0] == private[0] == 404
    assert missing[2].replace(b"no-such-kernel", b"X") == \
        private[2].replace(b"secret-kernel", b"X")


def test_a_reader_with_a_token_sees_private_repositories(hub, token_browser):
    rows = {r[0]: r for r in token_browser.load(hub.url + "/").by_id("repos").rows()}
    assert rows["kh-web/secret-kernel private"][1] == "v1"
    doc = token_browser.load(f"{hub.url}/kernels/kh-web/secret-kernel")
    assert doc.by_id("repo-id").find("span").text() == "private"
    assert [r[0] for r in doc.by_id("version-list").rows()] == ["v1 shown"]
    models = token_browser.load(hub.url + "/models").by_id("repos").rows()
    assert "kh-hidden/hidden-model private" in [r[0] for r in models]
    # A folder of 1001 files lists its first 1000 and says so.
    many = token_browser.load(f"{hub.url}/kernels/kh-web/secret-kernel/tree/v1/many")
    names = [tr.find("a").text() for tr in many.by_id("files").find_all("tr", class_="file")]
    assert names == [f"f{i:04}.txt" for i in range(1000)]
    assert many.by_id("truncated").text() == "Only the first 1000 of 1001 entries are shown."


def test_screenshots_of_every_page_kind(hub, browser):
    out = artifacts_dir(REPO_ROOT)
    shots = {
        "index": "/",
        "kernel": f"/kernels/{KERNEL}",
        "tree-v1": f"/kernels/{KERNEL}/tree/v1",
        "blob": f"/kernels/{KERNEL}/blob/v1/build/{CPU}/metadata.json",
        "commits": f"/kernels/{KERNEL}/commits/v2",
        "pull-request": f"/kernels/{KERNEL}/discussions/1",
        "commit": f"/kernels/{KERNEL}/commit/v2",
        "model": "/kh-web/tiny-model",
        "not-found": "/kernels/kh-web/no-such-kernel",
    }
    for name, path in shots.items():
        png = browser.screenshot(hub.url + path, out / f"web-{name}.png")
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert png.stat().st_size > 5000, f"{png} looks blank"
