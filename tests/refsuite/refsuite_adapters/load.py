# SPDX-License-Identifier: Apache-2.0
"""`kernels.load`: the loaders, which are kernelhub's public functions of the same names."""
from kernelhub import (get_kernel, get_local_kernel, get_locked_kernel, has_kernel,
                       load_kernel)

__all__ = ["get_kernel", "get_local_kernel", "get_locked_kernel", "has_kernel", "load_kernel"]
