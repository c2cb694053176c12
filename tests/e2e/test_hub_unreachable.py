# SPDX-License-Identifier: Apache-2.0
"""Issue 22 §9: `get_kernel` with no Hub to reach took 19 s (a refused connection was backed
off 1+2+4+8 s like a 503) and then said "could not verify publisher trust status" or "Couldn't
connect to server". A refused connection now fails at the first try, saying that the Hub at
HF_ENDPOINT could not be reached (the retry of 5xx answers is unit-tested in test_hub_client).
Only loopback: HF_ENDPOINT names a 127.0.0.1 port nothing listens on."""
import os
import socket
import subprocess

from conftest import VENV_BIN

PYTHON = VENV_BIN / "python"


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def load(tmp_path, endpoint, trust):
    script = (
        "import kernelhub\n"
        "try:\n"
        f"    kernelhub.get_kernel('acme/x', version=1, trust_remote_code={trust})\n"
        "except Exception as exc:\n"
        "    print(type(exc).__name__, exc)\n")
    env = dict(os.environ, HF_ENDPOINT=endpoint, HF_HOME=str(tmp_path / "home"),
               NO_PROXY="127.0.0.1,localhost")
    env.pop("HF_HUB_OFFLINE", None)
    return subprocess.run([str(PYTHON), "-c", script], env=env, capture_output=True, text=True,
                          timeout=300, check=True).stdout


def test_an_unreachable_hub_is_named_by_the_publisher_check(tmp_path):
    endpoint = f"http://127.0.0.1:{closed_port()}"
    out = load(tmp_path, endpoint, trust=False)
    assert out.startswith("ValueError Kernel repository 'acme/x' could not verify publisher "
                          f"trust status (cannot reach the Hub at {endpoint} ("), out
    assert "set HF_HUB_OFFLINE=1 to use only what is cached" in out


def test_an_unreachable_hub_is_named_when_loading(tmp_path):
    endpoint = f"http://127.0.0.1:{closed_port()}"
    out = load(tmp_path, endpoint, trust=True)
    assert f"cannot reach the Hub at {endpoint} (GET {endpoint}/api/kernels/acme/x/refs" in out, out
