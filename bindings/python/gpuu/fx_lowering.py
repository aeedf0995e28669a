"""The lowering engine: an ATen-level torch.fx graph -> a gpuu graph.

The engine runs the fx graph once on real example inputs (so every node's
shape, dtype and constant value is known), folds everything computed from
constants alone, and hands each remaining node to its lowering in aten_ops
(looked up by overload packet, "aten.add" for aten.add.Tensor). Every emitted
value's shape and dtype is checked against what PyTorch computed, so a mapping
mistake fails here, naming the fx node, rather than as wrong numbers later.

Problems are collected, not raised one by one: the error lists every ATen op
without a mapping (with its count and first node) and every node whose mapping
failed, so a user sees the whole picture at once.
"""

from __future__ import annotations

import operator
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch
import torch.fx
from torch.utils import _pytree as pytree

from . import conv_bn, core, quantized
from .errors import GpuuError

aten = torch.ops.aten


class FrontendError(ValueError):
    """The model cannot be expressed as a gpuu graph; the message names every fx node and target at fault."""


_TORCH_TO_GPUU = {
    torch.float32: core.DTYPE_F32,
    torch.float16: core.DTYPE_F16,
    torch.int32: core.DTYPE_I32,
    torch.int64: core.DTYPE_I64,
    torch.int8: core.DTYPE_I8,
    torch.int16: core.DTYPE_I16,
    torch.bool: core.DTYPE_BOOL,
}
_GPUU_TO_TORCH = {v: k for k, v in _TORCH_TO_GPUU.items()}


# ---- what fx nodes lower to ------------------------------------------------------

@dataclass(frozen=True)
class _T:
    """A gpuu value: id, dtype and shape (as the C side inferred them)."""

    id: int
    dtype: int
    shape: Tuple[int, ...]

    @property
    def rank(self) -> int:
        return len(self.shape)


class _K:
    """A tensor known at trace time; it becomes a gpuu constant only when a node uses it."""

    def __init__(self, tensor: torch.Tensor, name: str) -> None:
        self.tensor = tensor
        self.name = name
        self.value: Optional[_T] = None  # the materialised constant

    @property
    def shape(self) -> Tuple[int, ...]:
        return tuple(self.tensor.shape)

    @property
    def rank(self) -> int:
        return self.tensor.dim()


class _Lazy:
    """One output of a multi-output op (a split piece), emitted only if something uses it.

    Unused pieces never become nodes: the partitioner would leave them dead, in
    no region, but a graph without them is smaller to check and to explain.
    """

    def __init__(self, make: Callable[[], "_T"]) -> None:
        self._make: Optional[Callable[[], _T]] = make
        self._value: Optional[_T] = None

    def force(self) -> "_T":
        if self._make is not None:
            self._value, self._make = self._make(), None
        return self._value


class _Complex:
    """A complex tensor, held as its real view `pairs` ([..., 2]: real and imaginary parts, a gpuu value). Made by
    view_as_complex and given back by view_as_real; +, - and * are defined on it (rotary embeddings written with
    complex numbers, as Meta's Llama reference code does), nothing else."""

    def __init__(self, pairs: "_T") -> None:
        self.pairs = pairs


# The ATen ops whose lowerings take _Complex operands.
_COMPLEX_AWARE = {"view_as_real", "add", "add_", "sub", "sub_", "mul"}


def _is_complex(v: Any) -> bool:
    return isinstance(v, _Complex) or (isinstance(v, _K) and v.tensor.is_complex())


class _Unusable:
    """An output gpuu does not produce (e.g. max_pool2d's indices): an error if anything uses it."""

    def __init__(self, why: str) -> None:
        self.why = why


_RANDOM_PREFIXES = ("rand", "bernoulli", "normal", "uniform", "multinomial", "native_dropout", "poisson")
# Uninitialised tensors: decompositions fill them before reading (circular padding's copies, say); folded as zeros.
_UNINITIALISED = ("empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided")


@dataclass
class TracedGraph(core._ClosesOnExit):
    """A gpuu graph made from a PyTorch module.

    graph: the gpuu Graph (owns the C handle); input_names / output_names: the
    gpuu values of the model's flattened inputs and outputs, in order;
    fx_graph: the traced torch.fx GraphModule; node_map: fx node name -> the
    gpuu nodes emitted for it; state_names: the buffers the model mutates, each
    a program state named as the buffer (its update the value the model leaves
    in it), in order.
    """

    graph: core.Graph
    input_names: List[str]
    output_names: List[str]
    fx_graph: torch.fx.GraphModule
    node_map: Dict[str, List[str]]
    state_names: List[str] = field(default_factory=list)
    # Dynamic sizes: (name, min, max, size the graph was built at) per dim (from_torch's dynamic_shapes).
    dims: List[Tuple[str, int, int, int]] = field(default_factory=list)
    # A PT2E-quantized model's int8 results: what computes each (quantized.Plan.report); empty otherwise.
    quantized: List[Dict[str, str]] = field(default_factory=list)
    # With compact_constants (dims): each folded constant's value (before compaction), by value name.
    constants: Dict[str, torch.Tensor] = field(default_factory=dict)

    def close(self) -> None:
        self.graph.close()


class _Recorder(torch.fx.Interpreter):
    """Runs the traced graph once, keeping every node's real result (shapes, dtypes, folded constants)."""

    def __init__(self, gm: torch.fx.GraphModule) -> None:
        super().__init__(gm)
        self.results: Dict[torch.fx.Node, Any] = {}

    def run_node(self, n: torch.fx.Node) -> Any:
        r = super().run_node(n)
        self.results[n] = r
        return r


def _broadcast_axes_cut(t: torch.Tensor) -> torch.Tensor:
    """`t` cut to one entry along every axis it is broadcast along (stride 0)."""
    for axis in range(t.dim()):
        if t.stride(axis) == 0 and t.shape[axis] > 1:
            t = t.narrow(axis, 0, 1)
    return t


def _broadcast_kept(t: torch.Tensor) -> torch.Tensor:
    """A copy of `t` that stays a broadcast where `t` is one (stride 0 along an axis: a folded expand of a
    weight): its entries once, expanded as a view, so that an expanded weight costs no more than the weight."""
    small = _broadcast_axes_cut(t)
    return t.clone() if small is t else small.clone().expand(t.shape)


def _compacted(t: torch.Tensor) -> torch.Tensor:
    """`t` cut to one entry along every axis where all its entries repeat."""
    for axis in range(t.dim()):
        if t.shape[axis] > 1:
            first = t.narrow(axis, 0, 1)
            if torch.equal(t, first.expand_as(t)):
                t = first
    return t.contiguous()


def _target_name(target: Any) -> str:
    if isinstance(target, torch._ops.OpOverload):
        return str(target)  # "aten.flip.default"
    return getattr(target, "__name__", str(target))


def _packet(target: Any) -> Optional[str]:
    """"aten.add" for aten.add.Tensor: the overload packet's name."""
    if isinstance(target, torch._ops.OpOverload):
        return target.overloadpacket.__name__
    return None


def _gpuu_dtype_of(dtype: torch.dtype, what: str) -> int:
    try:
        return _TORCH_TO_GPUU[dtype]
    except KeyError:
        raise FrontendError(f"{what} has dtype {dtype}, which gpuu does not have ({', '.join(core.DTYPES)})") \
            from None


@dataclass(frozen=True)
class Placeholder:
    """What an fx placeholder stands for: a graph input (example value), a named constant, or a state (a buffer
    the model mutates: `tensor` is its value at export, where each session starts)."""

    name: str
    tensor: torch.Tensor
    is_input: bool
    is_state: bool = False


# Arguments whose values a lowering never reads (it takes their shape and dtype from the result PyTorch recorded):
# their producers need not run for it. aten.copy(self, src), functionalization's copy_, is src in self's shape:
# a slice assignment's slice of the old value would otherwise be computed for nothing.
_SHAPE_ONLY_ARGS = {"copy": (0,)}
# What such an argument is, where nothing else needed its node.
_NOT_COMPUTED = _Unusable("a value gpuu does not compute (only its shape is taken)")

# Nodes with no result worth lowering (torch.export's runtime assertions).
_IGNORED = {"_assert_tensor_metadata", "_assert_async", "_assert_scalar", "sym_constrain_range_for_size",
            "_assert_async_msg", "sym_constrain_range"}


class _NodeFailed(Exception):
    """A lowering problem already recorded; unwinds the current node only."""


class _Failed:
    """The result of a node whose lowering failed: nodes reading it are skipped, not reported again."""


class Lowering:
    """Lowers `gm`, whose placeholders `placeholders` describe in order.

    updates: for each state placeholder (by name), the fx node holding its new value;
    user_outputs: the positions among the output node's flattened values that are the
    model's outputs (None: all of them; the others are state updates).
    """

    def __init__(self, gm: torch.fx.GraphModule, placeholders: Sequence[Placeholder],
                 lowerings: Dict[str, Callable], shape_only: set,
                 updates: Optional[Dict[str, torch.fx.Node]] = None,
                 user_outputs: Optional[Sequence[int]] = None, compact_constants: bool = False,
                 prefix_tables: Optional[Dict[str, Tuple[torch.Tensor, List[int]]]] = None) -> None:
        self.gm = gm
        # With dims (gpuu.frontend.from_torch's dynamic_shapes): a folded constant that repeats along an axis (a
        # weight expanded for a batched matmul, a full_like of an input) is stored once along it and expanded by
        # a node, whose shape can follow the dims where the constant's could not.
        self.compact_constants = compact_constants
        # Folded constants whose length along some axes follows the dims (a position table, rotary cos/sin of
        # arange(seq)): {value name: (its value at the dims' largest sizes, those axes)}; each is stored at the
        # largest sizes and sliced to the recording's (gpuu.frontend._with_dims finds them).
        self.prefix_tables = dict(prefix_tables or {})
        self.constant_tensors: Dict[str, torch.Tensor] = {}
        self.placeholders = list(placeholders)
        self.lowerings = lowerings
        self.shape_only = shape_only
        self.updates = dict(updates or {})
        self.user_outputs = None if user_outputs is None else list(user_outputs)
        self.state_values: Dict[str, _T] = {}  # state name -> the value that reads it
        self.graph = core.Graph()
        self.env: Dict[torch.fx.Node, Any] = {}
        self.counters: Counter = Counter()
        self.value_names: set = set()
        self.scalar_cache: Dict[Tuple[int, float, int], _T] = {}
        self.node_map: Dict[str, List[str]] = {}
        self.current: Optional[torch.fx.Node] = None
        self.real: Dict[torch.fx.Node, Any] = {}
        self.problems: List[str] = []
        # conv_bn.plan's folds: {convolution node: the batch norm it absorbs}, and the reverse.
        self.conv_bn: Dict[torch.fx.Node, torch.fx.Node] = {}
        self.bn_of_conv: Dict[torch.fx.Node, torch.fx.Node] = {}

    # -- driving -----------------------------------------------------------
    def run(self) -> TracedGraph:
        try:
            return self._run()
        except BaseException:
            self.graph.close()
            raise

    def _run(self) -> TracedGraph:
        fx_placeholders = [n for n in self.gm.graph.nodes if n.op == "placeholder"]
        if len(fx_placeholders) != len(self.placeholders):
            raise FrontendError(f"the traced graph has {len(fx_placeholders)} inputs, "
                                f"but {len(self.placeholders)} were described")
        states = {p.name for p in self.placeholders if p.is_state}
        if states != set(self.updates):
            raise FrontendError(f"states without an update: {sorted(states - set(self.updates))}; updates of no "
                                f"state: {sorted(set(self.updates) - states)}")
        recorder = _Recorder(self.gm)
        with torch.no_grad():
            # A state is recorded on a copy: a traced copy_ writes into it, and its own value is the initial one.
            recorder.run(*[p.tensor.clone() if p.is_state else p.tensor for p in self.placeholders])
        self.real = recorder.results
        # What each fx placeholder stands for, found once.
        placeholder_of = dict(zip(fx_placeholders, self.placeholders))
        live = self._live_nodes()
        self._check_mapped(live, placeholder_of)
        constants = {n for n, p in placeholder_of.items() if not p.is_input and not p.is_state}
        constants |= {n for n in self.gm.graph.nodes if n.op == "get_attr"}
        folds = quantized.plan(self.gm, constants, live)
        self.conv_bn = conv_bn.plan(self.gm, constants, live, set(folds.roots) | set(folds.absorbed))
        self.bn_of_conv = {bn: conv for conv, bn in self.conv_bn.items()}
        self._constant_of = {n: p.tensor for n, p in placeholder_of.items() if n in constants}
        output_names: List[str] = []
        input_names: List[str] = []
        for node in self.gm.graph.nodes:
            self.current = node
            try:
                if node.op == "placeholder":
                    p = placeholder_of[node]
                    if p.is_input:
                        self.env[node] = self._placeholder(p)
                        input_names.append(self.graph.value_name(self.env[node].id))
                    elif p.is_state:
                        self.env[node] = self._state(p)
                    else:
                        self.env[node] = _K(p.tensor.detach(), p.name)
                    continue
                if node not in live:
                    continue
                if node.op == "get_attr":
                    t = self._attr(node.target)
                    if not isinstance(t, torch.Tensor):
                        self._fail(f"attribute {node.target} is a {type(t).__name__}, not a tensor")
                    self.env[node] = _K(t.detach(), node.target)
                elif node.op == "call_function":
                    before = self.graph.node_count
                    if node in folds.absorbed:  # computed on integers by the quantize that ends it
                        self.env[node] = _Unusable(f"{node.name}, folded into a quantized op")
                    elif node in folds.roots:
                        self.env[node] = quantized.lower(self, folds.roots[node], self.real[node])
                        self._check(self.env[node], self.real[node])
                    else:
                        self.env[node] = self._call(node)
                    self.node_map[node.name] = [self.graph.node(i).name for i in range(before, self.graph.node_count)]
                elif node.op == "output":
                    if not self.problems:
                        output_names = self._outputs(node)
                        self._set_state_updates()
                else:
                    self._fail(f"fx op kind '{node.op}' is not supported (expected a flat ATen graph)")
            except _NodeFailed:
                self.env[node] = _Failed()
            except FrontendError as e:
                self.problems.append(str(e))
                self.env[node] = _Failed()
        self.current = None
        if self.problems:
            raise FrontendError(self._report())
        state_names = [self.graph.value_name(v.id) for v in self.state_values.values()]
        return TracedGraph(self.graph, input_names, output_names, self.gm, self.node_map, state_names,
                           quantized=folds.report(), constants=self.constant_tensors)

    def _report(self) -> str:
        head = f"{len(self.problems)} problem{'s' if len(self.problems) != 1 else ''} exporting the model:"
        return "\n".join([head] + [f"  - {p}" for p in self.problems])

    def _check_mapped(self, live: set, placeholder_of: Dict[torch.fx.Node, Placeholder]) -> None:
        """Records every live, input-dependent ATen op without a lowering, with its count and first node."""
        dynamic: set = set()
        missing: Dict[str, List[torch.fx.Node]] = {}
        for node in self.gm.graph.nodes:
            if node.op == "placeholder":
                if placeholder_of[node].is_input or placeholder_of[node].is_state:
                    dynamic.add(node)
                continue
            if node.op != "call_function" or node not in live:
                continue
            if not any(a in dynamic for a in node.all_input_nodes):
                continue
            dynamic.add(node)
            if node.target is operator.getitem:
                continue
            packet = _packet(node.target)
            if packet is None or (packet not in self.lowerings and packet not in self.shape_only):
                missing.setdefault(_target_name(node.target) if packet is None else f"aten.{packet}", []).append(node)
        if missing:
            parts = [f"{name} ({len(nodes)} node{'s' if len(nodes) != 1 else ''}, first '{nodes[0].name}')"
                     for name, nodes in sorted(missing.items(), key=lambda kv: (-len(kv[1]), kv[0]))]
            self.problems.append(f"{len(missing)} ATen op{'s have' if len(missing) != 1 else ' has'} no gpuu mapping: "
                                 + ", ".join(parts))

    def _fail(self, why: str) -> None:
        """Records a problem at the current node and abandons it."""
        self.problems.append(str(self._error(why)))
        raise _NodeFailed()

    def _attr(self, target: str) -> Any:
        obj: Any = self.gm
        for part in target.split("."):
            obj = getattr(obj, part)
        return obj

    def _live_nodes(self) -> set:
        live: set = set()
        # The outputs and the states' new values (a make_fx graph's trailing copy_ nodes have no users).
        stack = [n for n in self.gm.graph.nodes if n.op == "output"] + list(self.updates.values())
        while stack:
            n = stack.pop()
            if n in live:
                continue
            live.add(n)
            skip = _SHAPE_ONLY_ARGS.get(_packet(n.target), ()) if n.op == "call_function" else ()
            unread = {a for i, a in enumerate(n.args) if i in skip} - {a for i, a in enumerate(n.args) if i not in skip}
            stack.extend(a for a in n.all_input_nodes if a not in unread)
        return live

    def _error(self, why: str) -> FrontendError:
        n = self.current
        if n is None:
            return FrontendError(why)
        return FrontendError(f"fx node '{n.name}' ({_target_name(n.target)}): {why}")

    def _placeholder(self, p: Placeholder) -> _T:
        name = self._unique_value_name(p.name)
        dtype = _gpuu_dtype_of(p.tensor.dtype, f"input '{name}'")
        vid = self.graph.add_input(name, dtype, list(p.tensor.shape))
        return _T(vid, dtype, tuple(p.tensor.shape))

    def _state(self, p: Placeholder) -> _T:
        """A graph state named as the buffer, starting from the buffer's value at export."""
        t = p.tensor.detach().contiguous()
        name = self._unique_value_name(p.name)
        dtype = _gpuu_dtype_of(t.dtype, f"state '{name}'")
        vid = self.graph.add_state(name, t.numpy(), dtype)
        self.state_values[p.name] = _T(vid, dtype, tuple(t.shape))
        return self.state_values[p.name]

    def _set_state_updates(self) -> None:
        """Each state's update: the value its fx update node lowered to (a copy where no node computes it)."""
        for name, node in self.updates.items():
            self.current = node
            value = self._use(self.env[node], f"the new value of state '{name}'")
            if self.graph.value_producer(value.id) < 0:  # an input, a constant or a state's own value
                value = self._emit("reshape", [value], {"shape": list(value.shape)})
            try:
                self.graph.set_state_update(self.state_values[name].id, value.id)
            except GpuuError as e:
                raise self._error(f"state '{name}': {e}") from e
        self.current = None

    def _unique_value_name(self, base: str) -> str:
        name, k = base, 1
        while name in self.value_names:
            name = f"{base}_{k}"
            k += 1
        self.value_names.add(name)
        return name

    def _outputs(self, node: torch.fx.Node) -> List[str]:
        flat, _ = pytree.tree_flatten(node.args[0])
        if self.user_outputs is not None:
            flat = [flat[i] for i in self.user_outputs]
        names = []
        marked: set = set()
        state_ids = {v.id for v in self.state_values.values()}
        for i, item in enumerate(flat):
            if not isinstance(item, torch.fx.Node):
                raise self._error(f"output {i} is a {type(item).__name__}; gpuu graphs return tensors only")
            value = self._use(self.env[item], f"output {i}")
            if value.id in marked or value.id in state_ids:
                # A value may be an output once, and a state's value is none (it would be the
                # state before or after the run, depending on where it lives): a copy stands in.
                value = self._emit("reshape", [value], {"shape": list(value.shape)})
            self.graph.mark_output(value.id)
            marked.add(value.id)
            names.append(self.graph.value_name(value.id))
        return names

    # -- values ------------------------------------------------------------
    def _use(self, v: Any, what: str) -> _T:
        """`v` as a gpuu value: constants are materialised on first use."""
        if isinstance(v, _T):
            return v
        if isinstance(v, _K):
            if v.value is None:
                full_shape = tuple(v.tensor.shape)
                # A broadcast constant is stored once and expanded by a node.
                t = _broadcast_axes_cut(v.tensor.detach()).contiguous()
                dtype = _gpuu_dtype_of(t.dtype, f"constant '{v.name}'")
                name = self._unique_value_name(v.name)
                if self.compact_constants:
                    self.constant_tensors[name] = v.tensor.detach()
                    if name in self.prefix_tables:
                        v.value = self._prefix_of(name, v.tensor.detach(), *self.prefix_tables[name])
                        return v.value
                    t = _compacted(t)
                vid = self.graph.add_constant(name, t.numpy(), dtype)
                v.value = self.broadcast_to(_T(vid, dtype, tuple(t.shape)), full_shape)
            return v.value
        if isinstance(v, _Unusable):
            raise self._error(f"{what} uses {v.why}, which gpuu does not compute")
        if isinstance(v, _Complex):
            raise self._error(f"{what} is a complex tensor: gpuu takes complex values only through +, - and * "
                              "between view_as_complex and view_as_real")
        raise self._error(f"{what} is a {type(v).__name__} where a tensor is needed")

    def _prefix_of(self, name: str, t: torch.Tensor, table: torch.Tensor, axes: List[int]) -> _T:
        """`t` as a slice of `table` (the same constant at the dims' largest sizes) from 0 along `axes`."""
        start = table
        for axis in axes:
            start = start.narrow(axis, 0, t.shape[axis])
        if start.shape != t.shape or not torch.allclose(start, t, rtol=1e-6, atol=1e-6, equal_nan=True):
            raise self._error(f"constant '{name}' is folded from the sizes, and its value is not the start of its "
                              "value at the largest sizes: gpuu cannot compute it at run time")
        dtype = _gpuu_dtype_of(table.dtype, f"constant '{name}'")
        vid = self.graph.add_constant(name, table.contiguous().numpy(), dtype)
        whole = _T(vid, dtype, tuple(table.shape))
        return self._emit("slice", [whole], {"axes": list(axes), "starts": [0] * len(axes),
                                             "ends": [int(t.shape[a]) for a in axes], "steps": [1] * len(axes)})

    def _scalar(self, value: Any, dtype: int, rank: int) -> _T:
        """A constant of `dtype` holding `value`, shaped [1]*rank so it broadcasts against a rank-`rank` tensor."""
        key = (dtype, float(value), rank)
        if key not in self.scalar_cache:
            arr = np.full([1] * rank, value, dtype=core.numpy_dtype(dtype))
            name = self._unique_value_name(f"scalar_{len(self.scalar_cache)}")
            vid = self.graph.add_constant(name, arr, dtype)
            self.scalar_cache[key] = _T(vid, dtype, tuple(arr.shape))
        return self.scalar_cache[key]

    def _operand(self, v: Any, dtype: int, rank: int, what: str) -> _T:
        """`v` (tensor, constant or Python scalar) as a gpuu value of `dtype`."""
        if isinstance(v, (bool, int, float)):
            return self._scalar(v, dtype, rank)
        if isinstance(v, _K) and _TORCH_TO_GPUU.get(v.tensor.dtype) != dtype:
            v = _K(v.tensor.to(_GPUU_TO_TORCH[dtype]), f"{v.name}_{core.dtype_name(dtype)}")
        t = self._use(v, what)
        return self._cast(t, dtype)

    def _cast(self, t: _T, dtype: int) -> _T:
        if t.dtype == dtype:
            return t
        return self._emit("cast", [t], {"dtype": core.dtype_name(dtype)})

    def _emit(self, op: str, inputs: Sequence[Optional[_T]], attrs: Optional[Dict[str, Any]] = None) -> _T:
        return self._emit_outputs(op, inputs, attrs)[0]

    def _emit_outputs(self, op: str, inputs: Sequence[Optional[_T]],
                      attrs: Optional[Dict[str, Any]] = None) -> List[_T]:
        """A node of `op` and every output it has (topk: values and indices)."""
        name = f"{op}_{self.counters[op]}"
        self.counters[op] += 1
        try:
            outs = self.graph.add_node(op, name, [None if i is None else i.id for i in inputs], attrs or {})
        except GpuuError as e:
            raise self._error(f"gpuu refused node '{name}': {e}") from e
        return [_T(vid, self.graph.value_dtype(vid), self.graph.value_shape(vid)) for vid in outs]

    def _real(self, arg: Any) -> Any:
        """The real value PyTorch computed for an fx argument (tensors), or the argument itself."""
        return self.real[arg] if isinstance(arg, torch.fx.Node) else arg

    def real_arg(self, node: torch.fx.Node, index: int) -> Any:
        """The real value of positional argument `index` of `node` (keyword arguments follow in order)."""
        args = list(node.args) + list(node.kwargs.values())
        return self._real(args[index])

    # -- calls -------------------------------------------------------------
    def _call(self, node: torch.fx.Node) -> Any:
        if any(isinstance(self.env.get(a), _Failed) for a in node.all_input_nodes):
            raise _NodeFailed()  # the failure upstream is reported already
        target = node.target
        if target is operator.getitem:
            seq, index = node.args
            parts = self.env[seq]
            if not isinstance(parts, (list, tuple)):
                raise self._error("getitem on a value that is not a sequence")
            part = parts[index]
            if isinstance(part, _Lazy):
                part = part.force()
                self._check(part, self.real[node])
            return part
        args = pytree.tree_map(lambda a: self.env.get(a, _NOT_COMPUTED) if isinstance(a, torch.fx.Node) else a,
                               node.args)
        kwargs = pytree.tree_map(lambda a: self.env.get(a, _NOT_COMPUTED) if isinstance(a, torch.fx.Node) else a,
                                 node.kwargs)
        packet = _packet(target)
        if packet in _IGNORED:
            return None
        real = self.real[node]
        if packet not in _COMPLEX_AWARE and any(isinstance(v, _Complex) for v in pytree.tree_flatten((args, kwargs))[0]):
            raise self._error("a complex operand: gpuu takes complex values only through +, - and * between "
                              "view_as_complex and view_as_real")
        if packet is not None and self._foldable(args, kwargs, packet):
            return self._fold(node, real, args)
        lower = self.lowerings.get(packet) if packet is not None else None
        if lower is None:
            raise _NodeFailed()  # listed by _check_mapped
        bound = _bind(target, args, kwargs)
        result = lower(self, bound, real, node)
        self._check(result, real)
        return result

    def _foldable(self, args: Any, kwargs: Any, packet: str) -> bool:
        leaves = pytree.tree_flatten((args, kwargs))[0]
        if any(isinstance(a, (_T, _Unusable, _Complex)) for a in leaves):
            return packet in self.shape_only and not any(isinstance(a, _Unusable) for a in leaves)
        if packet.startswith(_RANDOM_PREFIXES):
            raise self._error("random tensors cannot be baked into a gpuu graph (call module.eval() for dropout)")
        return True

    def _fold(self, node: torch.fx.Node, real: Any, args: Any) -> Any:
        if _packet(node.target) in _UNINITIALISED and isinstance(real, torch.Tensor):
            real = torch.zeros_like(real)
        # A fold of one named constant keeps its name: "fc.weight.t" reads better than "t_3".
        known = [a for a in pytree.tree_flatten(args)[0] if isinstance(a, _K)]
        base = f"{known[0].name}.{_packet(node.target)}" if len(known) == 1 else node.name
        if isinstance(real, torch.Tensor):
            return _K(_broadcast_kept(real.detach()), base)
        if isinstance(real, (list, tuple)):
            return [_K(_broadcast_kept(r.detach()), f"{base}_{i}") if isinstance(r, torch.Tensor) else r
                    for i, r in enumerate(real)]
        return real

    def _check(self, result: Any, real: Any) -> None:
        """The emitted value must have the shape and dtype PyTorch computed."""
        pairs = list(zip(result, real)) if isinstance(result, (list, tuple)) else [(result, real)]
        for got, want in pairs:
            if not isinstance(got, _T) or not isinstance(want, torch.Tensor):
                continue
            want_dtype = _gpuu_dtype_of(want.dtype, "the result")
            if got.shape != tuple(want.shape) or got.dtype != want_dtype:
                raise self._error(
                    f"gpuu computes {core.dtype_name(got.dtype)}{list(got.shape)} but PyTorch "
                    f"{core.dtype_name(want_dtype)}{list(want.shape)} (a frontend bug: please report)")

    # -- helpers for the lowerings ---------------------------------------
    def conv_with_batch_norm(self, conv: torch.fx.Node) -> Optional[Tuple[_K, _K]]:
        """The weight and bias of convolution `conv` with the batch norm after it folded in (conv_bn), or None."""
        bn = self.conv_bn.get(conv)
        if bn is None:
            return None

        def value_of(n: torch.fx.Node) -> torch.Tensor:
            return self._constant_of[n] if n in self._constant_of else self._attr(n.target)
        weight, bias = conv_bn.folded(conv, bn, value_of)
        return _K(weight, f"{conv.name}.weight_bn"), _K(bias, f"{conv.name}.bias_bn")

    def folded_batch_norm_input(self, bn: torch.fx.Node) -> Optional[_T]:
        """For a batch norm folded into the convolution before it, that convolution's (already folded) value."""
        conv = self.bn_of_conv.get(bn)
        return None if conv is None else self.env[conv]

    def result_dtype(self, real: Any, what: str = "the result") -> int:
        return _gpuu_dtype_of(real.dtype, what)

    def tensor(self, v: Any, what: str) -> _T:
        return self._use(v, what)

    def reshape(self, x: _T, shape: Sequence[int]) -> _T:
        shape = [int(d) for d in shape]
        if list(x.shape) == shape:
            return x
        return self._emit("reshape", [x], {"shape": shape})

    def unary(self, op: str, x: Any, real: torch.Tensor) -> _T:
        dtype = self.result_dtype(real)
        return self._emit(op, [self._operand(x, dtype, 0, "input")])

    def binary(self, op: str, a: Any, b: Any, real: torch.Tensor, operand_dtype: Optional[int] = None) -> _T:
        """An elementwise op with torch's type promotion: operands cast to `operand_dtype` (default: the result's)."""
        if _is_complex(a) or _is_complex(b):
            return self._complex_binary(op, a, b, real)
        dtype = operand_dtype if operand_dtype is not None else self.result_dtype(real)
        rank = max((v.rank for v in (a, b) if isinstance(v, (_T, _K))), default=0)
        return self._emit(op, [self._operand(a, dtype, rank, "input 0"), self._operand(b, dtype, rank, "input 1")])

    def _complex_binary(self, op: str, a: Any, b: Any, real: torch.Tensor) -> "_Complex":
        """a op b with complex operands, on their real and imaginary parts (a real operand's imaginary part is 0)."""
        if op not in ("add", "sub", "mul"):
            raise self._error(f"{op} of complex tensors: gpuu takes complex values only through +, - and *")
        dtype = self.result_dtype(torch.view_as_real(real))

        def parts(v: Any, what: str) -> Tuple[Any, Any]:
            """(real, imaginary) of `v`, each [..., 1] (a complex constant's as constants); imaginary None if real."""
            if isinstance(v, _Complex):
                return self.slice(v.pairs, -1, 0, 1), self.slice(v.pairs, -1, 1, 2)
            if isinstance(v, _K) and v.tensor.is_complex():
                pairs = torch.view_as_real(v.tensor)
                return _K(pairs[..., 0:1], f"{v.name}.real"), _K(pairs[..., 1:2], f"{v.name}.imag")
            if isinstance(v, (bool, int, float)):
                return v, None
            t = self._operand(v, dtype, 0, what)
            return self.reshape(t, list(t.shape) + [1]), None

        (ar, ai), (br, bi) = parts(a, "input 0"), parts(b, "input 1")
        rank = max((v.rank for v in (ar, br) if isinstance(v, (_T, _K))), default=0)

        def op2(name: str, x: Any, y: Any) -> _T:
            return self._emit(name, [self._operand(x, dtype, rank, "input 0"), self._operand(y, dtype, rank, "input 1")])

        if op == "mul":
            re = op2("mul", ar, br)
            im = None
            if ai is not None and bi is not None:
                re = op2("sub", re, op2("mul", ai, bi))
            if ai is not None:
                im = op2("mul", ai, br)
            if bi is not None:
                im = op2("mul", ar, bi) if im is None else op2("add", op2("mul", ar, bi), im)
        else:  # add, sub
            re = op2(op, ar, br)
            if ai is not None and bi is not None:
                im = op2(op, ai, bi)
            elif bi is None:
                im = self._operand(ai, dtype, rank, "input 0")
            else:
                im = self._operand(bi, dtype, rank, "input 1") if op == "add" else op2("sub", 0.0, bi)
        return _Complex(self._emit("concat", [re, self.broadcast_to(im, re.shape)], {"axis": re.rank - 1}))

    def axis(self, dim: int, rank: int) -> int:
        if not -max(rank, 1) <= dim < max(rank, 1):
            raise self._error(f"dim {dim} is out of range for rank {rank}")
        return dim % max(rank, 1)

    def broadcast_to(self, x: _T, shape: Sequence[int]) -> _T:
        """x broadcast to `shape` (numpy rules): one expand node, nothing when the shape already matches."""
        shape = [int(d) for d in shape]
        if list(x.shape) == shape:
            return x
        return self._emit("expand", [x], {"shape": shape})

    def slice(self, x: _T, axis: int, start: int, end: int, step: int = 1) -> _T:
        size = x.shape[axis]
        start = max(0, min(size, start + size if start < 0 else start))
        end = max(0, min(size, end + size if end < 0 else end))
        if start == 0 and end == size and step == 1:
            return x
        return self._emit("slice", [x], {"axes": [axis], "starts": [start], "ends": [end], "steps": [step]})

    def constant(self, array: np.ndarray, name: str) -> _T:
        tensor = torch.from_numpy(np.ascontiguousarray(array))
        return self._use(_K(tensor, f"{self.current.name}_{name}" if self.current is not None else name), name)


# ---- binding ATen arguments by schema ---------------------------------------

def _bind(target: torch._ops.OpOverload, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Dict[str, Any]:
    """ATen arguments by schema name, defaults filled in."""
    bound: Dict[str, Any] = {}
    schema = target._schema
    for i, arg in enumerate(schema.arguments):
        if i < len(args) and not arg.kwarg_only:
            bound[arg.name] = args[i]
        elif arg.name in kwargs:
            bound[arg.name] = kwargs[arg.name]
        elif arg.has_default_value():
            bound[arg.name] = arg.default_value
        else:
            bound[arg.name] = None
    return bound


def _ints(v: Any, n: int) -> List[int]:
    """An int or list of ints as exactly n ints (torch repeats a single value)."""
    if isinstance(v, int):
        return [v] * n
    v = [int(x) for x in v]
    return v * n if len(v) == 1 else v


