"""PT2E-quantized graphs: the quantize/dequantize pairs around an op folded into integer ops.

A model quantized with PyTorch's PT2E flow (prepare_pt2e / convert_pt2e) reaches the frontend as float ops between
`dequantize_per_tensor` and `quantize_per_tensor` (quantized_decomposed). aten_ops lowers those pairs one by one,
which is exact but computes in float. Here the frontend finds, before lowering, each int8 result whose op can run
on integers and lowers it as TOSA's INT profile does:
- a convolution (1-D or 2-D) or a linear (addmm / mm against a transposed weight): i8 x i8 with i32 accumulation
  (conv2d_int, matmul_int), the bias in i32 at the input's and weight's scale, and a per-channel rescale to the
  output's scale and zero point; a ReLU, ReLU6 or hardtanh before the quantize becomes the output's clamp;
- an add of two int8 values: both rescaled to i32 at a common scale, added, rescaled to the output; a multiply:
  the product of both less their zero points in i32, rescaled (a mean stays in float: summed on integers,
  resnet18's pooled features differed by a step where PyTorch's float sum rounds the other way, and its classifier
  turned that into two);
- a reshape, permute, transpose, select, slice, clone or max pool between a dequantize and a quantize of the same
  parameters: run on the int8 values themselves; a dequantize straight into a quantize of other parameters: one
  rescale;
- a chain of elementwise ops of one input (hardswish, sigmoid, ReLU6, ...) between a dequantize and a quantize: a
  256-entry lookup table (TOSA TABLE), made by running the chain itself on the 256 int8 values, so it is exact.
16-bit activations (a16w8: int16 quantize/dequantize pairs, int8 weights) fold the same way into i16 values:
a convolution or linear sums i16 x i8 in i64 (TOSA's i48 accumulator; a linear runs as a 1x1 conv2d_int, as TOSA
has no i16 x i8 MATMUL), rescaled with a 16-bit multiplier (TOSA allows no other for i48); an add shifts by 15
rather than 20; reshapes, permutes, slices and max pools move or compare the i16 values. A 16-bit lookup table has
no exact TOSA form (TABLE interpolates 513 entries), so elementwise chains stay float between 16-bit pairs.
And a linear of int8 weights and float activations (torchao's int8 weight-only quantization, its tensor subclass
unwrapped: mm(x, float(W^T)) times a scale per output channel): linear_dequant, the weight stored as its integers.
Anything else keeps the float form. Each integer op's result is within one quantization step of PyTorch's
(fixed-point rounding against float rounding); across layers such steps can add up.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Set

import numpy as np
import torch

from . import core

_QD = "quantized_decomposed"
# Ops whose int8 result is the same op on the int8 input, where input and output share their parameters.
_ON_INTEGERS = {"view", "_unsafe_view", "reshape", "permute", "squeeze", "unsqueeze", "flatten", "max_pool2d",
                "max_pool2d_with_indices", "clone", "select", "slice", "transpose"}
_SHAPE_ONLY = {"view", "_unsafe_view", "reshape"}
# Elementwise ops of one tensor input (their other arguments constants), folded into a lookup table.
_TABLE_OPS = {"relu", "relu6", "hardtanh", "hardswish", "hardsigmoid", "sigmoid", "tanh", "gelu", "silu", "elu",
              "leaky_relu", "clamp", "clamp_min", "clamp_max", "neg", "abs", "exp", "log", "sqrt", "rsqrt",
              "reciprocal", "erf", "mul", "add", "sub", "div", "pow", "softplus", "mish", "log_sigmoid", "square"}
# add's integer form shifts both inputs left by this before their rescale, so their sum keeps the precision of
# the finer one (TFLite and TOSA's reference quantizers use 20 for int8, 15 for int16, whose values need 15 bits
# more of the i32).
_ADD_SHIFT = {8: 20, 16: 15}
_INT_DTYPES = {torch.int8: 8, torch.int16: 16}
# TOSA's i48 accumulator of i16 x i8 sums, where a 16-bit activation's conv2d_int puts its bias.
_I48 = 2**47


def packet(node: Any) -> Optional[str]:
    """The ATen overload packet's name of an fx node's op ("relu" for aten.relu.default), else None."""
    t = getattr(node, "target", None)
    return t.overloadpacket.__name__ if isinstance(t, torch._ops.OpOverload) else None


def _op(node: Any, name: str) -> bool:
    return packet(node) == name and (
        name not in ("quantize_per_tensor", "dequantize_per_tensor", "dequantize_per_channel")
        or node.target.namespace == _QD)


@dataclass
class QParams:
    scale: float
    zero_point: int
    qmin: int
    qmax: int
    bits: int = 8  # the integer's width: 8, or 16 (a16w8's activations)

    def same(self, other: "QParams") -> bool:
        return (self.scale, self.zero_point, self.qmin, self.qmax, self.bits) == (
            other.scale, other.zero_point, other.qmin, other.qmax, other.bits)

    @property
    def dtype(self) -> str:
        return f"i{self.bits}"


def _per_tensor(node: Any, which: str) -> Optional[QParams]:
    """The literal parameters of a per-tensor int8 or int16 quantize or dequantize (`which`), else None."""
    if not _op(node, which) or node.target.overloadpacket.default is not node.target or len(node.args) < 6:
        return None
    _, scale, zp, qmin, qmax, dtype = node.args[:6]
    if dtype not in _INT_DTYPES or not isinstance(scale, float) or not isinstance(zp, int):
        return None
    return QParams(scale, zp, int(qmin), int(qmax), _INT_DTYPES[dtype])


@dataclass
class Fold:
    """One int8 result computed on integers: `kind` over `x` (and `other`), quantized as `out`."""
    kind: str                       # conv | linear | add | mul | same | requant | table | weight_only (_FORMS)
    root: Any                       # the quantize node whose value this is
    op: Any                         # the float op folded
    x: Any                          # the int8 input's node (a quantize, or any int8 value)
    x_q: QParams
    out: QParams
    other: Any = None               # add, mul: the second int8 input; weight_only: the scales
    other_q: Optional[QParams] = None
    weight_dq: Any = None           # conv / linear: the weight's dequantize node; weight_only: the int8 weight
    bias: Any = None                # conv / linear: the float bias node, if any
    low: Optional[float] = None     # the activation's bounds in float (ReLU: 0; ReLU6: 0 and 6)
    high: Optional[float] = None
    extra: List[Any] = field(default_factory=list)  # other nodes it computes (a pool's getitem)


@dataclass
class Plan:
    roots: Dict[Any, Fold] = field(default_factory=dict)
    absorbed: Set[Any] = field(default_factory=set)
    floats: Dict[Any, str] = field(default_factory=dict)  # quantize nodes left in float, and why

    def report(self) -> List[Dict[str, str]]:
        """Per int8 result of the model: what computes it (gpuu.export's report, "quantized")."""
        rows = []
        for q, f in self.roots.items():
            if f.kind == "table":
                op = "+".join(_name_of(n) for n in reversed(f.extra) if _name_of(n) not in _SHAPE_ONLY)
            else:
                op = _name_of(f.op) if f.op is not None else ("requantize" if f.kind == "requant" else "view")
            runs = "int8 weights" if f.kind == "weight_only" else "integers"
            rows.append({"node": q.name, "op": op, "runs": runs, "as": _FORMS[f.kind]})
        for q, why in self.floats.items():
            rows.append({"node": q.name, "op": _name_of(q.args[0]), "runs": "float", "why": why})
        return rows


_FORMS = {"weight_only": "linear_dequant (int8 weights, float activations)", "conv": "conv2d_int + rescale", "linear": "matmul_int + rescale", "add": "rescale, add in i32, rescale",
          "mul": "rescale, mul in i32, rescale", "same": "the same op on int8", "table": "table (256 entries)",
          "requant": "rescale to new parameters"}


def _name_of(node: Any) -> str:
    if packet(node) is not None:
        return packet(node)
    if isinstance(node, torch.fx.Node) and node.target is operator.getitem:
        return f"item {node.args[1]} of {_name_of(node.args[0])}"
    return getattr(node, "op", type(node).__name__)


def _why_float(q: Any) -> str:
    cur = q.args[0]
    if not isinstance(cur, torch.fx.Node) or cur.op == "placeholder":
        return "the model's float input, quantized on the way in"
    name = _name_of(cur)
    inputs = [a for a in cur.args if isinstance(a, torch.fx.Node)]
    if not any(_per_tensor(a, "dequantize_per_tensor") for a in inputs):
        return f"{name}'s input is float (not a dequantized int8 value): computed in float, then quantized"
    if name == "mean":
        return "a mean stays in float (an integer sum rounds differently from PyTorch's float one)"
    return f"no integer form for {name}: computed in float between its dequantize and this quantize"


# What 16-bit values fold into (the lowering's i16 forms); the rest stays float.
_16_BIT_KINDS = {"conv", "linear", "add", "mul", "requant", "same"}
_16_BIT_SAME = _SHAPE_ONLY | {"squeeze", "unsqueeze", "flatten", "permute", "transpose", "select", "slice", "clone",
                              "max_pool2d", "max_pool2d_with_indices"}


def _why_not_16_bit(f: "Fold") -> Optional[str]:
    """Why `f`, over 16-bit values, stays float; None where it folds (or is all 8-bit)."""
    widths = {q.bits for q in (f.x_q, f.other_q, f.out) if q is not None}
    if widths <= {8}:
        return None
    what = _name_of(f.op) if f.op is not None else f.kind
    if f.kind == "table":
        return ("a 16-bit lookup table has no exact integer form (TOSA's TABLE interpolates 513 entries): "
                "computed in float")
    if f.kind not in _16_BIT_KINDS or (f.kind == "same" and f.op is not None and packet(f.op) not in _16_BIT_SAME):
        return f"no 16-bit integer form for {what}: computed in float between its dequantize and this quantize"
    if len(widths) > 1 and f.kind != "requant":
        return f"{what} mixes 8- and 16-bit values: computed in float"
    return None


def _single_user(node: Any) -> bool:
    return len(node.users) == 1


def _activation(node: Any):
    """(low, high) in float for a ReLU-like node, else None."""
    name = packet(node)
    if name in ("relu", "relu_"):
        return 0.0, None
    if name in ("relu6", "relu6_"):
        return 0.0, 6.0
    if name in ("hardtanh", "hardtanh_"):
        lo = node.args[1] if len(node.args) > 1 else -1.0
        hi = node.args[2] if len(node.args) > 2 else 1.0
        return float(lo), float(hi)
    return None


def _constant(node: Any, constants: Set[Any]) -> bool:
    return isinstance(node, torch.fx.Node) and node in constants


def _weight(node: Any, constants: Set[Any]) -> bool:
    """A dequantize of constant int8 weights, per output channel (axis 0) or per tensor, symmetric."""
    if _op(node, "dequantize_per_channel"):
        w, scales, zps, axis = node.args[:4]
        return axis == 0 and node.args[6] is torch.int8 and all(_constant(n, constants) for n in (w, scales, zps))
    q = _per_tensor(node, "dequantize_per_tensor")
    return q is not None and q.zero_point == 0 and _constant(node.args[0], constants)


def _float_cast(node: Any) -> bool:
    """A cast to a float dtype (`_to_copy` or `to` with a dtype)."""
    name = packet(node)
    if name == "_to_copy":
        return node.kwargs.get("dtype") in (torch.float32, torch.float16)
    return name == "to" and any(a in (torch.float32, torch.float16) for a in node.args[1:])


def _match_weight_only(mul: Any, constants: Set[Any]) -> Optional[Fold]:
    """torchao's int8 weight-only linear (Int8WeightOnlyConfig, its tensor subclass unwrapped): mm(x, float(W_i8^T))
    times a constant scale per output channel, W a constant int8 [N, K]. The mul's value is x dequantize(W)^T."""
    if packet(mul) != "mul" or len(mul.args) != 2:
        return None
    for mm, scale in (mul.args, mul.args[::-1]):
        if packet(mm) != "mm" or not _single_user(mm) or not _constant(scale, constants):
            continue
        x, wt = mm.args
        extra = []
        if _float_cast(wt):  # float(W^T) or (float(W))^T
            extra.append(wt)
            wt = wt.args[0]
        if not _op(wt, "permute") or list(wt.args[1]) != [1, 0]:
            continue
        w = wt.args[0]
        if not extra and _float_cast(w):
            extra.append(w)
            w = w.args[0]
        if len(extra) != 1 or not _constant(w, constants):
            continue
        w_val, s_val = w.meta.get("val"), scale.meta.get("val")
        if w_val is None or s_val is None or w_val.dtype != torch.int8 or w_val.dim() != 2 or \
                s_val.numel() != w_val.shape[0] or s_val.shape[-1] != w_val.shape[0]:
            continue
        return Fold("weight_only", mul, mm, x, None, None, weight_dq=w, other=scale, extra=extra + [wt])
    return None


def plan(gm: torch.fx.GraphModule, constants: Set[Any], live: Optional[Set[Any]] = None) -> Plan:
    """The folds of `gm`; `constants` are the nodes whose values are constants (weights, scales, zero points);
    `live`, where given, the nodes whose results reach an output (the others are not lowered, so they need no
    float value)."""
    p = Plan()
    candidates: Set[Any] = set()
    for node in gm.graph.nodes:
        fold = _match_weight_only(node, constants)
        if fold is not None:
            p.roots[node] = fold
            candidates.update([fold.op] + fold.extra)
    for q in gm.graph.nodes:
        out = _per_tensor(q, "quantize_per_tensor")
        if out is None:
            continue
        chain: List[Any] = []
        low = high = None
        cur = q.args[0]
        while isinstance(cur, torch.fx.Node) and _single_user(cur):
            act = _activation(cur)
            name = packet(cur)
            if act is not None and low is None:
                low, high = act
            elif name not in _SHAPE_ONLY:
                break
            chain.append(cur)
            cur = cur.args[0]
        fold = _match(q, cur, chain, out, low, high, constants) or _match_table(q, out)
        why_not_16 = _why_not_16_bit(fold) if fold is not None else None
        if why_not_16 is not None:
            p.floats[q] = why_not_16
        elif fold is None:
            p.floats[q] = _why_float(q)
        else:
            p.roots[q] = fold
            candidates.update(chain if fold.kind != "table" else [])
            candidates.update(fold.extra)
            if fold.op is not None:
                candidates.add(fold.op)
    # What a fold computes on integers is not computed in float, unless something else uses it (a table's float
    # chain may feed an op left in float too); nor is a dequantize (or, for linear, the weight's transpose) whose
    # every user is folded away. A user that reaches no output (a max pool's unused indices) uses nothing: counted
    # as one, it kept the pool and its dequantize in float, dead nodes in the graph, and gpuu.VgfCompileSpec's
    # "TOSA-1.0+INT" then kept VGF away from max_pool2d.
    changed = True
    while changed:
        changed = False
        for n in gm.graph.nodes:
            if n in p.absorbed or n in p.roots or not n.users:
                continue
            folded = n in candidates or _op(n, "dequantize_per_tensor") or _op(n, "permute")
            if folded and all(u in p.absorbed or u in p.roots or (live is not None and u not in live)
                              for u in n.users):
                p.absorbed.add(n)
                changed = True
    return p


def _dequantized(node: Any) -> Optional[QParams]:
    return _per_tensor(node, "dequantize_per_tensor") if isinstance(node, torch.fx.Node) else None


def _dequantized_through_views(node: Any):
    """(the dequantize, its parameters, the reshapes from it to `node`) where `node` is a dequantize or single-use
    reshapes of one (a linear's input flattened to 2-D), else (None, None, [])."""
    views = []
    while packet(node) in _SHAPE_ONLY and _single_user(node):
        views.append(node)
        node = node.args[0]
    q = _dequantized(node)
    return (node, q, views) if q is not None else (None, None, [])


def _match(q, cur, chain, out, low, high, constants) -> Optional[Fold]:
    if not isinstance(cur, torch.fx.Node):
        return None
    shapes_only = low is None and all(packet(n) in _SHAPE_ONLY for n in chain)
    cur_q = _dequantized(cur)
    if cur_q is not None and shapes_only:
        if cur_q.same(out):  # a reshape between the pair
            return Fold("same", q, None, cur.args[0], cur_q, out) if chain else None
        return Fold("requant", q, None, cur.args[0], cur_q, out)  # new parameters: one rescale
    if cur.target is operator.getitem and cur.args[1] == 0 and _single_user(cur):
        pool = cur.args[0]  # max_pool2d_with_indices' values (its indices unused)
        others_unused = all(u is cur or not u.users for u in pool.users)
        if _op(pool, "max_pool2d_with_indices") and others_unused and shapes_only:
            xq = _dequantized(pool.args[0])
            if xq is not None and xq.same(out):
                return Fold("same", q, pool, pool.args[0].args[0], xq, out, extra=[cur])
        return None
    name = packet(cur)
    if not _single_user(cur) or name is None:
        return None
    if name == "convolution":
        x, w, bias = cur.args[:3]
        transposed = cur.args[6]
        xq = _dequantized(x)
        if transposed or xq is None or not _weight(w, constants) or len(x.meta.get("val", torch.empty(0)).shape) not in (3, 4):
            return None
        if bias is not None and not _constant(bias, constants):
            return None
        return Fold("conv", q, cur, x.args[0], xq, out, weight_dq=w, bias=bias, low=low, high=high)
    if name in ("addmm", "mm"):
        bias, x, wt = (cur.args[0], cur.args[1], cur.args[2]) if name == "addmm" else (None, cur.args[0], cur.args[1])
        if name == "addmm" and (cur.kwargs.get("beta", 1) != 1 or cur.kwargs.get("alpha", 1) != 1):
            return None
        dq, xq, views = _dequantized_through_views(x)
        if xq is None or not _op(wt, "permute") or list(wt.args[1]) != [1, 0] or not _weight(wt.args[0], constants):
            return None
        if bias is not None and not _constant(bias, constants):
            return None
        return Fold("linear", q, cur, dq.args[0], xq, out, weight_dq=wt.args[0], bias=bias, low=low, high=high,
                    extra=views)
    if name == "add" and len(cur.args) == 2 and cur.kwargs.get("alpha", 1) == 1:
        a, b = cur.args
        aq, bq = _dequantized(a), _dequantized(b)
        if aq is None or bq is None:
            return None
        return Fold("add", q, cur, a.args[0], aq, out, other=b.args[0], other_q=bq, low=low, high=high)
    if name == "mul" and len(cur.args) == 2 and all(isinstance(a, torch.fx.Node) for a in cur.args):
        a, b = cur.args
        aq, bq = _dequantized(a), _dequantized(b)
        if aq is None or bq is None:
            return None
        return Fold("mul", q, cur, a.args[0], aq, out, other=b.args[0], other_q=bq, low=low, high=high)
    if name in _ON_INTEGERS and name != "max_pool2d_with_indices" and shapes_only:
        xq = _dequantized(cur.args[0])
        if xq is None or not xq.same(out):
            return None
        return Fold("same", q, cur, cur.args[0].args[0], xq, out)
    return None


def _match_table(q, out) -> Optional[Fold]:
    """q(f(dq(x))) for a chain f of elementwise ops of one tensor input, with at least one of them."""
    chain: List[Any] = []
    cur = q.args[0]
    while packet(cur) is not None:
        name = packet(cur).rstrip("_")
        if _dequantized(cur) is not None:
            break
        others = list(cur.args[1:]) + list(cur.kwargs.values())
        if (name not in _TABLE_OPS and name not in _SHAPE_ONLY) or any(isinstance(a, torch.fx.Node) for a in others):
            return None
        chain.append(cur)
        cur = cur.args[0]
    xq = _dequantized(cur)
    if xq is None or not any(packet(n) not in _SHAPE_ONLY for n in chain):
        return None
    return Fold("table", q, None, cur.args[0], xq, out, extra=chain)


def lookup_table(f: Fold) -> np.ndarray:
    """The int8 result of `f`'s dequantize, chain and quantize for each int8 input -128..127, by PyTorch itself."""
    dq = f.extra[-1].args[0]  # the chain runs from the quantize's input back to the dequantize
    with torch.no_grad():
        v = dq.target(torch.arange(-128, 128, dtype=torch.int8), *dq.args[1:], **dq.kwargs)
        for n in reversed(f.extra):
            if packet(n) not in _SHAPE_ONLY:
                v = n.target(v, *n.args[1:], **n.kwargs)
        table = f.root.target(v, *f.root.args[1:], **f.root.kwargs)
    return table.numpy().astype(np.int8)


# ---- lowering ------------------------------------------------------------------------------------------------

def multiplier_shift(scales: np.ndarray, bits: int = 32):
    """TOSA's fixed-point form of positive `scales`: multiplier in [2^30, 2^31) (bits 32, scale32) or [2^14, 2^15)
    (bits 16, the only form TOSA allows an i48 input), scale = m * 2^-shift."""
    top = bits - 1
    mults, shifts = [], []
    for s in np.asarray(scales, dtype=np.float64).reshape(-1):
        if not s > 0 or not math.isfinite(s):
            raise ValueError(f"a requantization scale of {s} (scales must be positive)")
        mantissa, exponent = math.frexp(s)  # s = mantissa * 2^exponent, mantissa in [0.5, 1)
        m = int(round(mantissa * (1 << top)))
        if m == 1 << top:
            m //= 2
            exponent += 1
        shift = top - exponent
        if shift > 62:  # below TOSA's range: the scaled value rounds to 0 anyway
            m, shift = 0, 62
        if shift < 2:
            raise ValueError(f"a requantization scale of {s} is beyond TOSA's rescale range")
        mults.append(m)
        shifts.append(shift)
    return np.array(mults, dtype=np.int32), np.array(shifts, dtype=np.int32)


def _int_value(L, node: Any, what: str, q: QParams):
    v = L.env.get(node)
    v = L._use(v, what)
    want = core.DTYPE_I16 if q.bits == 16 else core.DTYPE_I8
    if v.dtype != want:
        raise L._error(f"{what} is {core.dtype_name(v.dtype)}, not the {q.dtype} value its dequantize reads")
    return v


def _rescale(L, x, scales: np.ndarray, axis: int, dtype: str, input_zp: int, output_zp: int, scale32: bool = True):
    mult, shift = multiplier_shift(scales, 32 if scale32 else 16)
    return L._emit("rescale", [x, L.constant(mult, "multiplier"), L.constant(shift, "shift")],
                   {"dtype": dtype, "scale32": int(scale32), "rounding": "single_round", "axis": axis,
                    "input_zp": input_zp, "output_zp": output_zp})


def _clamp_to_output(L, y, f: Fold):
    lo, hi = f.out.qmin, f.out.qmax
    if f.low is not None:
        lo = max(lo, f.out.zero_point + int(round(f.low / f.out.scale)))
    if f.high is not None:
        hi = min(hi, f.out.zero_point + int(round(f.high / f.out.scale)))
    full = 1 << (f.out.bits - 1)  # the rescale already clamps to the type's range
    if lo > -full or hi < full - 1:
        y = L._emit("clamp", [y], {"min": float(lo), "max": float(hi)})
    return y


def _weights(L, f: Fold):
    """The int8 weights (as a torch tensor) and their per-output-channel scales (float64)."""
    dq = f.weight_dq
    w = L.env[dq.args[0]].tensor
    if _op(dq, "dequantize_per_channel"):
        scales = L.env[dq.args[1]].tensor.detach().double().reshape(-1).numpy()
        zps = L.env[dq.args[2]].tensor.detach().reshape(-1)
        if bool((zps != 0).any()):
            raise L._error("per-channel weights with non-zero zero points (asymmetric weights) are not supported")
    else:
        scales = np.full(w.shape[0], dq.args[1], dtype=np.float64)
    return w.detach().to(torch.int8), scales


def _rescale_wide(L, acc, scales: np.ndarray, axis: int, out: str, output_zp: int):
    """An i16 GEMM's i48 sums to `out`. TOSA rescales i48 only with 16-bit multipliers, whose 2^-15 error is a step
    of a large i16 output; so where every sum beyond i32 would clamp at the output anyway (scale x 2^31 >= the
    output's range), the sums go to i32 first (multiplier 2^14, shift 14: exact, saturating) and then to `out`
    with a 32-bit multiplier."""
    if float(np.min(scales)) * 2.0**31 >= 2**15:
        acc = L._emit("rescale", [acc, L.constant(np.array([1 << 14], np.int32), "multiplier"),
                                  L.constant(np.array([14], np.int32), "shift")],
                      {"dtype": "i32", "scale32": 0, "rounding": "single_round"})
        return _rescale(L, acc, scales, axis, out, 0, output_zp)
    return _rescale(L, acc, scales, axis, out, 0, output_zp, scale32=False)


def _bias_int(L, f: Fold, input_scale: float, w_scales: np.ndarray) -> Optional[np.ndarray]:
    """The bias at the accumulator's scale: i32 beside i8 activations, i48 (held in i64) beside i16 ones."""
    if f.bias is None:
        return None
    bias = L.env[f.bias].tensor.detach().double().reshape(-1).numpy()
    top = _I48 if f.x_q.bits == 16 else 2**31
    return np.clip(np.round(bias / (input_scale * w_scales)), -top, top - 1).astype(
        np.int64 if f.x_q.bits == 16 else np.int32)


def lower(L, f: Fold, real: torch.Tensor):
    """`f`'s int8 (or int16) result as gpuu values (L: the fx_lowering.Lowering)."""
    if f.kind == "weight_only":  # x [M, K] dequantize(W)^T: linear_dequant, W's integers kept
        x = L._use(L.env.get(f.x), "the linear's input")
        w = L.env[f.weight_dq].tensor.detach()
        scales = L.env[f.other].tensor.detach().reshape(-1, 1).to(real.dtype)
        return L._emit("linear_dequant", [x, L.constant(w.numpy(), "weight_i8"), L.constant(scales.numpy(), "scales")],
                       {"bits": 8, "group_size": 0})
    x = _int_value(L, f.x, "the quantized input", f.x_q)
    out = f.out.dtype
    if f.kind == "same":
        name = packet(f.op) or "view"
        if name in _SHAPE_ONLY or name in ("squeeze", "unsqueeze", "flatten"):
            return L.reshape(x, list(real.shape))
        y = L.lowerings[name](L, _bind_like(L, f.op, x), real, f.op)
        return L.reshape(y[0] if isinstance(y, (list, tuple)) else y, list(real.shape))
    if f.kind == "requant":
        y = _rescale(L, x, np.array([f.x_q.scale / f.out.scale]), -1, out, f.x_q.zero_point, f.out.zero_point)
        return _clamp_to_output(L, L.reshape(y, list(real.shape)), f)
    if f.kind == "table":
        y = L._emit("table", [x, L.constant(lookup_table(f), "table")])
        return L.reshape(y, list(real.shape))
    if f.kind == "mul":  # (a - zp_a)(b - zp_b) in i32, at scale s_a s_b
        other = _int_value(L, f.other, "the quantized input", f.other_q)
        a = _rescale(L, x, np.array([1.0]), -1, "i32", f.x_q.zero_point, 0)
        b = _rescale(L, other, np.array([1.0]), -1, "i32", f.other_q.zero_point, 0)
        p = L.binary("mul", a, b, real.to(torch.int32))
        y = _rescale(L, p, np.array([f.x_q.scale * f.other_q.scale / f.out.scale]), -1, out, 0, f.out.zero_point)
        return _clamp_to_output(L, L.reshape(y, list(real.shape)), f)
    if f.kind == "add":
        other = _int_value(L, f.other, "the quantized input", f.other_q)
        twice = 2 * max(f.x_q.scale, f.other_q.scale)
        shift = 2**_ADD_SHIFT[f.out.bits]
        a = _rescale(L, x, np.array([f.x_q.scale / twice * shift]), -1, "i32", f.x_q.zero_point, 0)
        b = _rescale(L, other, np.array([f.other_q.scale / twice * shift]), -1, "i32", f.other_q.zero_point, 0)
        s = L.binary("add", a, b, real.to(torch.int32))
        y = _rescale(L, s, np.array([twice / (shift * f.out.scale)]), -1, out, 0, f.out.zero_point)
        return _clamp_to_output(L, L.reshape(y, list(real.shape)), f)
    w, w_scales = _weights(L, f)
    bias = _bias_int(L, f, f.x_q.scale, w_scales)
    requant = f.x_q.scale * w_scales / f.out.scale
    wide = f.x_q.bits == 16  # i16 x i8 sums in i48 (i64), rescaled with a 16-bit multiplier
    if f.kind == "linear" and wide:  # TOSA has no i16 x i8 MATMUL: a 1x1 convolution of [M, K, 1, 1]
        k = w.shape[1]
        m = int(np.prod(x.shape)) // k
        x4 = L.reshape(x, [m, k, 1, 1])
        b = L.constant(bias, "bias_i48") if bias is not None else None
        acc = L._emit("conv2d_int", [x4, L.constant(w.numpy().reshape(w.shape[0], k, 1, 1), "weight_i8"), b],
                      {"input_zp": f.x_q.zero_point, "weight_zp": 0})
        y = _rescale_wide(L, acc, requant, 1, out, f.out.zero_point)
        return _clamp_to_output(L, L.reshape(y, list(real.shape)), f)
    if f.kind == "conv":
        stride, padding, dilation = (list(f.op.args[i]) for i in (3, 4, 5))
        groups = int(f.op.args[8])
        if x.rank == 3:  # a 1-D convolution, run as a 2-D one of height 1 (as aten_ops does)
            x = L.reshape(x, [x.shape[0], x.shape[1], 1, x.shape[2]])
            w = w.reshape(w.shape[0], w.shape[1], 1, w.shape[2])
            stride, padding, dilation = [1] + stride, [0] + padding, [1] + dilation
        attrs = {"stride": stride, "padding": [padding[0], padding[0], padding[1], padding[1]],
                 "dilation": dilation, "groups": groups, "input_zp": f.x_q.zero_point, "weight_zp": 0}
        b = L.constant(bias, "bias_i48" if wide else "bias_i32") if bias is not None else None
        acc = L._emit("conv2d_int", [x, L.constant(w.numpy(), "weight_i8"), b], attrs)
        y = _rescale_wide(L, acc, requant, 1, out, f.out.zero_point) if wide else \
            _rescale(L, acc, requant, 1, out, 0, f.out.zero_point)
    else:  # linear: x [M, K] @ w.T, w [N, K] (x flattened to 2-D where the model's input had more dims)
        k = w.shape[1]
        m = int(np.prod(x.shape)) // k
        a = L.reshape(x, [1, m, k])
        wt = L.constant(np.ascontiguousarray(w.numpy().T).reshape(1, k, -1), "weight_i8")
        acc = L._emit("matmul_int", [a, wt], {"a_zp": f.x_q.zero_point, "b_zp": 0})
        if bias is not None:
            acc = L._emit("add", [acc, L.constant(bias.reshape(1, 1, -1), "bias_i32")])
        y = _rescale(L, acc, requant, 2, out, 0, f.out.zero_point)
    return _clamp_to_output(L, L.reshape(y, list(real.shape)), f)


def _bind_like(L, node, x):
    """`node`'s arguments bound by schema with its input replaced by the int8 value `x`."""
    from .fx_lowering import _bind
    args = (x,) + tuple(L.env.get(a, a) if isinstance(a, torch.fx.Node) else a for a in node.args[1:])
    return _bind(node.target, args, node.kwargs)
