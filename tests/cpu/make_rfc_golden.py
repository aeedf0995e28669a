#!/usr/bin/python3
# Prints the golden output of the RFC model (seed rfc-unified-vulkan-vgf-executorch.txt)
# for cpu_kernels_test.cpp: run once with /usr/bin/python3 (torch 1.13), paste the array.
import torch
import torch.nn.functional as F

x = torch.linspace(-0.8, 0.8, steps=1 * 3 * 8 * 8, dtype=torch.float32).reshape(1, 3, 8, 8)
channel_index = torch.tensor([2, 0, 1], dtype=torch.int64)
row_index = torch.tensor([3, 1, 2, 0], dtype=torch.int64)
col_gather_index = torch.tensor([3, 1, 2, 0], dtype=torch.int64).view(1, 1, 1, 4).repeat(1, 3, 4, 1)

y = x.transpose(-1, -2)
y = F.avg_pool2d(y, kernel_size=2, stride=2)
y = torch.index_select(y, dim=1, index=channel_index)
y = torch.gather(y, dim=3, index=col_gather_index)
y = torch.index_select(y, dim=2, index=row_index)
y = (torch.sin(y) * torch.reciprocal(torch.cos(y))).transpose(-1, -2)

# The test builds its input as float(-0.8 + i * 1.6 / 191) in double; report how far
# torch's float linspace is from that, so the golden values stay comparable.
ref = torch.tensor([-0.8 + i * 1.6 / 191 for i in range(192)], dtype=torch.float64).float()
print("// max |torch.linspace - test input| = %.3g" % (x.flatten() - ref).abs().max().item())
print("// shape", list(y.shape))
values = ["%.9g" % v for v in y.contiguous().flatten().tolist()]
for i in range(0, len(values), 6):
    print("    " + ", ".join(v + "f" for v in values[i:i + 6]) + ",")
