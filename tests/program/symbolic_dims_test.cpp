// Symbolic dims end to end below the frontend: fit_dims on hand-built
// recordings (affine sizes, a batch*seq product, attributes), its refusals
// (a floor division, a missing corner, a structure change), bind_dims, and a
// program with dims through the writer, the loader and specialize.
#include <gtest/gtest.h>

#include "graph/builder.h"
#include "graph/symbolic.h"
#include "program/program_loader.h"
#include "program/program_writer.h"
#include "program/specialize.h"
#include "program/subgraph.h"

namespace gpuu::program {
namespace {

using graph::DType;
using graph::Graph;

// x [batch, seq, 4] -> relu -> reshape [batch * seq, 4] -> reshape [batch, seq * 4 + extra]
// (`extra` 0 normally; a test bends it to make a size that does not follow the dims).
Graph model(int64_t batch, int64_t seq, int64_t half_of_batch = -1) {
  Graph g;
  graph::ValueId x = graph::add_graph_input(g, "x", DType::kF32, {batch, seq, 4}).value();
  graph::ValueId r = graph::add_op(g, "relu", "relu", {x}, {}).value()[0];
  graph::ValueId flat = graph::add_op(g, "reshape", "flat", {r}, {{"shape", std::vector<int64_t>{batch * seq, 4}}})
                            .value()[0];
  graph::ValueId out =
      graph::add_op(g, "reshape", "rows", {flat}, {{"shape", std::vector<int64_t>{batch, seq * 4}}}).value()[0];
  if (half_of_batch >= 0) {
    out = graph::add_op(g, "reshape", "odd", {out}, {{"shape", std::vector<int64_t>{half_of_batch, -1}}}).value()[0];
  }
  EXPECT_TRUE(graph::add_graph_output(g, out).ok());
  return g;
}

std::vector<graph::SymbolicDim> two_dims() { return {{"batch", 1, 8, 2}, {"seq", 1, 32, 5}}; }

// The recordings gpuu's frontend makes: every corner of (example, example + 1), and one more.
struct Recorded {
  std::vector<Graph> graphs;
  std::vector<graph::DimRecording> list;
};
Recorded record(bool with_odd, bool skip_corner = false) {
  const std::vector<std::vector<int64_t>> sizes = {{3, 5}, {2, 6}, {3, 6}, {4, 9}};
  Recorded r;
  r.graphs.reserve(sizes.size());
  for (const auto& s : sizes) {
    if (skip_corner && s == std::vector<int64_t>{3, 6}) continue;
    r.graphs.push_back(model(s[0], s[1], with_odd ? s[0] / 2 : -1));
    r.list.push_back(graph::DimRecording{s, &r.graphs.back()});
  }
  return r;
}

TEST(SymbolicDims, FitsSizesAndAttributesIncludingAProduct) {
  Graph g = model(2, 5);
  g.set_dims(two_dims());
  Recorded r = record(false);
  ASSERT_TRUE(graph::fit_dims(g, r.list).ok());
  const graph::Value& flat = g.value(g.node(1).outputs[0]);
  ASSERT_EQ(flat.dim_exprs.size(), 1u);
  EXPECT_EQ(flat.dim_exprs[0].axis, 0u);
  EXPECT_EQ(flat.dim_exprs[0].size.to_string(g.dims()), "batch*seq");
  ASSERT_EQ(g.node(2).attr_exprs.size(), 2u);
  EXPECT_EQ(g.node(2).attr_exprs[1].value.to_string(g.dims()), "4*seq");
  EXPECT_EQ(g.value(g.inputs()[0]).dim_exprs[0].size.single_dim(), 0);

  ASSERT_TRUE(graph::bind_dims(g, {7, 31}).ok());
  EXPECT_EQ(g.value(g.inputs()[0]).shape, (graph::Shape{7, 31, 4}));
  EXPECT_EQ(flat.shape, (graph::Shape{217, 4}));
  EXPECT_EQ(std::get<std::vector<int64_t>>(g.node(2).attrs.at("shape")), (std::vector<int64_t>{7, 124}));
  EXPECT_TRUE(g.dims().empty());
}

TEST(SymbolicDims, RefusesWhatDoesNotFollowAndNamesIt) {
  {
    Graph g = model(2, 5, 1);
    g.set_dims(two_dims());
    Recorded r = record(true);
    Status s = graph::fit_dims(g, r.list);
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find("node 'odd' attribute 'shape'[0] is 2 at batch=4, seq=9"), std::string::npos)
        << s.message();
    EXPECT_TRUE(g.node(1).attr_exprs.empty()) << "a failed fit leaves no expressions";
  }
  {
    Graph g = model(2, 5);
    g.set_dims(two_dims());
    Recorded r = record(false, /*skip_corner=*/true);
    Status s = graph::fit_dims(g, r.list);
    EXPECT_NE(s.message().find("no recording at batch=3, seq=6"), std::string::npos) << s.message();
  }
  {
    Graph g = model(2, 5, 1);  // one node more than the recordings
    g.set_dims(two_dims());
    Recorded r = record(false);
    Status s = graph::fit_dims(g, r.list);
    EXPECT_NE(s.message().find("structure changes with the dims"), std::string::npos) << s.message();
  }
  EXPECT_NE(graph::check_dims_in_bounds(two_dims(), {9, 5}).message().find("dim 'batch' = 9 is above its bounds [1, 8]"),
            std::string::npos);
}

TEST(SymbolicDims, ProgramKeepsTheDimsAndSpecializes) {
  Graph g = model(2, 5);
  g.set_dims(two_dims());
  Recorded r = record(false);
  ASSERT_TRUE(graph::fit_dims(g, r.list).ok());
  partition::PartitionResult partition;
  partition.regions.push_back(partition::Region{"VulkanBackend", {0, 1, 2}});
  SharedGpuCompileSpec spec;
  Result<std::vector<uint8_t>> bytes = build_program(g, partition, spec);
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  Result<std::shared_ptr<const Program>> loaded = load_program_bytes(bytes->data(), bytes->size());
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  const Program& p = **loaded;
  EXPECT_EQ(p.format_minor(), kSymbolicFormatMinor);
  ASSERT_EQ(p.dims().size(), 2u);
  EXPECT_EQ(p.dims()[1].name, "seq");
  // The Vulkan backend's blob is the region's SubGraph: its source is that same segment.
  EXPECT_EQ(p.delegates()[0].source_segment, p.delegates()[0].processed_segment);
  const TensorInfo& out = p.tensors()[static_cast<size_t>(p.outputs()[0])];
  ASSERT_EQ(out.dim_exprs.size(), 2u);

  Result<std::shared_ptr<const Program>> at = specialize(*loaded, {4, 9}, {});
  ASSERT_TRUE(at.ok()) << at.status().message();
  EXPECT_TRUE((*at)->dims().empty());
  EXPECT_EQ((*at)->tensors()[static_cast<size_t>((*at)->outputs()[0])].shape, (graph::Shape{4, 36}));
  Blob blob = (*at)->processed_blob(0);
  Result<Graph> sub = parse_subgraph(blob.data(), blob.size());
  ASSERT_TRUE(sub.ok()) << sub.status().message();
  EXPECT_EQ(sub->value(sub->inputs()[0]).shape, (graph::Shape{4, 9, 4}));

  Result<std::shared_ptr<const Program>> beyond = specialize(*loaded, {4, 33}, {});
  ASSERT_FALSE(beyond.ok());
  EXPECT_NE(beyond.status().message().find("dim 'seq' = 33 is above its bounds [1, 32]"), std::string::npos);
}

TEST(SymbolicDims, WriterRefusesAnExpressionOnAnUnknownDim) {
  ProgramBuilder b;
  b.set_dims({{"batch", 1, 4, 2}});
  graph::DimExpr on_second;
  on_second.terms.push_back(graph::DimTerm{1, 0b10});
  int32_t x = b.add_tensor("x", DType::kF32, {2}, {graph::AxisExpr{0, on_second}});
  b.set_inputs({x});
  b.set_outputs({x});
  Result<std::vector<uint8_t>> bytes = b.finish();
  ASSERT_FALSE(bytes.ok());
  EXPECT_NE(bytes.status().message().find("masks[0] = 2"), std::string::npos) << bytes.status().message();
}

}  // namespace
}  // namespace gpuu::program
