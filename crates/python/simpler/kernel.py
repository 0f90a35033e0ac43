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

    def _check_fits(self, i: int, array: np.ndarray, dt: np.dtype, how: str) -> None:
        """Refuses values an integer view cannot hold (found by a review: NumPy's cast wrapped
        them: 1e10 and NaN into int32 both became -2147483648, where the
        built-in kernels saturate): a ``TensorError`` that names the first such value."""
        if dt.kind not in "iu" or array.dtype.kind not in "fiu" or array.size == 0:
            return
        info = np.iinfo(dt)
        if array.dtype.kind == "f":
            bad = ~np.isfinite(array) | (array < info.min) | (array >= float(info.max) + 1)
        else:
            bad = (array < info.min) | (array > info.max)
        if not bad.any():
            return
        from ._native import TensorError

        first = array[bad].reshape(-1)[0].item()
        raise TensorError(
            f"kernel {self.kernel}: ctx.write({i}, values{how}) of argument {i}: value {first!r} does not "
            f"fit the view's {dt.name} ({info.min} to {info.max}); clip or round it first"
        )

    def write(self, i: int, values, offset: Optional[int] = None) -> None:
        """Writes tensor argument ``i`` (values cast to its dtype).

        Without ``offset``, the whole view, from an array of its shape. With ``offset``, only
        the elements ``offset .. offset + values.size`` of the view in flat row-major order,
        from ``values`` flattened (any shape): what a block of an SPMD task writes, since the
        blocks run concurrently and each must write only its own range
        (``lo, hi = ctx.block_range(i)``). A range past the view's end, or a value an integer
        view cannot hold (NaN, 1e10 into int32), is a ``TensorError`` that names the kernel
        and the argument."""
        __tracebackhide__ = True
        from .worker import numpy_dtype

        t = self._native.tensor(i)
        dt = numpy_dtype(t)
        array = np.asarray(values)
        self._check_fits(i, array, dt, "" if offset is None else f", offset={offset}")
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
