"""Exceptions for gpuu's status codes: one class per gpuu_status, all under GpuuError.

The SWIG layer raises them straight from a failing C call, with the message of
gpuu_last_error() read on the same thread.
"""

from __future__ import annotations

from typing import Dict, Type


class GpuuError(Exception):
    """A gpuu call failed. `status` is the gpuu_status code, `message` the C message."""

    status: int = -1
    status_name: str = "error"

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status


class InvalidArgumentError(GpuuError, ValueError):
    """GPUU_ERROR_INVALID_ARGUMENT: a bad value, key, shape or handle."""

    status, status_name = 1, "invalid argument"


class NotFoundError(GpuuError, LookupError):
    """GPUU_ERROR_NOT_FOUND: e.g. lookup_only found no context under the key."""

    status, status_name = 2, "not found"


class AlreadyExistsError(GpuuError):
    """GPUU_ERROR_ALREADY_EXISTS: e.g. create_only found a context under the key."""

    status, status_name = 3, "already exists"


class UnsupportedError(GpuuError):
    """GPUU_ERROR_UNSUPPORTED: the device or build lacks a required feature."""

    status, status_name = 4, "unsupported"


class InvalidFormatError(GpuuError):
    """GPUU_ERROR_INVALID_FORMAT: a corrupt or inconsistent file or blob."""

    status, status_name = 5, "invalid format"


class IoError(GpuuError):
    """GPUU_ERROR_IO: a file could not be read or written."""

    status, status_name = 6, "i/o error"


class OutOfMemoryError(GpuuError, MemoryError):
    """GPUU_ERROR_OUT_OF_MEMORY: host or device memory ran out."""

    status, status_name = 7, "out of memory"


class VulkanError(GpuuError):
    """GPUU_ERROR_VULKAN: a Vulkan call failed; the message names it."""

    status, status_name = 8, "vulkan error"


class DeviceLostError(VulkanError):
    """GPUU_ERROR_DEVICE_LOST: VK_ERROR_DEVICE_LOST."""

    status, status_name = 9, "device lost"


class FailedPreconditionError(GpuuError):
    """GPUU_ERROR_FAILED_PRECONDITION: the call is not valid in the object's state."""

    status, status_name = 10, "failed precondition"


class InternalError(GpuuError):
    """GPUU_ERROR_INTERNAL: a bug in gpuu."""

    status, status_name = 11, "internal error"


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
