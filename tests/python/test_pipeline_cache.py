"""gpuu.load(pipeline_cache=...): the file that keeps the driver's pipelines across processes (C ABI 0.9).

The header and the warnings have their tests in tests/capi/pipeline_cache_capi_test.cpp; here the keyword
reaches the session. Each load takes a token of its own, so it seeds a fresh context, as a new process would.
"""

import numpy as np
import torch

import gpuu

from conftest import Mlp, eager, seeded


def test_pipeline_cache_keyword_writes_the_file_and_seeds_a_later_load(tmp_path):
    model = seeded(Mlp)
    torch.manual_seed(1)
    x = torch.randn(2, 5, 32)
    path = tmp_path / "mlp.gpuu"
    spec = gpuu.UnifiedGpuCompileSpec(vgf=gpuu.VgfCompileSpec(), prefer="vulkan_first", min_partition_size=1)
    gpuu.export(model, (x,), spec, path)
    cache = tmp_path / "pipelines.bin"
    with gpuu.load(path, token="pipeline_cache_py_1", pipeline_cache=cache) as program:
        first = program.run([x.numpy()])
    written = cache.read_bytes()
    assert written.startswith(b"GPUUPCF\0")
    with gpuu.load(path, token="pipeline_cache_py_2", pipeline_cache=str(cache)) as program:
        second = program.run([x.numpy()])
    np.testing.assert_array_equal(first[0], second[0])
    np.testing.assert_allclose(first[0], eager(model, x)[0], rtol=1e-5, atol=1e-5)
    assert cache.read_bytes() == written
