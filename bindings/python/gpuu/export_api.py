"""The export API of RFC phase 1: shared compile specs, UnifiedGpuCompileSpec, UnifiedGpuPartitioner.

Compile-spec values are validated by the same C parser the backends use at init
(gpuu_shared_spec_parse), so a value Python accepts is one the runtime accepts.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from . import core
from . import gpuu_c as _c
from .errors import InvalidArgumentError

# The six keys both GPU backends read (gpuu.h's GPUU_SPEC_*).
GPU_SHARED_CONTEXT_TOKEN = _c.GPUU_SPEC_CONTEXT_TOKEN
GPU_SHARED_CONTEXT_MODE = _c.GPUU_SPEC_CONTEXT_MODE
GPU_SHARED_SYNC_MODE = _c.GPUU_SPEC_SYNC_MODE
GPU_SHARED_GROUP_ID = _c.GPUU_SPEC_GROUP_ID
GPU_SHARED_MIN_PARTITION_SIZE = _c.GPUU_SPEC_MIN_PARTITION_SIZE
GPU_SHARED_PREFER = _c.GPUU_SPEC_PREFER
SHARED_KEYS = (GPU_SHARED_CONTEXT_TOKEN, GPU_SHARED_CONTEXT_MODE, GPU_SHARED_SYNC_MODE, GPU_SHARED_GROUP_ID,
               GPU_SHARED_MIN_PARTITION_SIZE, GPU_SHARED_PREFER)


@dataclass(frozen=True)
class CompileSpec:
    """One compile spec: a key and its value bytes (UTF-8 text, or ASCII decimal for integers)."""

    key: str
    value: bytes

    def __post_init__(self) -> None:
        if not isinstance(self.key, str) or not self.key:
            raise TypeError(f"CompileSpec.key must be a non-empty str, got {self.key!r}")
        if not isinstance(self.value, bytes):
            raise TypeError(f"CompileSpec.value must be bytes, got {type(self.value).__name__} (key {self.key!r})")


def _spec_value(key: str, value: Any) -> bytes:
    if isinstance(value, bool):
        raise TypeError(f"{key}: a bool is not a compile-spec value (use an int or a str)")
    if isinstance(value, int):
        return str(value).encode("ascii")
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, bytes):
        return value
    raise TypeError(f"{key}: compile-spec values are str, int or bytes, got {type(value).__name__}")


@dataclass(frozen=True)
class SharedGpuSpec:
    """The shared keys as the C parser reads them (gpuu_shared_spec)."""

    token: str
    group_id: int
    mode: str
    sync_mode: str
    min_partition_size: int
    prefer: str
    present: bool


def parse_shared_compile_specs(specs: Iterable[Union[CompileSpec, Tuple[str, Any]]],
                               token: Optional[str] = None, group_id: Optional[int] = None,
                               mode: Optional[str] = None, sync_mode: Optional[str] = None) -> SharedGpuSpec:
    """Parses compile specs exactly as a delegate does at init, then applies load-time overrides.

    Keys without the "gpu_shared_" prefix are ignored (they belong to other
    backends). Raises InvalidArgumentError with the C parser's message for an
    unknown gpu_shared_ key, a repeated key, an unknown mode, a bad integer or an
    empty token.
    """
    pairs = []
    for s in specs:
        key, value = (s.key, s.value) if isinstance(s, CompileSpec) else s
        pairs.append((key, _spec_value(key, value)))
    overrides = None
    if any(v is not None for v in (token, group_id, mode, sync_mode)):
        overrides = _c.gpuu_context_overrides()
        _c.gpuu_context_overrides_init(overrides)
        if token is not None:
            overrides.token = token
        if group_id is not None:
            overrides.group_id, overrides.has_group_id = group_id, 1
        if mode is not None:
            overrides.mode, overrides.has_mode = core._enum_value(core.CONTEXT_MODES, "context mode", mode), 1
        if sync_mode is not None:
            overrides.sync_mode = core._enum_value(core.SYNC_MODES, "sync mode", sync_mode)
            overrides.has_sync_mode = 1
    return _shared_spec_of(_c.gpuu_shared_spec_parse(pairs, overrides))


def _shared_spec_of(spec: Any) -> SharedGpuSpec:
    """A C gpuu_shared_spec as a SharedGpuSpec, its enums by name."""
    return SharedGpuSpec(token=spec.token, group_id=spec.group_id, mode=core._enum_name(core.CONTEXT_MODES, spec.mode),
                         sync_mode=core._enum_name(core.SYNC_MODES, spec.sync_mode),
                         min_partition_size=spec.min_partition_size, prefer=core._enum_name(core.PREFER, spec.prefer),
                         present=bool(spec.present))


def _shared_spec_defaults() -> SharedGpuSpec:
    spec = _c.gpuu_shared_spec()
    _c.gpuu_shared_spec_init(spec)
    return _shared_spec_of(spec)


# The shared keys' defaults, read from gpuu_shared_spec_init (their one home): the defaults of the signature and
# dataclass below.
SHARED_SPEC_DEFAULTS = _shared_spec_defaults()


def make_shared_gpu_compile_specs(token: str = SHARED_SPEC_DEFAULTS.token,
                                  mode: str = SHARED_SPEC_DEFAULTS.mode,
                                  sync_mode: str = SHARED_SPEC_DEFAULTS.sync_mode,
                                  group_id: int = SHARED_SPEC_DEFAULTS.group_id,
                                  min_partition_size: int = SHARED_SPEC_DEFAULTS.min_partition_size,
                                  prefer: str = SHARED_SPEC_DEFAULTS.prefer) -> List[CompileSpec]:
    """The six shared compile specs, in GPUU_SPEC_* order, validated by the C parser.

    Integers are written as ASCII decimal, names as UTF-8. An invalid value raises
    InvalidArgumentError carrying the C parser's message (naming key and value).
    """
    specs = [
        CompileSpec(GPU_SHARED_CONTEXT_TOKEN, _spec_value(GPU_SHARED_CONTEXT_TOKEN, token)),
        CompileSpec(GPU_SHARED_CONTEXT_MODE, _spec_value(GPU_SHARED_CONTEXT_MODE, mode)),
        CompileSpec(GPU_SHARED_SYNC_MODE, _spec_value(GPU_SHARED_SYNC_MODE, sync_mode)),
        CompileSpec(GPU_SHARED_GROUP_ID, _spec_value(GPU_SHARED_GROUP_ID, group_id)),
        CompileSpec(GPU_SHARED_MIN_PARTITION_SIZE, _spec_value(GPU_SHARED_MIN_PARTITION_SIZE, min_partition_size)),
        CompileSpec(GPU_SHARED_PREFER, _spec_value(GPU_SHARED_PREFER, prefer)),
    ]
    parse_shared_compile_specs(specs)
    return specs


# ---- backend-specific specs --------------------------------------------------

_TOSA_SPEC = re.compile(r"^TOSA-(\d+)\.(\d+)((?:\+[A-Za-z0-9]+)*)$")
_FLOAT_DTYPES = {core.DTYPE_F32, core.DTYPE_F16}
_INT_DTYPES = {core.DTYPE_I32, core.DTYPE_I8}


@dataclass(frozen=True)
class VgfCompileSpec:
    """What the VGF side is asked to target.

    tosa_spec: "TOSA-1.0" plus profiles, "+FP" (float tensors) and/or "+INT"
      (integer tensors). gpuu's VGF backend emits TOSA 1.0; a profile left out
      keeps VGF away from every op that, somewhere in the graph, runs on tensors
      of that kind (those ops are denied to VGF, and the explain report says so).
    denied_ops: gpuu op names VGF must not take.
    """

    tosa_spec: str = "TOSA-1.0+FP+INT"
    denied_ops: Tuple[str, ...] = ()

    def __post_init__(self) -> None:
        m = _TOSA_SPEC.match(self.tosa_spec) if isinstance(self.tosa_spec, str) else None
        if not m:
            raise InvalidArgumentError(
                f"VgfCompileSpec.tosa_spec {self.tosa_spec!r} is not of the form 'TOSA-<major>.<minor>+PROFILE...'")
        if (int(m.group(1)), int(m.group(2))) != (1, 0):
            raise InvalidArgumentError(
                f"VgfCompileSpec.tosa_spec {self.tosa_spec!r}: gpuu's VGF backend emits TOSA 1.0 only")
        unknown = [p for p in self.profiles if p not in ("FP", "INT")]
        if unknown or not self.profiles:
            raise InvalidArgumentError(
                f"VgfCompileSpec.tosa_spec {self.tosa_spec!r}: profiles must be FP and/or INT"
                + (f" (unknown: {', '.join(unknown)})" if unknown else ""))
        object.__setattr__(self, "denied_ops", tuple(self.denied_ops))

    @property
    def profiles(self) -> Tuple[str, ...]:
        m = _TOSA_SPEC.match(self.tosa_spec)
        return tuple(p for p in m.group(3).split("+") if p) if m else ()

    def denied_ops_for(self, graph: core.Graph) -> List[str]:
        """denied_ops plus the ops of `graph` whose tensors need a profile this spec lacks."""
        denied = list(self.denied_ops)
        profiles = set(self.profiles)
        for node in graph.nodes():
            dtypes = {graph.value_dtype(v) for v in node.inputs + node.outputs if v >= 0}
            needs_fp = bool(dtypes & _FLOAT_DTYPES)
            needs_int = bool(dtypes & _INT_DTYPES)
            if ((needs_fp and "FP" not in profiles) or (needs_int and "INT" not in profiles)) and \
                    node.op not in denied:
                denied.append(node.op)
        return denied


_VULKAN_OPTIONS = ("denied_ops",)


def _vulkan_denied_ops(options: Optional[Mapping[str, Any]]) -> List[str]:
    if not options:
        return []
    unknown = [k for k in options if k not in _VULKAN_OPTIONS]
    if unknown:
        raise InvalidArgumentError(
            f"vulkan_compile_options: unknown option(s) {', '.join(map(repr, unknown))} "
            f"(known: {', '.join(_VULKAN_OPTIONS)})")
    ops = options.get("denied_ops", ())
    if isinstance(ops, str) or not all(isinstance(o, str) for o in ops):
        raise TypeError("vulkan_compile_options['denied_ops'] must be a sequence of op names")
    return list(ops)


@dataclass(frozen=True)
class UnifiedGpuCompileSpec:
    """The unified export's configuration (RFC phase 1), validated when made."""

    vgf: Any = field(default_factory=lambda: VgfCompileSpec())  # the VGF backend's options (None: its defaults)
    vulkan_compile_options: Optional[Dict[str, Any]] = None
    shared_context_token: str = SHARED_SPEC_DEFAULTS.token
    shared_context_mode: str = SHARED_SPEC_DEFAULTS.mode
    shared_sync_mode: str = SHARED_SPEC_DEFAULTS.sync_mode
    shared_group_id: int = SHARED_SPEC_DEFAULTS.group_id
    min_partition_size: int = SHARED_SPEC_DEFAULTS.min_partition_size
    prefer: str = SHARED_SPEC_DEFAULTS.prefer
    extra_shared_compile_specs: Tuple[CompileSpec, ...] = field(default_factory=tuple)
    # Compile specs for the delegates of one backend id each (a plugin's own keys, say).
    backend_compile_specs: Mapping[str, Tuple[CompileSpec, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.vgf is not None and not isinstance(self.vgf, VgfCompileSpec):
            raise TypeError(
                f"UnifiedGpuCompileSpec.vgf must be a VgfCompileSpec or None, got {type(self.vgf).__name__}")
        object.__setattr__(self, "extra_shared_compile_specs", tuple(self.extra_shared_compile_specs))
        object.__setattr__(self, "backend_compile_specs",
                           {core.backend_id(b): tuple(v) for b, v in dict(self.backend_compile_specs).items()})
        for specs in self.backend_compile_specs.values():
            for s in specs:
                if not isinstance(s, CompileSpec):
                    raise TypeError(f"backend_compile_specs must hold CompileSpec, got {type(s).__name__}")
        for s in self.extra_shared_compile_specs:
            if not isinstance(s, CompileSpec):
                raise TypeError(f"extra_shared_compile_specs must hold CompileSpec, got {type(s).__name__}")
        _vulkan_denied_ops(self.vulkan_compile_options)
        self.shared_spec()  # every value through the C parser now, not at export

    def shared_compile_specs(self) -> List[CompileSpec]:
        return [
            *make_shared_gpu_compile_specs(
                token=self.shared_context_token,
                mode=self.shared_context_mode,
                sync_mode=self.shared_sync_mode,
                group_id=self.shared_group_id,
                min_partition_size=self.min_partition_size,
                prefer=self.prefer,
            ),
            *self.extra_shared_compile_specs,
        ]

    def shared_spec(self) -> SharedGpuSpec:
        """shared_compile_specs() as the runtime will read them (a repeated key is refused)."""
        return parse_shared_compile_specs(self.shared_compile_specs())


# ---- partitioning --------------------------------------------------------

@dataclass
class PartitionResult:
    """A partition of one graph: its regions, the explain report, and the C partition."""

    graph: core.Graph
    partition: core.Partition
    spec: UnifiedGpuCompileSpec

    @property
    def regions(self) -> List[core.Region]:
        return self.partition.regions

    def region_strings(self) -> List[str]:
        """Each region as "Backend[node,node,...]"."""
        return [str(r) for r in self.regions]

    @property
    def explain(self) -> Dict[str, Any]:
        return self.partition.explain()

    def node_backend(self, node: Union[int, str]) -> str:
        return self.partition.node_backend(node)[0]

    @property
    def delegate_backends(self) -> List[str]:
        """The backend of each GPU region, in order: the program's delegates."""
        return [r.backend for r in self.regions if r.backend != "CpuFallback"]


def _graph_of(graph: Any) -> core.Graph:
    if isinstance(graph, core.Graph):
        return graph
    inner = getattr(graph, "graph", None)  # a frontend TracedGraph
    if isinstance(inner, core.Graph):
        return inner
    raise TypeError(f"expected a gpuu Graph or a traced graph, got {type(graph).__name__}")


class UnifiedGpuPartitioner:
    """Partitions a gpuu graph between VGF, Vulkan and the CPU as a UnifiedGpuCompileSpec says.

    prefer and min_partition_size come from the spec. Beyond the RFC:
      backends: an explicit preference list of GPU backend ids (then prefer is not read);
      retry_pruned: offer a backend's pruned nodes to the next GPU backends in the preference order;
      deny: (backend, op) pairs a backend must not take (added to the specs' denied_ops);
      pins: {node name: backend} placed whatever the policy, never pruned;
      op_costs: {op: {backend: cost}} for the auto policy's cost model;
      op_cost: {backend: cost}, each backend's default cost per node;
      gpu_crossing_cost, cpu_crossing_cost, gpu_region_cost: the cost model's other terms.
    Backends are named by id ("VgfBackend", "VulkanBackend", "CpuFallback", a plugin's own id)
    or the aliases "vgf", "vulkan", "cpu".
    """

    def __init__(self, spec: UnifiedGpuCompileSpec, *, retry_pruned: bool = False,
                 deny: Sequence[Tuple[str, str]] = (), pins: Optional[Mapping[str, str]] = None,
                 op_costs: Optional[Mapping[str, Mapping[str, float]]] = None,
                 op_cost: Optional[Mapping[str, float]] = None, backends: Sequence[str] = (),
                 gpu_crossing_cost: Optional[float] = None,
                 cpu_crossing_cost: Optional[float] = None, gpu_region_cost: Optional[float] = None) -> None:
        if not isinstance(spec, UnifiedGpuCompileSpec):
            raise TypeError(f"UnifiedGpuPartitioner takes a UnifiedGpuCompileSpec, got {type(spec).__name__}")
        self.spec = spec
        self.shared = spec.shared_spec()
        self.retry_pruned = bool(retry_pruned)
        self.deny = [(core.backend_id(b), op) for b, op in deny]
        self.pins = [(node, core.backend_id(b)) for node, b in (pins or {}).items()]
        self.backends = [core.backend_id(b) for b in backends]
        # Costs by (op, backend); op "*" is a backend's default (gpuu_partition_op_cost).
        self.op_costs = [("*", core.backend_id(b), float(c)) for b, c in (op_cost or {}).items()]
        self.op_costs += [(op, core.backend_id(b), float(c))
                          for op, costs in (op_costs or {}).items() for b, c in costs.items()]
        self.costs = {"gpu_crossing_cost": gpu_crossing_cost,
                      "cpu_crossing_cost": cpu_crossing_cost, "gpu_region_cost": gpu_region_cost}

    def _options(self) -> Any:
        o = _c.gpuu_partition_options()
        _c.gpuu_partition_options_init(o)
        o.prefer = core.PREFER[self.shared.prefer]
        o.min_partition_size = self.shared.min_partition_size
        o.retry_pruned = 1 if self.retry_pruned else 0
        for name, value in self.costs.items():
            if value is not None:
                setattr(o, name, float(value))
        return o

    def _denials(self, graph: core.Graph) -> List[Tuple[str, str]]:
        deny = list(self.deny)
        if self.spec.vgf is not None:
            deny += [(core.BACKEND_VGF, op) for op in self.spec.vgf.denied_ops_for(graph)]
        deny += [(core.BACKEND_VULKAN, op) for op in _vulkan_denied_ops(self.spec.vulkan_compile_options)]
        # Several sources may deny the same op: pass each pair once.
        seen, unique = set(), []
        for d in deny:
            if d not in seen:
                seen.add(d)
                unique.append(d)
        return unique

    def partition(self, graph: Any) -> PartitionResult:
        """Runs the partition engine on `graph` (a gpuu Graph or a frontend TracedGraph)."""
        g = _graph_of(graph)
        p = core.Partition(g, self._options(), deny=self._denials(g), pins=self.pins, op_costs=self.op_costs,
                           backends=self.backends)
        return PartitionResult(g, p, self.spec)

    def write_options(self) -> Any:
        return core.program_write_options(token=self.shared.token, group_id=self.shared.group_id,
                                          mode=self.shared.mode, sync_mode=self.shared.sync_mode)

    def write_program(self, result: PartitionResult, path: Optional[Union[str, os.PathLike]] = None
                      ) -> Optional[bytes]:
        """Writes the program file for `result` to `path` (atomically), or returns its bytes if path is None.

        Every delegate gets the six shared compile specs of the spec, then the
        spec's extra_shared_compile_specs, then the specs its backend has in
        the spec's backend_compile_specs ({backend id: [CompileSpec]}); the
        backends' preprocess sees them all, and the C writer checks them (a bad
        or repeated gpu_shared_ key, an unknown backend id: InvalidArgumentError).
        """
        return core.write_program(
            result.graph, result.partition, None if path is None else os.fspath(path), self.write_options(),
            extra_shared_compile_specs=[(s.key, s.value) for s in self.spec.extra_shared_compile_specs],
            backend_compile_specs={b: [(s.key, s.value) for s in specs]
                                   for b, specs in self.spec.backend_compile_specs.items()})


def export(module: Any, example_inputs: Sequence[Any], spec: UnifiedGpuCompileSpec,
           path: Union[str, os.PathLike], precision: str = "fp32", dynamic_shapes: Any = None,
           **partitioner_options: Any) -> Dict[str, Any]:
    """Traces `module` on `example_inputs`, partitions it as `spec` says, writes the program to `path`.

    `precision` "fp16" runs an f32 module's math in f16 (gpuu.frontend.from_torch says how; the
    program still takes and returns f32). Returns the partition's explain report (a dict); with a
    reduced precision, its "precision" entry holds the program's error against the f32 module in
    PyTorch eager, measured by running the program once on the default device.
    `dynamic_shapes` (torch.export's form: per input None or {axis: torch.export.Dim}) makes sizes vary
    between executes within the Dims' bounds (gpuu.frontend.from_torch says how); the report's "dims"
    lists them. `partitioner_options` go to UnifiedGpuPartitioner (retry_pruned, deny, pins, op_costs, costs).
    """
    from .frontend import from_torch

    traced = from_torch(module, example_inputs, precision=precision, dynamic_shapes=dynamic_shapes)
    try:
        partitioner = UnifiedGpuPartitioner(spec, **partitioner_options)
        result = partitioner.partition(traced)
        try:
            partitioner.write_program(result, path)
            report = result.explain
            if traced.dims:
                report["dims"] = [{"name": n, "min": lo, "max": hi, "recorded_at": at} for n, lo, hi, at in traced.dims]
            if traced.quantized:
                report["quantized"] = traced.quantized
        finally:
            result.partition.close()
    finally:
        traced.close()
    if precision != "fp32":
        report["precision"] = _precision_error(module, example_inputs, path, precision)
    return report


def _precision_error(module: Any, example_inputs: Sequence[Any], path: Union[str, os.PathLike],
                     precision: str) -> Dict[str, Any]:
    """The exported program's largest error against `module` in f32 eager, on the example inputs."""
    import numpy as np
    import torch

    from .runtime import load

    entry: Dict[str, Any] = {"compute": precision, "reference": "the f32 module in PyTorch eager"}
    with torch.no_grad():
        want = module(*example_inputs)
    want = [w.numpy() for w in (want if isinstance(want, (tuple, list)) else [want])]
    try:
        with load(path) as program:
            got = program.run([x.numpy() for x in example_inputs])
    except Exception as e:  # a machine without a device for some region: export still succeeds
        entry["unmeasured_why"] = f"{type(e).__name__}: {e}"
        return entry
    entry["max_abs_err"] = max(float(np.max(np.abs(g.astype(np.float64) - w))) if w.size else 0.0
                               for g, w in zip(got, want))
    entry["reference_max_abs"] = max(float(np.max(np.abs(w))) if w.size else 0.0 for w in want)
    return entry


def export_vgf(module: Any, example_inputs: Sequence[Any], spec: UnifiedGpuCompileSpec,
               out_dir: Union[str, os.PathLike], **partitioner_options: Any) -> List[str]:
    """The standalone VGF flow: each VGF region of the partitioned model as its own .vgf file.

    Traces and partitions as export() does, then writes `out_dir/<delegate index>.vgf`
    (complete VGF files for Arm's tools and bespoke runtimes) with a scenario JSON
    for Arm's scenario runner beside each, plus its input .npy files filled with
    zeros (`<index>.input_<i>.npy`; replace them with real data) so that the
    scenario runs as written (gpuu_program_extract_vgf). Returns the paths of the
    .vgf files; none when no region went to VGF.
    """
    from .frontend import from_torch

    with from_torch(module, example_inputs) as traced:
        partitioner = UnifiedGpuPartitioner(spec, **partitioner_options)
        result = partitioner.partition(traced)
        try:
            data = partitioner.write_program(result)
        finally:
            result.partition.close()
    with core.Program(data=data) as program:
        return program.extract_vgf(os.fspath(out_dir))
