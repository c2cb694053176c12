# SPDX-License-Identifier: Apache-2.0
"""`kernels.install`: `install_kernel` is `kernelhub.install_kernel`."""
from kernelhub import install_kernel

__all__ = ["install_kernel"]
