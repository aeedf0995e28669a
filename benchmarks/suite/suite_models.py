"""The models of the benchmark suite, shared by export_programs.py (here) and
torch_suite.py (on the GPU machine, where gpuu's Python package is absent):
the RFC sample model, the model-family suite and the 224x224 conv net."""

import importlib.util
import os
import sys
import types

import torch
import torch.nn as nn
import torch.nn.functional as F


def repo_root():
    """The repository root: two folders up from here, or the working directory
    (run.sh runs from the root; on the GPU machine this file lies in .bench/suite)."""
    here = os.path.dirname(os.path.abspath(__file__))
    up = os.path.dirname(os.path.dirname(here))
    return up if os.path.exists(os.path.join(up, "tests", "python", "model_families.py")) else os.getcwd()


sys.path.insert(0, os.path.join(repo_root(), "tests", "python"))
from model_families import FAMILIES, family_input, make_family  # noqa: E402,F401


class ConvNet224(nn.Module):
    """Three conv3x3+ReLU stages with 2x2 max-pool (16/32/64 channels), global average pool, linear."""

    def __init__(self):
        super().__init__()
        self.convs = nn.ModuleList([nn.Conv2d(3, 16, 3, padding=1), nn.Conv2d(16, 32, 3, padding=1),
                                    nn.Conv2d(32, 64, 3, padding=1)])
        self.fc = nn.Linear(64, 10)

    def forward(self, x):
        for conv in self.convs:
            x = F.max_pool2d(F.relu(conv(x)), 2)
        return self.fc(x.mean((2, 3)))


def convnet(seed=0):
    torch.manual_seed(seed)
    model = ConvNet224().eval()
    torch.manual_seed(seed + 1)
    return model, torch.randn(1, 3, 224, 224)


def rfc():
    """The RFC sample's model and input. The sample imports gpuu at module level and
    exits without it, so where gpuu is absent a stand-in module lets it load."""
    if importlib.util.find_spec("gpuu") is None:
        sys.modules.setdefault("gpuu", types.ModuleType("gpuu"))
    path = os.path.join(repo_root(), "samples", "export_unified_vgf_vulkan_e2e.py")
    spec = importlib.util.spec_from_file_location("rfc_sample", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.UnifiedVgfVulkanModel().eval(), module.example_inputs()[0]


def program_models():
    """Every exported case: name -> (model, input), in the order the runner reports them."""
    models = {"rfc": rfc()}
    for batch in (1, 8):
        for name in sorted(FAMILIES):
            models[f"{name}_b{batch}"] = (make_family(name), family_input(name, batch=batch))
    models["convnet_224"] = convnet()
    return models
