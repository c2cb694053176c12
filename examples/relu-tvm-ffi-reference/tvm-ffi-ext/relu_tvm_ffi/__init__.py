# SPDX-License-Identifier: Apache-2.0
"""relu_tvm_ffi: relu over any DLPack array (torch tensors, NumPy arrays), exported through
tvm-ffi, with a JAX binding where jax and jax_tvm_ffi are installed.

`has_jax` comes from the generated `_ops` (an availability check), so the jax imports below
are optional: a user without JAX gets everything but `relu_jax`.
"""
import tvm_ffi

from ._ops import has_jax, jax_add_ffi_target_name_prefix, ops

# The exported function of each device type tvm-ffi reports.
_FUNCTIONS = {"cpu": "relu_cpu", "cuda": "relu_cuda", "oneapi": "relu_xpu"}


def relu(x, out):
    """Writes max(x, 0) into `out` (float32, the size and device of `x`) and returns `out`."""
    source = tvm_ffi.from_dlpack(x)
    target = tvm_ffi.from_dlpack(out)
    name = _FUNCTIONS.get(source.device.type)
    function = getattr(ops, name, None) if name else None
    if function is None:
        raise NotImplementedError(
            f"this relu_tvm_ffi build has no implementation for {source.device.type}")
    function(target, source)
    return out


def _native_function():
    """The implementation this variant was built with (one backend per variant)."""
    for name in _FUNCTIONS.values():
        function = getattr(ops, name, None)
        if function is not None:
            return name, function
    return None, None


if has_jax:
    # JAX calls the same native function through its FFI, registered under this build's name.
    from jax_tvm_ffi import register_ffi_target

    _name, _function = _native_function()
    if _function is not None:
        register_ffi_target(jax_add_ffi_target_name_prefix("relu"), _function,
                            arg_spec=["rets", "args"],
                            platform="cpu" if _name == "relu_cpu" else "gpu")


def relu_jax(x):
    """relu of a JAX array through the registered FFI target; needs jax and jax_tvm_ffi."""
    if not has_jax:
        raise RuntimeError("relu_jax needs jax and jax_tvm_ffi, which are not installed")
    import jax

    call = jax.ffi.ffi_call(jax_add_ffi_target_name_prefix("relu"),
                            jax.ShapeDtypeStruct(x.shape, x.dtype),
                            vmap_method="broadcast_all")
    return call(x)


from . import layers  # noqa: E402  (layers uses relu, defined above)

__all__ = ["layers", "relu", "relu_jax"]
