# SPDX-License-Identifier: Apache-2.0
"""The mechanical rewrite of the reference's tests from `kernels` to kernelhub.

Every `kernels` module a test imports, and every dotted `"kernels...."` string it hands to
monkeypatch or to a logger, is mapped by one table: a public module to kernelhub's module of
the same name (`kernels` -> `kernelhub`, `kernels._rust` -> `kernelhub.data`, the layer
modules), a private module of the reference to the driver's adapter of that name
(`refsuite_adapters.*`, tests/refsuite/refsuite_adapters/, each adapter saying which kernelhub
function answers each name). A module the table does not name is an error, so a new import in
the reference's tests cannot slip through unmapped. Nothing else in a test changes.
"""
from __future__ import annotations

import re
from pathlib import Path

ADAPTERS = "refsuite_adapters"

# reference module -> module the kernelhub run imports instead
MODULES = {
    "kernels": "kernelhub",
    "kernels._rust": "kernelhub.data",
    "kernels.layer": "kernelhub.layer",
    "kernels.layer.layer": "kernelhub.layer.layer",
    "kernels.layer.func": "kernelhub.layer.func",
    "kernels.verify": "kernelhub.verify",
    "kernels.deps": f"{ADAPTERS}.deps",
    "kernels._versions": f"{ADAPTERS}._versions",
    "kernels.archs": f"{ADAPTERS}.archs",
    "kernels.backends": f"{ADAPTERS}.backends",
    "kernels.cli": f"{ADAPTERS}.cli",
    "kernels.cli.info": f"{ADAPTERS}.cli_info",
    "kernels.hf_hub": f"{ADAPTERS}.hf_hub",
    "kernels.importer": f"{ADAPTERS}.importer",
    "kernels.install": f"{ADAPTERS}.install",
    "kernels.layer._interval_tree": f"{ADAPTERS}.interval_tree",
    "kernels.load": f"{ADAPTERS}.load",
    "kernels.resolver": f"{ADAPTERS}.resolver",
    "kernels.status": f"{ADAPTERS}.status",
    "kernels.validate": f"{ADAPTERS}.validate",
    "kernels.variants": f"{ADAPTERS}.variants",
    # the kernels-data package's own tests
    "kernels_data": "kernelhub.data",
}

# Loggers: kernelhub logs under the reference's names with `kernelhub` for `kernels`.
LOGGERS = {
    "kernels._versions": "kernelhub._versions",
    "kernels.layer.layer": "kernelhub.layer.layer",
    "kernels.layer.kernelize": "kernelhub.layer.kernelize",
    "kernels.layer.func": "kernelhub.layer.func",
    "kernels.validate": "kernelhub.validate",
}

# Distribution names (importlib.metadata.distribution("kernels")).
DISTRIBUTIONS = {"kernels": "kernelhub"}

# The reference's own version, where a test reads or patches it, is the `kernels` release
# kernelhub matches: `compat_version` (what kernelhub checks kernels-minver against).
_VERSION_ATTRIBUTE = re.compile(r"\bkernels\.__version__\b")
_VERSION_SETATTR = re.compile(r"""(setattr\(\s*kernels\s*,\s*)(["'])__version__\2""")
# The User-Agent's product token: `kernels/<version>` is `kernelhub/<version>`.
_PRODUCT_TOKEN = re.compile(r"""(["'])kernels/\1""")


def mechanical(module: str) -> str:
    """The plain rename (`kernels.x` -> `kernelhub.x`) of the driver's --mechanical run, which
    measures what a bare change of the import gives. `kernels._rust` (the kernels-data types,
    of which `kernels` re-exports `Metadata`) goes to `kernelhub`, where our `Metadata` was
    before `kernelhub.data`."""
    if module in ("kernels_data", "kernels._rust"):
        return "kernelhub"
    return "kernelhub" + module[len("kernels"):]


_FROM = re.compile(r"^(\s*from\s+)(kernels(?:_data)?(?:\.\w+)*)(\s+import\b)", re.M)
_IMPORT = re.compile(r"^(\s*import\s+)(kernels(?:_data)?(?:\.\w+)*)(\s+as\s+\w+)?\s*$", re.M)
_LOGGER = re.compile(r"""(logger\s*=\s*)(["'])(kernels(?:\.\w+)*)\2""")
_DISTRIBUTION = re.compile(r"""(distribution\(\s*)(["'])(kernels)\2""")
# monkeypatch.setattr("kernels.layer.layer.get_kernel", ...); other strings ("kernels.lock",
# "kernels-community/relu") are data and stay
_DOTTED = re.compile(r"""(setattr\(\s*)(["'])(kernels(?:\.\w+)+)\2""")


class Unmapped(Exception):
    pass


class Rewriter:
    def __init__(self, *, use_adapters: bool = True):
        self.use_adapters = use_adapters

    def module(self, name: str) -> str:
        if not self.use_adapters:
            return mechanical(name)
        if name not in MODULES:
            raise Unmapped(f"the reference's tests import {name!r}, which rewrite.MODULES does "
                           "not map")
        return MODULES[name]

    def dotted(self, target: str) -> str:
        """A monkeypatch target ("kernels.layer.layer.get_kernel"): its longest module prefix
        mapped, the attribute path kept."""
        parts = target.split(".")
        for end in range(len(parts), 0, -1):
            prefix = ".".join(parts[:end])
            if prefix in MODULES or (not self.use_adapters and end == len(parts)):
                return ".".join([self.module(prefix)] + parts[end:])
        raise Unmapped(f"no module of {target!r} is mapped")

    def source(self, text: str) -> str:
        def from_(m):
            return m.group(1) + self.module(m.group(2)) + m.group(3)

        def import_(m):
            alias = m.group(3)
            if alias is None and "." in m.group(2):
                raise Unmapped(f"`import {m.group(2)}` without an alias")
            return m.group(1) + self.module(m.group(2)) + (alias or f" as {m.group(2)}")

        def logger(m):
            name = m.group(3)
            mapped = LOGGERS.get(name, mechanical(name)) if self.use_adapters else mechanical(name)
            return f"{m.group(1)}{m.group(2)}{mapped}{m.group(2)}"

        def distribution(m):
            return f"{m.group(1)}{m.group(2)}{DISTRIBUTIONS[m.group(3)]}{m.group(2)}"

        text = _FROM.sub(from_, text)
        text = _IMPORT.sub(import_, text)
        text = _LOGGER.sub(logger, text)
        text = _DISTRIBUTION.sub(distribution, text)
        if self.use_adapters:
            text = _VERSION_ATTRIBUTE.sub("kernels.compat_version", text)
            text = _VERSION_SETATTR.sub(lambda m: f"{m.group(1)}{m.group(2)}compat_version"
                                                  f"{m.group(2)}", text)
            text = _PRODUCT_TOKEN.sub(lambda m: f"{m.group(1)}kernelhub/{m.group(1)}", text)
        return _DOTTED.sub(lambda m: m.group(1) + m.group(2) + self.dotted(m.group(3)) + m.group(2),
                           text)

    def tree(self, folder: Path) -> None:
        """Rewrites every .py file under `folder` in place. The conftest.py files always get
        the adapters: without its `kernels.backends` no test of the suite runs at all."""
        for path in sorted(folder.rglob("*.py")):
            rewriter = self if path.name != "conftest.py" else _ConftestRewriter(self)
            path.write_text(rewriter.source(path.read_text()))


class _ConftestRewriter(Rewriter):
    def __init__(self, outer: Rewriter):
        super().__init__(use_adapters=outer.use_adapters)
        self.outer = outer

    def module(self, name: str) -> str:
        if name == "kernels.backends":
            return MODULES[name]
        return self.outer.module(name)
