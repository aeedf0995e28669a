"""torch.fx frontend: traces a PyTorch module to ATen ops (make_fx) and builds a gpuu graph from them.

Tracing runs the module on the example inputs for real, so models that unpack
shapes, split, chunk and view trace as they run. Parameters, buffers and tensor
constants become gpuu constants; anything computed from constants alone is
folded at trace time (weight transposes, index patterns, masks). Every emitted
node's shape and dtype is checked against what PyTorch computed, so a mapping
mistake fails here, naming the fx node, rather than as wrong numbers later.
"""

from __future__ import annotations

import inspect
import operator
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch
import torch.fx
from torch.fx.experimental.proxy_tensor import make_fx
from torch.utils import _pytree as pytree

from . import core
from .errors import GpuuError

aten = torch.ops.aten


class FrontendError(ValueError):
    """The model cannot be expressed as a gpuu graph; the message names the fx node and its target."""


_TORCH_TO_GPUU = {
    torch.float32: core.DTYPE_F32,
    torch.float16: core.DTYPE_F16,
    torch.int32: core.DTYPE_I32,
    torch.int64: core.DTYPE_I64,
    torch.int8: core.DTYPE_I8,
    torch.bool: core.DTYPE_BOOL,
}
_GPUU_TO_TORCH = {v: k for k, v in _TORCH_TO_GPUU.items()}
_CAST_NAMES = {core.DTYPE_F32: "f32", core.DTYPE_F16: "f16", core.DTYPE_I32: "i32", core.DTYPE_I64: "i64",
               core.DTYPE_I8: "i8", core.DTYPE_BOOL: "bool"}


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

    The program writer refuses regions whose results go nowhere, so unused pieces
    must not become nodes.
    """

    def __init__(self, make: Callable[[], "_T"]) -> None:
        self._make: Optional[Callable[[], _T]] = make
        self._value: Optional[_T] = None

    def force(self) -> "_T":
        if self._make is not None:
            self._value, self._make = self._make(), None
        return self._value


class _Unusable:
    """An output gpuu does not produce (e.g. max_pool2d's indices): an error if anything uses it."""

    def __init__(self, why: str) -> None:
        self.why = why


_RANDOM_PREFIXES = ("rand", "bernoulli", "normal", "uniform", "multinomial", "native_dropout", "empty", "poisson")


@dataclass
class TracedGraph:
    """A gpuu graph made from a PyTorch module.

    graph: the gpuu Graph (owns the C handle); input_names / output_names: the
    gpuu values of the model's flattened inputs and outputs, in order;
    fx_graph: the traced torch.fx GraphModule; node_map: fx node name -> the
    gpuu nodes emitted for it.
    """

    graph: core.Graph
    input_names: List[str]
    output_names: List[str]
    fx_graph: torch.fx.GraphModule
    node_map: Dict[str, List[str]]

    def close(self) -> None:
        self.graph.close()

    def __enter__(self) -> "TracedGraph":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def trace(module: Callable, example_inputs: Sequence[torch.Tensor]) -> torch.fx.GraphModule:
    """The ATen-level fx graph of `module` on `example_inputs` (make_fx, real tensors, no autograd)."""
    with torch.no_grad():
        return make_fx(module)(*example_inputs)


def from_torch(module: Callable, example_inputs: Sequence[Any], input_names: Optional[Sequence[str]] = None
               ) -> TracedGraph:
    """Traces `module` (an nn.Module or a function of tensors) and returns it as a gpuu graph.

    Graph inputs are named after the forward's parameters (or `input_names`);
    nodes are named "<gpuu op>_<n>". Raises FrontendError naming the fx node and
    target of anything that cannot be mapped.
    """
    inputs = tuple(example_inputs)
    for i, x in enumerate(inputs):
        if not isinstance(x, torch.Tensor):
            raise FrontendError(f"example input {i} is a {type(x).__name__}; gpuu graphs take tensors only")
    # Tracing and recording run the model for real: on copies, so that in-place ops leave the caller's inputs alone.
    gm = trace(module, tuple(x.clone() for x in inputs))
    names = list(input_names) if input_names is not None else _input_names(module, len(inputs))
    if len(names) != len(inputs):
        raise FrontendError(f"{len(names)} input names for {len(inputs)} example inputs")
    return _Lowering(gm, tuple(x.clone() for x in inputs), names, _constant_names(module)).run()


def _input_names(module: Callable, count: int) -> List[str]:
    try:
        params = [p for p in inspect.signature(module.forward if isinstance(module, torch.nn.Module) else module)
                  .parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    if len(params) >= count:
        return [p.name for p in params[:count]]
    return [f"input{i}" for i in range(count)]


def _constant_names(module: Callable) -> Dict[int, str]:
    """Parameter and buffer names by tensor identity (make_fx keeps the same objects)."""
    if not isinstance(module, torch.nn.Module):
        return {}
    names: Dict[int, str] = {}
    for name, t in list(module.named_parameters()) + list(module.named_buffers()):
        names.setdefault(id(t), name)
    return names


class _Recorder(torch.fx.Interpreter):
    """Runs the traced graph once, keeping every node's real result (shapes, dtypes, folded constants)."""

    def __init__(self, gm: torch.fx.GraphModule) -> None:
        super().__init__(gm)
        self.results: Dict[torch.fx.Node, Any] = {}

    def run_node(self, n: torch.fx.Node) -> Any:
        r = super().run_node(n)
        self.results[n] = r
        return r


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
        raise FrontendError(f"{what} has dtype {dtype}, which gpuu does not have (f32, f16, i32, i64, i8, bool)") \
            from None


class _Lowering:
    def __init__(self, gm: torch.fx.GraphModule, inputs: Tuple[torch.Tensor, ...], input_names: List[str],
                 constant_names: Dict[int, str]) -> None:
        self.gm = gm
        self.inputs = inputs
        self.input_names = input_names
        self.constant_names = constant_names
        self.graph = core.Graph()
        self.env: Dict[torch.fx.Node, Any] = {}
        self.counters: Counter = Counter()
        self.value_names: set = set()
        self.scalar_cache: Dict[Tuple[int, float, int], _T] = {}
        self.node_map: Dict[str, List[str]] = {}
        self.current: Optional[torch.fx.Node] = None
        self.real: Dict[torch.fx.Node, Any] = {}

    # -- driving -----------------------------------------------------------
    def run(self) -> TracedGraph:
        try:
            return self._run()
        except BaseException:
            self.graph.close()
            raise

    def _run(self) -> TracedGraph:
        recorder = _Recorder(self.gm)
        with torch.no_grad():
            recorder.run(*self.inputs)
        self.real = recorder.results
        live = self._live_nodes()
        output_names: List[str] = []
        placeholder_index = 0
        for node in self.gm.graph.nodes:
            self.current = node
            if node.op == "placeholder":
                self.env[node] = self._placeholder(node, placeholder_index)
                placeholder_index += 1
                continue
            if node not in live:
                continue
            if node.op == "get_attr":
                t = self._attr(node.target)
                if not isinstance(t, torch.Tensor):
                    raise self._error(f"attribute {node.target} is a {type(t).__name__}, not a tensor")
                self.env[node] = _K(t.detach(), self.constant_names.get(id(t), node.target))
            elif node.op == "call_function":
                before = self.graph.node_count
                self.env[node] = self._call(node)
                self.node_map[node.name] = [self.graph.node(i).name for i in range(before, self.graph.node_count)]
            elif node.op == "output":
                output_names = self._outputs(node)
            else:
                raise self._error(f"fx op kind '{node.op}' is not supported (expected a flat ATen graph)")
        self.current = None
        return TracedGraph(self.graph, list(self.input_names), output_names, self.gm, self.node_map)

    def _attr(self, target: str) -> Any:
        obj: Any = self.gm
        for part in target.split("."):
            obj = getattr(obj, part)
        return obj

    def _live_nodes(self) -> set:
        live: set = set()
        stack = [n for n in self.gm.graph.nodes if n.op == "output"]
        while stack:
            n = stack.pop()
            if n in live:
                continue
            live.add(n)
            stack.extend(n.all_input_nodes)
        return live

    def _error(self, why: str) -> FrontendError:
        n = self.current
        if n is None:
            return FrontendError(why)
        return FrontendError(f"fx node '{n.name}' ({_target_name(n.target)}): {why}")

    def _placeholder(self, node: torch.fx.Node, index: int) -> _T:
        if index >= len(self.inputs):
            raise self._error("the traced graph has more inputs than example inputs")
        x = self.inputs[index]
        name = self._unique_value_name(self.input_names[index])
        dtype = _gpuu_dtype_of(x.dtype, f"input '{name}'")
        vid = self.graph.add_input(name, dtype, list(x.shape))
        return _T(vid, dtype, tuple(x.shape))

    def _unique_value_name(self, base: str) -> str:
        name, k = base, 1
        while name in self.value_names:
            name = f"{base}_{k}"
            k += 1
        self.value_names.add(name)
        return name

    def _outputs(self, node: torch.fx.Node) -> List[str]:
        flat, _ = pytree.tree_flatten(node.args[0])
        names = []
        marked: set = set()
        for i, item in enumerate(flat):
            if not isinstance(item, torch.fx.Node):
                raise self._error(f"output {i} is a {type(item).__name__}; gpuu graphs return tensors only")
            value = self._use(self.env[item], f"output {i}")
            if value.id in marked:
                # A value may be an output once: a copy stands in for the repeat.
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
                t = v.tensor.detach().contiguous()
                dtype = _gpuu_dtype_of(t.dtype, f"constant '{v.name}'")
                name = self._unique_value_name(v.name)
                vid = self.graph.add_constant(name, t.numpy(), dtype)
                v.value = _T(vid, dtype, tuple(t.shape))
            return v.value
        if isinstance(v, _Unusable):
            raise self._error(f"{what} uses {v.why}, which gpuu does not compute")
        raise self._error(f"{what} is a {type(v).__name__} where a tensor is needed")

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
            v = _K(v.tensor.to(_GPUU_TO_TORCH[dtype]), f"{v.name}_{_CAST_NAMES[dtype]}")
        t = self._use(v, what)
        return self._cast(t, dtype)

    def _cast(self, t: _T, dtype: int) -> _T:
        if t.dtype == dtype:
            return t
        return self._emit("cast", [t], {"dtype": _CAST_NAMES[dtype]})

    def _emit(self, op: str, inputs: Sequence[Optional[_T]], attrs: Optional[Dict[str, Any]] = None) -> _T:
        name = f"{op}_{self.counters[op]}"
        self.counters[op] += 1
        try:
            outs = self.graph.add_node(op, name, [None if i is None else i.id for i in inputs], attrs or {})
        except GpuuError as e:
            raise self._error(f"gpuu refused node '{name}': {e}") from e
        vid = outs[0]
        return _T(vid, self.graph.value_dtype(vid), self.graph.value_shape(vid))

    def _real(self, arg: Any) -> Any:
        """The real value PyTorch computed for an fx argument (tensors), or the argument itself."""
        return self.real[arg] if isinstance(arg, torch.fx.Node) else arg

    def real_arg(self, node: torch.fx.Node, index: int) -> Any:
        """The real value of positional argument `index` of `node` (keyword arguments follow in order)."""
        args = list(node.args) + list(node.kwargs.values())
        return self._real(args[index])

    # -- calls -------------------------------------------------------------
    def _call(self, node: torch.fx.Node) -> Any:
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
        args = pytree.tree_map(lambda a: self.env[a] if isinstance(a, torch.fx.Node) else a, node.args)
        kwargs = pytree.tree_map(lambda a: self.env[a] if isinstance(a, torch.fx.Node) else a, node.kwargs)
        packet = _packet(target)
        if packet is None:
            raise self._error("only ATen operators are supported in a traced graph")
        real = self.real[node]
        if self._foldable(args, kwargs, packet):
            return self._fold(node, real, args)
        lower = _LOWERINGS.get(packet)
        if lower is None:
            raise self._error(f"no gpuu mapping for aten.{packet}")
        bound = _bind(target, args, kwargs)
        result = lower(self, bound, real, node)
        self._check(result, real)
        return result

    def _foldable(self, args: Any, kwargs: Any, packet: str) -> bool:
        leaves = pytree.tree_flatten((args, kwargs))[0]
        if any(isinstance(a, (_T, _Unusable)) for a in leaves):
            return packet in _SHAPE_ONLY and not any(isinstance(a, _Unusable) for a in leaves)
        if packet.startswith(_RANDOM_PREFIXES):
            raise self._error("random or uninitialised tensors cannot be baked into a gpuu graph")
        return True

    def _fold(self, node: torch.fx.Node, real: Any, args: Any) -> Any:
        # A fold of one named constant keeps its name: "fc.weight.t" reads better than "t_3".
        known = [a for a in pytree.tree_flatten(args)[0] if isinstance(a, _K)]
        base = f"{known[0].name}.{_packet(node.target)}" if len(known) == 1 else node.name
        if isinstance(real, torch.Tensor):
            return _K(real.detach().clone(), base)
        if isinstance(real, (list, tuple)):
            return [_K(r.detach().clone(), f"{base}_{i}") if isinstance(r, torch.Tensor) else r
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
        dtype = operand_dtype if operand_dtype is not None else self.result_dtype(real)
        rank = max((v.rank for v in (a, b) if isinstance(v, (_T, _K))), default=0)
        return self._emit(op, [self._operand(a, dtype, rank, "input 0"), self._operand(b, dtype, rank, "input 1")])

    def axis(self, dim: int, rank: int) -> int:
        if not -max(rank, 1) <= dim < max(rank, 1):
            raise self._error(f"dim {dim} is out of range for rank {rank}")
        return dim % max(rank, 1)

    def broadcast_to(self, x: _T, shape: Sequence[int]) -> _T:
        """x broadcast to `shape` (numpy rules), each repeated axis as one concat of copies."""
        shape = [int(d) for d in shape]
        if list(x.shape) == shape:
            return x
        x = self.reshape(x, [1] * (len(shape) - x.rank) + list(x.shape))
        for axis, (have, want) in enumerate(zip(list(x.shape), shape)):
            if have != want:
                if have != 1:
                    raise self._error(f"cannot broadcast dim {axis} of {list(x.shape)} to {shape}")
                x = self._emit("concat", [x] * want, {"axis": axis})
        return x

    def tile(self, x: _T, repeats: Sequence[int]) -> _T:
        repeats = [int(r) for r in repeats]
        x = self.reshape(x, [1] * (len(repeats) - x.rank) + list(x.shape))
        for axis, r in enumerate(repeats):
            if r != 1:
                x = self._emit("concat", [x] * r, {"axis": axis})
        return x

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


# ---- the lowerings: aten.<packet> -> gpuu -------------------------------------

_LOWERINGS: Dict[str, Callable[[_Lowering, Dict[str, Any], Any, torch.fx.Node], Any]] = {}
# Ops whose result depends only on their inputs' shapes: folded even on traced tensors.
_SHAPE_ONLY = {"zeros_like", "ones_like", "full_like", "new_zeros", "new_ones", "new_full"}


def _lowering(*packets: str):
    def register(fn):
        for p in packets:
            _LOWERINGS[p] = fn
        return fn
    return register


_UNARY = {"abs": "abs", "neg": "neg", "exp": "exp", "log": "log", "sqrt": "sqrt", "rsqrt": "rsqrt",
          "reciprocal": "reciprocal", "sin": "sin", "cos": "cos", "tanh": "tanh", "sigmoid": "sigmoid",
          "relu": "relu", "erf": "erf", "floor": "floor", "ceil": "ceil"}


def _make_unary(op: str):
    def lower(L: _Lowering, a: Dict[str, Any], real: Any, node: torch.fx.Node) -> _T:
        x = a["self"]
        if op in ("floor", "ceil") and real.dtype not in (torch.float32, torch.float16):
            return L.tensor(x, "input")  # floor/ceil of integers are the integers
        return L.unary(op, x, real)
    return lower


for _name, _op in _UNARY.items():
    _lowering(_name, _name + "_")(_make_unary(_op))


@_lowering("gelu", "gelu_")
def _gelu(L, a, real, node):
    return L._emit("gelu", [L._operand(a["self"], L.result_dtype(real), 0, "input")],
                   {"approximate": a.get("approximate") or "none"})


@_lowering("silu", "silu_")
def _silu(L, a, real, node):
    x = L._operand(a["self"], L.result_dtype(real), 0, "input")
    return L._emit("mul", [x, L._emit("sigmoid", [x])])


@_lowering("hardtanh", "hardtanh_")
def _hardtanh(L, a, real, node):
    x = L._operand(a["self"], L.result_dtype(real), 0, "input")
    return L._emit("clamp", [x], {"min": float(a["min_val"]), "max": float(a["max_val"])})


@_lowering("relu6", "relu6_")
def _relu6(L, a, real, node):
    x = L._operand(a["self"], L.result_dtype(real), 0, "input")
    return L._emit("clamp", [x], {"min": 0.0, "max": 6.0})


@_lowering("hardswish", "hardswish_")
def _hardswish(L, a, real, node):
    x = L._operand(a["self"], L.result_dtype(real), 0, "input")
    shifted = L._emit("add", [x, L._scalar(3.0, x.dtype, x.rank)])
    gate = L._emit("clamp", [shifted], {"min": 0.0, "max": 6.0})
    return L._emit("div", [L._emit("mul", [x, gate]), L._scalar(6.0, x.dtype, x.rank)])


@_lowering("leaky_relu", "leaky_relu_")
def _leaky_relu(L, a, real, node):
    x = L._operand(a["self"], L.result_dtype(real), 0, "input")
    positive = L._emit("greater", [x, L._scalar(0, x.dtype, x.rank)])
    scaled = L._emit("mul", [x, L._scalar(float(a["negative_slope"]), x.dtype, x.rank)])
    return L._emit("where", [positive, x, scaled])


@_lowering("clamp", "clamp_", "clamp_min", "clamp_min_", "clamp_max", "clamp_max_")
def _clamp(L, a, real, node):
    lo, hi = a.get("min"), a.get("max")  # clamp_min has only "min", clamp_max only "max"
    x = L._operand(a["self"], L.result_dtype(real), 0, "input")
    if isinstance(lo, (_T, _K)) or isinstance(hi, (_T, _K)):  # clamp.Tensor: bounds are tensors
        if lo is not None:
            x = L.binary("maximum", x, lo, real)
        if hi is not None:
            x = L.binary("minimum", x, hi, real)
        return x
    attrs = {}
    if lo is not None:
        attrs["min"] = float(lo)
    if hi is not None:
        attrs["max"] = float(hi)
    return L._emit("clamp", [x], attrs)


def _alpha_scaled(L, v, alpha, real):
    if alpha is None or alpha == 1:
        return v
    if isinstance(v, (int, float)):
        return v * alpha
    return L.binary("mul", v, alpha, real)


@_lowering("add", "add_")
def _add(L, a, real, node):
    return L.binary("add", a["self"], _alpha_scaled(L, a["other"], a.get("alpha"), real), real)


@_lowering("sub", "sub_")
def _sub(L, a, real, node):
    return L.binary("sub", a["self"], _alpha_scaled(L, a["other"], a.get("alpha"), real), real)


@_lowering("rsub")
def _rsub(L, a, real, node):
    return L.binary("sub", a["other"], _alpha_scaled(L, a["self"], a.get("alpha"), real), real)


@_lowering("mul", "mul_")
def _mul(L, a, real, node):
    return L.binary("mul", a["self"], a["other"], real)


@_lowering("div", "div_")
def _div(L, a, real, node):
    mode = a.get("rounding_mode")
    if mode is None:
        return L.binary("div", a["self"], a["other"], real)
    # Integer or float floor/trunc division: divide in f32, round, cast back.
    work = real.dtype if real.dtype in (torch.float32, torch.float16) else torch.float32
    wd = _TORCH_TO_GPUU[work]
    rank = max((v.rank for v in (a["self"], a["other"]) if isinstance(v, (_T, _K))), default=0)
    q = L._emit("div", [L._operand(a["self"], wd, rank, "input 0"), L._operand(a["other"], wd, rank, "input 1")])
    if mode == "floor":
        q = L._emit("floor", [q])
    elif mode == "trunc":
        negative = L._emit("less", [q, L._scalar(0, wd, q.rank)])
        q = L._emit("where", [negative, L._emit("ceil", [q]), L._emit("floor", [q])])
    else:
        raise L._error(f"unknown rounding_mode {mode!r}")
    return L._cast(q, L.result_dtype(real))


@_lowering("pow")
def _pow(L, a, real, node):
    base, exponent = a["self"], a["exponent"]
    dtype = L.result_dtype(real)
    if isinstance(exponent, (int, float)) and not isinstance(base, (int, float)):
        x = L._operand(base, dtype, 0, "input")
        if exponent == 1:
            return x
        if exponent == 2:
            return L._emit("mul", [x, x])
        if exponent == 0.5:
            return L._emit("sqrt", [x])
        if exponent == -0.5:
            return L._emit("rsqrt", [x])
        if exponent == -1:
            return L._emit("reciprocal", [x])
    return L.binary("pow", base, exponent, real)


@_lowering("maximum")
def _maximum(L, a, real, node):
    return L.binary("maximum", a["self"], a["other"], real)


@_lowering("minimum")
def _minimum(L, a, real, node):
    return L.binary("minimum", a["self"], a["other"], real)


def _make_compare(op: str):
    def lower(L, a, real, node):
        common = torch.result_type(L.real_arg(node, 0), L.real_arg(node, 1))
        return L.binary(op, a["self"], a["other"], real, operand_dtype=_gpuu_dtype_of(common, "the operands"))
    return lower


for _name, _op in {"eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal", "gt": "greater",
                   "ge": "greater_equal"}.items():
    _lowering(_name)(_make_compare(_op))


@_lowering("where")
def _where(L, a, real, node):
    dtype = L.result_dtype(real)
    cond = a["condition"]
    values = [a["self"], a["other"]]
    rank = max((v.rank for v in [cond] + values if isinstance(v, (_T, _K))), default=0)
    c = L._operand(cond, core.DTYPE_BOOL, rank, "condition")
    return L._emit("where", [c] + [L._operand(v, dtype, rank, f"input {i + 1}") for i, v in enumerate(values)])


@_lowering("masked_fill", "masked_fill_")
def _masked_fill(L, a, real, node):
    dtype = L.result_dtype(real)
    x = L._operand(a["self"], dtype, 0, "input")
    mask = L._operand(a["mask"], core.DTYPE_BOOL, x.rank, "mask")
    return L._emit("where", [mask, L._operand(a["value"], dtype, x.rank, "value"), x])


@_lowering("_to_copy", "to")
def _to_copy(L, a, real, node):
    return L._cast(L.tensor(a["self"], "input"), L.result_dtype(real))


@_lowering("clone", "detach", "alias", "lift_fresh_copy", "lift_fresh", "contiguous")
def _identity(L, a, real, node):
    return L.tensor(a["self"], "input")


@_lowering("dropout", "feature_dropout")
def _dropout(L, a, real, node):
    if a.get("train"):
        raise L._error("dropout in training mode (call module.eval() before exporting)")
    return L.tensor(a["input"], "input")


@_lowering("view", "_unsafe_view", "reshape", "_reshape_alias", "unsqueeze", "squeeze", "flatten",
           "unflatten", "view_as", "reshape_as")
def _reshape(L, a, real, node):
    x = L.tensor(a["self"], "input")
    return L.reshape(x, real.shape)


@_lowering("expand")
def _expand(L, a, real, node):
    return L.broadcast_to(L.tensor(a["self"], "input"), real.shape)


@_lowering("repeat")
def _repeat(L, a, real, node):
    return L.tile(L.tensor(a["self"], "input"), a["repeats"])


@_lowering("permute")
def _permute(L, a, real, node):
    x = L.tensor(a["self"], "input")
    perm = [L.axis(d, x.rank) for d in a["dims"]]
    if perm == list(range(x.rank)):
        return x
    return L._emit("transpose", [x], {"perm": perm})


@_lowering("transpose")
def _transpose(L, a, real, node):
    x = L.tensor(a["self"], "input")
    d0, d1 = L.axis(a["dim0"], x.rank), L.axis(a["dim1"], x.rank)
    if d0 == d1 or x.rank < 2:
        return x
    perm = list(range(x.rank))
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return L._emit("transpose", [x], {"perm": perm})


@_lowering("t")
def _t(L, a, real, node):
    x = L.tensor(a["self"], "input")
    return x if x.rank < 2 else L._emit("transpose", [x], {"perm": [1, 0]})


@_lowering("slice")
def _slice(L, a, real, node):
    x = L.tensor(a["self"], "input")
    axis = L.axis(a["dim"], x.rank)
    start = 0 if a.get("start") is None else int(a["start"])
    end = x.shape[axis] if a.get("end") is None else int(a["end"])
    return L.slice(x, axis, start, end, int(a.get("step") or 1))


@_lowering("select")
def _select(L, a, real, node):
    x = L.tensor(a["self"], "input")
    axis = L.axis(a["dim"], x.rank)
    index = int(a["index"])
    index = index + x.shape[axis] if index < 0 else index
    return L.reshape(L.slice(x, axis, index, index + 1), real.shape)


def _split_by_results(L, x: _T, axis: int, real: Sequence[torch.Tensor], squeeze: bool = False) -> List[_Lazy]:
    """Slices of x along `axis` with the sizes of PyTorch's results (split, chunk, unbind), made on first use."""
    parts, start = [], 0
    for r in real:
        size = 1 if squeeze else r.shape[axis]

        def piece(start=start, size=size, shape=tuple(r.shape)):
            sliced = L.slice(x, axis, start, start + size)
            return L.reshape(sliced, shape) if squeeze else sliced

        parts.append(_Lazy(piece))
        start += size
    return parts


@_lowering("split", "split_with_sizes", "chunk", "tensor_split")
def _split(L, a, real, node):
    x = L.tensor(a["self"], "input")
    return _split_by_results(L, x, L.axis(a.get("dim", 0), x.rank), real)


@_lowering("unbind")
def _unbind(L, a, real, node):
    x = L.tensor(a["self"], "input")
    return _split_by_results(L, x, L.axis(a.get("dim", 0), x.rank), real, squeeze=True)


@_lowering("cat", "concat")
def _cat(L, a, real, node):
    dtype = L.result_dtype(real)
    # torch.cat skips legacy empty 1-D tensors; gpuu has no use for them either.
    parts = [L._operand(t, dtype, 0, f"tensor {i}") for i, t in enumerate(a["tensors"])
             if not (isinstance(t, (_T, _K)) and t.shape == (0,))]
    if len(parts) == 1:
        return parts[0]
    return L._emit("concat", parts, {"axis": L.axis(a.get("dim", 0), parts[0].rank)})


@_lowering("stack")
def _stack(L, a, real, node):
    dtype = L.result_dtype(real)
    axis = L.axis(a.get("dim", 0), real.dim())
    parts = []
    for i, t in enumerate(a["tensors"]):
        v = L._operand(t, dtype, 0, f"tensor {i}")
        parts.append(L.reshape(v, list(v.shape[:axis]) + [1] + list(v.shape[axis:])))
    return parts[0] if len(parts) == 1 else L._emit("concat", parts, {"axis": axis})


@_lowering("constant_pad_nd")
def _pad(L, a, real, node):
    x = L.tensor(a["self"], "input")
    pad = [int(p) for p in a["pad"]]
    if any(p < 0 for p in pad):
        raise L._error(f"negative padding {pad} (cropping) is not supported")
    pads = [0] * (2 * x.rank)
    # torch lists (before, after) pairs from the last dim backwards; gpuu from the first dim.
    for k in range(len(pad) // 2):
        dim = x.rank - 1 - k
        pads[2 * dim], pads[2 * dim + 1] = pad[2 * k], pad[2 * k + 1]
    return L._emit("pad", [x], {"pads": pads, "value": float(a.get("value") or 0.0)})


@_lowering("index_select")
def _index_select(L, a, real, node):
    x = L.tensor(a["self"], "input")
    return L._emit("index_select", [x, L.tensor(a["index"], "index")], {"axis": L.axis(a["dim"], x.rank)})


@_lowering("gather")
def _gather(L, a, real, node):
    x = L.tensor(a["self"], "input")
    return L._emit("gather", [x, L.tensor(a["index"], "index")], {"axis": L.axis(a["dim"], x.rank)})


@_lowering("embedding")
def _embedding(L, a, real, node):
    weight = L.tensor(a["weight"], "weight")
    indices = L.tensor(a["indices"], "indices")
    flat = L.reshape(indices, [int(np.prod(indices.shape, dtype=np.int64))])
    rows = L._emit("index_select", [weight, flat], {"axis": 0})
    return L.reshape(rows, real.shape)


@_lowering("convolution", "_convolution")
def _convolution(L, a, real, node):
    x = L.tensor(a["input"], "input")
    if a.get("transposed"):
        raise L._error("transposed convolution is not supported")
    if x.rank != 4:
        raise L._error(f"only 2-D convolution (NCHW input) is supported, got an input of rank {x.rank}")
    w = L.tensor(a["weight"], "weight")
    b = None if a.get("bias") is None else L.tensor(a["bias"], "bias")
    return L._emit("conv2d", [x, w, b], {"stride": _ints(a["stride"], 2), "padding": _ints(a["padding"], 2),
                                         "dilation": _ints(a["dilation"], 2), "groups": int(a["groups"])})


@_lowering("avg_pool2d")
def _avg_pool2d(L, a, real, node):
    if a.get("divisor_override") is not None:
        raise L._error("avg_pool2d with divisor_override is not supported")
    kernel = _ints(a["kernel_size"], 2)
    stride = _ints(a["stride"], 2) if a.get("stride") else kernel
    return L._emit("avg_pool2d", [L.tensor(a["self"], "input")],
                   {"kernel": kernel, "stride": stride, "padding": _ints(a.get("padding", 0), 2),
                    "ceil_mode": int(bool(a.get("ceil_mode"))),
                    "count_include_pad": int(bool(a.get("count_include_pad", True)))})


@_lowering("max_pool2d_with_indices", "max_pool2d")
def _max_pool2d(L, a, real, node):
    kernel = _ints(a["kernel_size"], 2)
    stride = _ints(a["stride"], 2) if a.get("stride") else kernel
    y = L._emit("max_pool2d", [L.tensor(a["self"], "input")],
                {"kernel": kernel, "stride": stride, "padding": _ints(a.get("padding", 0), 2),
                 "dilation": _ints(a.get("dilation", 1), 2), "ceil_mode": int(bool(a.get("ceil_mode")))})
    if isinstance(real, (list, tuple)):
        return [y, _Unusable("the indices of max_pool2d_with_indices")]
    return y


@_lowering("adaptive_avg_pool2d", "_adaptive_avg_pool2d")
def _adaptive_avg_pool2d(L, a, real, node):
    x = L.tensor(a["self"], "input")
    h, w = x.shape[-2], x.shape[-1]
    size = a["output_size"]
    size = [size, size] if isinstance(size, int) else list(size)
    oh, ow = (h if size[0] is None else int(size[0])), (w if size[-1] is None else int(size[-1]))
    if (oh, ow) == (1, 1):
        return L._emit("reduce_mean", [x], {"axes": [x.rank - 2, x.rank - 1], "keepdim": 1})
    if h % oh or w % ow:
        raise L._error(f"adaptive_avg_pool2d from {h}x{w} to {oh}x{ow} has uneven windows, which gpuu lacks")
    kernel = [h // oh, w // ow]
    return L._emit("avg_pool2d", [x], {"kernel": kernel, "stride": kernel})


def _reduce_axes(L, x: _T, dims: Any) -> List[int]:
    if dims is None or (isinstance(dims, (list, tuple)) and len(dims) == 0):
        return list(range(x.rank))
    dims = [dims] if isinstance(dims, int) else list(dims)
    return [L.axis(d, x.rank) for d in dims]


def _make_reduce(op: str):
    def lower(L, a, real, node):
        if "other" in a:  # max.other is the elementwise maximum
            return L.binary("maximum", a["self"], a["other"], real)
        results = real if isinstance(real, (list, tuple)) else [real]
        x = L._operand(a["self"], L.result_dtype(results[0]), 0, "input")
        if x.rank == 0:
            return x
        y = L._emit(op, [x], {"axes": _reduce_axes(L, x, a.get("dim")), "keepdim": int(bool(a.get("keepdim")))})
        if isinstance(real, (list, tuple)):
            return [y, _Unusable(f"the indices of {node.target}")]
        return y
    return lower


_lowering("mean")(_make_reduce("reduce_mean"))
_lowering("sum")(_make_reduce("reduce_sum"))
_lowering("amax", "max")(_make_reduce("reduce_max"))


@_lowering("_softmax", "softmax")
def _softmax(L, a, real, node):
    x = L._operand(a["self"], L.result_dtype(real), 0, "input")
    return L._emit("softmax", [x], {"axis": L.axis(a["dim"], x.rank)})


@_lowering("_log_softmax", "log_softmax")
def _log_softmax(L, a, real, node):
    x = L._operand(a["self"], L.result_dtype(real), 0, "input")
    return L._emit("log", [L._emit("softmax", [x], {"axis": L.axis(a["dim"], x.rank)})])


@_lowering("native_layer_norm")
def _layer_norm(L, a, real, node):
    x = L.tensor(a["input"], "input")
    w = None if a.get("weight") is None else L.tensor(a["weight"], "weight")
    b = None if a.get("bias") is None else L.tensor(a["bias"], "bias")
    y = L._emit("layer_norm", [x, w, b], {"normalized_ndim": len(a["normalized_shape"]), "eps": float(a["eps"])})
    return [y, _Unusable("the mean of native_layer_norm"), _Unusable("the rstd of native_layer_norm")]


@_lowering("native_batch_norm", "_native_batch_norm_legit_no_training", "_native_batch_norm_legit")
def _batch_norm(L, a, real, node):
    if a.get("training"):
        raise L._error("batch_norm in training mode (call module.eval() before exporting)")
    x = L.tensor(a["input"], "input")
    stats = {}
    for key in ("weight", "bias", "running_mean", "running_var"):
        v = a.get(key)
        if v is not None and not isinstance(v, _K):
            raise L._error(f"batch_norm's {key} is computed in the graph; only constant statistics are folded")
        stats[key] = None if v is None else v.tensor.detach().double().numpy()
    if stats["running_mean"] is None or stats["running_var"] is None:
        raise L._error("batch_norm without running statistics cannot be folded")
    # Eval batch norm is an affine map per channel: y = x * scale + shift.
    scale = 1.0 / np.sqrt(stats["running_var"] + float(a["eps"]))
    if stats["weight"] is not None:
        scale = scale * stats["weight"]
    shift = -stats["running_mean"] * scale
    if stats["bias"] is not None:
        shift = shift + stats["bias"]
    channels = [1, x.shape[1]] + [1] * (x.rank - 2)
    np_dtype = core.numpy_dtype(x.dtype)
    s = L.constant(scale.astype(np_dtype).reshape(channels), "scale")
    t = L.constant(shift.astype(np_dtype).reshape(channels), "shift")
    y = L._emit("add", [L._emit("mul", [x, s]), t])
    return [y, _Unusable("the saved mean of batch_norm"), _Unusable("the saved invstd of batch_norm")]


def _linear_from(L, x: _T, weight_t: _K, bias: Any, real) -> _T:
    """x @ weight_t (+ bias) with weight_t a constant [K, N]: linear(x, W [N, K], bias)."""
    name = weight_t.name[:-2] if weight_t.name.endswith(".t") else weight_t.name + ".T"
    w = _K(weight_t.tensor.t().contiguous(), name)
    b = None
    if bias is not None:
        b = L.tensor(bias, "bias")
    return L._emit("linear", [x, L.tensor(w, "weight"), b])


@_lowering("addmm")
def _addmm(L, a, real, node):
    bias, x, mat2 = a["self"], L.tensor(a["mat1"], "mat1"), a["mat2"]
    beta, alpha = a.get("beta", 1), a.get("alpha", 1)
    n = real.shape[-1]
    if beta == 1 and alpha == 1 and isinstance(mat2, _K) and isinstance(bias, _K) and bias.shape == (n,):
        return _linear_from(L, x, mat2, bias, real)
    y = L._emit("matmul", [x, L.tensor(mat2, "mat2")])
    y = _alpha_scaled(L, y, alpha, real)
    return L.binary("add", y, _alpha_scaled(L, bias, beta, real), real)


@_lowering("mm", "bmm", "matmul")
def _matmul(L, a, real, node):
    a_in = L.tensor(a["self"], "input")
    b_in = L.tensor(a.get("mat2", a.get("other")), "other")
    if a_in.rank < 2 or b_in.rank < 2:
        # gpuu's matmul wants matrices: lift vectors, then drop the lifted dims.
        a2 = L.reshape(a_in, [1, a_in.shape[0]]) if a_in.rank == 1 else a_in
        b2 = L.reshape(b_in, [b_in.shape[0], 1]) if b_in.rank == 1 else b_in
        return L.reshape(L._emit("matmul", [a2, b2]), real.shape)
    return L._emit("matmul", [a_in, b_in])


@_lowering("linear")
def _linear(L, a, real, node):
    x = L.tensor(a["input"], "input")
    w = L.tensor(a["weight"], "weight")
    b = None if a.get("bias") is None else L.tensor(a["bias"], "bias")
    return L._emit("linear", [x, w, b])
