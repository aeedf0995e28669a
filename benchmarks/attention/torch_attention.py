"""PyTorch CUDA reference for bench_attention's cases: F.scaled_dot_product_attention on [B, 12, L, 64] q, k, v,
median microseconds over 50 runs timed by CUDA events after warm-up (f32 with TF32 off). Prints JSON. Takes
bench_attention's --lengths, --batches and --f16-only (and ignores its other options)."""
import argparse
import json

import torch
import torch.nn.functional as F


def numbers(text):
    return [int(v) for v in text.split(",")]


parser = argparse.ArgumentParser()
parser.add_argument("--lengths", type=numbers, default=[128, 197, 256, 512, 1024])
parser.add_argument("--batches", type=numbers, default=[1])
parser.add_argument("--f16-only", action="store_true")
args, _ = parser.parse_known_args()

torch.backends.cuda.matmul.allow_tf32 = False
dtypes = ((torch.float16, "f16"),) if args.f16_only else ((torch.float32, "f32"), (torch.float16, "f16"))
cases = []
for dtype, name in dtypes:
    for batch in args.batches:
        for length in args.lengths:
            for causal in (False, True):
                q, k, v = (torch.randn(batch, 12, length, 64, device="cuda", dtype=dtype) for _ in range(3))
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
                cases.append({"dtype": name, "batch": batch, "len": length, "causal": causal,
                              "us": round(sorted(times)[len(times) // 2], 1)})
print(json.dumps({"device": torch.cuda.get_device_name(), "torch": torch.__version__, "cases": cases}))
