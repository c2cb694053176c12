# SPDX-License-Identifier: Apache-2.0
"""Adapters: the reference's private modules (`kernels.variants`, `kernels.resolver`,
`kernels.validate`, ...) as the reference's tests import them, answered by kernelhub.

kernelhub does not copy the reference's private layout; its answers live in its C++ core
(reached through `kernelhub._kernelhub`) and its own modules. Each adapter module maps the
names the tests use onto those, and says per name which kernelhub function answers it. No
adapter imports the reference package.
"""
