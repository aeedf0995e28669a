"""gpuu.quantize: PyTorch's PT2E post-training quantization with a quantizer whose annotations are what gpuu runs on
integers (gpuu/quantized.py folds them), so a user need not pick a third-party quantizer.

Schemes (weights symmetric, per output channel):
- "a8w8": 8-bit activations (per tensor, asymmetric) and weights;
- "a8w4": 8-bit activations, 4-bit weights (held in int8, values -7..7);
- "a16w8": 16-bit activations (per tensor, symmetric: zero point 0, -32767..32767, as TOSA's i16 takes them) and
  8-bit weights, for models whose activations lose too much at 8 bits; their lookup-table ops stay float.
Weight-only schemes ("w8", "w4g32", "w4g64", "w4g128") leave activations float: gpuu/weight_only.py.
Annotated, from the model's ATen graph: conv1d, conv2d and linear (the ReLU, ReLU6 or hardtanh right after one ends its
quantized result), add and mul of two tensors, elementwise ops of one input that become lookup tables (hardswish,
hardsigmoid, sigmoid, tanh, GELU, SiLU, ReLU alone), and max pooling and reshapes of a quantized result, which keep
its parameters (a reshape of a float value stays float: attention's query, key and value heads, split from the
quantized projection and reshaped for a float attention, are not quantized again). Everything else stays float
between a dequantize and a quantize.
"""

from __future__ import annotations

from typing import Any, Iterable, Optional, Sequence

import torch

from . import weight_only
from .quantized import packet

SCHEMES = ("a8w8", "a8w4", "a16w8")
_WEIGHT_RANGE = {"a8w8": (-127, 127), "a8w4": (-7, 7), "a16w8": (-127, 127)}

_LAYERS = {"conv1d", "conv2d", "linear"}
_ACTIVATIONS = {"relu", "relu_", "relu6", "relu6_", "hardtanh", "hardtanh_"}
_BINARY = {"add", "add_", "mul", "mul_"}
_TABLES = {"hardswish", "hardswish_", "hardsigmoid", "hardsigmoid_", "sigmoid", "sigmoid_", "tanh", "tanh_", "gelu",
           "silu", "silu_", "relu", "relu_", "relu6", "hardtanh", "hardtanh_"}
_SHARED = {"max_pool2d", "flatten", "view", "reshape", "_unsafe_view", "squeeze", "unsqueeze", "permute",
           "transpose", "contiguous"}


def _torchao():
    try:
        from torchao.quantization.pt2e import observer
        from torchao.quantization.pt2e import quantizer as q
        from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
    except ImportError as e:  # torchao is gpuu's quantization dependency, not the runtime's
        raise ImportError("gpuu.quantize needs torchao (pip install torchao==0.17.0)") from e
    return observer, q, prepare_pt2e, convert_pt2e


def make_quantizer(scheme: str = "a8w8"):
    """A torchao PT2E Quantizer for `scheme` (see the module's docstring), for prepare_pt2e."""
    if scheme not in SCHEMES:
        raise ValueError(f"scheme {scheme!r} is not one gpuu runs on integers; choose one of {', '.join(SCHEMES)}")
    observer, q, _, _ = _torchao()
    if scheme == "a16w8":
        act = q.QuantizationSpec(dtype=torch.int16, quant_min=-32767, quant_max=32767,
                                 qscheme=torch.per_tensor_symmetric,
                                 observer_or_fake_quant_ctr=observer.MinMaxObserver.with_args(eps=2**-20))
    else:
        act = q.QuantizationSpec(dtype=torch.int8, quant_min=-128, quant_max=127, qscheme=torch.per_tensor_affine,
                                 observer_or_fake_quant_ctr=observer.HistogramObserver.with_args(eps=2**-12))
    lo, hi = _WEIGHT_RANGE[scheme]
    weight = q.QuantizationSpec(dtype=torch.int8, quant_min=lo, quant_max=hi, qscheme=torch.per_channel_symmetric,
                                ch_axis=0,
                                observer_or_fake_quant_ctr=observer.PerChannelMinMaxObserver.with_args(eps=2**-12))

    class GpuuQuantizer(q.Quantizer):
        def annotate(self, model: torch.fx.GraphModule) -> torch.fx.GraphModule:
            done = set()
            quantized = set()  # nodes whose result is quantized

            def mark(node, inputs, output):
                node.meta["quantization_annotation"] = q.QuantizationAnnotation(
                    input_qspec_map=inputs, output_qspec=output, _annotated=True)
                done.add(node)
                if output is not None:
                    quantized.add(node)

            for n in model.graph.nodes:
                name = packet(n)
                if n in done or name is None:
                    continue
                if name in _LAYERS:
                    x, w = n.args[0], n.args[1]
                    if not isinstance(w, torch.fx.Node):
                        continue
                    users = list(n.users)
                    ends_in = users[0] if len(users) == 1 and packet(users[0]) in _ACTIVATIONS else None
                    mark(n, {x: act, w: weight}, None if ends_in is not None else act)
                    if ends_in is not None:
                        mark(ends_in, {}, act)
                elif name in _BINARY and len(n.args) >= 2 and all(isinstance(a, torch.fx.Node) for a in n.args[:2]):
                    users = list(n.users)
                    ends_in = users[0] if len(users) == 1 and packet(users[0]) in _ACTIVATIONS else None
                    mark(n, {n.args[0]: act, n.args[1]: act}, None if ends_in is not None else act)
                    if ends_in is not None:
                        mark(ends_in, {}, act)
                elif name in _TABLES and isinstance(n.args[0], torch.fx.Node):
                    mark(n, {n.args[0]: act}, act)
                elif name in _SHARED and isinstance(n.args[0], torch.fx.Node) and n.args[0] in quantized:
                    # Where the input is float, quantizing it here would only add a quantize and a dequantize.
                    mark(n, {n.args[0]: act}, q.SharedQuantizationSpec((n.args[0], n)))
            return model

        def validate(self, model: torch.fx.GraphModule) -> None:
            pass

    return GpuuQuantizer()


def quantize(model: torch.nn.Module, example_inputs: Optional[Sequence[Any]] = None,
             calibration_data: Optional[Iterable[Any]] = None, scheme: str = "a8w8") -> torch.nn.Module:
    """`model` quantized after training for gpuu.

    Activation and weight schemes ("a8w8", "a8w4", "a16w8"): traced with torch.export on `example_inputs`, observed on
    `calibration_data` (an iterable of input tuples, or of single tensors for a one-input model), converted; the
    result is a GraphModule. Weight-only schemes ("w8", "w4g32", "w4g64", "w4g128"; gpuu/weight_only.py): a copy of
    `model` whose linears hold integer weights, no inputs needed. Either result goes to gpuu.export, and runs in
    PyTorch as the reference."""
    if scheme in weight_only.SCHEMES:
        return weight_only.quantize_weights(model, scheme)
    if scheme not in SCHEMES:
        raise ValueError(f"unknown scheme {scheme!r}; choose one of {', '.join(SCHEMES + tuple(weight_only.SCHEMES))}")
    if example_inputs is None or calibration_data is None:
        raise ValueError(f"scheme {scheme!r} quantizes activations: it needs example_inputs and calibration_data")
    _, _, prepare_pt2e, convert_pt2e = _torchao()
    quantizer = make_quantizer(scheme)
    graph = torch.export.export(model.eval(), tuple(example_inputs)).module()
    prepared = prepare_pt2e(graph, quantizer)
    count = 0
    with torch.no_grad():
        for batch in calibration_data:
            prepared(*(batch if isinstance(batch, (tuple, list)) else (batch,)))
            count += 1
    if count == 0:
        raise ValueError("calibration_data gave no batches: the activations' ranges are observed on it")
    return convert_pt2e(prepared)
