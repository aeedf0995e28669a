"""Exceptions for gpuu's status codes: one class per gpuu_status, all under GpuuError.

The SWIG layer raises them straight from a failing C call, with the message of
gpuu_last_error() read on the same thread. Codes and their names come from the
C ABI (the GPUU_ERROR_* constants, gpuu_status_string), never from copies here.
"""

from __future__ import annotations

from typing import Any, Dict, Type

from . import gpuu_c as _c


class GpuuError(Exception):
    """A gpuu call failed. `status` is the gpuu_status code, `message` the C message."""

    status: int = -1
    status_name: str = "error"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # A class naming its status takes that status's name from C: "invalid argument", ...
        super().__init_subclass__(**kwargs)
        if "status" in cls.__dict__:
            cls.status_name = _c.gpuu_status_string(cls.status)

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status


class InvalidArgumentError(GpuuError, ValueError):
    """GPUU_ERROR_INVALID_ARGUMENT: a bad value, key, shape or handle."""

    status = _c.GPUU_ERROR_INVALID_ARGUMENT


class NotFoundError(GpuuError, LookupError):
    """GPUU_ERROR_NOT_FOUND: e.g. lookup_only found no context under the key."""

    status = _c.GPUU_ERROR_NOT_FOUND


class AlreadyExistsError(GpuuError):
    """GPUU_ERROR_ALREADY_EXISTS: e.g. create_only found a context under the key."""

    status = _c.GPUU_ERROR_ALREADY_EXISTS


class UnsupportedError(GpuuError):
    """GPUU_ERROR_UNSUPPORTED: the device or build lacks a required feature."""

    status = _c.GPUU_ERROR_UNSUPPORTED


class InvalidFormatError(GpuuError):
    """GPUU_ERROR_INVALID_FORMAT: a corrupt or inconsistent file or blob."""

    status = _c.GPUU_ERROR_INVALID_FORMAT


class IoError(GpuuError):
    """GPUU_ERROR_IO: a file could not be read or written."""

    status = _c.GPUU_ERROR_IO


class OutOfMemoryError(GpuuError, MemoryError):
    """GPUU_ERROR_OUT_OF_MEMORY: host or device memory ran out."""

    status = _c.GPUU_ERROR_OUT_OF_MEMORY


class VulkanError(GpuuError):
    """GPUU_ERROR_VULKAN: a Vulkan call failed; the message names it."""

    status = _c.GPUU_ERROR_VULKAN


class DeviceLostError(VulkanError):
    """GPUU_ERROR_DEVICE_LOST: VK_ERROR_DEVICE_LOST."""

    status = _c.GPUU_ERROR_DEVICE_LOST


class FailedPreconditionError(GpuuError):
    """GPUU_ERROR_FAILED_PRECONDITION: the call is not valid in the object's state."""

    status = _c.GPUU_ERROR_FAILED_PRECONDITION


class InternalError(GpuuError):
    """GPUU_ERROR_INTERNAL: a bug in gpuu."""

    status = _c.GPUU_ERROR_INTERNAL


ERROR_CLASSES: Dict[int, Type[GpuuError]] = {
    cls.status: cls
    for cls in (
        InvalidArgumentError,
        NotFoundError,
        AlreadyExistsError,
        UnsupportedError,
        InvalidFormatError,
        IoError,
        OutOfMemoryError,
        VulkanError,
        DeviceLostError,
        FailedPreconditionError,
        InternalError,
    )
}


def error_class(status: int) -> Type[GpuuError]:
    """The exception class raised for `status` (GpuuError for unknown codes)."""
    return ERROR_CLASSES.get(status, GpuuError)
