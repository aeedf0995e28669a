"""Exceptions for gpuu's status codes: one class per gpuu_status, all under GpuuError.

The SWIG layer raises them straight from a failing C call, with the message of
gpuu_last_error() read on the same thread. Codes and their names come from the
C ABI (the GPUU_ERROR_* constants, gpuu_status_string), never from copies here.
"""

from __future__ import annotations

from typing import Any, Dict, Type

from . import gpuu_c as _c


# Every class made with status=...: each gpuu_status code names its one class.
ERROR_CLASSES: Dict[int, Type[GpuuError]] = {}


class GpuuError(Exception):
    """A gpuu call failed. `status` is the gpuu_status code, `message` the C message."""

    status: int = -1
    status_name: str = "error"

    def __init_subclass__(cls, status: int | None = None, **kwargs: Any) -> None:
        # A class naming its status takes that status's name from C ("invalid argument", ...)
        # and is the class raised for it.
        super().__init_subclass__(**kwargs)
        if status is not None:
            cls.status = status
            cls.status_name = _c.gpuu_status_string(status)
            ERROR_CLASSES[status] = cls

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status


class InvalidArgumentError(GpuuError, ValueError, status=_c.GPUU_ERROR_INVALID_ARGUMENT):
    """GPUU_ERROR_INVALID_ARGUMENT: a bad value, key, shape or handle."""


class NotFoundError(GpuuError, LookupError, status=_c.GPUU_ERROR_NOT_FOUND):
    """GPUU_ERROR_NOT_FOUND: e.g. lookup_only found no context under the key."""


class AlreadyExistsError(GpuuError, status=_c.GPUU_ERROR_ALREADY_EXISTS):
    """GPUU_ERROR_ALREADY_EXISTS: e.g. create_only found a context under the key."""


class UnsupportedError(GpuuError, status=_c.GPUU_ERROR_UNSUPPORTED):
    """GPUU_ERROR_UNSUPPORTED: the device or build lacks a required feature."""


class InvalidFormatError(GpuuError, status=_c.GPUU_ERROR_INVALID_FORMAT):
    """GPUU_ERROR_INVALID_FORMAT: a corrupt or inconsistent file or blob."""


class IoError(GpuuError, status=_c.GPUU_ERROR_IO):
    """GPUU_ERROR_IO: a file could not be read or written."""


class OutOfMemoryError(GpuuError, MemoryError, status=_c.GPUU_ERROR_OUT_OF_MEMORY):
    """GPUU_ERROR_OUT_OF_MEMORY: host or device memory ran out."""


class VulkanError(GpuuError, status=_c.GPUU_ERROR_VULKAN):
    """GPUU_ERROR_VULKAN: a Vulkan call failed; the message names it."""


class DeviceLostError(VulkanError, status=_c.GPUU_ERROR_DEVICE_LOST):
    """GPUU_ERROR_DEVICE_LOST: VK_ERROR_DEVICE_LOST."""


class FailedPreconditionError(GpuuError, status=_c.GPUU_ERROR_FAILED_PRECONDITION):
    """GPUU_ERROR_FAILED_PRECONDITION: the call is not valid in the object's state."""


class InternalError(GpuuError, status=_c.GPUU_ERROR_INTERNAL):
    """GPUU_ERROR_INTERNAL: a bug in gpuu."""


def error_class(status: int) -> Type[GpuuError]:
    """The exception class raised for `status` (GpuuError for unknown codes)."""
    return ERROR_CLASSES.get(status, GpuuError)
