// A small partitioned graph shared by the program tests, the inspect test and
// the fuzz seed generator: a VGF region, a CPU node and a Vulkan region, a
// constant read by both GPU regions, and two constants with identical bytes.
#pragma once

#include <cstring>
#include <string>
#include <vector>

#include "compile_spec/shared_gpu_compile_spec.h"
#include "graph/graph.h"
#include "partition/partition_result.h"

namespace gpuu_test {

inline gpuu::Blob f32_blob(const std::vector<float>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(float));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return gpuu::Blob::take(std::move(bytes));
}

struct SampleModel {
  gpuu::graph::Graph graph;
  gpuu::partition::PartitionResult partition;
  gpuu::SharedGpuCompileSpec spec;
};

//   x -> matmul(w1) -> add(b1) -> relu = h2                      [VGF]
//   h2 -> softmax = h3                                           [CPU]
//   h3 -> matmul(w1) -> mul(scale) -> add(h2) = y                [Vulkan]
// b1 and scale hold the same bytes; w1 is read by both GPU regions.
inline SampleModel make_sample_model() {
  using gpuu::graph::DType;
  using gpuu::graph::Node;
  SampleModel m;
  auto& g = m.graph;
  std::vector<float> w(64);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i) * 0.25f - 3.0f;
  std::vector<float> half(8, 0.5f);
  auto x = g.add_input("x", DType::kF32, {1, 8});
  auto w1 = g.add_constant("w1", DType::kF32, {8, 8}, f32_blob(w));
  auto b1 = g.add_constant("b1", DType::kF32, {8}, f32_blob(half));
  auto scale = g.add_constant("scale", DType::kF32, {8}, f32_blob(half));
  auto value = [&](const char* name) { return g.add_value(gpuu::graph::Value{name, DType::kF32, {1, 8}}); };
  auto h0 = value("h0"), h1 = value("h1"), h2 = value("h2"), h3 = value("h3");
  auto h4 = value("h4"), h5 = value("h5"), y = value("y");
  g.add_node(Node{"matmul0", "matmul", {x, w1}, {h0}, {{"transpose_b", int64_t{0}}}});
  g.add_node(Node{"add0", "add", {h0, b1}, {h1}, {}});
  g.add_node(Node{"relu0", "clamp", {h1}, {h2}, {{"range", std::vector<int64_t>{0, 6}}}});
  g.add_node(Node{"softmax0", "softmax", {h2}, {h3}, {{"axis", int64_t{-1}}, {"beta", 1.5}}});
  g.add_node(Node{"matmul1", "matmul", {h3, w1}, {h4}, {}});
  g.add_node(Node{"mul0",
                  "mul",
                  {h4, scale},
                  {h5},
                  {{"mode", std::string("elementwise")}, {"coeffs", std::vector<double>{1.0, 2.5}}}});
  g.add_node(Node{"add1", "add", {h5, h2}, {y}, {}});
  g.mark_output(y);

  m.partition.regions = {{gpuu::partition::kVgfId, {0, 1, 2}}, {gpuu::partition::kCpuId, {3}}, {gpuu::partition::kVulkanId, {4, 5, 6}}};
  m.partition.region_of_node = {0, 0, 0, 1, 2, 2, 2};
  m.spec.token = "scene0";
  m.spec.group_id = 7;
  m.spec.present = true;
  return m;
}

}  // namespace gpuu_test
