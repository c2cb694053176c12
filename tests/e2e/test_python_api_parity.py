# SPDX-License-Identifier: Apache-2.0
"""The parts of kernels' public API beyond the layers, compared with kernels 0.17.2 call for
call: the User-Agent the caller's `user_agent` produces on the wire, the exception class of a
missing repository, the `Metadata` object, and the decision-trace variant objects."""

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

PYTHON = Path(sys.executable)


class RecordingHub(BaseHTTPRequestHandler):
    """Answers every request as the Hub answers for a repository that does not exist (404 with
    X-Error-Code RepoNotFound) and records the request's User-Agent."""

    user_agents: list = []

    def _missing(self):
        type(self).user_agents.append(self.headers.get("User-Agent", ""))
        body = b'{"error":"Repository not found"}'
        self.send_response(404)
        self.send_header("X-Error-Code", "RepoNotFound")
        self.send_header("X-Error-Message", "Repository not found")
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    do_GET = do_HEAD = do_POST = _missing

    def log_message(self, *args):
        pass


@pytest.fixture
def recording_hub():
    RecordingHub.user_agents = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), RecordingHub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", RecordingHub.user_agents
    server.shutdown()
    server.server_close()


def run_python(script: str, env: dict) -> subprocess.CompletedProcess:
    full_env = {k: v for k, v in os.environ.items()
                if k not in ("HF_HUB_DISABLE_TELEMETRY", "DISABLE_TELEMETRY", "DO_NOT_TRACK")}
    full_env.update(env)
    return subprocess.run([str(PYTHON), "-c", textwrap.dedent(script)], capture_output=True,
                          text=True, timeout=120, env=full_env)


MISSING_REPO = """
    import json, sys
    import torch
    package = __import__(sys.argv[1] if len(sys.argv) > 1 else "{package}")
    from huggingface_hub.errors import RepositoryNotFoundError
    try:
        package.get_kernel("nobody/missing", revision="main", user_agent={{"app": "demo"}},
                           trust_remote_code=True)
    except Exception as error:
        print(json.dumps({{"class": type(error).__name__,
                          "is_repo_not_found": isinstance(error, RepositoryNotFoundError),
                          "is_oserror": isinstance(error, OSError)}}))
"""


@pytest.mark.parametrize("package", ["kernelhub", "kernels"])
def test_missing_repository_raises_huggingface_hubs_error(recording_hub, tmp_path, package):
    url, _agents = recording_hub
    result = run_python(MISSING_REPO.format(package=package),
                        {"HF_ENDPOINT": url, "HF_HUB_CACHE": str(tmp_path / "cache")})
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout.strip().splitlines()[-1])
    # A kernels user's `except RepositoryNotFoundError` catches ours as it catches kernels'.
    assert out["is_repo_not_found"], (package, out)
    assert out["is_oserror"]


def user_agent_names(agent: str) -> list:
    """The names of the fields from the caller's own onwards, in order, without the package's
    own (kernels/<v> there, kernelhub/<v> first of all here)."""
    agent = agent[agent.index("app/demo"):]
    names = [part.strip().partition("/")[0] for part in agent.split(";")]
    return [name for name in names if name not in ("kernels", "kernelhub")]


def user_agent_fields(agent: str) -> dict:
    """The fields from the caller's own (app/demo) onwards: what kernels adds to the agent
    huggingface_hub builds (which has a python/<x.y.z> of its own before them)."""
    fields = {}
    agent = agent[agent.index("app/demo"):] if "app/demo" in agent else agent
    for part in agent.split(";"):
        name, _, value = part.strip().partition("/")
        fields.setdefault(name, value)
    return fields


def test_user_agent_carries_the_callers_fields_like_kernels(recording_hub, tmp_path):
    url, agents = recording_hub
    env = {"HF_ENDPOINT": url, "HF_HUB_CACHE": str(tmp_path / "cache")}
    for package in ("kernels", "kernelhub"):
        agents.clear()
        result = run_python(MISSING_REPO.format(package=package), env)
        assert result.returncode == 0, result.stderr
        assert agents, f"{package} made no request"
        if package == "kernels":
            # kernels sends some requests (kernel-status.toml) without its user agent.
            tagged = [agent for agent in agents if "app/demo" in agent]
            assert tagged, agents
            reference = user_agent_fields(tagged[0])
            continue
        ours = user_agent_fields(agents[0])
        assert agents[0].startswith("kernelhub/"), agents[0]
    # Every request of ours carries the caller's field and the ones kernels adds.
    for agent in agents:
        assert "app/demo" in agent, agent
    names = ["app", "python", "backend", "platform", "file_type", "torch", "glibc"]
    if importlib.util.find_spec("tvm_ffi") is not None:
        # kernels adds tvm_ffi's version whenever it is installed (issue 21).
        names.insert(names.index("glibc"), "tvm-ffi")
    for name in names:
        assert name in reference, (name, reference)
        assert ours.get(name) == reference[name], (name, ours, reference)
    assert user_agent_names(agents[0]) == user_agent_names(tagged[0]) == names


def test_user_agent_drops_the_callers_fields_without_telemetry(recording_hub, tmp_path):
    url, agents = recording_hub
    result = run_python(MISSING_REPO.format(package="kernelhub"),
                        {"HF_ENDPOINT": url, "HF_HUB_CACHE": str(tmp_path / "cache"),
                         "HF_HUB_DISABLE_TELEMETRY": "1"})
    assert result.returncode == 0, result.stderr
    assert agents and all("app/demo" not in agent for agent in agents), agents


def test_user_agent_drops_the_callers_fields_when_huggingface_hub_disables_telemetry(
        recording_hub, tmp_path):
    # Code may turn telemetry off through huggingface_hub's setting rather than the
    # environment; kernels reads that setting, and so must we.
    url, agents = recording_hub
    script = ("import huggingface_hub.constants\n"
              "huggingface_hub.constants.HF_HUB_DISABLE_TELEMETRY = True\n"
              + textwrap.dedent(MISSING_REPO.format(package="kernelhub")))
    result = run_python(script, {"HF_ENDPOINT": url, "HF_HUB_CACHE": str(tmp_path / "cache")})
    assert result.returncode == 0, result.stderr
    assert agents and all("app/demo" not in agent for agent in agents), agents


METADATA_SCRIPT = """
    import json, sys
    from pathlib import Path
    package = __import__(sys.argv[1])
    path = Path(sys.argv[2])
    out = {}
    for name in sorted(p.name for p in path.iterdir()):
        try:
            m = package.Metadata.read_from_file(path / name)
        except ValueError as error:
            out[name] = {"error": type(error).__name__,
                         "prefix": str(error).startswith("Cannot parse metadata")}
            continue
        provenance = m.provenance
        out[name] = {
            "id": m.id, "name": str(m.name), "python_name": m.name.python_name,
            "version": m.version, "license": m.license, "upstream": m.upstream,
            "source": m.source, "python_depends": list(m.python_depends),
            "kernels_minver": None if m.kernels_minver is None else str(m.kernels_minver),
            "kernel_depends": [[d.repo_id, getattr(d.version, "version", None),
                                getattr(d.version, "revision", None)] for d in m.kernel_depends],
            "backend": str(m.backend.backend_type), "archs": m.backend.archs,
            "digest": None if m.digest is None else dict(m.digest.files),
            "dirty": None if provenance is None else provenance.dirty,
            "from_bytes_equal": package.Metadata.from_bytes((path / name).read_bytes()).id == m.id,
        }
    print(json.dumps(out, sort_keys=True))
"""

METADATA_CASES = {
    "full.json": {
        "name": "relu-fast", "id": "_relu_fast_cuda_abc1234", "version": 2,
        "license": "apache-2.0", "python-depends": ["einops"],
        "kernels-minver": "0.12.1",
        "kernel-depends": [{"repo-id": "org/base", "version": 1},
                           {"repo-id": "org/other", "revision": "main"}],
        "backend": {"type": "cuda", "archs": ["8.0", "9.0+PTX"]},
        "digest": {"algorithm": "sha256", "files": {"__init__.py": "AAAA"}},
        "provenance": {"kernel-builder": {"version": "0.5.0", "commit": "a" * 40,
                                          "dirty": False},
                       "kernel": {"commit": "b" * 40, "dirty": True}},
        "upstream": "https://github.com/org/relu", "source": "git@github.com:org/src.git",
    },
    "minimal.json": {"name": "relu", "id": "_relu_cpu_0000000", "version": 1,
                     "license": "mit", "python-depends": [], "backend": {"type": "cpu"}},
    "both-version-and-revision.json": {
        "name": "relu", "id": "_relu_cpu_0000000", "version": 1, "license": "mit",
        "python-depends": [], "backend": {"type": "cpu"},
        "kernel-depends": [{"repo-id": "org/base", "version": 1, "revision": "main"}]},
    "no-python-depends.json": {"name": "relu", "id": "_relu_cpu_0000000", "version": 1,
                               "license": "mit", "backend": {"type": "cpu"}},
    # kernels-minver is a version of exactly three numeric parts, else the file is rejected.
    **{f"minver-{label}.json": {"name": "relu", "id": "_relu_cpu_0000000", "version": 1,
                                "license": "mit", "python-depends": [],
                                "backend": {"type": "cpu"}, "kernels-minver": value}
       for label, value in [("two-parts", "0.12"), ("four-parts", "1.2.3.4"),
                            ("not-a-string", 5), ("letters", "v1.0.0"),
                            ("leading-zero", "01.2.30"), ("null", None)]},
}


def test_metadata_objects_match_kernels(tmp_path):
    for name, doc in METADATA_CASES.items():
        (tmp_path / name).write_text(json.dumps(doc))
    (tmp_path / "not-json.json").write_text("{")
    results = {}
    for package in ("kernels", "kernelhub"):
        result = subprocess.run([str(PYTHON), "-c", textwrap.dedent(METADATA_SCRIPT), package,
                                 str(tmp_path)], capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
        results[package] = json.loads(result.stdout)
    assert results["kernelhub"] == results["kernels"]
    # The comparison covered both accepted and rejected documents.
    assert "error" in results["kernels"]["both-version-and-revision.json"]
    assert results["kernels"]["full.json"]["dirty"] is True


VARIANTS_SCRIPT = """
    import json, sys
    from pathlib import Path
    import kernelhub, kernels
    out = {}
    for package in (kernelhub, kernels):
        entry = package.VariantRejected.__dataclass_fields__
        out[package.__name__] = sorted(entry)
    decision = kernelhub.get_local_kernel_variants(Path(sys.argv[1]), backend="cpu")[0]
    out["variant_str"] = decision.variant.variant_str
    out["arch"] = decision.variant.arch.variant_str
    out["framework"] = decision.variant.framework.variant_str
    print(json.dumps(out))
"""


def test_variant_decisions_hold_variant_objects(tmp_path):
    variant = tmp_path / "kernel" / "build" / "torch215-cxx11-cpu-x86_64-linux"
    variant.mkdir(parents=True)
    (variant / "metadata.json").write_text(json.dumps(METADATA_CASES["minimal.json"]))
    (variant / "__init__.py").write_text("")
    result = subprocess.run([str(PYTHON), "-c", textwrap.dedent(VARIANTS_SCRIPT),
                             str(tmp_path / "kernel")], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["kernelhub"] == out["kernels"]
    assert out["variant_str"] == "torch215-cxx11-cpu-x86_64-linux"
    assert out["framework"] == "torch215-cxx11"
    assert out["arch"] == "cpu-x86_64-linux"


READ_ERRORS_SCRIPT = """
    import json, sys
    from pathlib import Path
    package = __import__(sys.argv[1])
    out = {}
    for name in sys.argv[2:]:
        try:
            package.Metadata.read_from_file(Path(name))
            out[name] = "read"
        except Exception as error:
            out[name] = {"class": type(error).__name__,
                         "oserror": isinstance(error, OSError),
                         "valueerror": isinstance(error, ValueError),
                         "text": str(error)}
    print(json.dumps(out, sort_keys=True))
"""


def test_metadata_read_errors_match_kernels(tmp_path):
    """Issue 21: a file that cannot be opened is an OSError, as in kernels; a file that opens
    but cannot be read or parsed is a ValueError. The texts are the reference's."""
    missing = tmp_path / "missing" / "metadata.json"
    folder = tmp_path / "folder" / "metadata.json"
    folder.mkdir(parents=True)
    results = {}
    for package in ("kernels", "kernelhub"):
        result = subprocess.run([str(PYTHON), "-c", textwrap.dedent(READ_ERRORS_SCRIPT),
                                 package, str(missing), str(folder)],
                                capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
        results[package] = json.loads(result.stdout)
    assert results["kernelhub"] == results["kernels"]
    assert results["kernels"][str(missing)]["class"] == "OSError"
    assert results["kernels"][str(folder)]["class"] == "ValueError"


LOADED_KERNEL_SCRIPT = """
    import dataclasses, json, sys
    from pathlib import Path
    package = __import__(sys.argv[1])
    kernel = package.get_local_kernel(Path(sys.argv[2]), backend="cpu")
    [loaded] = [k for k in package.get_loaded_kernels() if k.module is kernel]
    fields = [[f.name, f.kw_only is True, f.default is dataclasses.MISSING, f.compare]
              for f in dataclasses.fields(package.LoadedKernel)]
    print(json.dumps({"fields": fields, "frozen": package.LoadedKernel.__dataclass_params__.frozen,
                      "set": [getattr(loaded, f.name) is not None
                              for f in dataclasses.fields(loaded)],
                      "positional": package.LoadedKernel(loaded.metadata, loaded.module,
                                                         None) == dataclasses.replace(
                                                             loaded, repo_info=None),
                      "repr_starts": repr(loaded).split("(")[0]}))
"""


def test_loaded_kernel_has_the_fields_of_kernels(tmp_path):
    """Issue 21: `LoadedKernel` is the reference's dataclass, field for field (ours once had two
    more); where a kernel came from is still there, as properties (variant_path, module_name)."""
    variant = tmp_path / "kernel" / "build" / "torch-universal"
    variant.mkdir(parents=True)
    (variant / "metadata.json").write_text(json.dumps(METADATA_CASES["minimal.json"]))
    (variant / "__init__.py").write_text("VALUE = 1\n")
    results = {}
    for package in ("kernels", "kernelhub"):
        result = subprocess.run([str(PYTHON), "-c", textwrap.dedent(LOADED_KERNEL_SCRIPT),
                                 package, str(tmp_path / "kernel")],
                                capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
        results[package] = json.loads(result.stdout)
    assert results["kernelhub"] == results["kernels"]
    assert [f[0] for f in results["kernels"]["fields"]] == ["metadata", "module", "repo_info"]
    extra = subprocess.run([str(PYTHON), "-c", textwrap.dedent("""
        import json, sys
        from pathlib import Path
        import kernelhub
        kernel = kernelhub.get_local_kernel(Path(sys.argv[1]), backend="cpu")
        [loaded] = kernelhub.get_loaded_kernels()
        print(json.dumps([str(loaded.variant_path), loaded.module_name, kernel.__name__]))
    """), str(tmp_path / "kernel")], capture_output=True, text=True, timeout=120)
    assert extra.returncode == 0, extra.stderr
    path, module_name, name = json.loads(extra.stdout)
    assert path == str(variant) and module_name == name == "_relu_cpu_0000000"
