// Writes gpuu-made VGF files for the VGF decoder fuzzer's seed corpus (Arm's
// sample files are copied beside them by CMake): float chains with a
// transpose, a convolution with constant weights and bias, a matmul with a
// constant, each lowered by the VGF backend exactly as at export.
#include <cstdio>
#include <string>
#include <vector>

#include "backends/vgf/vgf_region.h"
#include "graph/builder.h"
#include "program/program_writer.h"
#include "vgf/vgf_file.h"

namespace {

using namespace gpuu;
using graph::DType;

Blob ramp(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = 0.01f * static_cast<float>(i % 17) - 0.05f;
  return Blob::copy_of(v.data(), v.size() * sizeof(float));
}

Result<graph::Graph> rfc_suffix() {
  graph::Graph g;
  GPUU_ASSIGN_OR_RETURN(graph::ValueId x, graph::add_graph_input(g, "x", DType::kF32, {1, 3, 4, 4}));
  GPUU_ASSIGN_OR_RETURN(auto s, graph::add_op(g, "sin", "sin_0", {x}, {}));
  GPUU_ASSIGN_OR_RETURN(auto c, graph::add_op(g, "cos", "cos_0", {x}, {}));
  GPUU_ASSIGN_OR_RETURN(auto r, graph::add_op(g, "reciprocal", "reciprocal_0", {c[0]}, {}));
  GPUU_ASSIGN_OR_RETURN(auto m, graph::add_op(g, "mul", "mul_0", {s[0], r[0]}, {}));
  GPUU_ASSIGN_OR_RETURN(auto t, graph::add_op(g, "transpose", "transpose_0", {m[0]},
                                              {{"perm", std::vector<int64_t>{0, 1, 3, 2}}}));
  GPUU_RETURN_IF_ERROR(graph::add_graph_output(g, t[0]));
  return g;
}

Result<graph::Graph> conv_block() {
  graph::Graph g;
  GPUU_ASSIGN_OR_RETURN(graph::ValueId x, graph::add_graph_input(g, "x", DType::kF32, {1, 3, 8, 8}));
  GPUU_ASSIGN_OR_RETURN(graph::ValueId w, graph::add_graph_constant(g, "w", DType::kF32, {4, 3, 3, 3}, ramp(108)));
  GPUU_ASSIGN_OR_RETURN(graph::ValueId b, graph::add_graph_constant(g, "b", DType::kF32, {4}, ramp(4)));
  GPUU_ASSIGN_OR_RETURN(auto conv, graph::add_op(g, "conv2d", "conv_0", {x, w, b},
                                                 {{"padding", std::vector<int64_t>{1, 1}}}));
  GPUU_ASSIGN_OR_RETURN(auto relu, graph::add_op(g, "relu", "relu_0", {conv[0]}, {}));
  GPUU_ASSIGN_OR_RETURN(auto pool, graph::add_op(g, "max_pool2d", "pool_0", {relu[0]},
                                                 {{"kernel", std::vector<int64_t>{2, 2}}}));
  GPUU_RETURN_IF_ERROR(graph::add_graph_output(g, pool[0]));
  return g;
}

Result<graph::Graph> linear_chain() {
  graph::Graph g;
  GPUU_ASSIGN_OR_RETURN(graph::ValueId x, graph::add_graph_input(g, "x", DType::kF32, {2, 8}));
  GPUU_ASSIGN_OR_RETURN(graph::ValueId w, graph::add_graph_constant(g, "w", DType::kF32, {8, 8}, ramp(64)));
  GPUU_ASSIGN_OR_RETURN(auto mm, graph::add_op(g, "matmul", "matmul_0", {x, w}, {}));
  GPUU_ASSIGN_OR_RETURN(auto add, graph::add_op(g, "add", "add_0", {mm[0], x}, {}));
  GPUU_ASSIGN_OR_RETURN(auto sm, graph::add_op(g, "softmax", "softmax_0", {add[0]}, {{"axis", int64_t{-1}}}));
  GPUU_RETURN_IF_ERROR(graph::add_graph_output(g, sm[0]));
  return g;
}

bool save(const std::string& dir, const char* name, Result<graph::Graph> (*make)()) {
  Result<graph::Graph> g = make();
  Result<vgf::VgfFile> file = g.ok() ? vgf::vgf_from_region(g.value()) : Result<vgf::VgfFile>(g.status());
  Result<std::vector<uint8_t>> bytes = file.ok() ? vgf::encode_vgf(file.value())
                                                 : Result<std::vector<uint8_t>>(file.status());
  Status s = bytes.ok() ? program::write_file_atomically(dir + "/" + name, bytes.value()) : bytes.status();
  if (!s.ok()) std::fprintf(stderr, "%s: %s\n", name, s.message().c_str());
  return s.ok();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT_DIR\n", argv[0]);
    return 1;
  }
  bool ok = save(argv[1], "rfc_suffix.vgf", rfc_suffix);
  ok = save(argv[1], "conv_block.vgf", conv_block) && ok;
  ok = save(argv[1], "linear_chain.vgf", linear_chain) && ok;
  return ok ? 0 : 1;
}
