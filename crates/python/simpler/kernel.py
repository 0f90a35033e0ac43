"""``KernelContext``: what a Python kernel sees, with its tensors as NumPy arrays.

    def scale(ctx):
        x = ctx.read(0)                      # a NumPy array of argument 0's view
        ctx.write(1, x * ctx.scalar_f32(0))  # argument 1's view, from an array of its shape

    w.register_kernel(20, "scale", scale)    # core="aiv" (the default) or "aic"

A Python kernel runs on a scheduler thread with the GIL held, once per SPMD block
(``ctx.block_idx`` of ``ctx.block_num``); an exception fails the task with KERNEL_FAILED (104)
and its text. Its cost is the Python call and the copies in and out (``docs/python.md``).
"""

import numpy as np

from ._native import Tensor


class KernelContext:
    """A kernel's arguments for one block; valid only during the call."""

    def __init__(self, native):
        self._native = native

    @property
    def block_idx(self) -> int:
        """This block's index in ``0..block_num``."""
        return self._native.block_idx

    @property
    def block_num(self) -> int:
        """The task's SPMD block count."""
        return self._native.block_num

    @property
    def tensor_count(self) -> int:
        """Number of tensor arguments."""
        return self._native.tensor_count

    @property
    def scalar_count(self) -> int:
        """Number of scalar arguments."""
        return self._native.scalar_count

    def tensor(self, i: int) -> Tensor:
        """Tensor argument ``i``'s view (shape, strides, dtype)."""
        return self._native.tensor(i)

    def scalar(self, i: int) -> int:
        """Scalar argument ``i``, its raw 64 bits."""
        return self._native.scalar(i)

    def scalar_f32(self, i: int) -> float:
        """Scalar argument ``i`` as an f32 (its low 32 bits)."""
        return self._native.scalar_f32(i)

    def read(self, i: int) -> np.ndarray:
        """Tensor argument ``i``'s elements as a new NumPy array of its view's shape."""
        from .worker import numpy_dtype

        t = self._native.tensor(i)
        dt = numpy_dtype(t)
        return np.frombuffer(self._native.read_bytes(i), dtype=dt.newbyteorder("<")).astype(dt).reshape(t.shape)

    def write(self, i: int, array) -> None:
        """Writes ``array`` (the view's shape; cast to its dtype) into tensor argument ``i``."""
        from .worker import numpy_dtype

        t = self._native.tensor(i)
        dt = numpy_dtype(t)
        array = np.asarray(array)
        if tuple(array.shape) != tuple(t.shape):
            from ._native import TensorError

            raise TensorError(f"array shape {tuple(array.shape)} does not match the view's {t.shape}")
        self._native.write_bytes(i, np.ascontiguousarray(array, dtype=dt.newbyteorder("<")).tobytes())
