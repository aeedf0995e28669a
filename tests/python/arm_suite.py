"""The .vgf files gpuu writes, one set per op family, for the Arm interop tests.

Each case is a small PyTorch model (traced by gpuu's frontend and partitioned
VGF-first, so every region gpuu can lower becomes a VGF delegate) or, for the
custom shader, a gpuu graph built directly. export_case() writes the case's
standalone files twice: through gpuu.export_vgf (Python) and through
`gpuu-inspect --extract-vgf` on the exported program file (the tool).
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
from typing import Callable, Dict, List, Tuple

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

import gpuu

import arm_sdk
from conftest import UnifiedVgfVulkanModel, rfc_input


def spec() -> gpuu.UnifiedGpuCompileSpec:
    return gpuu.UnifiedGpuCompileSpec(vgf=gpuu.VgfCompileSpec(), shared_context_token="arm_interop",
                                      prefer="vgf_first", min_partition_size=1)


class Elementwise(nn.Module):
    def forward(self, x, y):
        return torch.tanh(x) * torch.sigmoid(y) + torch.abs(x - y) / (1.0 + torch.exp(-x * x))


class Linear(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 8)

    def forward(self, x, w):
        return F.relu(self.fc(x)) @ w


class ConvPool(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)

    def forward(self, x):
        y = F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)
        return F.avg_pool2d(y, 2)


class Reductions(nn.Module):
    def forward(self, x):
        return x.sum(dim=-1, keepdim=True) + x.mean(dim=-1, keepdim=True) * x.amax(dim=-1, keepdim=True)


class SoftmaxNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(12)

    def forward(self, x):
        return torch.softmax(self.norm(x), dim=-1)


class DataMovement(nn.Module):
    def forward(self, x):
        y = x.permute(0, 2, 1).reshape(2, 24)
        return torch.cat([y[:, 4:20], y[:, :8]], dim=1)


class Spatial(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.ConvTranspose2d(4, 2, 2, stride=2)

    def forward(self, x):
        y = F.interpolate(x, scale_factor=2, mode="nearest")
        y = F.pad(y, (1, 1, 1, 1))
        return self.up(x), y


def _seeded(cls):
    torch.manual_seed(0)
    model = cls()
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 2.0)
    return model.eval()


def _rand(*shape):
    return torch.from_numpy(np.random.default_rng(len(shape) * 7 + shape[-1]).standard_normal(shape, np.float32))


# name -> (model factory, example inputs factory)
TORCH_CASES: Dict[str, Tuple[Callable[[], nn.Module], Callable[[], tuple]]] = {
    "elementwise": (lambda: _seeded(Elementwise), lambda: (_rand(2, 3, 4), _rand(2, 3, 4))),
    "linear_matmul": (lambda: _seeded(Linear), lambda: (_rand(4, 16), _rand(8, 5))),
    "conv_pool": (lambda: _seeded(ConvPool), lambda: (_rand(1, 3, 8, 8),)),
    "reductions": (lambda: _seeded(Reductions), lambda: (_rand(3, 10),)),
    "softmax_layer_norm": (lambda: _seeded(SoftmaxNorm), lambda: (_rand(2, 5, 12),)),
    "data_movement": (lambda: _seeded(DataMovement), lambda: (_rand(2, 4, 6),)),
    "resize_pad_transposed_conv": (lambda: _seeded(Spatial), lambda: (_rand(1, 4, 3, 3),)),
    "rfc_model": (lambda: UnifiedVgfVulkanModel().eval(), lambda: (rfc_input(),)),
}

CASES = list(TORCH_CASES) + ["custom_shader"]

_SHADER = (
    "#version 450\n"
    "layout(local_size_x = 64) in;\n"
    "layout(std430, set = 0, binding = 0) readonly buffer In { float x[]; };\n"
    "layout(std430, set = 0, binding = 1) writeonly buffer Out { float y[]; };\n"
    "void main() { uint i = gl_GlobalInvocationID.x; if (i < 256u) y[i] = x[i] * 2.0 + 1.0; }\n")


def _custom_shader_program() -> bytes:
    """x -> custom shader (GLSL, y = 2x + 1) -> sin: the shader becomes a VGF COMPUTE segment (glslc at export)."""
    assert shutil.which("glslc"), "glslc is not installed (tools/dev/deps.sh installs Debian's glslc)"
    attrs = {"entry_point": "main", "workgroup_sizes": [64, 1, 1], "shader_language": "GLSL", "shader_code": _SHADER,
             "input_0_binding": 0, "input_0_vkdescriptortype": "VK_DESCRIPTOR_TYPE_STORAGE_BUFFER",
             "output_0_binding": 1}
    with gpuu.Graph() as g:
        x = g.add_input("x", np.float32, [256])
        y = g.add_node("custom_shader", "affine_0", [x], {
            "domain_name": "com.arm.VulkanCustomShader", "operator_name": "affine",
            "implementation_attrs": json.dumps(attrs), "num_outputs": 1, "output_0_shape": [256],
            "output_0_dtype": "f32"})[0]
        y = g.add_node("sin", "sin_0", [y])[0]
        g.mark_output(y)
        partitioner = gpuu.UnifiedGpuPartitioner(spec())
        result = partitioner.partition(g)
        try:
            return partitioner.write_program(result)
        finally:
            result.partition.close()


def export_case(name: str, out_dir: str) -> Dict[str, List[str]]:
    """Writes the case's standalone VGF files; returns {"export_vgf": [...], "extract_vgf": [...]} (.vgf paths)."""
    if name != "custom_shader":
        make_model, make_inputs = TORCH_CASES[name]
        return export_module(name, make_model(), make_inputs(), out_dir)
    py_dir, program_path = _case_dirs(name, out_dir)
    data = _custom_shader_program()
    with open(program_path, "wb") as f:
        f.write(data)
    with gpuu.Program(data=data) as program:
        py_paths = program.extract_vgf(py_dir)
    return _extract_with_tool(name, program_path, py_paths, out_dir)


def export_module(name: str, model, inputs: tuple, out_dir: str,
                  compile_spec: gpuu.UnifiedGpuCompileSpec = None) -> Dict[str, List[str]]:
    """export_case for any PyTorch model (a quantized GraphModule included), under `compile_spec` (default spec())."""
    compile_spec = compile_spec or spec()
    py_dir, program_path = _case_dirs(name, out_dir)
    py_paths = gpuu.export_vgf(model, inputs, compile_spec, py_dir)
    gpuu.export(model, inputs, compile_spec, program_path)
    return _extract_with_tool(name, program_path, py_paths, out_dir)


def _case_dirs(name: str, out_dir: str) -> Tuple[str, str]:
    py_dir = os.path.join(out_dir, name, "export_vgf")
    os.makedirs(py_dir, exist_ok=True)
    return py_dir, os.path.join(out_dir, name, "program.gpuu")


def _extract_with_tool(name: str, program_path: str, py_paths: List[str], out_dir: str) -> Dict[str, List[str]]:
    tool_dir = os.path.join(out_dir, name, "extract_vgf")
    done = subprocess.run([arm_sdk.gpuu_inspect(), "--extract-vgf", tool_dir, program_path], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, f"gpuu-inspect --extract-vgf failed: {done.stderr}"
    tool_paths = sorted(glob.glob(os.path.join(tool_dir, "*.vgf")))
    assert py_paths, f"case {name}: no region went to VGF"
    assert len(tool_paths) == len(py_paths), (py_paths, tool_paths)
    return {"export_vgf": sorted(py_paths), "extract_vgf": tool_paths}
