# SPDX-License-Identifier: Apache-2.0
"""Runs the reference's own test suites against the reference and against kernelhub.

    .venv/bin/python tests/refsuite/run.py [--json PATH] [--mechanical] [-k EXPR]

1. Fetches the `kernels` 0.17.2 and `kernels-data` 0.16.2 sdists from the package registry
   (sources.py; cached under build/refsuite/, never committed) and unpacks their tests:
   `kernels/tests` and `kernels-data/bindings/python/tests`.
2. Builds the Hub repositories those tests ask for (hub_repos.py; our examples built on CPU,
   cached) and publishes them to a local `kernelhub serve` on 127.0.0.1.
3. Runs the tests twice, side by side, each run with its own Hugging Face cache and that hub
   as HF_ENDPOINT: unmodified against the reference packages (`kernels`, `kernels_data`), and
   with their imports rewritten to kernelhub (rewrite.py; the reference's private modules
   answered by refsuite_adapters/). The only change both runs share is the hub's shape: the
   commits of the tests' kernels.lock files are the local hub's.
4. Prints, per test file, how many tests pass on the reference and on kernelhub, and writes
   the same with every test's outcome to build/refsuite/summary.json. Tests that need a GPU
   (or macOS, ...) are skipped by the reference's own markers in both runs.

--mechanical rewrites every `kernels.x` to `kernelhub.x` with no adapters: what a bare rename
of the import gives (the measure of issue 21).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import hub_repos  # noqa: E402
import sources  # noqa: E402
from rewrite import Rewriter  # noqa: E402

REPO_ROOT = HERE.parents[1]
TOKEN = "refsuite-token"


def _binary(name: str) -> Path:
    override = os.environ.get("KERNELHUB_BIN_DIR")
    path = Path(override) / name if override else REPO_ROOT / ".venv" / "bin" / name
    if not path.exists():
        found = shutil.which(name)
        if found is None:
            raise SystemExit(f"refsuite: {name} is not installed; run scripts/setup.sh")
        path = Path(found)
    return path


def start_hub(root: Path, kernelhub: Path) -> tuple[subprocess.Popen, str]:
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    (root / "config.toml").write_text(hub_repos.server_config())
    tokens = root.parent / "hub-tokens"
    tokens.write_text(TOKEN + "\n")
    process = subprocess.Popen(
        [str(kernelhub), "serve", "--root", str(root), "--host", "127.0.0.1", "--port", "0",
         "--token-file", str(tokens)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True)
    url = process.stdout.readline().strip()
    if not url.startswith("http://127.0.0.1:"):
        process.kill()
        raise SystemExit(f"refsuite: kernelhub serve did not start (said {url!r})")
    return process, url


def prepare(run_dir: Path, kernels_top: Path, data_top: Path, commits, rewriter) -> None:
    """The run's copy of both suites: the hub's commits in the locks, and for kernelhub the
    rewritten imports."""
    if run_dir.exists():
        shutil.rmtree(run_dir)
    run_dir.mkdir(parents=True)
    shutil.copytree(kernels_top / "kernels" / "tests", run_dir / "tests")
    shutil.copy(kernels_top / "kernels" / "pytest.ini", run_dir / "pytest.ini")
    shutil.copytree(data_top / "kernels-data" / "bindings" / "python" / "tests",
                    run_dir / "data_tests")
    for lock in (run_dir / "tests").rglob("kernels.lock"):
        lock.write_text(hub_repos.rewrite_lock(lock.read_text(), commits))
    if rewriter is not None:
        rewriter.tree(run_dir)


def start_pytest(run_dir: Path, url: str, python: Path, adapters: bool, extra_args):
    env = hub_repos.environ_without_hub()
    home = run_dir / "hf-home"
    env.update({
        "HF_ENDPOINT": url,
        "HF_HOME": str(home),
        # kernelhub serve speaks Git LFS, not Xet
        "HF_HUB_DISABLE_XET": "1",
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
        "REFSUITE_RESULTS": str(run_dir / "results.json"),
        "PYTHONDONTWRITEBYTECODE": "1",
    })
    paths = [str(HERE / "plugin")] + ([str(HERE)] if adapters else [])
    env["PYTHONPATH"] = os.pathsep.join(paths + [p for p in [env.get("PYTHONPATH")] if p])
    log = (run_dir / "pytest.log").open("w")
    args = [str(python), "-m", "pytest", "-p", "refsuite_results", "-p", "no:cacheprovider",
            "-q", "-rfE", "--continue-on-collection-errors", "tests", "data_tests",
            *extra_args]
    return subprocess.Popen(args, cwd=run_dir, env=env, stdout=log, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL), log


def _file_of(node_id: str) -> str:
    return node_id.split("::")[0]


# The two suites: the kernels sdist's tests (the acceptance measure of issue 21) and the
# kernels-data sdist's, run against `kernels_data` 0.16.2 and `kernelhub.data`.
SUITES = {"kernels": "tests/", "kernels-data": "data_tests/"}


def summarize_suites(reference: dict, kernelhub: dict) -> dict:
    out = {}
    for suite, prefix in SUITES.items():
        def part(results):
            return {n: r for n, r in results.items() if n.startswith(prefix)}
        out[suite] = summarize(part(reference), part(kernelhub))
    return out


def summarize(reference: dict, kernelhub: dict) -> dict:
    files = sorted({_file_of(n) for n in reference} | {_file_of(n) for n in kernelhub})
    table = []
    for name in files:
        ref = {n: r for n, r in reference.items() if _file_of(n) == name}
        ours = {n: r for n, r in kernelhub.items() if _file_of(n) == name}
        ref_passed = {n for n, r in ref.items() if r["outcome"] == "passed"}
        ours_passed = {n for n, r in ours.items() if r["outcome"] == "passed"}
        table.append({
            "file": name,
            "reference_collected": len([n for n in ref if "::" in n]),
            "reference_passed": len(ref_passed),
            "kernelhub_passed": len(ours_passed),
            "kernelhub_passed_of_reference_passed": len(ref_passed & ours_passed),
        })
    ref_passed = {n for n, r in reference.items() if r["outcome"] == "passed"}
    ours_passed = {n for n, r in kernelhub.items() if r["outcome"] == "passed"}
    module_errors = {_file_of(n): r for n, r in kernelhub.items() if "::" not in n}
    regressions = {}
    for node in sorted(ref_passed - ours_passed):
        result = kernelhub.get(node) or module_errors.get(_file_of(node)) or \
            {"outcome": "missing", "message": "not collected"}
        regressions[node] = result
    both = len(ref_passed & ours_passed)
    return {
        "files": table,
        "reference_passed": len(ref_passed),
        "kernelhub_passed": len(ours_passed),
        "kernelhub_passed_of_reference_passed": both,
        "ratio": both / len(ref_passed) if ref_passed else 0.0,
        "failing_on_kernelhub": regressions,
        "passing_only_on_kernelhub": sorted(ours_passed - ref_passed),
    }


def print_table(suite: str, summary: dict) -> None:
    print(f"== the {suite} suite")
    width = max(len(row["file"]) for row in summary["files"])
    print(f"{'file':<{width}}  reference  kernelhub  (of reference's)")
    for row in summary["files"]:
        print(f"{row['file']:<{width}}  {row['reference_passed']:>9}  "
              f"{row['kernelhub_passed']:>9}  {row['kernelhub_passed_of_reference_passed']:>9}")
    print(f"{'total':<{width}}  {summary['reference_passed']:>9}  "
          f"{summary['kernelhub_passed']:>9}  {summary['kernelhub_passed_of_reference_passed']:>9}")
    print(f"kernelhub passes {summary['ratio']:.1%} of the tests that pass on the reference")
    failing = summary["failing_on_kernelhub"]
    for node, result in list(failing.items())[:60]:
        print(f"  fails on kernelhub: {node}: {result['outcome']}: "
              f"{result['message'].splitlines()[0][:160] if result['message'] else ''}")
    if len(failing) > 60:
        print(f"  ... and {len(failing) - 60} more (the summary file lists them all)")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=REPO_ROOT / "build" / "refsuite")
    parser.add_argument("--json", type=Path, default=None,
                        help="summary file (default: WORK/summary.json)")
    parser.add_argument("--mechanical", action="store_true",
                        help="rename kernels.x to kernelhub.x with no adapters")
    parser.add_argument("-k", dest="keyword", default=None, help="pytest -k for both runs")
    args = parser.parse_args(argv)
    started = time.monotonic()
    work = args.work.resolve()
    python = REPO_ROOT / ".venv" / "bin" / "python"
    if not python.exists():
        python = Path(sys.executable)

    kernels_top = sources.unpack(sources.fetch_sdist(sources.KERNELS, work / "sdists"),
                                 work / "src")
    data_top = sources.unpack(sources.fetch_sdist(sources.KERNELS_DATA, work / "sdists"),
                              work / "src")
    repos = hub_repos.repositories(work / "kernels", _binary("kernel-builder"), python)
    server, url = start_hub(work / "hub", _binary("kernelhub"))
    try:
        commits = hub_repos.publish(repos, url, TOKEN)
        print(f"refsuite: {len(repos)} repositories on {url} "
              f"({time.monotonic() - started:.0f} s)")
        runs = {"reference": None, "kernelhub": Rewriter(use_adapters=not args.mechanical)}
        extra = ["-k", args.keyword] if args.keyword else []
        processes = {}
        for name, rewriter in runs.items():
            run_dir = work / "runs" / name
            prepare(run_dir, kernels_top, data_top, commits, rewriter)
            processes[name] = start_pytest(run_dir, url, python,
                                           adapters=rewriter is not None,
                                           extra_args=extra)
        results = {}
        for name, (process, log) in processes.items():
            process.wait()
            log.close()
            path = work / "runs" / name / "results.json"
            if not path.exists():
                print((work / "runs" / name / "pytest.log").read_text()[-3000:])
                raise SystemExit(f"refsuite: the {name} run wrote no results")
            results[name] = json.loads(path.read_text())
    finally:
        server.terminate()
        server.wait(timeout=10)

    suites = summarize_suites(results["reference"], results["kernelhub"])
    summary = {"suites": suites, "mechanical": args.mechanical,
               "seconds": round(time.monotonic() - started, 1), "results": results}
    out = args.json or work / "summary.json"
    out.write_text(json.dumps(summary, indent=1) + "\n")
    for suite, part in suites.items():
        print_table(suite, part)
    print(f"refsuite: {summary['seconds']} s; summary in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
