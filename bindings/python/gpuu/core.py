"""Pythonic handles over the low-level bindings: Graph, Partition, Program, Session, Context.

Each object owns one C handle and releases it exactly once: on close(), at the
end of a `with` block, or when the object is garbage collected. Strings and
arrays the C side lends are copied into Python objects at once.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from . import gpuu_c as _c
from .errors import InternalError, InvalidArgumentError


def _names_of(name_of: Callable[[int], Optional[str]]) -> Dict[str, int]:
    """{name: value} of a gpuu.h enum, read through its gpuu_*_name function (its values run from 0 until one has
    no name): the C ABI is the one home of every name, so Python keeps no copy."""
    names: Dict[str, int] = {}
    while (name := name_of(len(names))) is not None:
        names[name] = len(names)
    return names


# ---- dtypes ------------------------------------------------------------------
# Re-exports of gpuu.h's constants, one name a line as export_api's spec keys
# are: alike by design, so that docs and IDEs see each name.

DTYPE_F32 = _c.GPUU_DTYPE_F32
DTYPE_F16 = _c.GPUU_DTYPE_F16
DTYPE_I32 = _c.GPUU_DTYPE_I32
DTYPE_I64 = _c.GPUU_DTYPE_I64
DTYPE_I8 = _c.GPUU_DTYPE_I8
DTYPE_BOOL = _c.GPUU_DTYPE_BOOL
DTYPE_I16 = _c.GPUU_DTYPE_I16

_NUMPY_BY_DTYPE = {
    DTYPE_F32: np.dtype("<f4"),
    DTYPE_F16: np.dtype("<f2"),
    DTYPE_I32: np.dtype("<i4"),
    DTYPE_I64: np.dtype("<i8"),
    DTYPE_I8: np.dtype("i1"),
    DTYPE_BOOL: np.dtype("?"),
    DTYPE_I16: np.dtype("<i2"),
}
DTYPES = _names_of(_c.gpuu_dtype_name)  # {"f32": DTYPE_F32, ...}
_DTYPE_NAMES = {code: name for name, code in DTYPES.items()}


def numpy_dtype(dtype: int) -> np.dtype:
    """The numpy dtype of a gpuu_dtype (little-endian, as gpuu stores tensors)."""
    try:
        return _NUMPY_BY_DTYPE[dtype]
    except KeyError:
        raise InvalidArgumentError(f"unknown gpuu dtype {dtype}") from None


def gpuu_dtype(dtype: Any) -> int:
    """The gpuu_dtype of a numpy dtype (or anything np.dtype() takes)."""
    d = np.dtype(dtype)
    for code, nd in _NUMPY_BY_DTYPE.items():
        if d == nd or (d.kind == nd.kind and d.itemsize == nd.itemsize and d.kind != "V"):
            return code
    raise InvalidArgumentError(f"numpy dtype {d} has no gpuu equivalent ({', '.join(DTYPES)})")


def _dtype_code(dtype: Any) -> int:
    """A gpuu dtype code given as itself or as a numpy dtype."""
    if isinstance(dtype, int) and not isinstance(dtype, bool):
        return dtype
    return gpuu_dtype(dtype)


def dtype_name(dtype: int) -> str:
    """"f32", "f16", ...: the name gpuu gives a dtype code (cast's dtype attribute takes it)."""
    return _DTYPE_NAMES.get(dtype, f"dtype({dtype})")


# ---- backends ------------------------------------------------------------

# Backends are named by their id everywhere; a plugin backend by its own id.
BACKEND_VGF = "VgfBackend"
BACKEND_VULKAN = "VulkanBackend"
BACKEND_CPU = "CpuFallback"
_BACKEND_ALIASES = {"vgf": BACKEND_VGF, "vulkan": BACKEND_VULKAN, "cpu": BACKEND_CPU}


def backend_id(backend: Any) -> str:
    """The id of a backend named by id ("VgfBackend", a plugin's own id) or short alias ("vgf", "vulkan", "cpu").

    Whether the id is registered is checked by the partitioner, which names every unknown id.
    """
    if not isinstance(backend, str):
        raise TypeError(f"a backend must be an id string, got {type(backend).__name__}")
    if not backend:
        raise InvalidArgumentError("a backend id is empty")
    return _BACKEND_ALIASES.get(backend, backend)


# ---- enums spelled as in the compile specs ---------------------------------

CONTEXT_MODES = _names_of(_c.gpuu_context_mode_name)
SYNC_MODES = _names_of(_c.gpuu_sync_mode_name)
PREFER = _names_of(_c.gpuu_prefer_name)


def _enum_value(table: Dict[str, int], what: str, value: Any) -> int:
    if isinstance(value, str):
        if value not in table:
            raise InvalidArgumentError(f"unknown {what} {value!r} (known: {', '.join(table)})")
        return table[value]
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise TypeError(f"{what} must be a name ({', '.join(table)}), got {type(value).__name__}")


def _enum_name(table: Dict[str, int], value: int) -> str:
    for name, code in table.items():
        if code == value:
            return name
    return str(value)


# ---- versions and logging --------------------------------------------------

def version() -> str:
    """The version of the loaded libgpuu, "MAJOR.MINOR.PATCH"."""
    return _c.gpuu_version_string()


LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG, LOG_TRACE = (
    _c.GPUU_LOG_ERROR, _c.GPUU_LOG_WARN, _c.GPUU_LOG_INFO, _c.GPUU_LOG_DEBUG, _c.GPUU_LOG_TRACE)
_LOG_LEVELS = _names_of(_c.gpuu_log_level_name)
_log_lock = threading.Lock()


def set_log_callback(callback: Optional[Callable[[int, str, str], None]], max_level: Any = "warn") -> None:
    """Sends gpuu's messages at `max_level` or more severe to callback(level, component, message).

    The callback may run on any thread gpuu uses, concurrently. None restores the
    default logger (stderr, threshold from GPUU_LOG).
    """
    level = _enum_value(_LOG_LEVELS, "log level", max_level)
    with _log_lock:
        _c.gpuu_py_set_log_callback(callback, level)


# ---- handles ---------------------------------------------------------------

class _ClosesOnExit:
    """The with-statement for an object with close(): leaving the block closes it."""

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class _Handle(_ClosesOnExit):
    """Owns one C handle; `_release` is the C function that frees it."""

    _release: Callable[[Any], None]

    def __init__(self, handle: Any) -> None:
        self._handle = handle

    @property
    def handle(self) -> Any:
        if self._handle is None:
            raise ValueError(f"{type(self).__name__} is closed")
        return self._handle

    def close(self) -> None:
        """Releases the C handle now (idempotent)."""
        handle, self._handle = getattr(self, "_handle", None), None
        if handle is not None:
            type(self)._release(handle)

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter shutdown: the module may be half gone
            pass


@dataclass(frozen=True)
class Node:
    """A graph node as read back: id, name, op, input and output value ids."""

    id: int
    name: str
    op: str
    inputs: Tuple[int, ...]
    outputs: Tuple[int, ...]


def _attr_triples(attrs: Dict[str, Any]) -> List[Tuple[str, int, Any]]:
    """Node attributes by Python type: int, float, str, list of ints, list of floats.

    The C side checks each against the op's schema (an int where a float is due is
    refused, as gpuu.h says); an empty list is taken as ints.
    """
    out = []
    for name, value in attrs.items():
        if isinstance(value, bool):
            raise TypeError(f"attribute {name!r}: bool is not an attribute kind (use 0 or 1)")
        if isinstance(value, (int, np.integer)):
            out.append((name, _c.GPUU_ATTR_INT, int(value)))
        elif isinstance(value, (float, np.floating)):
            out.append((name, _c.GPUU_ATTR_FLOAT, float(value)))
        elif isinstance(value, str):
            out.append((name, _c.GPUU_ATTR_STRING, value))
        elif isinstance(value, (list, tuple)):
            if all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in value):
                out.append((name, _c.GPUU_ATTR_INTS, [int(v) for v in value]))
            elif all(isinstance(v, (float, np.floating)) for v in value):
                out.append((name, _c.GPUU_ATTR_FLOATS, [float(v) for v in value]))
            else:
                raise TypeError(f"attribute {name!r}: a list must hold only ints or only floats, got {value!r}")
        else:
            raise TypeError(f"attribute {name!r}: unsupported value type {type(value).__name__}")
    return out


class Graph(_Handle):
    """A gpuu graph under construction (gpuu_graph_*). Build in topological order."""

    _release = staticmethod(_c.gpuu_graph_destroy)

    def __init__(self) -> None:
        super().__init__(_c.gpuu_graph_create())

    def add_input(self, name: str, dtype: Any, shape: Sequence[int]) -> int:
        """Adds a graph input; returns its value id. `dtype`: a gpuu dtype code or numpy dtype."""
        return _c.gpuu_graph_add_input(self.handle, name, _dtype_code(dtype), list(shape))

    def add_constant(self, name: str, array: Any, dtype: Any = None) -> int:
        """Adds a constant holding `array` (copied by gpuu); returns its value id.

        `dtype` (a gpuu dtype code or numpy dtype) converts the data; by default it
        keeps the array's own dtype.
        """
        code, arr = _stored_array(array, dtype)
        return _c.gpuu_graph_add_constant(self.handle, name, code, list(arr.shape), arr)

    def add_state(self, name: str, initial: Any, dtype: Any = None) -> int:
        """Adds a program state (a tensor kept across executes, one per session) starting from `initial`
        (copied, converted as add_constant's array); returns the id of the value that reads it. Its update
        is set with set_state_update."""
        code, arr = _stored_array(initial, dtype)
        return _c.gpuu_graph_add_state(self.handle, name, code, list(arr.shape), arr)

    def set_state_update(self, state_value: int, update: int) -> None:
        """Makes value `update` what the state read by `state_value` holds when a run ends."""
        _c.gpuu_graph_set_state_update(self.handle, state_value, update)

    # Dynamic sizes (gpuu.h, "Dynamic sizes"): dims, recordings of the same model at other sizes, the fit.
    def add_dim(self, name: str, min: int, max: int, example: int) -> None:
        """Declares a size that may vary between executes, min <= example <= max; the graph is built at example."""
        _c.gpuu_graph_add_dim(self.handle, name, int(min), int(max), int(example))

    def add_dim_recording(self, recording: "Graph", sizes: Sequence[int]) -> None:
        """`recording` is the same model built with the dims at `sizes` (one per dim, in order)."""
        _c.gpuu_graph_add_dim_recording(self.handle, recording.handle, [int(x) for x in sizes])

    def fit_dims(self) -> None:
        """Makes the graph's sizes and integer attributes follow the dims, from the recordings (InvalidArgumentError
        naming every place where they cannot)."""
        _c.gpuu_graph_fit_dims(self.handle)

    def add_node(self, op: str, name: str, inputs: Sequence[Optional[int]], attrs: Optional[Dict[str, Any]] = None
                 ) -> List[int]:
        """Appends a node; returns its output value ids. None in `inputs` leaves an optional input out."""
        ids = [-1 if v is None else int(v) for v in inputs]
        return _c.gpuu_graph_add_node(self.handle, op, name, ids, _attr_triples(attrs or {}))

    def mark_output(self, value: int) -> None:
        _c.gpuu_graph_mark_output(self.handle, value)

    def verify(self) -> None:
        _c.gpuu_graph_verify(self.handle)

    # read-back: one property per C getter, as Context's are; each is a
    # documented attribute, so they stay spelled out rather than generated.
    @property
    def value_count(self) -> int:
        return _c.gpuu_graph_value_count(self.handle)

    @property
    def node_count(self) -> int:
        return _c.gpuu_graph_node_count(self.handle)

    def value_name(self, value: int) -> str:
        name = _c.gpuu_graph_value_name(self.handle, value)
        if name is None:
            raise InvalidArgumentError(f"value id {value} is out of range (the graph has {self.value_count})")
        return name

    def value_dtype(self, value: int) -> int:
        return _c.gpuu_graph_value_dtype(self.handle, value)

    def value_shape(self, value: int) -> Tuple[int, ...]:
        return tuple(_c.gpuu_graph_value_shape(self.handle, value))

    def value_producer(self, value: int) -> int:
        """The id of the node producing `value`, or -1 for inputs and constants."""
        return _c.gpuu_graph_value_producer(self.handle, value)

    def value_is_constant(self, value: int) -> bool:
        return bool(_c.gpuu_graph_value_is_constant(self.handle, value))

    def find_value(self, name: str) -> int:
        """The id of the value named `name`; NotFoundError when there is none."""
        return _c.gpuu_graph_find_value(self.handle, name)

    def node(self, node: int) -> Node:
        name = _c.gpuu_graph_node_name(self.handle, node)
        if name is None:
            raise InvalidArgumentError(f"node id {node} is out of range (the graph has {self.node_count})")
        return Node(node, name, _c.gpuu_graph_node_op(self.handle, node),
                    tuple(_c.gpuu_py_graph_node_inputs(self.handle, node)),
                    tuple(_c.gpuu_py_graph_node_outputs(self.handle, node)))

    def nodes(self) -> List[Node]:
        return [self.node(i) for i in range(self.node_count)]

    def node_id(self, name: str) -> int:
        for i in range(self.node_count):
            if _c.gpuu_graph_node_name(self.handle, i) == name:
                return i
        raise KeyError(f"no node named {name!r}")

    @property
    def inputs(self) -> List[int]:
        return list(_c.gpuu_py_graph_inputs(self.handle))

    @property
    def outputs(self) -> List[int]:
        return list(_c.gpuu_py_graph_outputs(self.handle))

    @property
    def states(self) -> List[int]:
        """The values that read the graph's states, in creation order."""
        return list(_c.gpuu_py_graph_states(self.handle))

    def state_update(self, state_value: int) -> int:
        """The update of the state `state_value` reads (-1 until set)."""
        return _c.gpuu_graph_state_update(self.handle, state_value)


def _stored_array(array: Any, dtype: Any) -> Tuple[int, np.ndarray]:
    """(gpuu dtype, little-endian row-major copy) of `array`, converted to `dtype` when given."""
    arr = np.asarray(array)
    code = gpuu_dtype(arr.dtype) if dtype is None else _dtype_code(dtype)
    # np.require, not np.ascontiguousarray, which makes a 0-d array 1-d.
    return code, np.require(arr, dtype=numpy_dtype(code), requirements="C")


def op_names() -> List[str]:
    """Every op the graph builder knows, sorted."""
    return [_c.gpuu_op_name(i) for i in range(_c.gpuu_op_count())]


@dataclass(frozen=True)
class Region:
    """One partition region: its backend name and its nodes' names, in graph order."""

    backend: str
    nodes: Tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.backend}[{','.join(self.nodes)}]"


class Partition(_Handle):
    """The outcome of partitioning a graph (gpuu_graph_partition). Independent of the graph once made."""

    _release = staticmethod(_c.gpuu_partition_destroy)

    def __init__(self, graph: Graph, options: Any, deny: Sequence[Tuple[str, str]] = (),
                 pins: Sequence[Tuple[str, str]] = (), op_costs: Sequence[Tuple[str, str, float]] = (),
                 backends: Sequence[str] = ()) -> None:
        """deny: (backend, op); pins: (node, backend); op_costs: (op, backend, cost), op "*" for a
        backend's default; backends: an explicit preference list of GPU backend ids."""
        super().__init__(_c.gpuu_py_graph_partition(
            graph.handle, options, [(backend_id(b), op) for b, op in deny],
            [(node, backend_id(b)) for node, b in pins],
            [(op, backend_id(b), float(c)) for op, b, c in op_costs], [backend_id(b) for b in backends]))
        # Node names are read now: the partition outlives changes to the graph.
        node_names = [_c.gpuu_graph_node_name(graph.handle, i) for i in range(graph.node_count)]
        self._regions = []
        for r in range(_c.gpuu_partition_region_count(self.handle)):
            backend = _c.gpuu_partition_region_backend(self.handle, r)
            count = _c.gpuu_partition_region_node_count(self.handle, r)
            nodes = tuple(node_names[_c.gpuu_partition_region_node(self.handle, r, i)] for i in range(count))
            self._regions.append(Region(backend, nodes))
        self._node_names = node_names

    @property
    def regions(self) -> List[Region]:
        """The regions in execution order."""
        return list(self._regions)

    def node_backend(self, node: Any) -> Tuple[str, int]:
        """(backend name, region index) of a node, by id or name."""
        node_id = self._node_names.index(node) if isinstance(node, str) else int(node)
        backend, region = _c.gpuu_partition_node_backend(self.handle, node_id)
        return backend, region

    def explain_json(self) -> str:
        return _c.gpuu_partition_explain_json(self.handle)

    def explain(self) -> Dict[str, Any]:
        """The explain report as a dict (see gpuu_partition_explain_json)."""
        return json.loads(self.explain_json())


def _set_context_key(options: Any, token: Optional[str], group_id: Optional[int], mode: Any) -> None:
    """Sets the token, group_id and mode given (not None) in a C options struct; the others keep its *_init value."""
    if token is not None:
        options.token = token
    if group_id is not None:
        options.group_id = group_id
    if mode is not None:
        options.mode = _enum_value(CONTEXT_MODES, "context mode", mode)


def program_write_options(token: Optional[str] = None, group_id: Optional[int] = None, mode: Any = None,
                          sync_mode: Any = None) -> Any:
    """A filled gpuu_program_write_options; None keeps the default of gpuu_program_write_options_init."""
    o = _c.gpuu_program_write_options()
    _c.gpuu_program_write_options_init(o)
    _set_context_key(o, token, group_id, mode)
    if sync_mode is not None:
        o.sync_mode = _enum_value(SYNC_MODES, "sync mode", sync_mode)
    return o


def write_program(graph: Graph, partition: Partition, path: Optional[str], options: Any = None,
                  extra_shared_compile_specs: Sequence[Tuple[str, bytes]] = (),
                  backend_compile_specs: Optional[Mapping[str, Sequence[Tuple[str, bytes]]]] = None
                  ) -> Optional[bytes]:
    """Writes the program file to `path` (atomically), or returns its bytes when path is None.

    extra_shared_compile_specs go to every delegate after the six shared keys;
    backend_compile_specs {backend id: specs} only to that backend's delegates
    (gpuu_program_write_options' 0.3 slots). Specs are (key, value bytes)."""
    if extra_shared_compile_specs or backend_compile_specs:
        if options is None:
            options = program_write_options()
        per_backend = [(backend_id(b), list(specs)) for b, specs in (backend_compile_specs or {}).items()]
        if path is not None:
            _c.gpuu_py_program_write_with_specs(graph.handle, partition.handle, options,
                                                list(extra_shared_compile_specs), per_backend, str(path))
            return None
        with tempfile.TemporaryDirectory() as tmp:
            target = os.path.join(tmp, "program.gpuu")
            _c.gpuu_py_program_write_with_specs(graph.handle, partition.handle, options,
                                                list(extra_shared_compile_specs), per_backend, target)
            with open(target, "rb") as f:
                return f.read()
    if path is None:
        return _c.gpuu_program_write_to_memory(graph.handle, partition.handle, options)
    _c.gpuu_program_write(graph.handle, partition.handle, options, str(path))
    return None


@dataclass(frozen=True)
class TensorInfo:
    """A program input or output: name, gpuu dtype, shape and byte size."""

    name: str
    dtype: int
    shape: Tuple[int, ...]
    byte_size: int

    @property
    def numpy_dtype(self) -> np.dtype:
        return numpy_dtype(self.dtype)


@dataclass(frozen=True)
class Dim:
    """A program dim: a size that may vary between executes, within [min, max]; shapes were recorded at example."""

    name: str
    min: int
    max: int
    example: int


class Program(_Handle):
    """A loaded program file (gpuu_program_load_file / _memory)."""

    _release = staticmethod(_c.gpuu_program_release)

    def __init__(self, path: Optional[str] = None, data: Any = None) -> None:
        if (path is None) == (data is None):
            raise TypeError("Program takes a path or data, not both or neither")
        handle = _c.gpuu_program_load_file(str(path)) if path is not None else _c.gpuu_program_load_memory(data)
        super().__init__(handle)

    @classmethod
    def from_vgf(cls, path: Optional[str] = None, data: Any = None) -> "Program":
        """A standalone VGF file (a path, or its bytes) as a program of one VGF delegate
        (gpuu_program_from_vgf_file / gpuu_program_from_vgf)."""
        if (path is None) == (data is None):
            raise TypeError("Program.from_vgf takes a path or data, not both or neither")
        if path is not None:
            handle = _c.gpuu_program_from_vgf_file(os.fspath(path), None)
        else:
            handle = _c.gpuu_program_from_vgf(data, None)
        program = cls.__new__(cls)
        _Handle.__init__(program, handle)
        return program

    @property
    def delegates(self) -> List[str]:
        """The backend id of each delegate, in order ("VgfBackend", "VulkanBackend")."""
        return [_c.gpuu_program_delegate_backend(self.handle, i)
                for i in range(_c.gpuu_program_delegate_count(self.handle))]

    @property
    def dims(self) -> List["Dim"]:
        """The sizes that may vary between executes (a program exported with dynamic_shapes), in order."""
        out = []
        for i in range(_c.gpuu_program_dim_count(self.handle)):
            name, lo, hi, example = _c.gpuu_program_dim_info(self.handle, i)
            out.append(Dim(name, lo, hi, example))
        return out

    def extract_vgf(self, directory: str) -> List[str]:
        """Writes each VGF delegate as `directory/<delegate index>.vgf` (plus a scenario JSON); returns the paths."""
        count = _c.gpuu_program_extract_vgf(self.handle, os.fspath(directory))
        paths = [os.path.join(os.fspath(directory), f"{i}.vgf") for i, b in enumerate(self.delegates)
                 if b == "VgfBackend"]
        if count != len(paths):
            raise InternalError(f"gpuu_program_extract_vgf wrote {count} VGF files for {len(paths)} VGF delegates")
        return paths


VGF_PATHS = _names_of(_c.gpuu_vgf_path_name)


def session_options(token: Optional[str] = None, group_id: Optional[int] = None, mode: Any = None,
                    sync_mode: Any = None, device: Optional[str] = None, validation: Optional[bool] = None,
                    vgf_path: Any = None, gpu_timing: bool = False,
                    backend_options: Optional[Mapping[str, Mapping[str, str]]] = None, profile: bool = False,
                    device_memory_limit: int = 0,
                    pipeline_cache: Optional[Union[str, os.PathLike]] = None, max_shape_variants: int = 0) -> Any:
    """A filled gpuu_session_options: None keeps what the file (or environment) says.

    profile: profile every execute (Session.profile_json), at the cost of serialising the GPU.

    device_memory_limit: the device memory the session may take, in bytes; 0 is no limit.

    pipeline_cache: a file that keeps the driver's compiled pipelines across processes
    (gpuu_session_options.pipeline_cache_path); one that does not fit is replaced, never an error.

    max_shape_variants: for a program with dims, how many sets of sizes the session keeps ready (each
    specialized and recorded once; the least recently used goes first); 0 is the default, 4.

    backend_options: {backend id: {key: value}}, each backend's load-time options
    (gpuu-inspect --backends lists them), e.g. {"VgfBackend": {"data_graph_path": "native"}};
    gpuu checks them all when the session is created."""
    o = _c.gpuu_session_options()
    _c.gpuu_session_options_init(o)
    overrides = _c.gpuu_context_overrides()
    _c.gpuu_context_overrides_init(overrides)
    if token is not None:
        overrides.token = token
    if group_id is not None:
        if isinstance(group_id, bool) or not isinstance(group_id, int):
            raise TypeError(f"group_id must be an int, got {type(group_id).__name__}")
        overrides.group_id = group_id
        overrides.has_group_id = 1
    if mode is not None:
        overrides.mode = _enum_value(CONTEXT_MODES, "context mode", mode)
        overrides.has_mode = 1
    if sync_mode is not None:
        overrides.sync_mode = _enum_value(SYNC_MODES, "sync mode", sync_mode)
        overrides.has_sync_mode = 1
    o.overrides = overrides
    device_options = _device_options(device, validation)
    o.device = device_options
    # The C struct holds borrowed pointers: the Python object keeps their owners alive.
    o.parts = (overrides, device_options)
    if vgf_path is not None:
        o.vgf_path = _enum_value(VGF_PATHS, "VGF path", vgf_path)
    o.gpu_timing = 1 if gpu_timing else 0
    o.profile = 1 if profile else 0
    o.device_memory_limit = _non_negative_int("device_memory_limit", device_memory_limit)
    o.max_shape_variants = _non_negative_int("max_shape_variants", max_shape_variants)
    if pipeline_cache is not None:
        o.pipeline_cache_path = os.fspath(pipeline_cache)
    # The C struct's array is filled when the session is created (Session).
    o.backend_option_list = _backend_option_list(backend_options)
    return o


def _non_negative_int(name: str, value: Any) -> int:
    """`value`, or a TypeError naming option `name` where it is not a non-negative int (bool included)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise TypeError(f"{name} must be a non-negative int, got {value!r}")
    return value


def _backend_option_list(backend_options: Optional[Mapping[str, Mapping[str, str]]]) -> List[Tuple[str, str, str]]:
    """{backend id: {key: value}} as (id, key, value) tuples; the C side checks ids, keys and values."""
    if backend_options is None:
        return []
    if not isinstance(backend_options, Mapping):
        raise TypeError(f"backend_options must be a mapping {{backend id: {{key: value}}}}, "
                        f"got {type(backend_options).__name__}")
    out = []
    for backend, options in backend_options.items():
        if not isinstance(options, Mapping):
            raise TypeError(f"backend_options[{backend!r}] must be a mapping {{key: value}}, "
                            f"got {type(options).__name__}")
        for key, value in options.items():
            if not isinstance(value, str):
                raise TypeError(f"backend_options[{backend!r}][{key!r}] must be a str, got {type(value).__name__}")
            out.append((backend, key, value))
    return out


def _device_options(device: Optional[str], validation: Optional[bool]) -> Any:
    """A filled gpuu_device_options: None keeps the default (environment)."""
    d = _c.gpuu_device_options()
    _c.gpuu_device_options_init(d)
    if device is not None:
        d.device = str(device)
    if validation is not None:
        d.enable_validation = 1 if validation else 0
    return d


@dataclass(frozen=True)
class ExecuteStats:
    """What the last execute did: delegate submits, host waits, host copies, queue submits, and the
    delegates' GPU time in microseconds (-1 unless the session was made with gpu_timing=True)."""

    delegate_submits: int
    host_waits: int
    host_copies: int
    queue_submits: int = 0
    gpu_time_us: float = -1.0


class Session(_Handle):
    """A program made runnable (gpuu_session_create). One thread at a time."""

    _release = staticmethod(_c.gpuu_session_destroy)

    def __init__(self, program: Program, options: Any = None) -> None:
        backend_options = getattr(options, "backend_option_list", []) if options is not None else []
        super().__init__(_c.gpuu_py_session_create(program.handle, options, backend_options))
        self.dim_names = [d.name for d in program.dims]
        self._describe()

    def _describe(self) -> None:
        """The inputs', outputs' and states' infos, read again after a change of sizes."""
        self.inputs = [TensorInfo(n, d, tuple(s), b) for n, d, s, b in
                       (_c.gpuu_session_input_info(self.handle, i)
                        for i in range(_c.gpuu_session_input_count(self.handle)))]
        self.outputs = [TensorInfo(n, d, tuple(s), b) for n, d, s, b in
                        (_c.gpuu_session_output_info(self.handle, i)
                         for i in range(_c.gpuu_session_output_count(self.handle)))]
        # Program states: kept across executes, this session's own (gpuu.h, "Program states").
        self.states = [TensorInfo(n, d, tuple(s), b) for n, d, s, b in
                       (_c.gpuu_session_state_info(self.handle, i)
                        for i in range(_c.gpuu_session_state_count(self.handle)))]

    @staticmethod
    def _matching(what: str, index: int, info: TensorInfo, array: Any) -> np.ndarray:
        """`array` as C-contiguous data for `what` ("input", "state") `index`, whose dtype and shape it must have."""
        arr = np.asarray(array)
        if arr.dtype != info.numpy_dtype:
            raise InvalidArgumentError(
                f"{what} {index} ('{info.name}') is {dtype_name(info.dtype)}, got numpy {arr.dtype}")
        if tuple(arr.shape) != info.shape:
            raise InvalidArgumentError(
                f"{what} {index} ('{info.name}') has shape {list(info.shape)}, got {list(arr.shape)}")
        # Only a strided array is copied: the C side reads the buffer in place.
        return np.ascontiguousarray(arr)

    @property
    def dims(self) -> Dict[str, int]:
        """The sizes the session runs at now, by dim name (empty for a static program)."""
        return {name: _c.gpuu_session_dim(self.handle, i) for i, name in enumerate(self.dim_names)}

    @property
    def shape_variant_count(self) -> int:
        """How many sets of sizes the session holds ready, each specialized and recorded once (1 without dims)."""
        return _c.gpuu_session_shape_variant_count(self.handle)

    def set_input_shapes(self, shapes: Sequence[Sequence[int]]) -> None:
        """Every input's shape for what follows (a program with dims runs at the sizes they give; gpuu.h's
        gpuu_session_set_input_shapes says what carries over). InvalidArgumentError names every problem."""
        shapes = [tuple(int(d) for d in s) for s in shapes]
        if len(shapes) != len(self.inputs):
            raise InvalidArgumentError(f"{len(shapes)} input shapes for {len(self.inputs)} inputs")
        for i, (shape, info) in enumerate(zip(shapes, self.inputs)):
            if len(shape) != len(info.shape):
                raise InvalidArgumentError(f"input {i} ('{info.name}') has rank {len(info.shape)}, got shape "
                                           f"{list(shape)}")
        _c.gpuu_session_set_input_shapes(self.handle, [d for s in shapes for d in s])
        self._describe()

    def set_input(self, index: int, array: Any) -> None:
        """Copies input `index` from `array`, which must match its dtype and shape exactly."""
        _c.gpuu_session_set_input(self.handle, index, self._matching("input", index, self.inputs[index], array))

    @property
    def state_names(self) -> List[str]:
        """The program's states, by name (the model's buffer names), in order."""
        return [s.name for s in self.states]

    def state_index(self, state: Union[int, str]) -> int:
        """The index of a state given by name (NotFoundError naming it and the states there are) or index
        (InvalidArgumentError when out of range)."""
        if isinstance(state, str):
            return _c.gpuu_session_state_index(self.handle, state)
        if not 0 <= int(state) < len(self.states):
            raise InvalidArgumentError(f"state index {state} is out of range (the program has {len(self.states)} "
                                       "states)")
        return int(state)

    def state(self, state: Union[int, str]) -> np.ndarray:
        """A new array holding a state (by name or index): its initial value, what set_state wrote, or what
        the last execute left. A state on the device comes to the host here, and only here."""
        index = self.state_index(state)
        info = self.states[index]
        out = np.empty(info.shape, dtype=info.numpy_dtype)
        _c.gpuu_session_get_state(self.handle, index, out)
        return out

    def set_state(self, state: Union[int, str], array: Any) -> None:
        """Replaces a state (by name or index) with `array`, of its dtype and shape, for the next execute."""
        index = self.state_index(state)
        _c.gpuu_session_set_state(self.handle, index, self._matching("state", index, self.states[index], array))

    def reset_state(self) -> None:
        """Every state back to its initial value."""
        _c.gpuu_session_reset_state(self.handle)

    def state_in_place(self, state: Union[int, str]) -> bool:
        """Whether the delegate computing the state's update writes it into the state's own device memory
        (rather than a buffer copied over after each execute)."""
        return bool(_c.gpuu_session_state_in_place(self.handle, self.state_index(state)))

    def execute(self) -> None:
        _c.gpuu_session_execute(self.handle)

    def get_output(self, index: int, out: Optional[np.ndarray] = None) -> np.ndarray:
        """Output `index` of the last execute, written straight into `out` (or a new array)."""
        info = self.outputs[index]
        if out is None:
            out = np.empty(info.shape, dtype=info.numpy_dtype)
        elif out.dtype != info.numpy_dtype or tuple(out.shape) != info.shape or not out.flags.c_contiguous:
            raise InvalidArgumentError(
                f"output {index} ('{info.name}') needs a C-contiguous {dtype_name(info.dtype)} array of shape "
                f"{list(info.shape)}")
        _c.gpuu_session_get_output(self.handle, index, out)
        return out

    def last_execute_stats(self) -> ExecuteStats:
        s = _c.gpuu_session_last_execute_stats(self.handle)
        return ExecuteStats(s.delegate_submits, s.host_waits, s.host_copies, s.queue_submits, s.gpu_time_us)

    def memory(self) -> Dict[str, int]:
        """Device memory the session holds, in bytes (gpuu_session_memory_info): "tensors" (inputs,
        outputs, tensors between steps), "states", "workspaces" (delegates' intermediates the runtime gives
        them), "weights" (constants its delegates read; weights shared with other sessions count in each),
        "staging" (host-readable copies of outputs and states read from device memory) and
        "backend_private" (what backends allocate themselves: scratch, the native VGF path's tensors). A
        program with dims holds tensors, states and workspaces once, planned for the dims' upper bounds."""
        m = _c.gpuu_session_memory_info(self.handle)
        return {"tensors": m.tensor_bytes, "states": m.state_bytes, "workspaces": m.workspace_bytes,
                "weights": m.weight_bytes, "staging": m.staging_bytes, "backend_private": m.backend_private_bytes}

    @property
    def sync_mode(self) -> str:
        return _enum_name(SYNC_MODES, _c.gpuu_session_sync_mode(self.handle))

    def context(self) -> "Context":
        """The shared context the GPU delegates run on (NotFoundError without GPU delegates)."""
        return Context(_c.gpuu_session_get_context(self.handle))

    def profile_json(self) -> str:
        """The last execute's profile as JSON text (gpuu_session_profile_json); FailedPreconditionError
        unless the session was made with profile=True and has executed."""
        return _c.gpuu_session_profile_json(self.handle)

    def profile_trace(self) -> str:
        """The last execute's Chrome trace as JSON text (gpuu_session_profile_trace)."""
        return _c.gpuu_session_profile_trace(self.handle)

    def profile_text(self, top: int = 10) -> str:
        """The last execute's profile as a table, with the `top` dispatches of most GPU time."""
        return _c.gpuu_session_profile_text(self.handle, top)


class Context(_Handle):
    """A counted reference to a shared GPU context (gpuu_context_*)."""

    _release = staticmethod(_c.gpuu_context_release)

    @classmethod
    def resolve(cls, token: Optional[str] = None, group_id: Optional[int] = None, mode: Any = None,
                device: Optional[str] = None, validation: Optional[bool] = None) -> "Context":
        """Finds or creates the context for (token, group_id) as a delegate would.

        None keeps the default of gpuu_context_resolve_options_init (the shared keys' defaults)."""
        o = _c.gpuu_context_resolve_options()
        _c.gpuu_context_resolve_options_init(o)
        _set_context_key(o, token, group_id, mode)
        device_options = _device_options(device, validation)
        o.device = device_options  # borrowed by the call below
        return cls(_c.gpuu_context_resolve(o))

    @classmethod
    def lookup(cls, token: str, group_id: int = 0) -> "Context":
        """The registered context for (token, group_id); NotFoundError when none is."""
        return cls(_c.gpuu_context_lookup(token, group_id))

    @staticmethod
    def unregister(token: str, group_id: int = 0) -> None:
        """Drops the registry's reference under (token, group_id)."""
        _c.gpuu_context_unregister(token, group_id)

    @property
    def device_name(self) -> str:
        return _c.gpuu_context_device_name(self.handle)

    @property
    def token(self) -> str:
        return _c.gpuu_context_token(self.handle)

    @property
    def group_id(self) -> int:
        return _c.gpuu_context_group_id(self.handle)

    @property
    def extensions(self) -> List[str]:
        return [_c.gpuu_context_extension_name(self.handle, i)
                for i in range(_c.gpuu_context_extension_count(self.handle))]

    def vulkan_handles(self) -> Any:
        """The raw handles (gpuu_vulkan_handles); valid while this reference is held."""
        return _c.gpuu_context_get_vulkan_handles(self.handle)


def enumerate_devices() -> List[Tuple[str, int]]:
    """(name, VkPhysicalDeviceType) of every device the Vulkan loader sees."""
    from .errors import NotFoundError
    devices = []
    index = 0
    while True:
        try:
            name, kind = _c.gpuu_enumerate_devices(index)
        except NotFoundError:
            return devices
        devices.append((name, kind))
        index += 1

