// Vulkan gather and index_select against the CPU reference, on the test
// device: every data dtype, i32 and i64 indices, constant and runtime index
// tensors, negative axes, and the RFC model's Vulkan island. Tolerance: none
// (elements are moved, never computed), compared byte for byte.
#include <gtest/gtest.h>

#include <cstring>

#include "graph/op_registry.h"
#include "kernels/op_table.h"
#include "kernels/vulkan_test_util.h"

namespace gpuu::vulkan_test {
namespace {

using graph::DType;
using Ints = std::vector<int64_t>;

const DType kAllDTypes[] = {DType::kF32, DType::kF16, DType::kI32, DType::kI64, DType::kI8, DType::kBool};

testing::AssertionResult same_bytes(const cpu::HostTensor& got, const cpu::HostTensor& want) {
  if (got.dtype != want.dtype || got.shape != want.shape) {
    return testing::AssertionFailure() << "got " << got.type_string() << ", want " << want.type_string();
  }
  return all_close(got, want, 0, 0) && got.bytes == want.bytes
             ? testing::AssertionSuccess()
             : testing::AssertionFailure() << "bytes differ; " << all_close(got, want, 0, 0).message();
}

// Every output of `g` exactly as the CPU reference computes it.
testing::AssertionResult graph_matches_cpu(const graph::Graph& g, const std::vector<cpu::HostTensor>& inputs,
                                           RunStats* stats = nullptr) {
  return vulkan_test::graph_matches_cpu(g, inputs, same_bytes, stats);
}



// Valid indices in [0, dim) of `dtype` (i32 or i64).
cpu::HostTensor indices(DType dtype, const graph::Shape& shape, int64_t dim, uint32_t seed) {
  return random_tensor(dtype, shape, seed, 0, static_cast<double>(dim));
}

// One gather or index_select node; the index is a constant when `constant`.
testing::AssertionResult indexing_matches(const std::string& op, const cpu::HostTensor& x, const cpu::HostTensor& index,
                                          int64_t axis, bool constant) {
  return node_matches_cpu(op, {x, index}, {{"axis", axis}}, 0, 0, {false, constant});
}

TEST(VulkanIndex, GatherEveryAxisWithSmallerIndexShapes) {
  const graph::Shape xs{4, 5, 6};
  auto x = exact_values(DType::kF32, xs, 1);
  uint32_t seed = 10;
  for (DType idx : {DType::kI32, DType::kI64}) {
    for (int64_t axis : {0, 1, 2, -1, -3}) {
      auto a = static_cast<size_t>(graph::normalize_axis(axis, 3));
      // Off the axis the index may be smaller than x; on it, any length.
      graph::Shape is{3, 4, 5};
      is[a] = 7;
      for (bool constant : {false, true}) {
        EXPECT_TRUE(indexing_matches("gather", x, indices(idx, is, xs[a], seed++), axis, constant))
            << graph::dtype_name(idx) << " axis " << axis << (constant ? " constant" : " runtime");
      }
    }
  }
}

TEST(VulkanIndex, IndexSelectEveryAxis) {
  const graph::Shape xs{3, 5, 7};
  auto x = exact_values(DType::kF32, xs, 2);
  uint32_t seed = 40;
  for (DType idx : {DType::kI32, DType::kI64}) {
    for (int64_t axis : {0, 1, 2, -1}) {
      auto a = static_cast<size_t>(graph::normalize_axis(axis, 3));
      for (bool constant : {false, true}) {
        EXPECT_TRUE(indexing_matches("index_select", x, indices(idx, {9}, xs[a], seed++), axis, constant))
            << graph::dtype_name(idx) << " axis " << axis << (constant ? " constant" : " runtime");
      }
    }
  }
}

TEST(VulkanIndex, EveryDataDType) {
  uint32_t seed = 70;
  for (DType dtype : kAllDTypes) {
    // Odd sizes: 1- and 2-byte outputs end inside a word.
    graph::Graph g;
    graph::ValueId x = graph::add_graph_input(g, "x", dtype, {5, 7}).value();
    graph::ValueId gi = graph::add_graph_input(g, "gi", DType::kI64, {3, 7}).value();
    graph::ValueId si = graph::add_graph_input(g, "si", DType::kI32, {11}).value();
    g.mark_output(graph::add_op(g, "gather", "gather_0", {x, gi}, {{"axis", int64_t{0}}}).value()[0]);
    g.mark_output(graph::add_op(g, "index_select", "select_0", {x, si}, {{"axis", int64_t{1}}}).value()[0]);
    EXPECT_TRUE(graph_matches_cpu(g, {exact_values(dtype, {5, 7}, seed), indices(DType::kI64, {3, 7}, 5, seed + 1),
                                      indices(DType::kI32, {11}, 7, seed + 2)}))
        << graph::dtype_name(dtype);
    seed += 3;
  }
}

TEST(VulkanIndex, LargeIndexSelect) {
  // 513 x 1031 f16 rows picked 2000 times along axis 0: a multi-row dispatch.
  auto x = exact_values(DType::kF16, {513, 1031}, 90);
  EXPECT_TRUE(indexing_matches("index_select", x, indices(DType::kI64, {2000}, 513, 91), 0, false));
}

// A one-node graph whose index is the constant `index`.
graph::Graph constant_index_graph(const std::string& op, const graph::Shape& xs, const cpu::HostTensor& index,
                                  int64_t axis) {
  graph::Graph g;
  graph::ValueId x = graph::add_graph_input(g, "x", DType::kF32, xs).value();
  graph::ValueId i = graph::add_graph_constant(g, "idx", index.dtype, index.shape, index.to_blob()).value();
  g.mark_output(graph::add_op(g, op, "pick", {x, i}, {{"axis", axis}}).value()[0]);
  return g;
}

TEST(VulkanIndex, OutOfRangeConstantIndexIsRejectedNamingTheNode) {
  struct Case {
    const char* op;
    cpu::HostTensor index;
    const char* value;
  };
  const Case cases[] = {
      {"index_select", cpu::HostTensor::from_data<int64_t>({3}, {0, 4, 1}).value(), "holds 4 at [1]"},
      {"index_select", cpu::HostTensor::from_data<int32_t>({3}, {0, 1, -1}).value(), "holds -1 at [2]"},
      {"gather", cpu::HostTensor::from_data<int64_t>({1, 2}, {2, int64_t{1} << 32}).value(), "holds 4294967296 at [0,1]"},
      {"gather", cpu::HostTensor::from_data<int32_t>({1, 2}, {-3, 0}).value(), "holds -3 at [0,0]"},
  };
  for (const Case& c : cases) {
    graph::Graph g = constant_index_graph(c.op, {2, 4}, c.index, -1);
    Result<std::vector<cpu::HostTensor>> got = run_on_vulkan(g, {exact_values(DType::kF32, {2, 4}, 100)});
    ASSERT_FALSE(got.ok()) << c.op;
    EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(got.status().message().find("node 'pick'"), std::string::npos) << got.status().message();
    EXPECT_NE(got.status().message().find(c.value), std::string::npos) << got.status().message();
    EXPECT_NE(got.status().message().find("valid: 0..3"), std::string::npos) << got.status().message();
    // The reference refuses the same graph.
    EXPECT_FALSE(cpu::run_graph(g, {exact_values(DType::kF32, {2, 4}, 100)}).ok());
  }
}

TEST(VulkanIndex, OutOfRangeRuntimeIndexReadsNothingAndYieldsZero) {
  // x[0..3] = 10, 11, 12, 13; bad indices: past the end, negative, and an i64
  // whose high word is not the sign extension of its (valid-looking) low word.
  graph::Graph g;
  graph::ValueId x = graph::add_graph_input(g, "x", DType::kF32, {4}).value();
  graph::ValueId i = graph::add_graph_input(g, "idx", DType::kI64, {6}).value();
  g.mark_output(graph::add_op(g, "index_select", "pick", {x, i}, {{"axis", int64_t{0}}}).value()[0]);
  auto xv = cpu::HostTensor::from_data<float>({4}, {10, 11, 12, 13}).value();
  auto iv = cpu::HostTensor::from_data<int64_t>({6}, {3, 4, -1, (int64_t{1} << 32) + 1, 0, -(int64_t{1} << 32) + 2})
                .value();
  Result<std::vector<cpu::HostTensor>> got = run_on_vulkan(g, {xv, iv});
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_TRUE(all_close(got.value()[0], cpu::HostTensor::from_data<float>({6}, {13, 0, 0, 0, 10, 0}).value(), 0, 0));
}

TEST(VulkanIndex, RfcModelIslandRunsAsOneRegion) {
  // UnifiedVgfVulkanModel's Vulkan part: index_select(dim 1) -> gather(dim 3)
  // -> index_select(dim 2), all indices i64 constants.
  graph::Graph g;
  graph::ValueId x = graph::add_graph_input(g, "x", DType::kF32, {1, 3, 4, 4}).value();
  auto channel = cpu::HostTensor::from_data<int64_t>({3}, {2, 0, 1}).value();
  std::vector<int64_t> cols;
  for (int i = 0; i < 12; ++i) cols.insert(cols.end(), {3, 1, 2, 0});
  auto col = cpu::HostTensor::from_data<int64_t>({1, 3, 4, 4}, cols).value();
  auto row = cpu::HostTensor::from_data<int64_t>({4}, {3, 1, 2, 0}).value();
  graph::ValueId ci = graph::add_graph_constant(g, "channel_index", DType::kI64, {3}, channel.to_blob()).value();
  graph::ValueId gi = graph::add_graph_constant(g, "col_gather_index", DType::kI64, {1, 3, 4, 4}, col.to_blob()).value();
  graph::ValueId ri = graph::add_graph_constant(g, "row_index", DType::kI64, {4}, row.to_blob()).value();
  graph::ValueId a = graph::add_op(g, "index_select", "index_select_1", {x, ci}, {{"axis", int64_t{1}}}).value()[0];
  graph::ValueId b = graph::add_op(g, "gather", "gather_1", {a, gi}, {{"axis", int64_t{3}}}).value()[0];
  graph::ValueId c = graph::add_op(g, "index_select", "index_select_2", {b, ri}, {{"axis", int64_t{2}}}).value()[0];
  g.mark_output(c);
  for (const graph::Node& n : g.nodes()) EXPECT_EQ(kernels::vulkan_supports(g, n), "") << n.name;
  // torch.linspace-like input: distinct values make any misplaced element show.
  std::vector<double> v(48);
  for (size_t i = 0; i < v.size(); ++i) v[i] = -1.0 + 2.0 * static_cast<double>(i) / 47.0;
  RunStats stats;
  EXPECT_TRUE(graph_matches_cpu(g, {cpu::HostTensor::from_doubles(DType::kF32, {1, 3, 4, 4}, v).value()}, &stats));
  EXPECT_EQ(stats.dispatches, 1u) << "constant indices: the three moves compose into one gather";
  EXPECT_EQ(stats.barriers, 0u);
  // Uncomposed, each step reads what the one before wrote.
  kernels::KernelGraphOptions options;
  options.compose_movement = false;
  Result<std::vector<cpu::HostTensor>> three =
      run_on_vulkan(g, {cpu::HostTensor::from_doubles(DType::kF32, {1, 3, 4, 4}, v).value()}, &stats, options);
  ASSERT_TRUE(three.ok()) << three.status().message();
  EXPECT_EQ(stats.dispatches, 3u);
  EXPECT_EQ(stats.barriers, 2u);
}

// Static movement composed: index_select -> gather -> transpose -> reshape ->
// index_select with constant indices is one flat gather (movement.h), exact
// for every element size; a runtime index or a value read twice ends a chain.
TEST(VulkanIndex, MovementChainsWithConstantIndicesAreOneDispatch) {
  for (DType dtype : {DType::kF32, DType::kF16, DType::kI64, DType::kI8}) {
    if (dtype == DType::kF16 && !f16_kernels_or_refused()) continue;
    graph::Graph g;
    graph::ValueId x = graph::add_graph_input(g, "x", dtype, {2, 3, 4, 5}).value();
    auto constant = [&](const char* name, const cpu::HostTensor& t) {
      return graph::add_graph_constant(g, name, t.dtype, t.shape, t.to_blob()).value();
    };
    graph::ValueId i0 = constant("i0", indices(DType::kI64, {3}, 3, 1));
    graph::ValueId i1 = constant("i1", indices(DType::kI32, {2, 3, 4, 2}, 5, 2));
    graph::ValueId i2 = constant("i2", indices(DType::kI64, {6}, 4, 3));
    graph::ValueId v = graph::add_op(g, "index_select", "select_0", {x, i0}, {{"axis", int64_t{1}}}).value()[0];
    v = graph::add_op(g, "gather", "gather_0", {v, i1}, {{"axis", int64_t{3}}}).value()[0];
    v = graph::add_op(g, "transpose", "transpose_0", {v}, {{"perm", Ints{0, 2, 1, 3}}}).value()[0];
    v = graph::add_op(g, "reshape", "reshape_0", {v}, {{"shape", Ints{2, 4, 6}}}).value()[0];
    v = graph::add_op(g, "index_select", "select_1", {v, i2}, {{"axis", int64_t{1}}}).value()[0];
    g.mark_output(v);
    RunStats stats;
    EXPECT_TRUE(graph_matches_cpu(g, {exact_values(dtype, {2, 3, 4, 5}, 4)}, &stats)) << graph::dtype_name(dtype);
    EXPECT_EQ(stats.dispatches, 1u) << graph::dtype_name(dtype);
  }
  // A value that is also a graph output stays in memory: two chains' worth.
  graph::Graph g;
  graph::ValueId x = graph::add_graph_input(g, "x", DType::kF32, {4, 6}).value();
  graph::ValueId t = graph::add_op(g, "transpose", "t0", {x}, {{"perm", Ints{1, 0}}}).value()[0];
  graph::ValueId u = graph::add_op(g, "transpose", "t1", {t}, {{"perm", Ints{1, 0}}}).value()[0];
  g.mark_output(t);
  g.mark_output(u);
  RunStats stats;
  EXPECT_TRUE(graph_matches_cpu(g, {exact_values(DType::kF32, {4, 6}, 5)}, &stats));
  EXPECT_EQ(stats.dispatches, 2u);
}

}  // namespace
}  // namespace gpuu::vulkan_test
