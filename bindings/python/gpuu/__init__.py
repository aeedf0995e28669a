"""gpuu for Python: export a PyTorch model to one program split between VGF, Vulkan and the CPU, and run it.

Stable API:
  gpuu.export(module, example_inputs, spec, path) -> explain report (dict)
  gpuu.export_vgf(module, example_inputs, spec, out_dir) -> paths of standalone .vgf files
  gpuu.quantize(module, example_inputs, calibration_data, scheme="a8w8") -> a PT2E-quantized module to export
  gpuu.load(path, token=, group_id=, mode=, sync_mode=, device=) -> LoadedProgram; .run(arrays) -> arrays
  gpuu.make_shared_gpu_compile_specs(...), gpuu.UnifiedGpuCompileSpec, gpuu.VgfCompileSpec,
  gpuu.UnifiedGpuPartitioner, gpuu.frontend.from_torch, and the GpuuError family.
The low-level SWIG module over gpuu.h is gpuu.gpuu_c.
"""

from . import gpuu_c as _c
from .errors import (ERROR_CLASSES, AlreadyExistsError, DeviceLostError, FailedPreconditionError, GpuuError,
                     InternalError, InvalidArgumentError, InvalidFormatError, IoError, NotFoundError,
                     OutOfMemoryError, UnsupportedError, VulkanError, error_class)

# Failing C calls raise these from inside the extension from now on.
_c.gpuu_py_set_error_classes(dict(ERROR_CLASSES))

from .core import (BACKEND_CPU, BACKEND_VGF, BACKEND_VULKAN, Context, ExecuteStats, Graph, Partition,  # noqa: E402
                   Program, Region, Session, TensorInfo, enumerate_devices, op_names, set_log_callback, version)
from .export_api import (GPU_SHARED_CONTEXT_MODE, GPU_SHARED_CONTEXT_TOKEN, GPU_SHARED_GROUP_ID,  # noqa: E402
                         GPU_SHARED_MIN_PARTITION_SIZE, GPU_SHARED_PREFER, GPU_SHARED_SYNC_MODE, CompileSpec,
                         PartitionResult, SharedGpuSpec, UnifiedGpuCompileSpec, UnifiedGpuPartitioner,
                         VgfCompileSpec, export, export_vgf, make_shared_gpu_compile_specs,
                         parse_shared_compile_specs)
from .plugins import BackendInfo, list_backends, load_plugins  # noqa: E402
from .runtime import LoadedProgram, load  # noqa: E402
from .standalone_vgf import LoadedVgf, load_vgf  # noqa: E402

__version__ = version()


def _restore_default_logger() -> None:
    # A Python log callback must not outlive the interpreter.
    try:
        _c.gpuu_py_set_log_callback(None, _c.GPUU_LOG_WARN)
    except Exception:
        pass


import atexit as _atexit  # noqa: E402

_atexit.register(_restore_default_logger)

__all__ = [
    "AlreadyExistsError", "BACKEND_CPU", "BackendInfo", "BACKEND_VGF", "BACKEND_VULKAN", "CompileSpec", "Context",
    "DeviceLostError", "ExecuteStats", "FailedPreconditionError", "GPU_SHARED_CONTEXT_MODE",
    "GPU_SHARED_CONTEXT_TOKEN", "GPU_SHARED_GROUP_ID", "GPU_SHARED_MIN_PARTITION_SIZE", "GPU_SHARED_PREFER",
    "GPU_SHARED_SYNC_MODE", "GpuuError", "Graph", "InternalError", "InvalidArgumentError", "InvalidFormatError",
    "IoError", "LoadedProgram", "NotFoundError", "OutOfMemoryError", "Partition", "PartitionResult", "Program",
    "Region", "Session", "SharedGpuSpec", "TensorInfo", "UnifiedGpuCompileSpec", "UnifiedGpuPartitioner",
    "UnsupportedError", "VgfCompileSpec", "VulkanError", "enumerate_devices", "error_class", "export", "export_vgf",
    "list_backends", "load", "load_plugins", "load_vgf", "LoadedVgf",
    "make_shared_gpu_compile_specs", "op_names", "parse_shared_compile_specs", "quantize", "set_log_callback",
    "version",
]


def __getattr__(name: str):
    # gpuu.frontend imports torch (seconds): only when first used, so running programs stays light.
    if name in ("frontend", "quantize"):
        import importlib

        if name == "quantize":
            return importlib.import_module(".quantizer", __name__).quantize
        return importlib.import_module(".frontend", __name__)
    raise AttributeError(f"module 'gpuu' has no attribute {name!r}")
