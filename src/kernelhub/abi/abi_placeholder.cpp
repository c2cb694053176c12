// SPDX-License-Identifier: Apache-2.0
// Placeholder so the layer links before its first real source lands; delete it then.
