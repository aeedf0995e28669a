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
import functools
import inspect
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import torch
import torch.fx
from torch.fx.experimental.proxy_tensor import make_fx

from . import aten_ops
from .aten_ops import KEPT_WHOLE
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
    with torch.no_grad(), torch.backends.mkldnn.flags(enabled=False), attention_kept_whole():
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
               input_names: Optional[Sequence[str]] = None, precision: str = "fp32") -> TracedGraph:
    """A gpuu graph of `model`: an nn.Module or function of tensors traced on `example_inputs`, or an ExportedProgram.

    Graph inputs are named after the forward's parameters (or `input_names`);
    constants after the parameters and buffers they hold; nodes "<gpuu op>_<n>".
    With precision "fp16", an f32 module runs in f16 (weights stored in f16, f32
    accumulation where the kernels accumulate) behind an unchanged interface:
    f32 inputs are cast on entry and floating outputs back to f32 on exit.
    Raises FrontendError listing every problem (unmapped ATen ops with their count
    and first node, nodes whose mapping failed).
    """
    if precision not in PRECISIONS:
        why = " (gpuu graphs have no bf16 dtype yet)" if precision == "bf16" else ""
        raise FrontendError(f"precision {precision!r} is not one of {', '.join(PRECISIONS)}{why}")
    if _is_exported_program(model):
        if precision != "fp32":
            raise FrontendError(f"precision {precision!r} applies to a module traced here; an ExportedProgram "
                                "keeps the dtypes it was exported with (export the module in that precision instead)")
        return _from_exported(model, example_inputs, input_names)
    if example_inputs is None:
        raise FrontendError("example_inputs are needed to trace a module (only an ExportedProgram carries its own)")
    inputs = _tensors(example_inputs)
    if precision != "fp32":
        if not isinstance(model, torch.nn.Module):
            raise FrontendError(f"precision {precision!r} needs an nn.Module (its weights are converted)")
        if input_names is None:
            input_names = _input_names(model, len(inputs))
        model = _InPrecision(model, PRECISIONS[precision])
    # Tracing and recording run the model for real: on copies, so that in-place ops leave the caller's inputs alone.
    gm, constants, updates = _trace_module(model, tuple(x.clone() for x in inputs))
    names = list(input_names) if input_names is not None else _input_names(model, len(inputs))
    if len(names) != len(inputs):
        raise FrontendError(f"{len(names)} input names for {len(inputs)} example inputs")
    placeholders = constants + [Placeholder(n, x.clone(), True) for n, x in zip(names, inputs)]
    return Lowering(gm, placeholders, aten_ops.LOWERINGS, aten_ops.SHAPE_ONLY, updates).run()


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


def _from_exported(ep: Any, example_inputs: Optional[Sequence[Any]], input_names: Optional[Sequence[str]]
                   ) -> TracedGraph:
    from torch.export.graph_signature import InputKind

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
                    user_outputs).run()


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
