// Region outputs written over region inputs (a program state updated in
// place): which regions allow it (KernelGraph::can_update_in_place), and
// that a region run with one buffer for both computes what the CPU reference
// does, a slice_scatter copying only the slice it writes.
#include <gtest/gtest.h>

#include <cstring>

#include "kernels/vulkan_test_util.h"

namespace gpuu::vulkan_test {
namespace {

using cpu::HostTensor;
using graph::DType;
using graph::ValueId;
using Ints = std::vector<int64_t>;

// Runs `g` once with output `out` in the buffer of input `in` (the other
// outputs in buffers of their own); returns that buffer's contents and, in
// `steps`, how many steps (dispatches and copies) the region recorded.
Result<HostTensor> run_over(const graph::Graph& g, const std::vector<HostTensor>& inputs, ValueId in, ValueId out,
                            size_t* steps) {
  SharedGpuContextPtr ctx = test_context();
  if (!ctx) return err(StatusCode::kUnsupported, "no test context");
  std::vector<gpu::DeviceBuffer> buffers;
  std::vector<gpu::BufferRange> in_ranges, out_ranges;
  size_t shared = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    size_t bytes = std::max<size_t>(inputs[i].bytes.size(), 4);
    GPUU_ASSIGN_OR_RETURN(gpu::DeviceBuffer b,
                          gpu::DeviceBuffer::create(*ctx, bytes, gpu::MemoryKind::kReadback, "in"));
    std::memcpy(b.mapped(), inputs[i].bytes.data(), inputs[i].bytes.size());
    in_ranges.push_back(b.whole_range());
    if (g.inputs()[i] == in) shared = buffers.size();
    buffers.push_back(std::move(b));
  }
  for (ValueId o : g.outputs()) {
    if (o == out) {
      out_ranges.push_back(buffers[shared].whole_range());
      continue;
    }
    size_t bytes = static_cast<size_t>(graph::shape_numel(g.value(o).shape)) * graph::dtype_size(g.value(o).dtype);
    GPUU_ASSIGN_OR_RETURN(gpu::DeviceBuffer b, gpu::DeviceBuffer::create(*ctx, std::max<size_t>(bytes, 4),
                                                                         gpu::MemoryKind::kReadback, "out"));
    out_ranges.push_back(b.whole_range());
    buffers.push_back(std::move(b));
  }
  kernels::KernelGraphOptions options;
  options.profile_steps = true;
  GPUU_ASSIGN_OR_RETURN(std::unique_ptr<kernels::KernelGraph> region,
                        kernels::KernelGraph::create(ctx, g, in_ranges, out_ranges, options));
  GPUU_RETURN_IF_ERROR(submit_and_wait(*region));
  *steps = region->step_times().size();
  const graph::Value& v = g.value(out);
  return HostTensor::from_bytes(v.dtype, v.shape, buffers[shared].mapped(),
                                static_cast<size_t>(graph::shape_numel(v.shape)) * graph::dtype_size(v.dtype));
}

// cache[:, :, at:at+1] = k as the frontend lowers slice_scatter: the cache's
// slices before and after, and k between them, concatenated on axis 2.
struct Scatter {
  graph::Graph g;
  ValueId cache = graph::kNone, out = graph::kNone;
};

Scatter slice_scatter(int64_t at) {
  Scatter s;
  s.cache = graph::add_graph_input(s.g, "cache", DType::kF32, {1, 2, 6, 4}).value();
  ValueId k = graph::add_graph_input(s.g, "k", DType::kF32, {1, 2, 1, 4}).value();
  auto slice = [&](const char* name, int64_t start, int64_t end) {
    graph::AttrMap attrs{{"axes", Ints{2}}, {"starts", Ints{start}}, {"ends", Ints{end}}};
    return graph::add_op(s.g, "slice", name, {s.cache}, attrs).value()[0];
  };
  std::vector<ValueId> parts;
  if (at > 0) parts.push_back(slice("before", 0, at));
  parts.push_back(k);
  if (at < 5) parts.push_back(slice("after", at + 1, 6));
  s.out = graph::add_op(s.g, "concat", "scatter", parts, {{"axis", int64_t{2}}}).value()[0];
  s.g.mark_output(s.out);
  return s;
}

TEST(InPlace, SliceScatterWritesOnlyItsSlice) {
  for (int64_t at : {0, 3, 5}) {
    Scatter s = slice_scatter(at);
    ASSERT_TRUE(kernels::KernelGraph::can_update_in_place(s.g, s.cache, s.out)) << "at " << at;
    HostTensor cache = random_tensor(DType::kF32, {1, 2, 6, 4}, 3, -2, 2);
    HostTensor k = random_tensor(DType::kF32, {1, 2, 1, 4}, 4, -2, 2);
    Result<std::vector<HostTensor>> want = cpu::run_graph(s.g, {cache, k});
    ASSERT_TRUE(want.ok()) << want.status().message();
    size_t steps = 0;
    Result<HostTensor> got = run_over(s.g, {cache, k}, s.cache, s.out, &steps);
    ASSERT_TRUE(got.ok()) << got.status().message();
    EXPECT_TRUE(all_close(got.value(), want.value()[0], 0, 0)) << "at " << at;
    EXPECT_EQ(steps, 1u) << "one copy of k (a region per head), no slice, no concat dispatch; at " << at;
  }
}

// A cache that shifts left and takes k at its end: the shifted slice is not
// in place, so it is made first and the concat then writes both parts.
TEST(InPlace, RollingCacheIsWrittenOverAfterItsSliceIsMade) {
  graph::Graph g;
  ValueId cache = graph::add_graph_input(g, "cache", DType::kF32, {1, 2, 6, 4}).value();
  ValueId k = graph::add_graph_input(g, "k", DType::kF32, {1, 2, 1, 4}).value();
  ValueId kept = graph::add_op(g, "slice", "kept", {cache}, {{"axes", Ints{2}}, {"starts", Ints{1}}, {"ends", Ints{6}}})
                     .value()[0];
  ValueId out = graph::add_op(g, "concat", "roll", {kept, k}, {{"axis", int64_t{2}}}).value()[0];
  g.mark_output(out);
  ASSERT_TRUE(kernels::KernelGraph::can_update_in_place(g, cache, out));
  HostTensor c = random_tensor(DType::kF32, {1, 2, 6, 4}, 5, -2, 2);
  HostTensor kk = random_tensor(DType::kF32, {1, 2, 1, 4}, 6, -2, 2);
  Result<std::vector<HostTensor>> want = cpu::run_graph(g, {c, kk});
  ASSERT_TRUE(want.ok());
  size_t steps = 0;
  Result<HostTensor> got = run_over(g, {c, kk}, cache, out, &steps);
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_TRUE(all_close(got.value(), want.value()[0], 0, 0));
}

// ema * 0.5 + x (one fused dispatch) over ema, then a reader of the update.
TEST(InPlace, ElementwiseUpdateIsWrittenOverItsInput) {
  graph::Graph g;
  ValueId ema = graph::add_graph_input(g, "ema", DType::kF32, {3, 5}).value();
  ValueId x = graph::add_graph_input(g, "x", DType::kF32, {3, 5}).value();
  HostTensor half_t = HostTensor::from_data<float>({1}, {0.5f}).value();
  ValueId half = graph::add_graph_constant(g, "half", DType::kF32, {1}, half_t.to_blob()).value();
  ValueId scaled = graph::add_op(g, "mul", "scaled", {ema, half}, {}).value()[0];
  ValueId next = graph::add_op(g, "add", "next", {scaled, x}, {}).value()[0];
  ValueId y = graph::add_op(g, "tanh", "y", {next}, {}).value()[0];
  g.mark_output(next);
  g.mark_output(y);
  ASSERT_TRUE(kernels::KernelGraph::can_update_in_place(g, ema, next));
  HostTensor e = random_tensor(DType::kF32, {3, 5}, 7, -2, 2), xx = random_tensor(DType::kF32, {3, 5}, 8, -2, 2);
  Result<std::vector<HostTensor>> want = cpu::run_graph(g, {e, xx});
  ASSERT_TRUE(want.ok());
  size_t steps = 0;
  Result<HostTensor> got = run_over(g, {e, xx}, ema, next, &steps);
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_TRUE(all_close(got.value(), want.value()[0], 1e-6, 1e-6));
}

TEST(InPlace, RefusedWhereAKernelWouldReadWhatItOverwrote) {
  graph::Graph g;
  ValueId s = graph::add_graph_input(g, "s", DType::kF32, {4, 4}).value();
  ValueId x = graph::add_graph_input(g, "x", DType::kF32, {4, 4}).value();
  ValueId transposed = graph::add_op(g, "transpose", "t", {s}, {{"perm", Ints{1, 0}}}).value()[0];
  ValueId product = graph::add_op(g, "matmul", "mm", {s, x}, {}).value()[0];
  ValueId next = graph::add_op(g, "add", "next", {s, x}, {}).value()[0];
  ValueId later = graph::add_op(g, "mul", "later", {s, next}, {}).value()[0];  // reads s after next is written
  for (ValueId v : {transposed, product, next, later}) g.mark_output(v);
  EXPECT_FALSE(kernels::KernelGraph::can_update_in_place(g, s, transposed)) << "a transpose reads other elements";
  EXPECT_FALSE(kernels::KernelGraph::can_update_in_place(g, s, product)) << "a matmul reads rows and columns";
  EXPECT_FALSE(kernels::KernelGraph::can_update_in_place(g, s, next)) << "'later' reads s after next is written";
  EXPECT_TRUE(kernels::KernelGraph::can_update_in_place(g, s, later)) << "the last reader itself is elementwise";
  EXPECT_FALSE(kernels::KernelGraph::can_update_in_place(g, x, s)) << "s is no output";
}

}  // namespace
}  // namespace gpuu::vulkan_test
