"""PyTorch CUDA reference for bench_attention's cases: F.scaled_dot_product_attention on [1, 12, L, 64] q, k, v,
median microseconds over 50 runs timed by CUDA events after warm-up (f32 with TF32 off). Prints JSON."""
import json

import torch
import torch.nn.functional as F

torch.backends.cuda.matmul.allow_tf32 = False
cases = []
for dtype, name in ((torch.float32, "f32"), (torch.float16, "f16")):
    for length in (128, 256, 512, 1024):
        for causal in (False, True):
            q, k, v = (torch.randn(1, 12, length, 64, device="cuda", dtype=dtype) for _ in range(3))
            for _ in range(20):
                F.scaled_dot_product_attention(q, k, v, is_causal=causal)
            times = []
            for _ in range(50):
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                end.record()
                torch.cuda.synchronize()
                times.append(start.elapsed_time(end) * 1000)
            cases.append({"dtype": name, "len": length, "causal": causal, "us": round(sorted(times)[len(times) // 2], 1)})
print(json.dumps({"device": torch.cuda.get_device_name(), "torch": torch.__version__, "cases": cases}))
