"""ATen -> gpuu: one lowering per ATen overload packet of the Core ATen set (and the few composites
gpuu keeps whole because it runs them better fused: layer norm, softmax, GELU, upsampling, padding modes, attention).

Each lowering gets the engine (L), the ATen arguments bound by schema name (a), PyTorch's real
result for the node (real) and the fx node, and returns gpuu values (_T) shaped like `real`.
LOWERINGS maps packet names to lowerings; an in-place variant ("add_") maps to its functional
lowering, which is right because tracing functionalizes the model first. KEPT_WHOLE and DECOMPOSED say which
composites reach the lowerings whole and which PyTorch's decompositions take apart, so an op's frontend support is
decided in this file alone.
"""

from __future__ import annotations

import itertools
import math
from typing import Any, Callable, Dict, List, Optional, Sequence

import numpy as np
import torch

from . import core
from .fx_lowering import (_GPUU_TO_TORCH, _TORCH_TO_GPUU, Lowering, _Complex, _gpuu_dtype_of, _ints, _K, _Lazy, _T,
                          _Unusable)

LOWERINGS: Dict[str, Callable[[Lowering, Dict[str, Any], Any, torch.fx.Node], Any]] = {}

# Which ATen ops reach the lowerings whole, for the frontend's decomposition table (frontend.decomposition_table):
# composites gpuu keeps out of PyTorch's decompositions, since each has a gpuu op (or a short lowering) that beats
# its Core ATen pieces ...
KEPT_WHOLE = (
    "gelu", "_softmax", "_log_softmax", "native_layer_norm", "upsample_nearest1d", "upsample_nearest2d",
    "upsample_nearest3d", "_upsample_nearest_exact1d", "_upsample_nearest_exact2d", "_upsample_nearest_exact3d",
    "upsample_bilinear2d", "upsample_linear1d", "upsample_trilinear3d", "reflection_pad1d", "reflection_pad2d",
    "reflection_pad3d", "replication_pad1d", "replication_pad2d", "replication_pad3d", "hardtanh", "logaddexp",
    # PyTorch's decompositions run these in f32 for an f16 input (two casts) and clamp in two steps; kept whole,
    # they stay in the input's dtype and clamp to [0, 6] once, which fuses.
    "hardswish", "hardsigmoid",
    # Attention: the call itself is kept whole while tracing (frontend.attention_kept_whole); these keep an
    # ExportedProgram's forms of it whole too.
    "scaled_dot_product_attention", "_scaled_dot_product_flash_attention_for_cpu",
)
# ... and ATen ops gpuu has no lowering for, decomposed further with PyTorch's own decompositions (their pieces
# are core ops gpuu maps).
DECOMPOSED = (
    "native_group_norm", "leaky_relu", "elu", "silu", "mish", "softplus", "glu",
    "logit", "_safe_softmax", "roll", "rot90", "im2col", "col2im", "pixel_shuffle", "pixel_unshuffle", "tril", "triu",
    "logsumexp", "addcmul", "addcdiv", "lerp", "frac", "xlogy", "hypot", "diag_embed", "linalg_vector_norm",
    "norm", "_adaptive_avg_pool2d_backward", "nan_to_num", "baddbmm", "addmv", "addbmm", "squeeze_copy",
    "unsqueeze_copy", "threshold", "celu", "selu", "rrelu", "softshrink", "hardshrink", "tanhshrink", "log_sigmoid",
    "log_sigmoid_forward", "huber_loss", "_log_softmax_backward_data", "cosine_similarity", "trace", "diagonal_copy",
    "native_dropout", "special_entr", "sinc", "deg2rad", "rad2deg", "heaviside", "isposinf", "isneginf", "float_power",
    "copysign", "nextafter", "renorm", "upsample_bicubic2d", "lstm", "rnn_tanh", "rnn_relu", "gru",
)
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


@_lowering("hardsigmoid", "hardsigmoid_")
def _hardsigmoid(L, a, real, node):
    x = L._operand(a["self"], L.result_dtype(real), 0, "input")
    gate = L._emit("clamp", [L._emit("add", [x, L._scalar(3.0, x.dtype, x.rank)])], {"min": 0.0, "max": 6.0})
    return L._emit("div", [gate, L._scalar(6.0, x.dtype, x.rank)])


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


def _make_binary(op: str):
    def lower(L, a, real, node):
        return L.binary(op, a["self"], a["other"], real)
    return lower


# ATen packet -> gpuu op, for binaries with torch's type promotion and nothing else.
for _name, _op in {"mul": "mul", "maximum": "maximum", "minimum": "minimum", "atan2": "atan2", "arctan2": "atan2",
                   "remainder": "remainder", "fmod": "fmod", "floor_divide": "floor_divide",
                   "logaddexp": "logaddexp"}.items():
    _lowering(_name)(_make_binary(_op))


@_lowering("add", "add_")
def _add(L, a, real, node):
    return L.binary("add", a["self"], _alpha_scaled(L, a["other"], a.get("alpha"), real), real)


@_lowering("sub", "sub_")
def _sub(L, a, real, node):
    return L.binary("sub", a["self"], _alpha_scaled(L, a["other"], a.get("alpha"), real), real)


@_lowering("rsub")
def _rsub(L, a, real, node):
    return L.binary("sub", a["other"], _alpha_scaled(L, a["self"], a.get("alpha"), real), real)


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


def _select_at(L, a, x):
    """select's (axis, index) into x, a negative index counted from the end."""
    axis = L.axis(a["dim"], x.rank)
    index = int(a["index"])
    return axis, (index + x.shape[axis] if index < 0 else index)


@_lowering("select")
def _select(L, a, real, node):
    x = L.tensor(a["self"], "input")
    axis, index = _select_at(L, a, x)
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


@_lowering("_embedding_bag", "_embedding_bag_forward_only")
def _embedding_bag(L, a, real, node):
    """embedding_bag (per-sample weights, padding_idx, include_last_offset): the rows gathered, then summed (or
    averaged) into their bags by a product with the bag-membership matrix the offsets make; max mode takes each
    bag's largest over its members (an empty bag is 0, as in torch)."""
    mode = int(a.get("mode", 0))
    if mode == 2 and a.get("per_sample_weights") is not None:
        raise L._error("embedding_bag's max mode takes no per_sample_weights (as in torch)")
    dtype = L.result_dtype(real[0])
    weight = L._operand(a["weight"], dtype, 0, "weight")
    indices = L.tensor(a["indices"], "indices")
    if indices.rank != 1:
        raise L._error(f"embedding_bag with indices of rank {indices.rank} (1-D indices and offsets are taken)")
    n, bags = indices.shape[0], real[0].shape[0]
    offsets = L._operand(a["offsets"], core.DTYPE_I64, 0, "offsets")
    if a.get("include_last_offset"):
        starts, ends = L.slice(offsets, 0, 0, bags), L.slice(offsets, 0, 1, bags + 1)
    else:
        starts = offsets
        ends = L._emit("concat", [L.slice(offsets, 0, 1, bags), L._scalar(n, core.DTYPE_I64, 1)], {"axis": 0})
    at = L.constant(np.arange(n, dtype=np.int64).reshape(1, n), f"{node.name}.positions")
    member = L._emit("logical_and", [L._emit("greater_equal", [at, L.reshape(starts, [bags, 1])]),
                                     L._emit("less", [at, L.reshape(ends, [bags, 1])])])
    padding_idx = a.get("padding_idx")
    if padding_idx is not None and padding_idx >= 0:
        kept = L._emit("not_equal", [indices, L._scalar(int(padding_idx), indices.dtype, 1)])
        member = L._emit("logical_and", [member, L.reshape(kept, [1, n])])
    rows = L._emit("index_select", [weight, indices], {"axis": 0})
    if a.get("per_sample_weights") is not None:
        scale = L._operand(a["per_sample_weights"], dtype, 0, "per_sample_weights")
        rows = L._emit("mul", [rows, L.reshape(scale, [n, 1])])
    if mode == 2:
        members = L.reshape(member, [bags, n, 1])
        lowest = L._scalar(float("-inf"), dtype, 3)
        best = L._emit("reduce_max", [L._emit("where", [members, L.reshape(rows, [1, n, rows.shape[1]]), lowest])],
                       {"axes": [1], "keepdim": 0})
        empty = L._emit("logical_not", [L._emit("reduce_any", [member], {"axes": [1], "keepdim": 1})])
        out = L._emit("where", [empty, L._scalar(0.0, dtype, 2), best])
    else:
        share = L._cast(member, dtype)
        out = L._emit("matmul", [share, rows])
        if mode == 1:
            count = L._emit("reduce_sum", [share], {"axes": [1], "keepdim": 1})
            out = L._emit("div", [out, L._emit("maximum", [count, L._scalar(1.0, dtype, 2)])])
    unused = [_Unusable(f"embedding_bag's {what}") for what in ("offset2bag", "bag_size", "max_indices")]
    return [out] + unused[: len(real) - 1]


@_lowering("_cdist_forward")
def _cdist(L, a, real, node):
    """cdist as torch computes it: for p = 2 with more than 25 rows on either side (or compute_mode 1) through a
    matrix product of norm-extended rows (torch's _euclidean_dist), else from the differences of every pair."""
    dtype = L.result_dtype(real)
    x1, x2 = L._operand(a["x1"], dtype, 0, "x1"), L._operand(a["x2"], dtype, 0, "x2")
    p, mode = float(a["p"]), a.get("compute_mode")
    rank, rows1, rows2 = x1.rank, x1.shape[-2], x2.shape[-2]
    if p == 2.0 and (mode == 1 or (mode is None and (rows1 > 25 or rows2 > 25))):
        def squares(x):
            return L._emit("reduce_sum", [L._emit("mul", [x, x])], {"axes": [rank - 1], "keepdim": 1})
        ones1 = L.broadcast_to(L._scalar(1.0, dtype, rank), list(x1.shape[:-1]) + [1])
        ones2 = L.broadcast_to(L._scalar(1.0, dtype, rank), list(x2.shape[:-1]) + [1])
        left = L._emit("concat", [L._emit("mul", [x1, L._scalar(-2.0, dtype, rank)]), squares(x1), ones1],
                       {"axis": rank - 1})
        right = L._emit("concat", [x2, ones2, squares(x2)], {"axis": rank - 1})
        perm = list(range(rank - 2)) + [rank - 1, rank - 2]
        dots = L._emit("matmul", [left, L._emit("transpose", [right], {"perm": perm})])
        return L._emit("sqrt", [L._emit("maximum", [dots, L._scalar(0.0, dtype, rank)])])
    batch = list(x1.shape[:-2])
    diff = L._emit("sub", [L.reshape(x1, batch + [rows1, 1, x1.shape[-1]]), L.reshape(x2, batch + [1, rows2, x2.shape[-1]])])
    last = {"axes": [rank], "keepdim": 0}
    if p == 0.0:
        return L._emit("reduce_sum", [L._cast(L._emit("not_equal", [diff, L._scalar(0.0, dtype, rank + 1)]), dtype)], last)
    size = L._emit("abs", [diff])
    if math.isinf(p):
        return L._emit("reduce_max", [size], last)
    if p == 1.0:
        return L._emit("reduce_sum", [size], last)
    if p == 2.0:
        return L._emit("sqrt", [L._emit("reduce_sum", [L._emit("mul", [size, size])], last)])
    powered = L._emit("pow", [size, L._scalar(p, dtype, rank + 1)])
    return L._emit("pow", [L._emit("reduce_sum", [powered], last), L._scalar(1.0 / p, dtype, rank)])


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


def _attention(L, a, real, node) -> _T:
    """softmax(q k^T * scale + mask) v as one scaled_dot_product_attention node.

    torch broadcasts the batch dims of q, k and v (and, without enable_gqa, one head count of 1 against the
    other); gpuu's op takes equal batch dims and Hq a multiple of Hkv, so what broadcasts is expanded first.
    """
    dropout = float(a.get("dropout_p") or 0.0)
    if dropout != 0.0:
        raise L._error(f"scaled_dot_product_attention with dropout_p={dropout} is random; gpuu graphs cannot hold "
                       "it (pass dropout_p=0.0 outside training)")
    dtype = L.result_dtype(real)
    q, k, v = (L._operand(a[name], dtype, 0, name) for name in ("query", "key", "value"))
    if min(q.rank, k.rank, v.rank) < 2:
        raise L._error(f"query, key and value need rank >= 2, got {list(q.shape)}, {list(k.shape)}, {list(v.shape)}")
    rank = max(q.rank, k.rank, v.rank, 3)
    q, k, v = (L.reshape(t, [1] * (rank - t.rank) + list(t.shape)) for t in (q, k, v))
    batch = list(np.broadcast_shapes(q.shape[:-3], k.shape[:-3], v.shape[:-3]))
    hq, hkv = q.shape[-3], k.shape[-3]
    if not a.get("enable_gqa") and hq == 1 and hkv != 1:
        hq = hkv  # q broadcast over the kv heads
    q = L.broadcast_to(q, batch + [hq] + list(q.shape[-2:]))
    k = L.broadcast_to(k, batch + list(k.shape[-3:]))
    v = L.broadcast_to(v, batch + list(v.shape[-3:]))
    inputs = [q, k, v]
    mask = a.get("attn_mask")
    if mask is not None:
        is_bool = mask.dtype == core.DTYPE_BOOL if isinstance(mask, _T) else mask.tensor.dtype == torch.bool
        mask_dtype = core.DTYPE_BOOL if is_bool else dtype
        inputs.append(L._operand(mask, mask_dtype, 0, "attn_mask"))
    attrs: Dict[str, Any] = {"is_causal": int(bool(a.get("is_causal")))}
    if a.get("scale") is not None:
        attrs["scale"] = float(a["scale"])
    y = L._emit("scaled_dot_product_attention", inputs, attrs)
    return L.reshape(y, real.shape)


@_lowering("scaled_dot_product_attention")
def _scaled_dot_product_attention(L, a, real, node):
    # aten's op (an ExportedProgram's) and gpuu's own (frontend.attention_kept_whole, while tracing) share the schema.
    return _attention(L, a, real, node)


@_lowering("_scaled_dot_product_flash_attention_for_cpu")
def _flash_attention_for_cpu(L, a, real, node):
    return [_attention(L, a, real[0], node), _Unusable("the logsumexp of scaled_dot_product_attention")]


def _linear_from(L, x: _T, weight_t: _K, bias: Any, real) -> _T:
    """x @ weight_t (+ bias) with weight_t a constant [K, N]: linear(x, W [N, K], bias)."""
    # "fc.weight.t" / "fc.weight.permute": the fold of the model's own transpose, undone here (after any
    # expand or view of it: "in_proj_weight.permute.expand.view", a weight expanded over a batch).
    name = weight_t.name
    while name.endswith((".expand", ".view", "._unsafe_view", ".clone")):
        name = name.rsplit(".", 1)[0]
    for suffix in (".t", ".permute", ".transpose"):
        if name.endswith(suffix):
            name = name[:-len(suffix)]
            break
    else:
        name += ".T"
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
    b_raw = a.get("mat2", a.get("other"))
    if isinstance(b_raw, _K) and b_raw.rank > 2 and a_in.rank == b_raw.rank and \
            all(b_raw.tensor.stride(d) == 0 or b_raw.shape[d] == 1 for d in range(b_raw.rank - 2)):
        # A weight expanded over the batch (PyTorch's decomposition of x.transpose(0, 1) @ W.t(), as in
        # nn.MultiheadAttention's in-projection): the weight once, as a linear's.
        b_raw = _K(b_raw.tensor[(0,) * (b_raw.rank - 2)], b_raw.name)
    if isinstance(b_raw, _K) and b_raw.rank == 2 and a_in.rank >= 2:
        # x @ W.t() of a bias-free nn.Linear (Llama's, most LLMs'): a linear, whose weight rows are K-contiguous
        # (a decode step's GEMV reads them coalesced) and stay the model's own tensor.
        return _linear_from(L, a_in, b_raw, None, real)
    b_in = L.tensor(b_raw, "other")
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


@_lowering("linear_dequant")
def _linear_dequant(L, a, real, node):
    """gpuu::linear_dequant (gpuu/weight_only.py): gpuu's op of the same name, scales and bias in x's dtype."""
    x = L.tensor(a["x"], "input")
    scales = L._operand(a["scales"], x.dtype, 0, "scales")
    if scales.rank == 1:  # one per output channel
        scales = L.reshape(scales, [scales.shape[0], 1])
    b = None if a.get("bias") is None else L._operand(a["bias"], x.dtype, 0, "bias")
    return L._emit("linear_dequant", [x, L.tensor(a["weight"], "weight"), scales, b],
                   {"bits": int(a["bits"]), "group_size": int(a["group_size"])})


# ---- elementwise ops beyond the basic set ---------------------------------------

for _name in ("tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "expm1", "log1p", "trunc"):
    _lowering(_name)(_make_unary(_name))
_lowering("arcsin")(_make_unary("asin"))
_lowering("arccos")(_make_unary("acos"))
_lowering("arctan")(_make_unary("atan"))
_lowering("fix")(_make_unary("trunc"))


@_lowering("round")
def _round(L, a, real, node):
    x = L._operand(a["self"], L.result_dtype(real), 0, "input")
    if real.dtype not in (torch.float32, torch.float16):
        return x
    decimals = int(a.get("decimals") or 0)
    if decimals == 0:
        return L._emit("round", [x])
    scale = L._scalar(10.0 ** decimals, x.dtype, x.rank)
    return L._emit("div", [L._emit("round", [L._emit("mul", [x, scale])]), scale])


@_lowering("sign", "sgn")
def _sign(L, a, real, node):
    x = L._operand(a["self"], L.result_dtype(real), 0, "input")
    if x.dtype == core.DTYPE_BOOL:
        return x
    return L._emit("sign", [x])


@_lowering("isnan", "isinf")
def _isnan(L, a, real, node):
    x = L.tensor(a["self"], "input")
    if x.dtype not in (core.DTYPE_F32, core.DTYPE_F16):  # integers are never NaN nor infinite
        return L._emit("not_equal", [x, x])
    return L._emit(node.target.overloadpacket.__name__, [x])


@_lowering("logical_not")
def _logical_not(L, a, real, node):
    return L._emit("logical_not", [L.tensor(a["self"], "input")])


@_lowering("bitwise_not")
def _bitwise_not(L, a, real, node):
    x = L._operand(a["self"], L.result_dtype(real), 0, "input")
    return L._emit("logical_not" if x.dtype == core.DTYPE_BOOL else "bitwise_not", [x])


def _scaled_log(L, a, real, base: float):
    x = L._operand(a["self"], L.result_dtype(real), 0, "input")
    return L._emit("mul", [L._emit("log", [x]), L._scalar(1.0 / math.log(base), x.dtype, x.rank)])


_lowering("log2")(lambda L, a, real, node: _scaled_log(L, a, real, 2.0))
_lowering("log10")(lambda L, a, real, node: _scaled_log(L, a, real, 10.0))


@_lowering("exp2")
def _exp2(L, a, real, node):
    x = L._operand(a["self"], L.result_dtype(real), 0, "input")
    return L._emit("exp", [L._emit("mul", [x, L._scalar(math.log(2.0), x.dtype, x.rank)])])


@_lowering("square")
def _square(L, a, real, node):
    x = L._operand(a["self"], L.result_dtype(real), 0, "input")
    return L._emit("mul", [x, x])


@_lowering("div")
def _div(L, a, real, node):
    mode = a.get("rounding_mode")
    if mode is None:
        return L.binary("div", a["self"], a["other"], real)
    if mode == "floor":
        return L.binary("floor_divide", a["self"], a["other"], real)
    if mode != "trunc":
        raise L._error(f"unknown rounding_mode {mode!r}")
    dtype = L.result_dtype(real)
    rank = max((v.rank for v in (a["self"], a["other"]) if isinstance(v, (_T, _K))), default=0)
    num, den = L._operand(a["self"], dtype, rank, "input 0"), L._operand(a["other"], dtype, rank, "input 1")
    if dtype in (core.DTYPE_F32, core.DTYPE_F16):
        return L._emit("trunc", [L._emit("div", [num, den])])
    # Integers: num - fmod(num, den) is an exact multiple of den, so floor division of it truncates.
    return L._emit("floor_divide", [L._emit("sub", [num, L._emit("fmod", [num, den])]), den])


def _make_logical(op: str):
    def lower(L, a, real, node):
        common = torch.result_type(L.real_arg(node, 0), L.real_arg(node, 1))
        return L.binary(op, a["self"], a["other"], real, operand_dtype=_gpuu_dtype_of(common, "the operands"))
    return lower


for _name in ("logical_and", "logical_or", "logical_xor"):
    _lowering(_name)(_make_logical(_name))


def _make_bitwise(op: str):
    def lower(L, a, real, node):
        dtype = L.result_dtype(real)
        if dtype == core.DTYPE_BOOL:
            return L.binary("logical_" + op.split("_")[1], a["self"], a["other"], real)
        return L.binary(op, a["self"], a["other"], real)
    return lower


for _name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
    _lowering(_name)(_make_bitwise(_name))


# ---- reductions ------------------------------------------------------------------

def _reduce_axes(L, x: _T, dims: Any) -> List[int]:
    if dims is None or (isinstance(dims, (list, tuple)) and len(dims) == 0):
        return list(range(x.rank))
    dims = [dims] if isinstance(dims, int) else list(dims)
    return [L.axis(d, x.rank) for d in dims]


def _arg_reduce(L, x: _T, op: str, dim: Any, keepdim: bool, real_shape) -> _T:
    if dim is None:  # over the flattened tensor
        flat = L.reshape(x, [int(np.prod(x.shape, dtype=np.int64))])
        return L.reshape(L._emit(op, [flat], {"axis": 0, "keepdim": 0}), real_shape)
    return L._emit(op, [x], {"axis": L.axis(dim, x.rank), "keepdim": int(bool(keepdim))})


def _make_reduce(op: str, arg_op: Optional[str] = None):
    def lower(L, a, real, node):
        if "other" in a:  # max.other / min.other are the elementwise maximum / minimum
            return L.binary("maximum" if op == "reduce_max" else "minimum", a["self"], a["other"], real)
        results = real if isinstance(real, (list, tuple)) else [real]
        x = L._operand(a["self"], L.result_dtype(results[0]), 0, "input")

        def values() -> _T:
            if x.rank == 0:
                return x
            return L._emit(op, [x], {"axes": _reduce_axes(L, x, a.get("dim")), "keepdim": int(bool(a.get("keepdim")))})

        if isinstance(real, (list, tuple)):  # max.dim / min.dim: (values, indices), each made only if used
            return [_Lazy(values), _Lazy(lambda: _arg_reduce(L, x, arg_op, a.get("dim"), a.get("keepdim"),
                                                             real[1].shape))]
        return values()
    return lower


_lowering("mean")(_make_reduce("reduce_mean"))
_lowering("sum")(_make_reduce("reduce_sum"))
_lowering("amax", "max")(_make_reduce("reduce_max", "argmax"))
_lowering("amin", "min")(_make_reduce("reduce_min", "argmin"))
_lowering("prod")(_make_reduce("reduce_prod"))


def _make_bool_reduce(op: str):
    def lower(L, a, real, node):
        x = L._operand(a["self"], core.DTYPE_BOOL, 0, "input")
        dims = a.get("dim")
        if x.rank == 0:
            return x
        return L._emit(op, [x], {"axes": _reduce_axes(L, x, dims), "keepdim": int(bool(a.get("keepdim")))})
    return lower


_lowering("any")(_make_bool_reduce("reduce_any"))
_lowering("all")(_make_bool_reduce("reduce_all"))


def _make_arg(op: str):
    def lower(L, a, real, node):
        x = L.tensor(a["self"], "input")
        if x.dtype == core.DTYPE_BOOL or x.dtype == core.DTYPE_I8:
            x = L._cast(x, core.DTYPE_I32)
        return _arg_reduce(L, x, op, a.get("dim"), a.get("keepdim"), real.shape)
    return lower


_lowering("argmax")(_make_arg("argmax"))
_lowering("argmin")(_make_arg("argmin"))


def _topk_node(L, a, k: Optional[int], largest: bool):
    """values, indices of gpuu's topk along a["dim"] (k None: the whole axis)."""
    x = L.tensor(a["self"], "input")
    if x.rank == 0:
        return [x, L._scalar(0, core.DTYPE_I64, 0)]
    axis = L.axis(a.get("dim", -1), x.rank)
    return L._emit_outputs("topk", [x], {"k": x.shape[axis] if k is None else int(k), "axis": axis,
                                         "largest": int(bool(largest))})


@_lowering("topk")
def _topk(L, a, real, node):
    """topk: the k largest or smallest along an axis, sorted, with i64 indices."""
    return _topk_node(L, a, a["k"], a.get("largest", True))


@_lowering("sort")
def _sort(L, a, real, node):
    """sort: topk of the whole axis (stable: equal values keep their order, as sort(stable=True))."""
    return _topk_node(L, a, None, a.get("descending", False))


@_lowering("view_as_complex")
def _view_as_complex(L, a, real, node):
    """view_as_complex: the pairs [..., 2] held as a complex value (+, - and * are defined on it)."""
    return _Complex(L.tensor(a["self"], "input"))


@_lowering("view_as_real")
def _view_as_real(L, a, real, node):
    """view_as_real: a complex value's pairs [..., 2]."""
    v = a["self"]
    if not isinstance(v, _Complex):
        raise L._error("view_as_real of a value gpuu does not hold as complex")
    return v.pairs


@_lowering("cumsum")
def _cumsum(L, a, real, node):
    x = L._operand(a["self"], L.result_dtype(real), 0, "input")
    if x.rank == 0:
        return x
    return L._emit("cumsum", [x], {"axis": L.axis(a["dim"], x.rank)})


def _moments(L, x: _T, dims: Any, correction: Any, keepdim: bool):
    """(mean, variance) over `dims` with Bessel-style `correction` (default 1), as torch.var_mean computes them."""
    axes = _reduce_axes(L, x, dims)
    n = int(np.prod([x.shape[d] for d in axes], dtype=np.int64))
    c = 1 if correction is None else float(correction)
    mean = L._emit("reduce_mean", [x], {"axes": axes, "keepdim": 1})
    centred = L._emit("sub", [x, mean])
    var = L._emit("reduce_sum", [L._emit("mul", [centred, centred])], {"axes": axes, "keepdim": int(bool(keepdim))})
    var = L._emit("mul", [var, L._scalar(1.0 / max(n - c, 0.0) if n - c > 0 else float("nan"), x.dtype, var.rank)])
    if not keepdim:
        mean = L.reshape(mean, var.shape)
    return mean, var


@_lowering("var_mean")
def _var_mean(L, a, real, node):
    x = L._operand(a["self"], L.result_dtype(real[0]), 0, "input")
    mean, var = _moments(L, x, a.get("dim"), a.get("correction", a.get("unbiased")), bool(a.get("keepdim")))
    return [var, mean]


@_lowering("var")
def _var(L, a, real, node):
    x = L._operand(a["self"], L.result_dtype(real), 0, "input")
    return _moments(L, x, a.get("dim"), a.get("correction", a.get("unbiased")), bool(a.get("keepdim")))[1]


@_lowering("std")
def _std(L, a, real, node):
    return L._emit("sqrt", [_var(L, a, real, node)])


# ---- convolutions and pools ---------------------------------------------------------

def _as_2d(L, x: _T) -> _T:
    """A 1-D (N, C, W) tensor as 2-D (N, C, 1, W): gpuu runs 1-D convs, pools and resizes as 2-D ones with H = 1."""
    return L.reshape(x, list(x.shape[:2]) + [1, x.shape[2]])


@_lowering("convolution", "_convolution")
def _convolution(L, a, real, node):
    folded = L.conv_with_batch_norm(node)
    if folded is not None:
        a = dict(a, weight=folded[0], bias=folded[1])
    x = L.tensor(a["input"], "input")
    w = L.tensor(a["weight"], "weight")
    b = None if a.get("bias") is None else L.tensor(a["bias"], "bias")
    transposed = bool(a.get("transposed"))
    spatial = x.rank - 2
    if spatial not in (1, 2, 3):
        raise L._error(f"convolution over {spatial} spatial dims (input rank {x.rank}) is not supported")
    if transposed and spatial == 3:
        raise L._error("3-D transposed convolution is not supported (1-D and 2-D are)")
    stride, padding, dilation = (_ints(a[k], spatial) for k in ("stride", "padding", "dilation"))
    groups = int(a["groups"])
    if spatial == 1:
        x, w = _as_2d(L, x), L.reshape(w, list(w.shape[:2]) + [1, w.shape[2]])
        stride, padding, dilation = [1] + stride, [0] + padding, [1] + dilation
    attrs = {"stride": stride, "padding": padding, "dilation": dilation, "groups": groups}
    if transposed:
        out_pad = _ints(a.get("output_padding") or 0, spatial)
        attrs["output_padding"] = [0] + out_pad if spatial == 1 else out_pad
        y = L._emit("conv_transpose2d", [x, w, b], attrs)
    else:
        y = L._emit("conv3d" if spatial == 3 else "conv2d", [x, w, b], attrs)
    return L.reshape(y, real.shape)


def _pool_args(a, n: int, ceil_default=False):
    kernel = _ints(a["kernel_size"], n)
    stride = _ints(a["stride"], n) if a.get("stride") else kernel
    return kernel, stride, _ints(a.get("padding", 0), n), int(bool(a.get("ceil_mode", ceil_default)))


def _make_avg_pool(n: int):
    def lower(L, a, real, node):
        if a.get("divisor_override") is not None:
            raise L._error(f"avg_pool{n}d with divisor_override is not supported")
        x = L.tensor(a["self"], "input")
        kernel, stride, padding, ceil = _pool_args(a, n)
        op = "avg_pool3d" if n == 3 else "avg_pool2d"
        if n == 1:
            x, kernel, stride, padding = _as_2d(L, x), [1] + kernel, [1] + stride, [0] + padding
        y = L._emit(op, [x], {"kernel": kernel, "stride": stride, "padding": padding, "ceil_mode": ceil,
                              "count_include_pad": int(bool(a.get("count_include_pad", True)))})
        return L.reshape(y, real.shape)
    return lower


def _make_max_pool(n: int):
    def lower(L, a, real, node):
        x = L.tensor(a["self"], "input")
        kernel, stride, padding, ceil = _pool_args(a, n)
        dilation = _ints(a.get("dilation", 1), n)
        op = "max_pool3d" if n == 3 else "max_pool2d"
        if n == 1:
            x, kernel, stride, padding, dilation = (_as_2d(L, x), [1] + kernel, [1] + stride, [0] + padding,
                                                    [1] + dilation)
        y = L._emit(op, [x], {"kernel": kernel, "stride": stride, "padding": padding, "dilation": dilation,
                              "ceil_mode": ceil})
        values = real[0] if isinstance(real, (list, tuple)) else real
        out = L.reshape(y, values.shape)
        if not isinstance(real, (list, tuple)):
            return out
        windows = (kernel, stride, padding, dilation)
        return [out, _Lazy(lambda: L.reshape(_max_pool_indices(L, x, windows, list(y.shape), node), real[1].shape))]
    return lower


def _max_pool_indices(L, x: _T, windows, out_shape: List[int], node) -> _T:
    """max_pool2d's and max_pool3d's indices (flat in each plane or volume, (d * H + h) * W + w, as torch's): a
    running argmax over the kernel's offsets, each a strided slice of x padded with the lowest value; a later
    element wins only if greater or NaN (torch's scan), so ties keep the first."""
    kernel, stride, padding, dilation = windows
    n = len(kernel)
    sizes, outs = list(x.shape[-n:]), out_shape[-n:]
    lead = x.rank - n
    lowest = float("-inf") if x.dtype in (core.DTYPE_F32, core.DTYPE_F16) else \
        float(np.iinfo(core.numpy_dtype(x.dtype)).min)
    pads = [0, 0] * lead
    for size, o, k, st, p, d in zip(sizes, outs, kernel, stride, padding, dilation):
        pads += [p, max(0, (o - 1) * st + (k - 1) * d + 1 - size - p)]  # before, after
    padded = L._emit("pad", [x], {"pads": pads, "value": lowest})
    # Each output position's first input coordinate per axis, shaped to broadcast over the window grid.
    starts = [(np.arange(o) * st - p).reshape([o if a == i else 1 for a in range(n)])
              for i, (o, st, p) in enumerate(zip(outs, stride, padding))]
    best = index = None
    for offsets in itertools.product(*(range(k) for k in kernel)):
        window = L._emit("slice", [padded], {
            "axes": list(range(lead, x.rank)), "starts": [o * d for o, d in zip(offsets, dilation)],
            "ends": [o * d + (out - 1) * st + 1 for o, d, out, st in zip(offsets, dilation, outs, stride)],
            "steps": list(stride)})
        flat = 0
        for i, (first, o, d) in enumerate(zip(starts, offsets, dilation)):
            flat = flat * sizes[i] + first + o * d
        tag = "_".join(str(o) for o in offsets)
        at = L.constant(np.broadcast_to(flat, outs).astype(np.int64), f"{node.name}.at_{tag}")
        if best is None:
            best, index = window, L.broadcast_to(at, out_shape)
            continue
        take = L._emit("greater", [window, best])
        if x.dtype in (core.DTYPE_F32, core.DTYPE_F16):
            take = L._emit("logical_or", [take, L._emit("isnan", [window])])
        best = L._emit("where", [take, window, best])
        index = L._emit("where", [take, at, index])
    return index


@_lowering("max_unpool2d")
def _max_unpool2d(L, a, real, node):
    """max_unpool2d: each value put at its index in a plane of zeros (a scatter along the flattened plane)."""
    x = L.tensor(a["self"], "input")
    indices = L._operand(a["indices"], core.DTYPE_I64, 0, "indices")
    planes = list(real.shape[:-2])
    size = int(real.shape[-2]) * int(real.shape[-1])
    zeros = L.broadcast_to(L._scalar(0.0, x.dtype, len(planes) + 1), planes + [size])
    src = L.reshape(x, planes + [int(np.prod(x.shape[len(planes):]))])
    at = L.reshape(indices, list(src.shape))
    return L.reshape(L._emit("scatter", [zeros, at, src], {"axis": len(planes)}), real.shape)


for _n in (1, 2, 3):
    _lowering(f"avg_pool{_n}d")(_make_avg_pool(_n))
    _lowering(f"max_pool{_n}d", f"max_pool{_n}d_with_indices")(_make_max_pool(_n))


def _adaptive_matrix(size: int, out: int, dtype) -> np.ndarray:
    """[out, size]: row i averages torch's adaptive window i (start floor(i*size/out), end ceil((i+1)*size/out))."""
    m = np.zeros((out, size), dtype=np.float64)
    for i in range(out):
        start, end = (i * size) // out, -((-(i + 1) * size) // out)
        m[i, start:end] = 1.0 / (end - start)
    return m.astype(dtype)


def _make_adaptive_avg(n: int):
    def lower(L, a, real, node):
        x = L.tensor(a["self"], "input")
        spatial = list(x.shape[-n:])
        out = list(real.shape[-n:])
        axes = list(range(x.rank - n, x.rank))
        if all(o == 1 for o in out):
            return L._emit("reduce_mean", [x], {"axes": axes, "keepdim": 1})
        if n == 2 and all(s % o == 0 for s, o in zip(spatial, out)):
            kernel = [s // o for s, o in zip(spatial, out)]
            return L._emit("avg_pool2d", [x], {"kernel": kernel, "stride": kernel})
        # Uneven windows: each spatial axis is a matmul with a constant averaging matrix.
        np_dtype = core.numpy_dtype(x.dtype)
        y = x
        for k, axis in enumerate(reversed(axes)):
            size, o = spatial[-1 - k], out[-1 - k]
            if size == o:
                continue
            perm = list(range(y.rank))
            perm[axis], perm[-1] = perm[-1], perm[axis]
            moved = y if axis == y.rank - 1 else L._emit("transpose", [y], {"perm": perm})
            m = L.constant(_adaptive_matrix(size, o, np_dtype).T.copy(), f"adaptive_{axis}")
            moved = L._emit("matmul", [moved, m])
            y = moved if axis == y.rank - 1 else L._emit("transpose", [moved], {"perm": perm})
        return y
    return lower


def _make_adaptive_max(n: int):
    def lower(L, a, real, node):
        x = L.tensor(a["self"], "input")
        spatial, out = list(x.shape[-n:]), list(real[0].shape[-n:])
        axes = list(range(x.rank - n, x.rank))
        if all(o == 1 for o in out):
            y = L._emit("reduce_max", [x], {"axes": axes, "keepdim": 1})
        elif n == 2 and all(s % o == 0 for s, o in zip(spatial, out)):
            kernel = [s // o for s, o in zip(spatial, out)]
            y = L._emit("max_pool2d", [x], {"kernel": kernel, "stride": kernel})
        else:
            raise L._error(f"adaptive_max_pool{n}d from {spatial} to {out} has uneven windows, which gpuu lacks")
        return [y, _Unusable(f"the indices of {node.target}")]
    return lower


_lowering("adaptive_max_pool1d")(lambda L, a, real, node: _adaptive_max_1d(L, a, real, node))
_lowering("adaptive_max_pool2d")(_make_adaptive_max(2))
_lowering("adaptive_max_pool3d")(_make_adaptive_max(3))


def _adaptive_max_1d(L, a, real, node):
    x = L.tensor(a["self"], "input")
    bound = dict(a, self=_as_2d(L, x))
    values, indices = _make_adaptive_max(2)(L, bound, [real[0].unsqueeze(-2), real[1]], node)
    return [L.reshape(values, real[0].shape), indices]


_lowering("adaptive_avg_pool1d")(_make_adaptive_avg(1))
_lowering("adaptive_avg_pool2d", "_adaptive_avg_pool2d")(_make_adaptive_avg(2))
_lowering("adaptive_avg_pool3d", "_adaptive_avg_pool3d")(_make_adaptive_avg(3))


# ---- resizing -----------------------------------------------------------------------

def _resize_2d(L, x: _T, size, mode: str, align_corners: bool, scales) -> _T:
    attrs = {"size": [int(s) for s in size], "mode": mode}
    if mode == "bilinear":
        attrs["align_corners"] = int(bool(align_corners))
    if scales is not None and all(s is not None for s in scales):
        attrs["scales"] = [float(s) for s in scales]
    return L._emit("resize", [x], attrs)


def _make_resize(n: int, mode: str):
    """upsample_{nearest,linear,bilinear,trilinear}{1,2,3}d (.default and .vec): gpuu's 2-D resize."""
    def lower(L, a, real, node):
        x = L.tensor(a["input"] if "input" in a else a["self"], "input")
        out = list(real.shape[2:])
        align = bool(a.get("align_corners"))
        if "scale_factors" in a:
            scales = list(a["scale_factors"]) if a.get("scale_factors") else [None] * n
        else:
            scales = [a.get(k) for k in (["scales"] if n == 1 else ["scales_h", "scales_w"] if n == 2
                                            else ["scales_d", "scales_h", "scales_w"])]
        if n == 1:
            y = _resize_2d(L, _as_2d(L, x), [1, out[0]], mode, align, [1.0, scales[0]] if scales[0] else None)
            return L.reshape(y, real.shape)
        if n == 2:
            return _resize_2d(L, x, out, mode, align, scales)
        # 3-D: separable, H and W first on (N, C*D, H, W), then D on (N, C, D, OH*OW).
        b, c, d = x.shape[:3]
        hw = _resize_2d(L, L.reshape(x, [b, c * d] + list(x.shape[3:])), out[1:], mode, align,
                        scales[1:] if scales[0] is not None else None)
        flat = L.reshape(hw, [b, c, d, out[1] * out[2]])
        dz = _resize_2d(L, flat, [out[0], out[1] * out[2]], mode, align,
                        [scales[0], 1.0] if scales[0] is not None else None)
        return L.reshape(dz, real.shape)
    return lower


for _n, _dims in ((1, "1d"), (2, "2d"), (3, "3d")):
    _lowering(f"upsample_nearest{_dims}")(_make_resize(_n, "nearest"))
    _lowering(f"_upsample_nearest_exact{_dims}")(_make_resize(_n, "nearest_exact"))
_lowering("upsample_linear1d")(_make_resize(1, "bilinear"))
_lowering("upsample_bilinear2d")(_make_resize(2, "bilinear"))
_lowering("upsample_trilinear3d")(_make_resize(3, "bilinear"))


# ---- grid sampling (F.grid_sample; Core ATen keeps grid_sampler_2d whole) --------------

# torch's interpolation_mode and padding_mode codes -> gpuu's grid_sample attributes.
_GRID_SAMPLE_MODES = ("bilinear", "nearest", "bicubic")
_GRID_SAMPLE_PADDINGS = ("zeros", "border", "reflection")


@_lowering("grid_sampler_2d")
def _grid_sampler_2d(L, a, real, node):
    dtype = L.result_dtype(real)
    x = L._operand(a["input"], dtype, 0, "input")
    grid = L._operand(a["grid"], dtype, 0, "grid")
    mode, padding = int(a["interpolation_mode"]), int(a["padding_mode"])
    if mode not in range(len(_GRID_SAMPLE_MODES)) or padding not in range(len(_GRID_SAMPLE_PADDINGS)):
        raise L._error(f"grid_sampler_2d with interpolation_mode {mode} and padding_mode {padding}: gpuu knows modes "
                       f"0-2 ({', '.join(_GRID_SAMPLE_MODES)}) and paddings 0-2 ({', '.join(_GRID_SAMPLE_PADDINGS)})")
    return L._emit("grid_sample", [x, grid], {"mode": _GRID_SAMPLE_MODES[mode],
                                              "padding_mode": _GRID_SAMPLE_PADDINGS[padding],
                                              "align_corners": int(bool(a["align_corners"]))})


# ---- padding ------------------------------------------------------------------------

def _gpuu_pads(pad: Sequence[int], rank: int) -> List[int]:
    """torch's (before, after) pairs from the last dim backwards -> gpuu's pads from the first dim."""
    pads = [0] * (2 * rank)
    for k in range(len(pad) // 2):
        dim = rank - 1 - k
        pads[2 * dim], pads[2 * dim + 1] = int(pad[2 * k]), int(pad[2 * k + 1])
    return pads


@_lowering("constant_pad_nd")
def _constant_pad(L, a, real, node):
    x = L.tensor(a["self"], "input")
    pads = _gpuu_pads(a["pad"], x.rank)
    # Negative padding crops.
    for dim in range(x.rank):
        before, after = pads[2 * dim], pads[2 * dim + 1]
        if before < 0 or after < 0:
            x = L.slice(x, dim, max(-before, 0), x.shape[dim] - max(-after, 0))
            pads[2 * dim], pads[2 * dim + 1] = max(before, 0), max(after, 0)
    if not any(pads):
        return x
    return L._emit("pad", [x], {"pads": pads, "value": float(a.get("value") or 0.0)})


def _make_mode_pad(mode: str):
    def lower(L, a, real, node):
        x = L.tensor(a["self"], "input")
        return L._emit("pad", [x], {"pads": _gpuu_pads(a["padding"], x.rank), "mode": mode})
    return lower


for _n in (1, 2, 3):
    _lowering(f"reflection_pad{_n}d")(_make_mode_pad("reflect"))
    _lowering(f"replication_pad{_n}d")(_make_mode_pad("replicate"))
_lowering("_pad_circular")(lambda L, a, real, node: L._emit(
    "pad", [L.tensor(a["self"], "input")], {"pads": _gpuu_pads(a["pad"], L.tensor(a["self"], "input").rank),
                                           "mode": "circular"}))


# ---- data movement ----------------------------------------------------------------

@_lowering("expand", "expand_copy", "broadcast_to")
def _expand(L, a, real, node):
    return L.broadcast_to(L.tensor(a["self"], "input"), real.shape)


@_lowering("repeat")
def _repeat(L, a, real, node):
    x = L.tensor(a["self"], "input")
    repeats = [int(r) for r in a["repeats"]]
    shape = [1] * (len(repeats) - x.rank) + list(x.shape)
    x = L.reshape(x, shape)
    # One rank-3 expand per repeated dim k: [outer, 1, inner] -> [outer, r, inner] tiles the block from dim k on.
    for k, r in enumerate(repeats):
        if r == 1:
            continue
        outer = int(np.prod(shape[:k], dtype=np.int64))
        inner = int(np.prod(shape[k:], dtype=np.int64))
        y = L.broadcast_to(L.reshape(x, [outer, 1, inner]), [outer, r, inner])
        shape[k] *= r
        x = L.reshape(y, shape)
    return L.reshape(x, real.shape)


@_lowering("flip")
def _flip(L, a, real, node):
    x = L.tensor(a["self"], "input")
    axes = sorted({L.axis(d, x.rank) for d in a["dims"]} - {d for d in range(x.rank) if x.shape[d] == 1})
    return x if not axes else L._emit("flip", [x], {"axes": axes})


def _linear_index(L, idx: List[Any], sizes: List[int], dtype: int = core.DTYPE_I64) -> Any:
    """The flat index (of `dtype`) into dims of `sizes` from one index tensor per dim (broadcast together),
    negatives wrapped."""
    if all(isinstance(i, _K) for i in idx):
        arrays = [i.tensor.to(torch.int64).numpy() for i in idx]
        arrays = [np.where(v < 0, v + n, v) for v, n in zip(arrays, sizes)]
        flat = np.zeros(np.broadcast_shapes(*[v.shape for v in arrays]), dtype=np.int64)
        for v, n in zip(arrays, sizes):
            flat = flat * n + v
        flat = flat.astype(core.numpy_dtype(dtype))
        return _K(torch.from_numpy(np.ascontiguousarray(flat)), f"{L.current.name}_index")
    total = None
    for i, n in zip(idx, sizes):
        v = L._operand(i, dtype, 0, "index")
        negative = L._emit("less", [v, L._scalar(0, dtype, v.rank)])
        v = L._emit("where", [negative, L._emit("add", [v, L._scalar(n, dtype, v.rank)]), v])
        total = v if total is None else L._emit("add", [L._emit("mul", [total, L._scalar(n, dtype, total.rank)]), v])
    return total


@_lowering("index", "_unsafe_index")
def _index(L, a, real, node):
    """x[i0, i1, ...] with index tensors (advanced indexing): one index_select on a flattened view."""
    x = L.tensor(a["self"], "input")
    indices = list(a["indices"])
    for i, v in enumerate(indices):
        if isinstance(v, _K) and v.tensor.dtype == torch.bool:  # a constant mask: its positions
            indices[i] = _K(v.tensor.nonzero(as_tuple=True)[0], f"{v.name}_positions")
            if v.tensor.dim() != 1:
                raise L._error("boolean mask indexing with a mask of rank > 1 is not supported")
        elif v is not None and not isinstance(v, (_T, _K)):
            raise L._error(f"index {i} is a {type(v).__name__}")
        elif isinstance(v, _T) and v.dtype == core.DTYPE_BOOL:
            raise L._error("indexing with a computed boolean mask has a data-dependent shape, which gpuu lacks")
    dims = [d for d, v in enumerate(indices) if v is not None]
    adjacent = dims == list(range(dims[0], dims[-1] + 1))
    if not adjacent:  # torch puts the broadcast index dims first: so does moving the indexed dims to the front
        rest = [d for d in range(x.rank) if d not in dims]
        x = L._emit("transpose", [x], {"perm": dims + rest})
        dims = list(range(len(dims)))
    first, count = dims[0], len(dims)
    sizes = [x.shape[d] for d in dims]
    lin = _linear_index(L, [indices[d] if adjacent else v for d, v in
                            zip(dims, [v for v in indices if v is not None])], sizes)
    index_shape = list(lin.shape)
    flat_x = L.reshape(x, list(x.shape[:first]) + [int(np.prod(sizes, dtype=np.int64))] +
                       list(x.shape[first + count:]))
    flat_index = L.reshape(L.tensor(lin, "index"), [int(np.prod(index_shape, dtype=np.int64))])
    y = L._emit("index_select", [flat_x, flat_index], {"axis": first})
    return L.reshape(y, real.shape)


@_lowering("slice_scatter")
def _slice_scatter(L, a, real, node):
    x = L.tensor(a["self"], "input")
    axis = L.axis(a.get("dim", 0), x.rank)
    size = x.shape[axis]
    start = 0 if a.get("start") is None else int(a["start"])
    end = size if a.get("end") is None else int(a["end"])
    start = max(0, min(size, start + size if start < 0 else start))
    end = max(start, min(size, end + size if end < 0 else end))
    if int(a.get("step") or 1) != 1:
        raise L._error("slice_scatter with a step other than 1 is not supported")
    src = L._operand(a["src"], x.dtype, 0, "src")
    parts = ([L.slice(x, axis, 0, start)] if start > 0 else []) + [src] + \
            ([L.slice(x, axis, end, size)] if end < size else [])
    return parts[0] if len(parts) == 1 else L._emit("concat", parts, {"axis": axis})


@_lowering("select_scatter")
def _select_scatter(L, a, real, node):
    x = L.tensor(a["self"], "input")
    axis, index = _select_at(L, a, x)
    src = L._operand(a["src"], x.dtype, 0, "src")
    src = L.reshape(src, list(x.shape[:axis]) + [1] + list(x.shape[axis + 1:]))
    bound = dict(a, dim=axis, start=index, end=index + 1, step=1, src=src)
    return _slice_scatter(L, bound, real, node)


# ---- scatter-style writes: gpuu's scatter (element indices) and index_put (rows along one axis) ----------------

def _put_index_dtype(idx: List[Any], total: int) -> int:
    """i32 where every index tensor is i32 and the flat positions fit (TOSA's SCATTER takes only i32), else i64."""
    narrow = all((i.tensor.dtype if isinstance(i, _K) else _GPUU_TO_TORCH[i.dtype]) == torch.int32 for i in idx)
    return core.DTYPE_I32 if narrow and total <= np.iinfo(np.int32).max else core.DTYPE_I64


@_lowering("index_put")
def _index_put(L, a, real, node):
    """x[i0, i1, ...] = values (accumulate: +=): the indexed dims folded into one axis of one index_put.

    index_copy, index_add, index_fill and _unsafe_index_put reach gpuu as this op (PyTorch's decompositions). A
    constant boolean mask stands for its positions; a computed one, for a where() when one value goes to every
    masked element. As in torch, values written twice to one place leave either (accumulate adds both).
    """
    x = L.tensor(a["self"], "input")
    reduce = "sum" if a.get("accumulate") else "none"
    indices: List[Any] = []
    for i, v in enumerate(a["indices"]):
        if isinstance(v, _K) and v.tensor.dtype == torch.bool:  # a constant mask: its positions, one tensor per dim
            indices.extend(_K(p, f"{v.name}_positions") for p in v.tensor.nonzero(as_tuple=True))
        elif isinstance(v, _T) and v.dtype == core.DTYPE_BOOL:
            if any(w is not None for j, w in enumerate(a["indices"]) if j != i):
                raise L._error("index_put with a computed boolean mask beside other indices is not supported")
            return _masked_put(L, x, len(indices), v, a["values"], reduce)
        elif v is not None and not isinstance(v, (_T, _K)):
            raise L._error(f"index {i} is a {type(v).__name__}")
        else:
            indices.append(v)
    dims = [d for d, v in enumerate(indices) if v is not None]
    if not dims:
        raise L._error("index_put without an index tensor")
    perm = None
    if dims != list(range(dims[0], dims[-1] + 1)):  # torch puts the broadcast index dims first: so does the view
        perm = dims + [d for d in range(x.rank) if d not in dims]
        x = L._emit("transpose", [x], {"perm": perm})
        dims = list(range(len(dims)))
    tensors = [v for v in indices if v is not None]
    first, sizes = dims[0], [x.shape[d] for d in dims]
    rows = int(np.prod(sizes, dtype=np.int64))
    lin = _linear_index(L, tensors, sizes, _put_index_dtype(tensors, rows))
    pre, post = list(x.shape[:first]), list(x.shape[first + len(dims):])
    count = int(np.prod(lin.shape, dtype=np.int64))
    # values broadcast to what x[indices] reads (pre + the index shape + post), its index dims made one.
    values = _broadcast_values(L, L._operand(a["values"], x.dtype, 0, "values"), pre + list(lin.shape) + post)
    y = L._emit("index_put", [L.reshape(x, pre + [rows] + post), L.reshape(L.tensor(lin, "index"), [count]),
                              L.reshape(values, pre + [count] + post)], {"axis": first, "reduce": reduce})
    y = L.reshape(y, x.shape)
    return y if perm is None else L._emit("transpose", [y], {"perm": [int(d) for d in np.argsort(perm)]})


def _broadcast_values(L, v: _T, shape: List[int]) -> _T:
    """v broadcast to `shape` (torch checked they broadcast while tracing): a reshape where that only adds dims of 1
    (a KV cache's new rows, say), else an expand."""
    if int(np.prod(v.shape, dtype=np.int64)) == int(np.prod(shape, dtype=np.int64)):
        return L.reshape(v, shape)
    return L.broadcast_to(v, shape)


def _masked_put(L, x: _T, first: int, mask: _T, values: Any, reduce: str) -> _T:
    """x[..., mask] = values for a computed mask over dims first.. of x: where(mask, values, x) (accumulate: x plus
    values where the mask holds), which needs one value for every masked element."""
    pre, rest = list(x.shape[:first]), list(x.shape[first + mask.rank:])
    if list(mask.shape) != list(x.shape[first:first + mask.rank]):
        raise L._error(f"the boolean mask {list(mask.shape)} does not match dims {first}.. of the input "
                       f"{list(x.shape)}")
    v = L._operand(values, x.dtype, 0, "values")
    if v.rank > len(pre) + 1 + len(rest) or (v.rank > len(rest) and v.shape[v.rank - len(rest) - 1] != 1):
        raise L._error(f"index_put with a computed boolean mask and values {list(v.shape)} (one per masked element) "
                       "needs the number of true elements, which depends on the data; gpuu takes one value broadcast "
                       "to every masked element")
    v = L.reshape(L.broadcast_to(v, pre + [1] + rest), pre + [1] * mask.rank + rest)
    m = L.reshape(mask, [1] * len(pre) + list(mask.shape) + [1] * len(rest))
    if reduce == "none":
        return L._emit("where", [m, v, x])
    return L._emit("add", [x, L._emit("where", [m, v, L._scalar(0, x.dtype, x.rank)])])


_SCATTER_REDUCES = {None: "none", "add": "sum", "multiply": "prod"}  # scatter's reduce= names -> gpuu's


@_lowering("scatter", "scatter_add", "scatter_reduce")
def _scatter(L, a, real, node):
    """scatter / scatter_add / scatter_reduce: one gpuu scatter, src cut to the index's shape (as torch reads it)."""
    x = L.tensor(a["self"], "input")
    index = L.tensor(a["index"], "index")
    packet = node.target.overloadpacket.__name__
    include_self = True
    if packet == "scatter_add":
        reduce = "sum"
    elif packet == "scatter_reduce":
        reduce, include_self = a["reduce"], bool(a["include_self"])
    elif a.get("reduce") in _SCATTER_REDUCES:
        reduce = _SCATTER_REDUCES[a.get("reduce")]
    else:
        raise L._error(f"scatter with reduce={a.get('reduce')!r} is not one of torch's ('add', 'multiply')")
    if "src" in a:
        src = L._operand(a["src"], x.dtype, 0, "src")
        for d, n in enumerate(index.shape):
            src = L.slice(src, d, 0, n)
    else:  # scatter.value: one value for every index
        src = L.broadcast_to(L._scalar(a["value"], x.dtype, index.rank), index.shape)
    if x.rank == 0:  # gpuu's scatter takes an axis to index: a scalar is a 1-element vector
        x, index, src = (L.reshape(t, [1]) for t in (x, index, src))
    y = L._emit("scatter", [x, index, src], {"axis": L.axis(a["dim"], max(x.rank, 1)), "reduce": reduce,
                                              "include_self": int(include_self)})
    return L.reshape(y, real.shape)


@_lowering("index_reduce")
def _index_reduce(L, a, real, node):
    x = L.tensor(a["self"], "input")
    source = L._operand(a["source"], x.dtype, 0, "source")
    return L._emit("index_put", [x, L.tensor(a["index"], "index"), source],
                   {"axis": L.axis(a["dim"], x.rank), "reduce": a["reduce"], "include_self": int(a["include_self"])})


@_lowering("put")
def _put(L, a, real, node):
    """x.put(index, source): an index_put on x's flat view, negatives wrapped as torch does."""
    x = L.tensor(a["self"], "input")
    numel = int(np.prod(x.shape, dtype=np.int64))
    index = a["index"]
    lin = _linear_index(L, [index], [numel], _put_index_dtype([index], numel))
    count = int(np.prod(lin.shape, dtype=np.int64))
    source = L.reshape(L._operand(a["source"], x.dtype, 0, "source"), [count])
    y = L._emit("index_put", [L.reshape(x, [numel]), L.reshape(L.tensor(lin, "index"), [count]), source],
                {"axis": 0, "reduce": "sum" if a.get("accumulate") else "none"})
    return L.reshape(y, x.shape)


@_lowering("copy")
def _copy(L, a, real, node):
    """copy(self, src): src's values in self's shape and dtype (functionalization's copy_)."""
    src = L._operand(a["src"], L.result_dtype(real), 0, "src")
    return L.broadcast_to(src, real.shape)


@_lowering("as_strided", "as_strided_copy")
def _as_strided(L, a, real, node):
    x = L.tensor(a["self"], "input")
    base = L.real_arg(node, 0)
    if not base.is_contiguous() or base.storage_offset() != 0:
        raise L._error("as_strided of a non-contiguous view reads the view's storage, which gpuu does not model")
    size, stride = [int(s) for s in a["size"]], [int(s) for s in a["stride"]]
    offset = int(a.get("storage_offset") or 0)
    contiguous = [int(np.prod(size[k + 1:], dtype=np.int64)) for k in range(len(size))]
    if offset == 0 and all(st == c for st, c, n in zip(stride, contiguous, size) if n != 1):
        return L.reshape(x, size)
    flat_index = np.full(size, offset, dtype=np.int64)
    for k, (n, st) in enumerate(zip(size, stride)):
        flat_index = flat_index + (np.arange(n, dtype=np.int64) * st).reshape([n if j == k else 1
                                                                               for j in range(len(size))])
    flat = L.reshape(x, [int(np.prod(x.shape, dtype=np.int64))])
    index = L.constant(flat_index.reshape(-1), "strided_index")
    return L.reshape(L._emit("index_select", [flat, index], {"axis": 0}), size)


# ---- normalisation --------------------------------------------------------------------

@_lowering("native_batch_norm", "_native_batch_norm_legit_no_training", "_native_batch_norm_legit",
           "_native_batch_norm_legit_functional")
def _batch_norm(L, a, real, node):
    folded = L.folded_batch_norm_input(node)
    if folded is not None:  # the convolution's weight and bias hold it (conv_bn)
        return [folded] + _batch_norm_extras(node)
    x = L.tensor(a["input"], "input")
    if a.get("running_mean") is None:  # no running statistics (instance norm): the batch's own
        return _batch_norm_from_batch(L, x, a)
    if a.get("training"):
        raise L._error("batch_norm in training mode (call module.eval() before exporting)")
    stats = {}
    for key in ("weight", "bias", "running_mean", "running_var"):
        v = a.get(key)
        if v is not None and not isinstance(v, _K):
            raise L._error(f"batch_norm's {key} is computed in the graph; only constant statistics are folded")
        stats[key] = None if v is None else v.tensor.detach().double().numpy()
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
    return [L._emit("add", [L._emit("mul", [x, s]), t])] + _batch_norm_extras(node)


def _batch_norm_extras(node) -> List[Any]:
    """Eval batch norm's outputs after the first, which gpuu does not produce."""
    return [_Unusable("the saved mean of batch_norm"), _Unusable("the saved invstd of batch_norm")] + \
        ([_Unusable("the updated running statistics of batch_norm")] * 2
         if node.target.overloadpacket.__name__ == "_native_batch_norm_legit_functional" else [])


def _batch_norm_from_batch(L, x: _T, a) -> List[Any]:
    """Batch statistics (instance norm, a model traced in training mode): normalise over all but the channel dim."""
    axes = [0] + list(range(2, x.rank))
    mean, var = _moments(L, x, axes, 0, True)
    eps = L._scalar(float(a["eps"]), x.dtype, x.rank)
    y = L._emit("mul", [L._emit("sub", [x, mean]), L._emit("rsqrt", [L._emit("add", [var, eps])])])
    channels = [1, x.shape[1]] + [1] * (x.rank - 2)
    if a.get("weight") is not None:
        y = L._emit("mul", [y, L.reshape(L.tensor(a["weight"], "weight"), channels)])
    if a.get("bias") is not None:
        y = L._emit("add", [y, L.reshape(L.tensor(a["bias"], "bias"), channels)])
    return [y, _Unusable("the saved mean of batch_norm"), _Unusable("the saved invstd of batch_norm"),
            _Unusable("the updated running statistics of batch_norm"),
            _Unusable("the updated running statistics of batch_norm")]


@_lowering("diagonal", "diagonal_copy")
def _diagonal(L, a, real, node):
    """a view: read through its strides (as_strided on the contiguous input)."""
    base = L.real_arg(node, 0)
    offset = real.storage_offset() - base.storage_offset()
    bound = {"self": a["self"], "size": list(real.shape), "stride": list(real.stride()), "storage_offset": offset}
    return _as_strided(L, bound, real, node)


# ---- PT2E quantization: quantize and dequantize (quantized_decomposed) -------------------------------------
# As PyTorch's reference computes them, so a converted model's result is matched step for step:
# q = clamp(round_half_even(x * (1 / scale)) + zero_point, quant_min, quant_max) as the integer dtype, and
# x = (q - zero_point) * scale. A dequantize of a constant (a converted model's int8 weights) is folded to the
# float weight before it gets here.

def _per_tensor_param(v: Any, what: str) -> float:
    if isinstance(v, _K) and v.tensor.numel() == 1:
        return float(v.tensor.reshape(()).item())
    if isinstance(v, (int, float)):
        return float(v)
    raise _Unusable(f"a {what} computed on the device (dynamic quantization)")


def _per_channel_param(L: Lowering, v: Any, axis: int, rank: int, what: str) -> _T:
    """A [C] constant of scales or zero points, shaped to broadcast along `axis` of a rank-`rank` value."""
    if not isinstance(v, _K):
        raise _Unusable(f"per-channel {what} computed on the device")
    shape = [1] * rank
    shape[axis] = v.tensor.numel()
    return L.constant(v.tensor.detach().to(torch.float32).reshape(shape).numpy(), what)


def _quantize(L: Lowering, x: _T, inv_scale: Any, zero_point: Any, a: Dict[str, Any], real: torch.Tensor) -> _T:
    q = L._emit("round", [L.binary("mul", x, inv_scale, real.to(torch.float32))])
    q = L.binary("add", q, zero_point, real.to(torch.float32))
    q = L._emit("clamp", [q], {"min": float(a["quant_min"]), "max": float(a["quant_max"])})
    return L._cast(q, L.result_dtype(real))


def _dequantize(L: Lowering, q: _T, scale: Any, zero_point: Any, real: torch.Tensor) -> _T:
    x = L._cast(q, core.DTYPE_F32)
    x = L.binary("mul", L.binary("sub", x, zero_point, real.to(torch.float32)), scale, real.to(torch.float32))
    return L._cast(x, L.result_dtype(real))


@_lowering("quantize_per_tensor")
def _quantize_per_tensor(L, a, real, node):
    x = L._operand(a["input"], core.DTYPE_F32, 0, "input")
    scale = _per_tensor_param(a["scale"], "scale")
    inv = float(np.float32(1.0 / scale))
    return _quantize(L, x, inv, float(_per_tensor_param(a["zero_point"], "zero point")), a, real)


@_lowering("dequantize_per_tensor")
def _dequantize_per_tensor(L, a, real, node):
    q = L.tensor(a["input"], "input")
    scale = float(np.float32(_per_tensor_param(a["scale"], "scale")))
    return _dequantize(L, q, scale, float(_per_tensor_param(a["zero_point"], "zero point")), real)


@_lowering("quantize_per_channel")
def _quantize_per_channel(L, a, real, node):
    x = L._operand(a["input"], core.DTYPE_F32, 0, "input")
    axis = L.axis(a["axis"], x.rank)
    scales = a["scales"]
    if not isinstance(scales, _K):
        raise _Unusable("per-channel scales computed on the device")
    inv = _K((1.0 / scales.tensor.detach().double()).to(torch.float32), f"{scales.name}.inverse")
    return _quantize(L, x, _per_channel_param(L, inv, axis, x.rank, "inverse scales"),
                     _per_channel_param(L, a["zero_points"], axis, x.rank, "zero points"), a, real)


@_lowering("dequantize_per_channel")
def _dequantize_per_channel(L, a, real, node):
    q = L.tensor(a["input"], "input")
    axis = L.axis(a["axis"], q.rank)
    return _dequantize(L, q, _per_channel_param(L, a["scales"], axis, q.rank, "scales"),
                       _per_channel_param(L, a["zero_points"], axis, q.rank, "zero points"), real)
