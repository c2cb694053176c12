"""`get_kernel_dep` from whichever loader is importing this kernel.

kernelhub and the reference `kernels` each expose the dependencies of the kernel they are
loading through their own `get_kernel_dep`; outside a load it raises RuntimeError. Both may be
installed, so each is asked in turn and the first that is loading us answers. The imports sit
in `try` blocks: a user needs only one of the two loaders.
"""
from types import ModuleType


def _loaders():
    found = []
    try:
        from kernelhub import get_kernel_dep as kernelhub_dep
        found.append(("kernelhub", kernelhub_dep))
    except ImportError:
        pass
    try:
        from kernels import get_kernel_dep as kernels_dep
        found.append(("kernels", kernels_dep))
    except ImportError:
        pass
    return found


def kernel_dependency(repo_id: str) -> ModuleType:
    """The module of `repo_id`, a kernel-depends entry of this kernel, during its import."""
    failures = []
    for name, get_kernel_dep in _loaders():
        try:
            return get_kernel_dep(repo_id)
        except RuntimeError as error:
            failures.append(f"{name}: {error}")
    if not failures:
        raise RuntimeError(f"cannot get kernel dependency '{repo_id}': neither kernelhub nor "
                           "kernels (which load kernels) is installed")
    raise RuntimeError(f"cannot get kernel dependency '{repo_id}': " + "; ".join(failures))
