// Vulkan scatter and index_put against the CPU reference, on the test device:
// every data dtype and axis with distinct destinations (moved, so compared
// exactly), every reduction with duplicate destinations, i32 and i64
// indices, runtime indices out of range, the lowering's two steps, and
// updates read through a view.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "graph/op_registry.h"
#include "kernels/vulkan_test_util.h"

namespace gpuu::vulkan_test {
namespace {

using graph::DType;

const DType kAllDTypes[] = {DType::kF32, DType::kF16, DType::kI32, DType::kI64, DType::kBool};

// `count` distinct values of [0, dim) (count <= dim).
std::vector<int64_t> distinct(int64_t dim, int64_t count, std::mt19937& rng) {
  std::vector<int64_t> all(static_cast<size_t>(dim));
  std::iota(all.begin(), all.end(), 0);
  std::shuffle(all.begin(), all.end(), rng);
  all.resize(static_cast<size_t>(count));
  return all;
}

cpu::HostTensor index_tensor(DType dtype, const graph::Shape& shape, const std::vector<int64_t>& values) {
  if (dtype == DType::kI64) return cpu::HostTensor::from_data<int64_t>(shape, values).value();
  return cpu::HostTensor::from_data<int32_t>(shape, std::vector<int32_t>(values.begin(), values.end())).value();
}

// A scatter index of `shape` whose lines along `axis` name distinct rows of a
// dim-long axis: every destination is written once.
cpu::HostTensor distinct_scatter_index(DType dtype, const graph::Shape& shape, size_t axis, int64_t dim, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<int64_t> strides = graph::row_major_strides(shape);
  std::vector<int64_t> values(static_cast<size_t>(graph::shape_numel(shape)));
  for (int64_t at = 0; at < graph::shape_numel(shape); ++at) {
    if ((at / strides[axis]) % shape[axis] != 0) continue;  // one line per position off the axis
    std::vector<int64_t> rows = distinct(dim, shape[axis], rng);
    for (int64_t j = 0; j < shape[axis]; ++j) values[static_cast<size_t>(at + j * strides[axis])] = rows[static_cast<size_t>(j)];
  }
  return index_tensor(dtype, shape, values);
}

graph::AttrMap attrs(int64_t axis, const std::string& reduce = "none", int64_t include_self = 1) {
  return {{"axis", axis}, {"reduce", reduce}, {"include_self", include_self}};
}

TEST(VulkanScatter, ScatterEveryAxisAndDTypeWithDistinctDestinations) {
  const graph::Shape xs{4, 5, 6};
  uint32_t seed = 1;
  for (DType dtype : kAllDTypes) {
    for (DType idx : {DType::kI32, DType::kI64}) {
      for (int64_t axis : {0, 1, 2, -1}) {
        auto a = static_cast<size_t>(graph::normalize_axis(axis, 3));
        graph::Shape is{3, 4, 5};  // smaller than x off the axis
        is[a] = xs[a] - 1;
        auto index = distinct_scatter_index(idx, is, a, xs[a], seed);
        EXPECT_TRUE(node_matches_cpu("scatter", {exact_values(dtype, xs, seed), index, exact_values(dtype, is, seed + 1)},
                                     attrs(axis), 0, 0))
            << graph::dtype_name(dtype) << " " << graph::dtype_name(idx) << " axis " << axis;
        seed += 2;
      }
    }
  }
}

TEST(VulkanScatter, IndexPutEveryAxisAndDTypeWithDistinctRows) {
  const graph::Shape xs{3, 7, 5};
  uint32_t seed = 100;
  std::mt19937 rng(7);
  for (DType dtype : kAllDTypes) {
    for (DType idx : {DType::kI32, DType::kI64}) {
      for (int64_t axis : {0, 1, 2, -2}) {
        auto a = static_cast<size_t>(graph::normalize_axis(axis, 3));
        graph::Shape vs = xs;
        vs[a] = 2;
        auto index = index_tensor(idx, {2}, distinct(xs[a], 2, rng));
        for (bool constant : {false, true}) {
          EXPECT_TRUE(node_matches_cpu("index_put", {exact_values(dtype, xs, seed), index, exact_values(dtype, vs, seed + 1)},
                                       attrs(axis), 0, 0, {false, constant}))
              << graph::dtype_name(dtype) << " " << graph::dtype_name(idx) << " axis " << axis
              << (constant ? " constant" : " runtime");
        }
        seed += 2;
      }
    }
  }
}

// Duplicate destinations: each reduction, with and without x's own values.
TEST(VulkanScatter, EveryReductionWithDuplicateDestinations) {
  std::vector<DType> dtypes = {DType::kF32, DType::kI32, DType::kI64};
  if (device_has_f16()) dtypes.push_back(DType::kF16);
  uint32_t seed = 300;
  for (DType dtype : dtypes) {
    const double tol = dtype == DType::kF16 ? 2e-3 : dtype == DType::kF32 ? 1e-6 : 0;
    for (const char* reduce : {"sum", "prod", "mean", "amax", "amin"}) {
      for (int64_t include_self : {1, 0}) {
        // Rows 1 and 3 of 4 take 3 and 2 updates; rows 0 and 2 none.
        auto rows = index_tensor(DType::kI64, {5}, {3, 1, 1, 3, 1});
        EXPECT_TRUE(node_matches_cpu("index_put", {exact_values(dtype, {2, 4, 3}, seed), rows,
                                                   random_tensor(dtype, {2, 5, 3}, seed + 1, -3, 4)},
                                     attrs(1, reduce, include_self), tol, tol))
            << "index_put " << graph::dtype_name(dtype) << " " << reduce << " include_self " << include_self;
        // Elementwise: indices in [0, 3) along axis 0 of a [3, 4] x, many repeats.
        auto index = random_tensor(DType::kI32, {6, 4}, seed + 2, 0, 3);
        EXPECT_TRUE(node_matches_cpu("scatter", {exact_values(dtype, {3, 4}, seed + 3), index,
                                                 random_tensor(dtype, {6, 4}, seed + 4, -3, 4)},
                                     attrs(0, reduce, include_self), tol, tol))
            << "scatter " << graph::dtype_name(dtype) << " " << reduce << " include_self " << include_self;
        seed += 5;
      }
    }
  }
}

TEST(VulkanScatter, SumOfManyDuplicatesAcrossWorkgroups) {
  // 700 rows of 33 summed into 40 rows: lines longer than a workgroup.
  auto index = random_tensor(DType::kI32, {700}, 11, 0, 40);
  EXPECT_TRUE(node_matches_cpu("index_put", {random_tensor(DType::kF32, {40, 33}, 12, -1, 1), index,
                                             random_tensor(DType::kF32, {700, 33}, 13, -1, 1)},
                               attrs(0, "sum"), 1e-4, 1e-5));
}

TEST(VulkanScatter, OutOfRangeRuntimeIndexWritesNothing) {
  // x = 10, 11, 12, 13; updates 1..6 at: 3, past the end, negative, an i64
  // whose high word is not its low word's sign extension, 0, and another.
  graph::Graph g;
  graph::ValueId x = graph::add_graph_input(g, "x", DType::kF32, {4}).value();
  graph::ValueId i = graph::add_graph_input(g, "idx", DType::kI64, {6}).value();
  graph::ValueId v = graph::add_graph_input(g, "v", DType::kF32, {6}).value();
  g.mark_output(graph::add_op(g, "index_put", "put", {x, i, v}, attrs(0)).value()[0]);
  g.mark_output(graph::add_op(g, "index_put", "add", {x, i, v}, attrs(0, "sum")).value()[0]);
  auto xv = cpu::HostTensor::from_data<float>({4}, {10, 11, 12, 13}).value();
  auto iv = cpu::HostTensor::from_data<int64_t>({6}, {3, 4, -1, (int64_t{1} << 32) + 1, 0, -(int64_t{1} << 32) + 2})
                .value();
  auto vv = cpu::HostTensor::from_data<float>({6}, {1, 2, 3, 4, 5, 6}).value();
  Result<std::vector<cpu::HostTensor>> got = run_on_vulkan(g, {xv, iv, vv});
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_TRUE(all_close(got.value()[0], cpu::HostTensor::from_data<float>({4}, {5, 11, 12, 1}).value(), 0, 0));
  EXPECT_TRUE(all_close(got.value()[1], cpu::HostTensor::from_data<float>({4}, {15, 11, 12, 14}).value(), 0, 0));
  // The reference refuses what the GPU skips, naming the index.
  Result<std::vector<cpu::HostTensor>> cpu = cpu::run_graph(g, {xv, iv, vv});
  ASSERT_FALSE(cpu.ok());
  EXPECT_NE(cpu.status().message().find("holds 4 at [1]"), std::string::npos) << cpu.status().message();
}

TEST(VulkanScatter, LowersToACopyAndOneScatterDispatch) {
  // The copy of x into the output is a transfer, not a dispatch: the scatter
  // is the node's only dispatch, so an update made in place runs it alone.
  graph::Graph g;
  graph::ValueId x = graph::add_graph_input(g, "cache", DType::kF32, {1, 2, 8, 4}).value();
  graph::ValueId i = graph::add_graph_input(g, "pos", DType::kI32, {1}).value();
  graph::ValueId v = graph::add_graph_input(g, "v", DType::kF32, {1, 2, 1, 4}).value();
  g.mark_output(graph::add_op(g, "index_put", "update", {x, i, v}, attrs(2)).value()[0]);
  RunStats stats;
  EXPECT_TRUE(graph_matches_cpu(g, {exact_values(DType::kF32, {1, 2, 8, 4}, 1), index_tensor(DType::kI32, {1}, {5}),
                                    exact_values(DType::kF32, {1, 2, 1, 4}, 2)},
                                [](const cpu::HostTensor& got, const cpu::HostTensor& want) {
                                  return all_close(got, want, 0, 0);
                                },
                                &stats));
  EXPECT_EQ(stats.dispatches, 1u);
}

TEST(VulkanScatter, IndexPutReadsItsUpdatesThroughAView) {
  // v as a fused projection hands it over: columns 8..15 of a [1, 3, 24]
  // result, split into 2 heads of 4 and moved ahead of the positions, written
  // into a [1, 2, 8, 4] cache at 3 positions; f32 and f16 (2-byte elements).
  // Read in place: the scatter is the only dispatch, as with v itself.
  for (DType dtype : {DType::kF32, DType::kF16}) {
    if (dtype == DType::kF16 && !f16_kernels_or_refused()) continue;
    graph::Graph g;
    graph::ValueId cache = graph::add_graph_input(g, "cache", dtype, {1, 2, 8, 4}).value();
    graph::ValueId pos = graph::add_graph_input(g, "pos", DType::kI64, {3}).value();
    graph::ValueId qkv = graph::add_graph_input(g, "qkv", dtype, {1, 3, 24}).value();
    graph::ValueId v = graph::add_op(g, "slice", "v", {qkv},
                                     {{"axes", std::vector<int64_t>{2}}, {"starts", std::vector<int64_t>{8}},
                                      {"ends", std::vector<int64_t>{16}}})
                           .value()[0];
    v = graph::add_op(g, "reshape", "heads", {v}, {{"shape", std::vector<int64_t>{1, 3, 2, 4}}}).value()[0];
    v = graph::add_op(g, "transpose", "ahead", {v}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}}).value()[0];
    g.mark_output(graph::add_op(g, "index_put", "update", {cache, pos, v}, attrs(2)).value()[0]);
    RunStats stats;
    EXPECT_TRUE(graph_matches_cpu(g, {exact_values(dtype, {1, 2, 8, 4}, 3), index_tensor(DType::kI64, {3}, {6, 1, 4}),
                                      exact_values(dtype, {1, 3, 24}, 4)},
                                  [](const cpu::HostTensor& got, const cpu::HostTensor& want) {
                                    return all_close(got, want, 0, 0);
                                  },
                                  &stats))
        << graph::dtype_name(dtype);
    EXPECT_EQ(stats.dispatches, 1u) << graph::dtype_name(dtype);
  }
}

}  // namespace
}  // namespace gpuu::vulkan_test
