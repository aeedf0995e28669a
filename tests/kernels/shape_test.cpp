// Vulkan data-movement kernels (transpose, reshape, slice, concat, pad, cast,
// where) against the CPU reference, on the test device, for every dtype.
// Tolerance: none. Moves are compared byte for byte; cast results too, except
// that any NaN matches any NaN.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "graph/op_registry.h"
#include "kernels/op_table.h"
#include "kernels/vulkan_test_util.h"

namespace gpuu::vulkan_test {
namespace {

using graph::DType;

const DType kAllDTypes[] = {DType::kF32, DType::kF16, DType::kI32, DType::kI64, DType::kI8, DType::kBool};

// Byte-for-byte equality (a NaN equals any NaN), naming the first mismatches.
testing::AssertionResult same_elements(const cpu::HostTensor& got, const cpu::HostTensor& want) {
  if (got.dtype != want.dtype || got.shape != want.shape) {
    return testing::AssertionFailure() << "got " << got.type_string() << ", want " << want.type_string();
  }
  const size_t size = want.element_size();
  size_t bad = 0;
  std::string first;
  for (int64_t i = 0; i < want.numel(); ++i) {
    if (std::memcmp(got.bytes.data() + i * size, want.bytes.data() + i * size, size) == 0) continue;
    bool float_type = want.dtype == DType::kF32 || want.dtype == DType::kF16;
    if (float_type && std::isnan(got.element(i)) && std::isnan(want.element(i))) continue;
    if (++bad <= 5) {
      first += "\n  [" + std::to_string(i) + "] got " + std::to_string(got.element(i)) + " want " +
               std::to_string(want.element(i));
    }
  }
  if (bad == 0) return testing::AssertionSuccess();
  return testing::AssertionFailure() << bad << " of " << want.numel() << " elements differ" << first;
}

// Every output of `g` exactly as the CPU reference computes it.
testing::AssertionResult graph_matches_cpu(const graph::Graph& g, const std::vector<cpu::HostTensor>& inputs,
                                           RunStats* stats = nullptr) {
  return vulkan_test::graph_matches_cpu(g, inputs, same_elements, stats);
}



// A graph over one input `x` with one node of `op` per attribute map, all outputs.
graph::Graph one_input_graph(DType dtype, const graph::Shape& shape, const std::string& op,
                             const std::vector<graph::AttrMap>& attr_sets) {
  graph::Graph g;
  graph::ValueId x = graph::add_graph_input(g, "x", dtype, shape).value();
  for (size_t i = 0; i < attr_sets.size(); ++i) {
    auto y = graph::add_op(g, op, op + "_" + std::to_string(i), {x}, attr_sets[i]);
    EXPECT_TRUE(y.ok()) << y.status().message();
    if (y.ok()) g.mark_output(y.value()[0]);
  }
  return g;
}

using Ints = std::vector<int64_t>;

TEST(VulkanShape, TransposeEveryDTypeAndPermutation) {
  const graph::Shape shape{3, 5, 7};
  std::vector<graph::AttrMap> perms;
  for (Ints perm : {Ints{0, 1, 2}, Ints{0, 2, 1}, Ints{1, 0, 2}, Ints{1, 2, 0}, Ints{2, 0, 1}, Ints{2, 1, 0}}) {
    perms.push_back({{"perm", perm}});
  }
  uint32_t seed = 1;
  for (DType dtype : kAllDTypes) {
    EXPECT_TRUE(graph_matches_cpu(one_input_graph(dtype, shape, "transpose", perms), {exact_values(dtype, shape, seed++)}))
        << graph::dtype_name(dtype);
  }
}

TEST(VulkanShape, TransposeOfRankSixAndOfUnitDims) {
  EXPECT_TRUE(graph_matches_cpu(
      one_input_graph(DType::kF16, {2, 3, 1, 5, 2, 3}, "transpose", {{{"perm", Ints{5, 3, 0, 2, 4, 1}}}}),
      {exact_values(DType::kF16, {2, 3, 1, 5, 2, 3}, 10)}));
  // Moving only unit dims keeps the bytes in order: a plain copy.
  RunStats stats;
  EXPECT_TRUE(graph_matches_cpu(one_input_graph(DType::kI8, {1, 9, 1, 7}, "transpose", {{{"perm", Ints{2, 1, 0, 3}}}}),
                                {exact_values(DType::kI8, {1, 9, 1, 7}, 11)}, &stats));
  EXPECT_EQ(stats.dispatches, 0u);
}

// Rank 8 (Swin-3D's window partition: [B, D/w, w, H/w, w, W/w, w, C] with
// perm 0 1 3 5 2 4 6 7): transpose, slice and reshape take any rank whose
// walk merges into at most six dims; one that does not is refused by name.
TEST(VulkanShape, RankEightMovesWhoseWalkMergesToSixDims) {
  const graph::Shape shape{1, 2, 2, 3, 2, 2, 3, 4};
  const graph::Graph partition = one_input_graph(DType::kF32, shape, "transpose", {{{"perm", Ints{0, 1, 3, 5, 2, 4, 6, 7}}}});
  EXPECT_EQ(kernels::vulkan_supports(partition, partition.nodes()[0]), "");
  EXPECT_TRUE(graph_matches_cpu(partition, {exact_values(DType::kF32, shape, 12)}));
  const graph::Graph cut = one_input_graph(DType::kF16, shape, "slice",
                                           {{{"axes", Ints{3, 7}}, {"starts", Ints{1, 0}}, {"ends", Ints{3, 4}},
                                             {"steps", Ints{1, 2}}}});
  EXPECT_EQ(kernels::vulkan_supports(cut, cut.nodes()[0]), "");
  EXPECT_TRUE(graph_matches_cpu(cut, {exact_values(DType::kF16, shape, 13)}));
  const graph::Graph scattered = one_input_graph(DType::kF32, shape, "transpose", {{{"perm", Ints{7, 6, 5, 4, 3, 2, 1, 0}}}});
  const std::string why = kernels::vulkan_supports(scattered, scattered.nodes()[0]);
  EXPECT_NE(why.find("walks 7 separate dims (at most 6)"), std::string::npos) << why;
}

TEST(VulkanShape, ReshapeIsACopyForEveryDType) {
  uint32_t seed = 20;
  for (DType dtype : kAllDTypes) {
    RunStats stats;
    EXPECT_TRUE(graph_matches_cpu(one_input_graph(dtype, {3, 5, 7}, "reshape", {{{"shape", Ints{7, -1}}}}),
                                  {exact_values(dtype, {3, 5, 7}, seed++)}, &stats))
        << graph::dtype_name(dtype);
    EXPECT_EQ(stats.dispatches, 0u);
  }
}

TEST(VulkanShape, SliceWithPythonSemantics) {
  const graph::Shape shape{6, 7, 9};
  const int64_t big = std::numeric_limits<int64_t>::max();
  std::vector<graph::AttrMap> slices = {
      {{"axes", Ints{0}}, {"starts", Ints{1}}, {"ends", Ints{4}}},                                     // contiguous
      {{"axes", Ints{2}}, {"starts", Ints{-4}}, {"ends", Ints{big}}},                                  // from the end
      {{"axes", Ints{1, 2}}, {"starts", Ints{1, 0}}, {"ends", Ints{-1, 9}}, {"steps", Ints{2, 3}}},      // stepped
      {{"axes", Ints{-1, 0}}, {"starts", Ints{-100, 5}}, {"ends", Ints{100, 100}}, {"steps", Ints{4, 1}}},  // clamped
      {{"axes", Ints{1}}, {"starts", Ints{5}}, {"ends", Ints{2}}},                                     // empty
      {{"axes", Ints{0, 1, 2}}, {"starts", Ints{5, 6, 8}}, {"ends", Ints{6, 7, 9}}},                   // one element
      {{"axes", Ints{1}}, {"starts", Ints{2}}, {"ends", Ints{big}}, {"steps", Ints{big}}},             // huge step
  };
  uint32_t seed = 30;
  for (DType dtype : kAllDTypes) {
    EXPECT_TRUE(graph_matches_cpu(one_input_graph(dtype, shape, "slice", slices), {exact_values(dtype, shape, seed++)}))
        << graph::dtype_name(dtype);
  }
}

// Adds concat nodes over fresh inputs (named after `tag`) with the given
// lengths along `axis` of `base`, appending the inputs' values to `inputs`.
void add_concat(graph::Graph& g, std::vector<cpu::HostTensor>& inputs, const std::string& tag, DType dtype,
                const graph::Shape& base, int64_t axis, const Ints& lengths, uint32_t seed) {
  std::vector<graph::ValueId> ids;
  size_t a = static_cast<size_t>(graph::normalize_axis(axis, base.size()));
  for (size_t i = 0; i < lengths.size(); ++i) {
    graph::Shape s = base;
    s[a] = lengths[i];
    ids.push_back(graph::add_graph_input(g, tag + "_x" + std::to_string(i), dtype, s).value());
    inputs.push_back(exact_values(dtype, s, seed + static_cast<uint32_t>(i)));
  }
  auto y = graph::add_op(g, "concat", tag, ids, {{"axis", axis}});
  ASSERT_TRUE(y.ok()) << y.status().message();
  g.mark_output(y.value()[0]);
}

TEST(VulkanShape, ConcatEveryDTypeAndAxis) {
  // Odd lengths put input boundaries inside output words for 1- and 2-byte dtypes.
  uint32_t seed = 40;
  for (DType dtype : kAllDTypes) {
    graph::Graph g;
    std::vector<cpu::HostTensor> inputs;
    for (int64_t axis : {0, 1, -1}) {
      add_concat(g, inputs, "axis" + std::to_string(axis + 1), dtype, {3, 5, 7}, axis, {1, 3, 2}, seed += 3);
    }
    add_concat(g, inputs, "with_empty", dtype, {2, 3, 5}, 2, {5, 0, 3}, seed += 3);
    EXPECT_TRUE(graph_matches_cpu(g, inputs)) << graph::dtype_name(dtype);
  }
}

TEST(VulkanShape, ConcatOfManyInputsJoinsInGroups) {
  Ints nine(9, 1), seventeen;
  for (int64_t i = 0; i < 17; ++i) seventeen.push_back(i % 3 + 1);
  graph::Graph g;
  std::vector<cpu::HostTensor> inputs;
  add_concat(g, inputs, "nine_f32", DType::kF32, {2, 3, 5}, 1, nine, 60);
  add_concat(g, inputs, "seventeen_f32", DType::kF32, {3, 2, 5}, -1, seventeen, 80);
  EXPECT_TRUE(graph_matches_cpu(g, inputs));
  graph::Graph g8;
  std::vector<cpu::HostTensor> inputs8;
  add_concat(g8, inputs8, "seventeen_i8", DType::kI8, {3, 2, 5}, -1, seventeen, 100);
  EXPECT_TRUE(graph_matches_cpu(g8, inputs8));
}

TEST(VulkanShape, PadEveryDTypeWithAConvertedValue) {
  const graph::Shape shape{3, 5, 7};
  std::vector<graph::AttrMap> pads = {
      {{"pads", Ints{0, 0, 1, 2, 3, 0}}, {"value", -3.7}},   // integers truncate: -3; bool: true
      {{"pads", Ints{2, 1, 0, 0, 0, 5}}, {"value", 1e10}},   // integers saturate
      {{"pads", Ints{0, 0, 0, 0, 0, 0}}, {"value", 0.0}},    // nothing to pad
      {{"pads", Ints{1, 1, 1, 1, 1, 1}}, {"value", 0.0}},
  };
  uint32_t seed = 120;
  for (DType dtype : kAllDTypes) {
    EXPECT_TRUE(graph_matches_cpu(one_input_graph(dtype, shape, "pad", pads), {exact_values(dtype, shape, seed++)}))
        << graph::dtype_name(dtype);
  }
  EXPECT_TRUE(graph_matches_cpu(one_input_graph(DType::kF16, {0, 3}, "pad", {{{"pads", Ints{1, 2, 0, 1}}, {"value", 0.1}}}),
                                {cpu::HostTensor::zeros(DType::kF16, {0, 3})}));
}

// Values that probe every conversion rule: signed zeros, halves (rounding),
// the edges of i8/i32/f16, NaN and infinities, huge and tiny magnitudes.
std::vector<double> float_probes() {
  const double inf = std::numeric_limits<double>::infinity();
  return {0.0, -0.0, 0.5, -0.5, 1.5, -2.5, 0.99999, 127.4, 127.9, 128.0, -128.9, -129.0, 255.0, 300.0,
          2147483520.0, 2147483648.0, -2147483648.0, -2147483904.0, 3e9, -3e9, 1e18, -1e18, 1e20, -1e20,
          65504.0, 65519.0, 65520.0, 1e5, 6.1e-5, 6e-8, 2.98e-8, 2.9e-8, 1e-40, 0.1, 1.0 / 3.0, -7.0,
          std::numeric_limits<double>::quiet_NaN(), inf, -inf, 2049.0, 16777217.0,
          // f16 ties and near-ties: 1 + 2^-11 (to even: 1), 1 + 3 * 2^-12 (up), 1 + 3 * 2^-11
          // (to even: up); subnormal 2^-25 (to even: 0) and 3 * 2^-25 (to even: 2 * 2^-25).
          1.00048828125, 1.000732421875, 1.00146484375, 2.98023223876953125e-8, 8.94069671630859375e-8};
}

std::vector<int64_t> int_probes() {
  return {0, 1, -1, 2, 127, 128, -128, -129, 255, 256, 2047, 2049, 65504, 65519, 65520, 65536, 16777216, 16777217,
          16777219, -16777217, 2147483647, -2147483647 - 1, int64_t{2147483648}, int64_t{-2147483649},
          int64_t{4294967296}, int64_t{4294967297}, int64_t{1} << 53, (int64_t{1} << 53) + 1, (int64_t{1} << 62) + 5,
          std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min(), -(int64_t{1} << 40) - 3,
          0x1234567890ABCDEF, 123456789, -987654321};
}

// Inputs of `dtype` holding the probes (integers wrap to the dtype's width,
// as the reference's integer casts do).
cpu::HostTensor probe_tensor(DType dtype) {
  if (dtype == DType::kF32 || dtype == DType::kF16) {
    std::vector<double> v = float_probes();
    return cpu::HostTensor::from_doubles(dtype, {static_cast<int64_t>(v.size())}, v).value();
  }
  std::vector<int64_t> v = int_probes();
  cpu::HostTensor t = cpu::HostTensor::zeros(dtype, {static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) {
    switch (dtype) {
      case DType::kI64: std::memcpy(t.bytes.data() + i * 8, &v[i], 8); break;
      case DType::kI32: {
        auto w = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v[i])));
        std::memcpy(t.bytes.data() + i * 4, &w, 4);
        break;
      }
      case DType::kI8: t.bytes[i] = static_cast<uint8_t>(static_cast<uint64_t>(v[i])); break;
      default: t.bytes[i] = v[i] % 3 != 0; break;  // bool
    }
  }
  return t;
}

TEST(VulkanShape, CastBetweenEveryPairOfDTypes) {
  // One region: every source dtype's probes cast to every dtype.
  graph::Graph g;
  std::vector<cpu::HostTensor> inputs;
  for (DType from : kAllDTypes) {
    cpu::HostTensor x = probe_tensor(from);
    graph::ValueId id = graph::add_graph_input(g, std::string("x_") + graph::dtype_name(from), from, x.shape).value();
    inputs.push_back(std::move(x));
    for (DType to : kAllDTypes) {
      std::string name = std::string(graph::dtype_name(from)) + "_to_" + graph::dtype_name(to);
      g.mark_output(graph::add_op(g, "cast", name, {id}, {{"dtype", std::string(graph::dtype_name(to))}}).value()[0]);
    }
  }
  EXPECT_TRUE(graph_matches_cpu(g, inputs));
}

TEST(VulkanShape, CastOfRandomFloatsRoundsToNearestEven) {
  // Many random f32 values into f16 and back: exercises every rounding path.
  auto x = random_tensor(DType::kF32, {4099}, 200, -70000, 70000);
  auto tiny = random_tensor(DType::kF32, {1027}, 201, -1e-4, 1e-4);
  for (const auto& t : {x, tiny}) {
    EXPECT_TRUE(graph_matches_cpu(one_input_graph(DType::kF32, t.shape, "cast",
                                                  {{{"dtype", std::string("f16")}}, {{"dtype", std::string("i32")}},
                                                   {{"dtype", std::string("i8")}}, {{"dtype", std::string("i64")}}}),
                                  {t}));
  }
}

TEST(VulkanShape, WhereBroadcastsEveryDType) {
  uint32_t seed = 300;
  for (DType dtype : kAllDTypes) {
    graph::Graph g;
    graph::ValueId c = graph::add_graph_input(g, "cond", DType::kBool, {4, 1, 5}).value();
    graph::ValueId a = graph::add_graph_input(g, "a", dtype, {3, 1}).value();
    graph::ValueId b = graph::add_graph_input(g, "b", dtype, {4, 3, 5}).value();
    graph::ValueId s = graph::add_graph_input(g, "s", dtype, {}).value();
    g.mark_output(graph::add_op(g, "where", "where_0", {c, a, b}, {}).value()[0]);
    g.mark_output(graph::add_op(g, "where", "where_1", {c, s, a}, {}).value()[0]);
    EXPECT_TRUE(graph_matches_cpu(g, {exact_values(DType::kBool, {4, 1, 5}, seed), exact_values(dtype, {3, 1}, seed + 1),
                                      exact_values(dtype, {4, 3, 5}, seed + 2), exact_values(dtype, {}, seed + 3)}))
        << graph::dtype_name(dtype);
    seed += 4;
  }
}

TEST(VulkanShape, ChainInOneRegion) {
  // transpose -> slice -> pad -> cast -> reshape, intermediates in the arena.
  graph::Graph g;
  graph::ValueId x = graph::add_graph_input(g, "x", DType::kF32, {4, 6, 5}).value();
  graph::ValueId t = graph::add_op(g, "transpose", "t", {x}, {{"perm", Ints{2, 0, 1}}}).value()[0];
  graph::ValueId s =
      graph::add_op(g, "slice", "s", {t}, {{"axes", Ints{2}}, {"starts", Ints{1}}, {"ends", Ints{6}}, {"steps", Ints{2}}})
          .value()[0];
  graph::ValueId p = graph::add_op(g, "pad", "p", {s}, {{"pads", Ints{0, 1, 1, 0, 2, 2}}, {"value", 9.0}}).value()[0];
  graph::ValueId h = graph::add_op(g, "cast", "h", {p}, {{"dtype", std::string("f16")}}).value()[0];
  graph::ValueId r = graph::add_op(g, "reshape", "r", {h}, {{"shape", Ints{-1}}}).value()[0];
  g.mark_output(r);
  EXPECT_TRUE(graph_matches_cpu(g, {random_tensor(DType::kF32, {4, 6, 5}, 400, -10, 10)}));
}

TEST(VulkanShape, TransposesOfUnitDimsInsideARegionShareMemory) {
  // A decode step's [1, 1, H, D] -> [1, H, 1, D]: the bytes stay in order, so
  // the transpose is the add's memory read again, not a copy.
  graph::Graph g;
  graph::ValueId x = graph::add_graph_input(g, "x", DType::kF32, {1, 1, 4, 8}).value();
  graph::ValueId a = graph::add_op(g, "add", "a", {x, x}, {}).value()[0];
  graph::ValueId t = graph::add_op(g, "transpose", "t", {a}, {{"perm", Ints{0, 2, 1, 3}}}).value()[0];
  graph::ValueId r = graph::add_op(g, "reduce_max", "r", {t}, {{"axes", Ints{3}}, {"keepdim", int64_t{1}}}).value()[0];
  g.mark_output(r);
  std::vector<std::string> steps = step_labels(g, {exact_values(DType::kF32, {1, 1, 4, 8}, 500)}, 0, 0);
  EXPECT_EQ(joined(steps), "a r");
  // Where the transpose moves dims of more than one element, it is a copy.
  graph::Graph h;
  x = graph::add_graph_input(h, "x", DType::kF32, {1, 2, 4, 8}).value();
  a = graph::add_op(h, "add", "a", {x, x}, {}).value()[0];
  t = graph::add_op(h, "transpose", "t", {a}, {{"perm", Ints{0, 2, 1, 3}}}).value()[0];
  r = graph::add_op(h, "reduce_max", "r", {t}, {{"axes", Ints{3}}, {"keepdim", int64_t{1}}}).value()[0];
  h.mark_output(r);
  steps = step_labels(h, {exact_values(DType::kF32, {1, 2, 4, 8}, 501)}, 0, 0);
  EXPECT_EQ(joined(steps), "a t r");
}

TEST(VulkanShape, RepeatedNodesRunOnce) {
  // Two cache writes at the same positions, as each layer of an LLM step
  // makes them: the positions' wrap-around (less, add, where) runs once, each
  // write (its own output) still runs. Nodes of other attributes or inputs
  // are not merged.
  graph::Graph g;
  graph::ValueId pos = graph::add_graph_input(g, "pos", DType::kI64, {2}).value();
  graph::ValueId src = graph::add_graph_input(g, "src", DType::kF32, {2, 3}).value();
  graph::ValueId cache = graph::add_graph_input(g, "cache", DType::kF32, {6, 3}).value();
  std::vector<int64_t> zero = {0}, six = {6};
  graph::ValueId c0 =
      graph::add_graph_constant(g, "zero", DType::kI64, {1}, Blob::copy_of(zero.data(), sizeof(int64_t))).value();
  graph::ValueId c6 =
      graph::add_graph_constant(g, "six", DType::kI64, {1}, Blob::copy_of(six.data(), sizeof(int64_t))).value();
  for (int w = 0; w < 2; ++w) {
    const std::string n = std::to_string(w);
    graph::ValueId neg = graph::add_op(g, "less", "less" + n, {pos, c0}, {}).value()[0];
    graph::ValueId wrapped = graph::add_op(g, "add", "add" + n, {pos, c6}, {}).value()[0];
    graph::ValueId at = graph::add_op(g, "where", "where" + n, {neg, wrapped, pos}, {}).value()[0];
    graph::ValueId upd = graph::add_op(g, "mul", "scaled" + n, {src, src}, {}).value()[0];
    g.mark_output(graph::add_op(g, "index_put", "write" + n, {cache, at, upd}, {{"axis", int64_t{0}}}).value()[0]);
  }
  // Same op and input, other attributes: both run.
  g.mark_output(graph::add_op(g, "reduce_sum", "sum0", {src}, {{"axes", Ints{0}}}).value()[0]);
  g.mark_output(graph::add_op(g, "reduce_sum", "sum1", {src}, {{"axes", Ints{1}}}).value()[0]);
  cpu::HostTensor positions = cpu::HostTensor::from_doubles(DType::kI64, {2}, {-1, 2}).value();
  std::vector<std::string> steps =
      step_labels(g, {positions, exact_values(DType::kF32, {2, 3}, 502), exact_values(DType::kF32, {6, 3}, 503)}, 0, 0);
  const std::string all = joined(steps);
  for (const char* once : {"less0", "add0", "where0", "scaled0"}) {
    EXPECT_EQ(std::count(steps.begin(), steps.end(), once), 1) << all;
  }
  for (const char* merged : {"less1", "add1", "where1", "scaled1"}) {
    EXPECT_EQ(std::count(steps.begin(), steps.end(), merged), 0) << all;
  }
  EXPECT_NE(all.find("sum0"), std::string::npos) << all;
  EXPECT_NE(all.find("sum1"), std::string::npos) << all;
}

}  // namespace
}  // namespace gpuu::vulkan_test
