"""ATen -> gpuu: one lowering per ATen overload packet of the Core ATen set (and the few composites
gpuu keeps whole because it runs them better fused: layer norm, softmax, GELU, upsampling, padding modes).

Each lowering gets the engine (L), the ATen arguments bound by schema name (a), PyTorch's real
result for the node (real) and the fx node, and returns gpuu values (_T) shaped like `real`.
LOWERINGS maps packet names to lowerings; an in-place variant ("add_") maps to its functional
lowering, which is right because tracing functionalizes the model first.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Dict, List, Optional, Sequence

import numpy as np
import torch

from . import core
from .fx_lowering import (_CAST_NAMES, _GPUU_TO_TORCH, _TORCH_TO_GPUU, Lowering, _gpuu_dtype_of, _ints, _K, _Lazy, _T,
                          _Unusable)

LOWERINGS: Dict[str, Callable[[Lowering, Dict[str, Any], Any, torch.fx.Node], Any]] = {}
# Ops whose result depends only on their inputs' shapes: folded even on traced tensors.
SHAPE_ONLY = {"zeros_like", "ones_like", "full_like", "empty_like", "new_zeros", "new_ones", "new_full", "new_empty",
              "sym_size", "sym_numel", "sym_stride", "sym_storage_offset"}


def _lowering(*packets: str):
    def register(fn):
        for p in packets:
            LOWERINGS[p] = fn
            if not p.endswith("_") and not p.startswith("_"):
                LOWERINGS.setdefault(p + "_", fn)
        return fn
    return register


_UNARY = {"abs": "abs", "neg": "neg", "exp": "exp", "log": "log", "sqrt": "sqrt", "rsqrt": "rsqrt",
          "reciprocal": "reciprocal", "sin": "sin", "cos": "cos", "tanh": "tanh", "sigmoid": "sigmoid",
          "relu": "relu", "erf": "erf", "floor": "floor", "ceil": "ceil"}


def _make_unary(op: str):
    def lower(L: Lowering, a: Dict[str, Any], real: Any, node: torch.fx.Node) -> _T:
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
    # "fc.weight.t" / "fc.weight.permute": the fold of the model's own transpose, undone here.
    for suffix in (".t", ".permute", ".transpose"):
        if weight_t.name.endswith(suffix):
            name = weight_t.name[:-len(suffix)]
            break
    else:
        name = weight_t.name + ".T"
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

