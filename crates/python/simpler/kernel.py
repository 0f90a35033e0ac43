"""``KernelContext``: what a Python kernel sees, with its tensors as NumPy arrays.

    def scale(ctx):
        x = ctx.read(0)                      # a NumPy array of argument 0's view
        ctx.write(1, x * ctx.scalar_f32(0))  # argument 1's view, from an array of its shape

    w.register_kernel(20, "scale", scale)    # core="aiv" (the default) or "aic"

A Python kernel runs on a scheduler thread with the GIL held, once per SPMD block
(``ctx.block_idx`` of ``ctx.block_num``). The blocks of one task run concurrently: each writes
only its own part of an output, ``ctx.write(i, values, offset=lo)`` (a whole-view write would
overwrite the other blocks' parts). An exception fails the task with KERNEL_FAILED (104), its
text and location, and is the run's ``FatalError.__cause__``; the kernel's return must be
``None``. Its cost is the Python call and the copies in and out (``docs/python.md``).
"""

import operator
from typing import Optional

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

    @property
    def kernel(self) -> str:
        """The kernel's name and func id (``halve (func_id 21)``)."""
        return self._native.kernel

    def block_range(self, i: int):
        """``(lo, hi)``: this block's equal share of tensor argument ``i``'s elements (flat,
        row-major), the last block taking the remainder; write it with
        ``ctx.write(i, values, offset=lo)``."""
        n = self._native.tensor(i).numel
        part = n // self.block_num
        lo = self.block_idx * part
        hi = n if self.block_idx == self.block_num - 1 else lo + part
        return lo, hi

    def read(self, i: int) -> np.ndarray:
        """Tensor argument ``i``'s elements as a new NumPy array of its view's shape."""
        __tracebackhide__ = True
        from .worker import numpy_dtype

        t = self._native.tensor(i)
        dt = numpy_dtype(t)
        return np.frombuffer(self._native.read_bytes(i), dtype=dt.newbyteorder("<")).astype(dt).reshape(t.shape)

    def write(self, i: int, values, offset: Optional[int] = None) -> None:
        """Writes tensor argument ``i`` (values cast to its dtype).

        Without ``offset``, the whole view, from an array of its shape. With ``offset``, only
        the elements ``offset .. offset + values.size`` of the view in flat row-major order,
        from ``values`` flattened (any shape): what a block of an SPMD task writes, since the
        blocks run concurrently and each must write only its own range
        (``lo, hi = ctx.block_range(i)``). A range past the view's end is a ``TensorError``
        that names the kernel and the argument."""
        __tracebackhide__ = True
        from .worker import numpy_dtype

        t = self._native.tensor(i)
        dt = numpy_dtype(t)
        array = np.asarray(values)
        if offset is not None:
            flat = np.ascontiguousarray(array.reshape(-1), dtype=dt.newbyteorder("<"))
            self._native.write_range(i, operator.index(offset), flat.tobytes())
            return
        if tuple(array.shape) != tuple(t.shape):
            from ._native import TensorError

            raise TensorError(
                f"kernel {self.kernel}: array shape {tuple(array.shape)} does not match the view's {t.shape} "
                f"(argument {i}); write a part with ctx.write({i}, values, offset=lo)"
            )
        self._native.write_bytes(i, np.ascontiguousarray(array, dtype=dt.newbyteorder("<")).tobytes())
