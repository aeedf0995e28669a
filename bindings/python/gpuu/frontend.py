"""PyTorch frontend: a model (nn.Module, function of tensors, or torch.export ExportedProgram) -> a gpuu graph.

Tracing reduces the model to PyTorch's Core ATen operator set with PyTorch's own
decomposition tables (torch._decomp), the set torch.export and ExecuTorch lower
to, so composites (group/instance norm, silu, ...) arrive as core ops and
gpuu maps the core set (aten_ops). A few composites stay whole because gpuu has
a kernel that runs them better than their pieces: aten_ops, beside the
lowerings, says which (KEPT_WHOLE) and which ATen ops PyTorch's decompositions
must take apart further (DECOMPOSED). Attention (F.scaled_dot_product_attention,
also inside nn.MultiheadAttention) is a composite PyTorch takes apart before any
decomposition table is asked, so tracing reroutes it to an op of gpuu's own,
which make_fx records whole (attention_kept_whole).

- nn.Module / function: make_fx on the functionalized model (in-place and view
  ops become functional ones), with the parameters and buffers as named inputs
  that become gpuu constants.
- ExportedProgram (torch >= 2.1, the RFC's flow): run_decompositions with the same
  table; its graph signature says which placeholders are parameters, buffers,
  constants and user inputs.

Anything computed from constants alone is folded at trace time. Export fails
with one FrontendError listing every ATen op gpuu has no mapping for (count and
first node of each) and every node whose mapping failed.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import functools
import inspect
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import torch
import torch.fx
from torch.fx.experimental.proxy_tensor import make_fx

from . import aten_ops
from .aten_ops import KEPT_WHOLE
from .dense_moe import dense_experts
from .errors import GpuuError
from .fx_lowering import FrontendError, Lowering, Placeholder, TracedGraph

aten = torch.ops.aten

__all__ = ["FrontendError", "KEPT_WHOLE", "TracedGraph", "decomposition_table", "from_torch", "mapped_ops", "trace"]

def _packet_ops(names: Sequence[str]) -> List[Any]:
    ops = []
    for name in names:
        packet = getattr(aten, name, None)
        if packet is not None:
            ops.append(packet)
    return ops


@functools.lru_cache(maxsize=None)
def decomposition_table() -> Dict[Any, Callable]:
    """The decomposition table tracing uses: Core ATen's, plus gpuu's extras, minus KEPT_WHOLE (built once; read only)."""
    from torch._decomp import get_decompositions

    try:
        from torch._decomp import core_aten_decompositions
        table = dict(core_aten_decompositions().items())
    except ImportError:  # torch < 2.0: no Core ATen table, PyTorch's decompositions of the extras alone
        table = {}
    table.update(get_decompositions(_packet_ops(aten_ops.DECOMPOSED)))
    kept = set(_packet_ops(KEPT_WHOLE))
    return {op: fn for op, fn in table.items() if getattr(op, "overloadpacket", op) not in kept}


def mapped_ops() -> List[str]:
    """The ATen overload packets gpuu maps ("add", "convolution", ...), sorted."""
    return sorted(p for p in aten_ops.LOWERINGS if not p.endswith("_") or p.startswith("_"))


# gpuu::scaled_dot_product_attention: aten's attention under another name and with aten's schema, so that tracing
# records it as one node (aten's is CompositeImplicitAutograd: the dispatcher takes it apart before make_fx sees it).
# It computes with aten's op, so the traced graph runs as the model does.
_GPUU_LIBRARY = torch.library.Library("gpuu", "DEF")
_GPUU_LIBRARY.define("scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, "
                     "float dropout_p=0.0, bool is_causal=False, float? scale=None, bool enable_gqa=False) -> Tensor")


def _aten_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
    extra = {"enable_gqa": True} if enable_gqa else {}  # torch < 2.5 has no enable_gqa
    # Below autograd: aten's own kernel, not the rerouting one attention_kept_whole registers there.
    with torch._C._AutoDispatchBelowAutograd():
        return aten.scaled_dot_product_attention.default(query, key, value, attn_mask, dropout_p, is_causal,
                                                         scale=scale, **extra)


_GPUU_LIBRARY.impl("scaled_dot_product_attention", _aten_attention, "CompositeExplicitAutograd")


def _to_gpuu_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, *, scale=None,
                       enable_gqa=False):
    return torch.ops.gpuu.scaled_dot_product_attention(query, key, value, attn_mask, dropout_p, is_causal, scale,
                                                       enable_gqa)


@contextlib.contextmanager
def attention_kept_whole():
    """While active, aten.scaled_dot_product_attention on CPU tensors runs as gpuu::scaled_dot_product_attention.

    A kernel for aten's op at its autograd key (AutogradCPU, ahead of its composite implementation) hands every
    call over to gpuu's op, from the model's code or from within nn.MultiheadAttention alike; leaving the context
    removes the kernel.
    """
    library = torch.library.Library("aten", "IMPL")
    try:
        library.impl("scaled_dot_product_attention", _to_gpuu_attention, "AutogradCPU")
        yield
    finally:
        library._destroy()


def _functionalize(fn: Callable) -> Callable:
    try:
        from torch.func import functionalize
    except ImportError:  # torch 1.13
        from functorch import functionalize
    return functionalize(fn, remove="mutations")


def trace(module: Callable, example_inputs: Sequence[torch.Tensor]) -> torch.fx.GraphModule:
    """The Core ATen fx graph of `module` on `example_inputs` (make_fx, real tensors, functionalized, no autograd)."""
    gm, _, _ = _trace_module(module, tuple(example_inputs))
    return gm


def _trace_module(module: Callable, inputs: tuple):
    """(fx graph, placeholders, state updates): parameters and buffers come first as named placeholders, constants
    except where the model writes into them (states: a buffer's running statistics, cache or counter); the updates
    map each state to the fx node of its new value."""
    state: Dict[str, torch.Tensor] = {}
    buffers: set = set()
    if isinstance(module, torch.nn.Module):
        state.update({k: v.detach() for k, v in module.named_parameters()})
        # Copies: tracing runs the model for real, and what a forward writes into its buffers would land in the
        # caller's module; these also keep the values at export, each state's initial value.
        buffers = {k for k, _ in module.named_buffers()}
        state.update({k: v.detach().clone() for k, v in module.named_buffers()})
    names = list(state)

    def run(flat_state: List[torch.Tensor], *args: torch.Tensor) -> Any:
        if not names:
            return module(*args)
        return torch.func.functional_call(module, dict(zip(names, flat_state)), args)

    def traced_args() -> tuple:
        return ([state[k].clone() if k in buffers else state[k] for k in names], *inputs)

    # mkldnn off: on the CPU, PyTorch would otherwise trace recurrent layers to its mkldnn kernels
    # (mkldnn_rnn_layer) instead of their decomposition into matmuls and gates.
    with torch.no_grad(), torch.backends.mkldnn.flags(enabled=False), attention_kept_whole(), \
            _tensors_restored(module), dense_experts(module):
        gm = make_fx(_functionalize(run), decomposition_table=decomposition_table(), tracing_mode="real")(
            *traced_args())
        if _mutates(gm, len(names)):
            # Decompositions run below functionalization, and some write in place (circular padding's copy_):
            # a second, plain pass over the decomposed graph makes those functional too.
            gm = make_fx(_functionalize(gm), tracing_mode="real")(*traced_args())
    updates = _state_updates(gm, names)
    display = _InPrecision.inner_name if isinstance(module, _InPrecision) else (lambda k: k)
    placeholders = [Placeholder(display(k), state[k], False, k in updates) for k in names]
    return gm, placeholders, {display(k): node for k, node in updates.items()}


@contextlib.contextmanager
def _tensors_restored(module: Any):
    """Puts every parameter and buffer of `module` back as it was: functional_call under functionalization
    leaves a traced tensor in place of a weight tied to another (T5's shared embedding), and the next trace of
    the module (a dim's recordings) then fails inside PyTorch."""
    held = []
    if isinstance(module, torch.nn.Module):
        for sub in module.modules():
            for table in (sub._parameters, sub._buffers):
                held.extend((table, key, value) for key, value in table.items())
    try:
        yield
    finally:
        for table, key, value in held:
            table[key] = value


def _state_updates(gm: torch.fx.GraphModule, names: List[str]) -> Dict[str, torch.fx.Node]:
    """{parameter or buffer name: the fx node of the value the model leaves in it}, from the copy_ nodes that
    functionalization appends for each input the model mutates (the first len(names) placeholders are those)."""
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"][:len(names)]
    name_of = dict(zip(placeholders, names))
    updates: Dict[str, torch.fx.Node] = {}
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target is aten.copy_.default and node.args[0] in name_of:
            updates[name_of[node.args[0]]] = node.args[1]  # a later copy_ into the same buffer wins
    return updates


def _mutates(gm: torch.fx.GraphModule, states: int) -> bool:
    """Whether a node writes in place, other than functionalization's copy_ into one of the first `states`
    placeholders (the parameters and buffers: those writes are the model's state updates)."""
    params = [n for n in gm.graph.nodes if n.op == "placeholder"][:states]
    for node in gm.graph.nodes:
        schema = getattr(node.target, "_schema", None)
        if node.op == "call_function" and schema is not None and schema.is_mutable:
            if node.target is aten.copy_.default and node.args[0] in params:
                continue
            return True
    return False


# Export precisions: what an f32 model's floating-point math runs in (gpuu.export's `precision`).
PRECISIONS = {"fp32": torch.float32, "fp16": torch.float16}


def from_torch(model: Any, example_inputs: Optional[Sequence[Any]] = None,
               input_names: Optional[Sequence[str]] = None, precision: str = "fp32",
               dynamic_shapes: Any = None) -> TracedGraph:
    """A gpuu graph of `model`: an nn.Module or function of tensors traced on `example_inputs`, or an ExportedProgram.

    Graph inputs are named after the forward's parameters (or `input_names`);
    constants after the parameters and buffers they hold; nodes "<gpuu op>_<n>".
    With precision "fp16", an f32 module runs in f16 (weights stored in f16, f32
    accumulation where the kernels accumulate) behind an unchanged interface:
    f32 inputs are cast on entry and floating outputs back to f32 on exit.
    Raises FrontendError listing every problem (unmapped ATen ops with their count
    and first node, nodes whose mapping failed).

    dynamic_shapes, as torch.export takes it (per input, in order or by forward parameter name: None, or
    {axis: torch.export.Dim(name, min=, max=)}), makes those sizes dims of the graph: the program then runs
    at any sizes within the Dims' bounds. An ExportedProgram with dynamic dims brings its own (named
    "<input>_<axis>" unless dynamic_shapes names them). The model is recorded at several sizes and every
    size in the graph fitted to them (gpuu.h, "Dynamic sizes"); FrontendError names what cannot follow.
    """
    dims = _declared_dims(model, example_inputs, input_names, dynamic_shapes)
    if not dims:
        return _from_torch_at(model, example_inputs, input_names, precision)
    return _with_dims(model, example_inputs, input_names, precision, dims)


def _from_torch_at(model: Any, example_inputs: Optional[Sequence[Any]], input_names: Optional[Sequence[str]],
                   precision: str, compact_constants: bool = False,
                   prefix_tables: Optional[Dict[str, Any]] = None) -> TracedGraph:
    """from_torch at the example inputs' own sizes (compact_constants, prefix_tables: Lowering's, for a graph
    with dims)."""
    if precision not in PRECISIONS:
        why = " (gpuu graphs have no bf16 dtype yet)" if precision == "bf16" else ""
        raise FrontendError(f"precision {precision!r} is not one of {', '.join(PRECISIONS)}{why}")
    if _is_exported_program(model):
        if precision != "fp32":
            raise FrontendError(f"precision {precision!r} applies to a module traced here; an ExportedProgram "
                                "keeps the dtypes it was exported with (export the module in that precision instead)")
        return _from_exported(model, example_inputs, input_names, compact_constants, prefix_tables)
    if example_inputs is None:
        raise FrontendError("example_inputs are needed to trace a module (only an ExportedProgram carries its own)")
    inputs = _tensors(example_inputs)
    if precision != "fp32":
        if not isinstance(model, torch.nn.Module):
            raise FrontendError(f"precision {precision!r} needs an nn.Module (its weights are converted)")
        if input_names is None:
            input_names = _input_names(model, len(inputs))
        model = _InPrecision(model, PRECISIONS[precision])
    model = _plain_parameters(model)
    names = list(input_names) if input_names is not None else _input_names(model, len(inputs))
    # Tracing and recording run the model for real: on copies, so that in-place ops leave the caller's inputs alone.
    try:
        gm, constants, updates = _trace_module(model, tuple(x.clone() for x in inputs))
    except RuntimeError as e:
        if _data_dependent(e):
            # Python reading a tensor's value (Hugging Face's BERT, BART, DeBERTa check their inputs for padding
            # unless torch.compiler.is_compiling()): torch.export's tracer takes such a model where make_fx cannot.
            ep = _export_instead(model, inputs, e, "the model's Python needs the value of a tensor while it is "
                                 "traced (data-dependent control flow)")
        elif _state_held_elsewhere(e):
            # A buffer the model writes that another object holds too (Hugging Face's StaticCache keeps its
            # key/value tensors in lists beside the wrapper's buffers): functional_call swaps the module's
            # entry only, so the write lands in the real tensor. Dynamo's tracer (strict) follows the object.
            ep = _export_instead(model, inputs, e, "the model writes into a buffer that another object holds "
                                 "too (a cache object beside the module's buffers)", strict=True)
        else:
            raise
        return _from_exported(ep, inputs, names, compact_constants, prefix_tables)
    if len(names) != len(inputs):
        raise FrontendError(f"{len(names)} input names for {len(inputs)} example inputs")
    placeholders = constants + [Placeholder(n, x.clone(), True) for n, x in zip(names, inputs)]
    return Lowering(gm, placeholders, aten_ops.LOWERINGS, aten_ops.SHAPE_ONLY, updates,
                    compact_constants=compact_constants, prefix_tables=prefix_tables).run()


def _data_dependent(error: BaseException) -> bool:
    """Whether make_fx stopped because the model's Python read a traced tensor's value (.item(), bool(), `in`)."""
    return "tracing tensor" in str(error) or "data-dependent" in str(error)


def _state_held_elsewhere(error: BaseException) -> bool:
    """Whether make_fx stopped because the model wrote into a tensor that functional_call did not swap (a buffer
    another object holds too)."""
    return "mutating a non-functional tensor with a functional tensor" in str(error)


def _export_instead(model: Any, inputs: List[torch.Tensor], traced_error: BaseException, why: str,
                    strict: bool = False) -> Any:
    """torch.export's ExportedProgram of `model`, for one that make_fx cannot trace (`traced_error`, for the
    reason `why`); a FrontendError naming both failures where torch.export cannot take it either."""
    if not isinstance(model, torch.nn.Module) or not hasattr(torch, "export"):
        raise FrontendError(f"{why}: {traced_error}") from traced_error
    try:
        with torch.no_grad(), dense_experts(model):
            return torch.export.export(model, tuple(x.clone() for x in inputs), strict=strict)
    except Exception as e:  # noqa: BLE001 - whatever torch.export raises, both reasons go to the user
        raise FrontendError(
            f"{why}, and torch.export could not take it either.\nmake_fx: {str(traced_error).splitlines()[0]}\n"
            f"torch.export: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}") from e


def _plain_parameters(model: Any) -> Any:
    """`model`, or a copy of it whose tensor-subclass parameters (torchao's weight-only quantized weights) are
    unwrapped into plain tensors and the ops that rebuild them (torchao.utils.unwrap_tensor_subclass): tracing
    cannot decompose through the subclasses. gpuu then computes what those ops compute: an int8 weight-only
    linear (mm by the cast weight, times its scales) folds into linear_dequant, its weight kept in int8
    (quantized.py); other forms compute in float, their weights stored dequantized."""
    if not isinstance(model, torch.nn.Module):
        return model
    wrapped = [n for n, p in model.named_parameters()
               if type(p) not in (torch.Tensor, torch.nn.Parameter) and hasattr(p, "__tensor_flatten__")]
    if not wrapped:
        return model
    try:
        from torchao.utils import unwrap_tensor_subclass
    except ImportError:
        raise FrontendError(f"parameters {', '.join(wrapped[:4])}{' ...' if len(wrapped) > 4 else ''} are tensor "
                            "subclasses (torchao's quantized weights?) and torchao, which unwraps them, is not "
                            "installed") from None
    import copy
    return unwrap_tensor_subclass(copy.deepcopy(model))


@dataclasses.dataclass
class _DeclaredDim:
    """A dim as the user declared it: bounds, and the (input index, axis) places that take its size."""

    name: str
    min: int
    max: int
    places: List[Tuple[int, int]]


# The largest bound a dim may have (gpuu's largest dimension size).
_MAX_DIM = 0x7FFFFFFF


def _declared_dims(model: Any, example_inputs: Optional[Sequence[Any]], input_names: Optional[Sequence[str]],
                   dynamic_shapes: Any) -> List[_DeclaredDim]:
    """The dims dynamic_shapes declares (or an ExportedProgram carries), in order of first appearance."""
    exported = _is_exported_program(model)
    if dynamic_shapes is None and not exported:
        return []
    if exported:
        inputs = example_inputs if example_inputs is not None else (getattr(model, "example_inputs", None) or
                                                                      ((),))[0]
    else:
        inputs = example_inputs
    if inputs is None:
        return []
    inputs = _tensors(inputs)
    names = list(input_names) if input_names is not None else (
        _exported_input_names(model) if exported else _input_names(model, len(inputs)))
    per_input: List[Dict[int, Any]] = [{} for _ in inputs]
    if dynamic_shapes is not None:
        specs = dynamic_shapes
        if isinstance(specs, dict):
            unknown = [k for k in specs if k not in names]
            if unknown:
                raise FrontendError(f"dynamic_shapes names {unknown}, which are not inputs ({', '.join(names)})")
            specs = [specs.get(n) for n in names]
        specs = list(specs)
        if len(specs) != len(inputs):
            raise FrontendError(f"dynamic_shapes has {len(specs)} entries for {len(inputs)} inputs")
        for i, spec in enumerate(specs):
            if spec is None:
                continue
            axes = spec.items() if isinstance(spec, dict) else enumerate(spec)
            for axis, dim in axes:
                if dim is None:
                    continue
                if not (hasattr(dim, "__name__") and hasattr(dim, "min") and hasattr(dim, "max")):
                    raise FrontendError(f"dynamic_shapes for input '{names[i]}' axis {axis}: {dim!r} is not a "
                                        "torch.export.Dim")
                if not 0 <= int(axis) < inputs[i].dim():
                    raise FrontendError(f"dynamic_shapes for input '{names[i]}': axis {axis} is out of range "
                                        f"(rank {inputs[i].dim()})")
                per_input[i][int(axis)] = dim
    elif exported:
        per_input = _exported_dims(model, names, len(inputs))
    dims: Dict[str, _DeclaredDim] = {}
    problems = []
    for i, axes in enumerate(per_input):
        for axis, dim in sorted(axes.items()):
            name, lo, hi = dim.__name__, int(dim.min), dim.max
            if hi is None or not isinstance(hi, int) or hi > _MAX_DIM:
                problems.append(f"dim '{name}' has no upper bound ({hi}): give it one (Dim('{name}', max=...)); "
                                "gpuu plans memory for it")
                continue
            d = dims.setdefault(name, _DeclaredDim(name, max(lo, 0), int(hi), []))
            d.places.append((i, axis))
            size = int(inputs[i].shape[axis])
            if not d.min <= size <= d.max:
                problems.append(f"input '{names[i]}' axis {axis} is {size}, outside dim '{name}''s bounds "
                                f"[{d.min}, {d.max}]")
    for d in dims.values():
        sizes = {int(inputs[i].shape[a]) for i, a in d.places}
        if len(sizes) > 1:
            problems.append(f"dim '{d.name}' has sizes {sorted(sizes)} in the example inputs "
                            f"({', '.join(f'{names[i]}[{a}]' for i, a in d.places)})")
        if d.min == d.max:
            problems.append(f"dim '{d.name}' has min = max = {d.min}: it cannot vary")
    if problems:
        raise FrontendError("dynamic shapes: " + "; ".join(problems))
    return list(dims.values())


def _exported_input_names(ep: Any) -> List[str]:
    from torch.export.graph_signature import InputKind
    return [s.arg.name for s in ep.graph_signature.input_specs if s.kind == InputKind.USER_INPUT]


class _SymbolDim:
    """An ExportedProgram's symbolic size, as a Dim (named after its first input axis)."""

    def __init__(self, name: str, lo: int, hi: Any) -> None:
        self.__name__, self.min, self.max = name, lo, hi


def _exported_dims(ep: Any, names: List[str], count: int) -> List[Dict[int, Any]]:
    """The dims of an ExportedProgram's user inputs: each axis whose size is a symbol, with its range."""
    from torch.export.graph_signature import InputKind
    user = [s.arg.name for s in ep.graph_signature.input_specs if s.kind == InputKind.USER_INPUT]
    nodes = {n.name: n for n in ep.graph.nodes if n.op == "placeholder"}
    ranges = {str(k): v for k, v in ep.range_constraints.items()}
    by_symbol: Dict[str, _SymbolDim] = {}
    out: List[Dict[int, Any]] = [{} for _ in range(count)]
    for i, arg in enumerate(user[:count]):
        val = nodes[arg].meta.get("val") if arg in nodes else None
        for axis, size in enumerate(getattr(val, "shape", ())):
            if not isinstance(size, torch.SymInt):
                continue
            symbol = str(size)
            if symbol not in ranges:
                raise FrontendError(f"input '{names[i]}' axis {axis} has size {symbol}, which is not a plain dim "
                                    "of the ExportedProgram")
            r = ranges[symbol]
            hi = int(r.upper) if r.upper.is_finite else None
            dim = by_symbol.setdefault(symbol, _SymbolDim(f"{names[i]}_{axis}", int(r.lower), hi))
            out[i][axis] = dim
    return out


def _recording_sizes(dims: List[_DeclaredDim], examples: List[int]) -> Tuple[List[int], List[List[int]]]:
    """(the base sizes, the other recordings' sizes). The base is the example, moved to 2 or more where it is
    0 or 1 (sizes PyTorch treats as special: broadcasting, squeezes); each dim gets a second size one step
    away, and the recordings are every combination of base and second sizes (gpuu_graph_fit_dims needs
    them) and one more, every dim at a third size where its bounds allow, to check the fit."""
    base, second, third = [], [], []
    for d, e in zip(dims, examples):
        b = e if e >= 2 or d.max < 2 else max(2, d.min)
        s = b + 1 if b + 1 <= d.max else b - 1
        candidates = [b + 2, b - 2, b + 3, b - 1, b + 1]
        t = next((c for c in candidates if d.min <= c <= d.max and c >= 2 and c not in (b, s)), s)
        base.append(b), second.append(s), third.append(t)
    recordings = []
    for mask in range(1, 1 << len(dims)):
        recordings.append([second[i] if mask >> i & 1 else base[i] for i in range(len(dims))])
    if third != second:
        recordings.append(third)
    return base, recordings


def _resized(inputs: Sequence[torch.Tensor], dims: List[_DeclaredDim], sizes: List[int]) -> List[torch.Tensor]:
    """The example inputs with each dim's axes at `sizes`: their entries repeated (or cut) along the axis, so
    that values such as token ids stay valid."""
    out = [x for x in inputs]
    for d, n in zip(dims, sizes):
        for i, axis in d.places:
            x = out[i]
            if x.shape[axis] != n:
                if x.shape[axis] == 0:
                    raise FrontendError(f"dim '{d.name}': input {i} axis {axis} is empty in the example, so it "
                                        "cannot be grown to record other sizes")
                index = torch.arange(n) % x.shape[axis]
                out[i] = x.index_select(axis, index)
    return out


def _with_dims(model: Any, example_inputs: Optional[Sequence[Any]], input_names: Optional[Sequence[str]],
               precision: str, dims: List[_DeclaredDim]) -> TracedGraph:
    """from_torch for a model with dims: the graph at the base sizes, fitted to recordings at the others."""
    if example_inputs is None:  # an ExportedProgram's own
        example_inputs = model.example_inputs[0]
    inputs = _tensors(example_inputs)
    examples = [int(inputs[d.places[0][0]].shape[d.places[0][1]]) for d in dims]
    base_sizes, recordings = _recording_sizes(dims, examples)

    def trace_at(sizes: List[int], tables: Optional[Dict[str, Any]] = None) -> TracedGraph:
        try:
            return _from_torch_at(model, _resized(inputs, dims, sizes), input_names, precision, True, tables)
        except FrontendError as e:
            if sizes == base_sizes:
                raise
            raise FrontendError(f"recording the model at {_sizes_text(dims, sizes)} (to fit its dims) failed: "
                                f"{e}") from e

    traced = trace_at(base_sizes)
    first = None  # the first recording, traced once where no constant follows the dims
    try:
        first = trace_at(recordings[0])
        tables = _prefix_tables(traced, first, trace_at, dims)
        if tables:  # both again, their tables sliced
            first.close()
            traced.close()
            traced = trace_at(base_sizes, tables)
            first = trace_at(recordings[0], tables)
        for d, b in zip(dims, base_sizes):
            traced.graph.add_dim(d.name, d.min, d.max, b)
        for sizes in recordings:
            with (first if sizes is recordings[0] else trace_at(sizes, tables)) as other:
                traced.graph.add_dim_recording(other.graph, sizes)
        try:
            traced.graph.fit_dims()
        except GpuuError as e:
            raise FrontendError(f"dynamic shapes: {e}") from e
    except BaseException:
        traced.close()
        if first is not None:
            first.close()
        raise
    traced.dims = [(d.name, d.min, d.max, b) for d, b in zip(dims, base_sizes)]
    return traced


def _prefix_tables(base: TracedGraph, second: TracedGraph, trace_at: Callable,
                   dims: List[_DeclaredDim]) -> Dict[str, Any]:
    """The folded constants whose length follows the dims (GPT-2's and BERT's position embeddings, a rotary
    table, a causal mask: each computed from arange(seq)), as Lowering's prefix_tables: each one's value at
    the dims' largest sizes and the axes along which its length changes, from the graph at the base sizes, at
    the first recording's (`second`) and, where some change, at the largest. {} when there are none."""
    def grown(other: TracedGraph) -> Dict[str, List[int]]:
        out = {}
        for name, t in base.constants.items():
            o = other.constants.get(name)
            if o is not None and o.dim() == t.dim() and o.shape != t.shape:
                out[name] = [a for a, (x, y) in enumerate(zip(t.shape, o.shape)) if x != y]
        return out

    changed = grown(second)
    if not changed and len(dims) == 1:  # (with several, one that another dim grows shows at the largest only)
        return {}
    largest = [d.max for d in dims]
    tables = {}
    with trace_at(largest) as top:
        for name, axes in grown(top).items():
            axes = sorted(set(axes) | set(changed.pop(name, [])))
            tables[name] = (top.constants[name].clone(), axes)
    for name in changed:  # grew at the second sizes, absent or of another rank at the largest
        raise FrontendError(f"constant '{name}' is folded from the sizes and is not there at "
                            f"{_sizes_text(dims, largest)}: gpuu cannot compute it at run time")
    return tables


def _sizes_text(dims: List[_DeclaredDim], sizes: List[int]) -> str:
    return ", ".join(f"{d.name}={n}" for d, n in zip(dims, sizes))


class _InPrecision(torch.nn.Module):
    """A copy of an f32 module in `dtype`, with the f32 module's interface: floating inputs are cast to
    `dtype` on entry and floating outputs back to f32, so callers of the exported program pass and get
    what they did before."""

    def __init__(self, module: torch.nn.Module, dtype: torch.dtype):
        super().__init__()
        self.inner = copy.deepcopy(module).to(dtype)
        self.dtype = dtype

    @staticmethod
    def inner_name(name: str) -> str:
        """The wrapped module's own name of one of this module's parameters or buffers."""
        return name[len("inner."):] if name.startswith("inner.") else name

    def forward(self, *xs):
        out = self.inner(*[x.to(self.dtype) if x.is_floating_point() else x for x in xs])
        if isinstance(out, (tuple, list)):
            return tuple(o.float() if o.is_floating_point() else o for o in out)
        return out.float() if out.is_floating_point() else out


def _tensors(example_inputs: Sequence[Any]) -> tuple:
    inputs = tuple(example_inputs)
    for i, x in enumerate(inputs):
        if not isinstance(x, torch.Tensor):
            raise FrontendError(f"example input {i} is a {type(x).__name__}; gpuu graphs take tensors only")
    return inputs


def _is_exported_program(model: Any) -> bool:
    try:
        from torch.export import ExportedProgram
    except ImportError:
        return False
    return isinstance(model, ExportedProgram)


def _from_exported(ep: Any, example_inputs: Optional[Sequence[Any]], input_names: Optional[Sequence[str]],
                   compact_constants: bool = False, prefix_tables: Optional[Dict[str, Any]] = None) -> TracedGraph:
    from torch.export.graph_signature import InputKind

    _refuse_writes_into_constants(ep)
    ep = ep.run_decompositions(decomposition_table())
    if example_inputs is None:
        stored = getattr(ep, "example_inputs", None)
        if not stored:
            raise FrontendError("this ExportedProgram carries no example inputs: pass example_inputs")
        args, kwargs = stored
        if kwargs:
            raise FrontendError("the ExportedProgram's example inputs have keyword arguments; pass example_inputs")
        example_inputs = args
    inputs = _tensors(example_inputs)
    state = ep.state_dict
    placeholders: List[Placeholder] = []
    user = 0
    updates, user_outputs = _exported_outputs(ep)
    specs = ep.graph_signature.input_specs
    user_specs = [s for s in specs if s.kind == InputKind.USER_INPUT]
    if len(user_specs) != len(inputs):
        raise FrontendError(f"the ExportedProgram takes {len(user_specs)} tensor inputs, {len(inputs)} were given")
    names = list(input_names) if input_names is not None else [s.arg.name for s in user_specs]
    for spec in specs:
        if spec.kind == InputKind.USER_INPUT:
            placeholders.append(Placeholder(names[user], inputs[user].clone(), True))
            user += 1
        elif spec.kind in (InputKind.PARAMETER, InputKind.BUFFER):
            tensor = state[spec.target] if spec.target in state else ep.constants[spec.target]
            # A mutated buffer is a state; a copy keeps its value at export, where each session starts.
            mutated = spec.target in updates
            placeholders.append(Placeholder(spec.target, tensor.detach().clone() if mutated else tensor.detach(),
                                            False, mutated))
        elif spec.kind == InputKind.CONSTANT_TENSOR:
            placeholders.append(Placeholder(spec.target, ep.constants[spec.target].detach(), False))
        else:
            raise FrontendError(f"ExportedProgram input '{spec.arg.name}' is a {spec.kind.name}, "
                                "which gpuu graphs cannot take")
    return Lowering(ep.graph_module, placeholders, aten_ops.LOWERINGS, aten_ops.SHAPE_ONLY, updates,
                    user_outputs, compact_constants=compact_constants, prefix_tables=prefix_tables).run()


def _refuse_writes_into_constants(ep: Any) -> None:
    """A FrontendError naming the constant tensors an ExportedProgram writes into in place. Non-strict
    torch.export lifts a tensor the model holds outside its parameters and buffers (Hugging Face's StaticCache)
    as a constant and leaves the model's writes into it in the graph: a program whose updates are lost, which
    PyTorch's own decompositions then fail on."""
    from torch.export.graph_signature import InputKind

    constants = {s.arg.name: s.target for s in ep.graph_signature.input_specs if s.kind == InputKind.CONSTANT_TENSOR}
    written = []
    for node in ep.graph.nodes:
        schema = getattr(node.target, "_schema", None)
        if node.op != "call_function" or schema is None or not schema.is_mutable:
            continue
        for arg, value in zip(schema.arguments, node.args):
            if arg.alias_info is not None and arg.alias_info.is_write and getattr(value, "name", None) in constants:
                written.append(f"{constants[value.name]} ({node.target})")
    if written:
        raise FrontendError(
            f"the ExportedProgram writes in place into {len(written)} constant tensor(s): {', '.join(written)}. "
            "torch.export (non-strict) lifted tensors the model holds outside its parameters and buffers (a cache "
            "object such as Hugging Face's StaticCache) as constants, so their updates would be lost. Export with "
            "torch.export.export(..., strict=True) (transformers' convert_and_export_with_cache does), or pass "
            "the module itself to gpuu.export.")


def _exported_outputs(ep: Any) -> Tuple[Dict[str, torch.fx.Node], List[int]]:
    """({mutated buffer: the fx node of its new value}, the positions of the user outputs) of an ExportedProgram,
    from its graph signature: the output node lists buffer mutations, then the model's outputs."""
    from torch.export.graph_signature import OutputKind

    output_node = next(n for n in ep.graph_module.graph.nodes if n.op == "output")
    flat, _ = torch.utils._pytree.tree_flatten(output_node.args[0])
    specs = ep.graph_signature.output_specs
    if len(flat) != len(specs):
        raise FrontendError(f"the ExportedProgram's graph returns {len(flat)} values but its signature lists "
                            f"{len(specs)} outputs")
    updates: Dict[str, torch.fx.Node] = {}
    user_outputs: List[int] = []
    for i, spec in enumerate(specs):
        if spec.kind == OutputKind.USER_OUTPUT:
            user_outputs.append(i)
        elif spec.kind == OutputKind.BUFFER_MUTATION:
            updates[spec.target] = flat[i]
        else:
            raise FrontendError(f"ExportedProgram output '{spec.arg.name}' is a {spec.kind.name}, "
                                "which gpuu graphs cannot take")
    return updates, user_outputs


def _input_names(module: Callable, count: int) -> List[str]:
    try:
        params = [p for p in inspect.signature(module.forward if isinstance(module, torch.nn.Module) else module)
                  .parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    if len(params) >= count:
        return [p.name for p in params[:count]]
    return [f"input{i}" for i in range(count)]
