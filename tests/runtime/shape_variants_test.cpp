// A program with dims in a session on a real device: each set of sizes runs
// the program specialized there, kept up to max_shape_variants (least
// recently used go), results right at every size; the weights are uploaded
// once per device for every size and every session of the program (merged
// sibling weights too), and pipelines once per device; bad
// shapes are refused with the dim, input and bound named, changing nothing.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "context/shared_gpu_context_registry.h"
#include "gpu/shared_constants.h"
#include "graph/builder.h"
#include "kernels/kernel_cache.h"
#include "kernels/vulkan_test_util.h"
#include "program/program_loader.h"
#include "program/program_writer.h"
#include "runtime/session.h"

namespace gpuu::runtime {
namespace {

using graph::DType;

constexpr int64_t kIn = 64, kOut = 1024;  // a 256 KiB weight: shared (gpu::kSharedConstantMinBytes)

std::vector<float> weight_values() {
  std::vector<float> w(static_cast<size_t>(kIn * kOut));
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(static_cast<int>(i % 13) - 6) * 0.125f;
  return w;
}

// y [batch, 1024] = relu(x [batch, 64] @ W)
graph::Graph model(int64_t batch, const Blob& weight) {
  graph::Graph g;
  graph::ValueId x = graph::add_graph_input(g, "x", DType::kF32, {batch, kIn}).value();
  graph::ValueId w = graph::add_graph_constant(g, "w", DType::kF32, {kIn, kOut}, weight).value();
  graph::ValueId y = graph::add_op(g, "matmul", "mm", {x, w}, {}).value()[0];
  graph::ValueId r = graph::add_op(g, "relu", "relu", {y}, {}).value()[0];
  EXPECT_TRUE(graph::add_graph_output(g, r).ok());
  return g;
}

// The program of `model_at` with dim batch in [1, 16] (example 2, fitted at 3
// and 5), every node in one Vulkan region, over weight_values() as a weight.
using ModelAt = graph::Graph (*)(int64_t batch, const Blob& weight);
std::shared_ptr<const program::Program> dynamic_program_of(ModelAt model_at) {
  std::vector<float> w = weight_values();
  std::vector<uint8_t> bytes(w.size() * 4);
  std::memcpy(bytes.data(), w.data(), bytes.size());
  Blob weight = Blob::take(std::move(bytes));
  graph::Graph g = model_at(2, weight);
  g.set_dims({{"batch", 1, 16, 2}});
  graph::Graph at3 = model_at(3, weight), at5 = model_at(5, weight);
  EXPECT_TRUE(graph::fit_dims(g, {{{3}, &at3}, {{5}, &at5}}).ok());
  partition::PartitionResult part;
  part.regions.push_back(partition::Region{partition::kVulkanId, {}});
  for (size_t n = 0; n < g.nodes().size(); ++n) part.regions[0].nodes.push_back(static_cast<graph::NodeId>(n));
  Result<std::vector<uint8_t>> file = program::build_program(g, part, SharedGpuCompileSpec{});
  EXPECT_TRUE(file.ok()) << file.status().message();
  if (!file.ok()) return nullptr;
  Result<std::shared_ptr<const program::Program>> p = program::load_program_bytes(file->data(), file->size());
  EXPECT_TRUE(p.ok()) << p.status().message();
  return p.ok() ? p.value() : nullptr;
}

std::shared_ptr<const program::Program> dynamic_program() { return dynamic_program_of(model); }

std::vector<float> run(Session& s, int64_t batch) {
  EXPECT_TRUE(s.set_input_shape(0, {batch, kIn}).ok());
  EXPECT_EQ(s.dims(), std::vector<int64_t>{batch});
  std::vector<float> x(static_cast<size_t>(batch * kIn));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(static_cast<int>(i % 7) - 3);
  EXPECT_TRUE(s.set_input(0, x.data(), x.size() * 4).ok());
  Status ran = s.execute();
  EXPECT_TRUE(ran.ok()) << ran.message();
  std::vector<float> y(s.outputs()[0].bytes / 4);
  EXPECT_EQ(y.size(), static_cast<size_t>(batch * kOut));
  EXPECT_TRUE(s.get_output(0, y.data(), y.size() * 4).ok());
  // The host reference: small integers and eighths, exact in f32.
  std::vector<float> w = weight_values();
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t n = 0; n < kOut; ++n) {
      float acc = 0;
      for (int64_t k = 0; k < kIn; ++k) acc += x[static_cast<size_t>(b * kIn + k)] * w[static_cast<size_t>(k * kOut + n)];
      EXPECT_EQ(y[static_cast<size_t>(b * kOut + n)], acc > 0 ? acc : 0) << "batch " << batch << " row " << b;
      if (y[static_cast<size_t>(b * kOut + n)] != (acc > 0 ? acc : 0)) return y;
    }
  }
  return y;
}

class ShapeVariantsTest : public testing::Test {
 protected:
  void TearDown() override { SharedGpuContextRegistry::get().clear_for_testing(); }
};

TEST_F(ShapeVariantsTest, EverySizeRunsAndTheWeightIsUploadedOnce) {
  auto program = dynamic_program();
  ASSERT_TRUE(program);
  SessionOptions options;
  options.max_shape_variants = 2;
  auto session = Session::create(program, options);
  ASSERT_TRUE(session.ok()) << session.status().message();
  Session& s = **session;
  EXPECT_EQ(s.dims(), std::vector<int64_t>{2}) << "a session starts at the example";
  EXPECT_EQ(gpu::shared_constant_count(), 1u);
  run(s, 2);
  run(s, 7);
  EXPECT_EQ(s.shape_variant_count(), 2u);
  EXPECT_EQ(gpu::shared_constant_count(), 1u) << "the size 7 reuses the weight the size 2 uploaded";
  run(s, 16);
  run(s, 1);
  EXPECT_EQ(s.shape_variant_count(), 2u) << "max_shape_variants: the least recently used went";
  run(s, 16);
  run(s, 2);

  auto second = Session::create(program, options);
  ASSERT_TRUE(second.ok());
  run(**second, 5);
  EXPECT_EQ(gpu::shared_constant_count(), 1u) << "a second session shares it too";
  second->reset();
  session->reset();
  EXPECT_EQ(gpu::shared_constant_count(), 0u) << "gone with its last holder";
}

// Pipelines are made once per device (kernels::KernelCache::shared): a
// second session of the program at a size the first ran makes none, a
// size whose kernels specialize as another's (batch 9 after 7: the same
// kernels, the sizes in push constants) makes none either, nor does a
// session made after the others closed.
TEST_F(ShapeVariantsTest, PipelinesAreMadeOncePerDevice) {
  auto program = dynamic_program();
  ASSERT_TRUE(program);
  SessionOptions options;
  options.max_shape_variants = 4;
  const size_t start = kernels::KernelCache::pipelines_created();
  auto first = Session::create(program, options);
  ASSERT_TRUE(first.ok()) << first.status().message();
  run(**first, 2);
  const size_t made = kernels::KernelCache::pipelines_created() - start;
  EXPECT_GT(made, 0u);
  auto second = Session::create(program, options);
  ASSERT_TRUE(second.ok()) << second.status().message();
  run(**second, 2);
  EXPECT_EQ(kernels::KernelCache::pipelines_created(), start + made) << "the second session made pipelines";
  run(**first, 7);
  const size_t after_7 = kernels::KernelCache::pipelines_created();
  run(**first, 9);
  EXPECT_EQ(kernels::KernelCache::pipelines_created(), after_7) << "the size 9 made pipelines the size 7 had";
  // The pipelines live as long as the context, which the registry keeps:
  // a session made after every other closed compiles none either.
  first->reset();
  second->reset();
  auto third = Session::create(program, options);
  ASSERT_TRUE(third.ok()) << third.status().message();
  run(**third, 9);
  EXPECT_EQ(kernels::KernelCache::pipelines_created(), after_7) << "a session after the others closed made pipelines";
}

// y [batch, 512] = x @ W1^T + x @ W2^T, two linears of one input: the kernels
// run them as one over their weights side by side (kernels/sibling_linears.h).
graph::Graph sibling_model(int64_t batch, const Blob& w1, const Blob& w2) {
  graph::Graph g;
  graph::ValueId x = graph::add_graph_input(g, "x", DType::kF32, {batch, kIn}).value();
  graph::ValueId a = graph::add_op(g, "linear", "a", {x, graph::add_graph_constant(g, "w1", DType::kF32, {512, kIn}, w1).value()}, {})
                         .value()[0];
  graph::ValueId b = graph::add_op(g, "linear", "b", {x, graph::add_graph_constant(g, "w2", DType::kF32, {512, kIn}, w2).value()}, {})
                         .value()[0];
  EXPECT_TRUE(graph::add_graph_output(g, graph::add_op(g, "add", "sum", {a, b}, {}).value()[0]).ok());
  return g;
}

TEST_F(ShapeVariantsTest, MergedSiblingWeightsAreMadeAndUploadedOncePerProgram) {
  std::vector<float> w = weight_values();  // 64 x 1024 values: two 512 x 64 weights (128 KiB each: shared)
  auto half = [&](size_t from) {
    std::vector<uint8_t> bytes(w.size() * 2);
    std::memcpy(bytes.data(), w.data() + from, bytes.size());
    return Blob::take(std::move(bytes));
  };
  Blob w1 = half(0), w2 = half(w.size() / 2);
  graph::Graph g = sibling_model(2, w1, w2);
  g.set_dims({{"batch", 1, 16, 2}});
  graph::Graph at3 = sibling_model(3, w1, w2), at5 = sibling_model(5, w1, w2);
  ASSERT_TRUE(graph::fit_dims(g, {{{3}, &at3}, {{5}, &at5}}).ok());
  partition::PartitionResult part;
  part.regions.push_back(partition::Region{partition::kVulkanId, {0, 1, 2}});
  Result<std::vector<uint8_t>> file = program::build_program(g, part, SharedGpuCompileSpec{});
  ASSERT_TRUE(file.ok()) << file.status().message();
  Result<std::shared_ptr<const program::Program>> program = program::load_program_bytes(file->data(), file->size());
  ASSERT_TRUE(program.ok()) << program.status().message();

  auto check = [&](Session& s, int64_t batch) {
    ASSERT_TRUE(s.set_input_shape(0, {batch, kIn}).ok());
    std::vector<float> x(static_cast<size_t>(batch * kIn));
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(static_cast<int>(i % 5) - 2);
    ASSERT_TRUE(s.set_input(0, x.data(), x.size() * 4).ok());
    ASSERT_TRUE(s.execute().ok());
    std::vector<float> y(static_cast<size_t>(batch * 512));
    ASSERT_TRUE(s.get_output(0, y.data(), y.size() * 4).ok());
    for (int64_t r = 0; r < batch; ++r) {
      for (int64_t n = 0; n < 512; ++n) {
        float want = 0;  // small integers and eighths: exact in f32
        for (int64_t k = 0; k < kIn; ++k) {
          want += x[static_cast<size_t>(r * kIn + k)] * (w[static_cast<size_t>(n * kIn + k)] +
                                                         w[static_cast<size_t>((512 + n) * kIn + k)]);
        }
        ASSERT_EQ(y[static_cast<size_t>(r * 512 + n)], want) << "batch " << batch << " row " << r << " column " << n;
      }
    }
  };
  SessionOptions options;
  options.max_shape_variants = 2;
  auto session = Session::create(program.value(), options);
  ASSERT_TRUE(session.ok()) << session.status().message();
  check(**session, 2);
  EXPECT_EQ(gpu::shared_constant_count(), 1u) << "the merged weight alone: the two it joins are not uploaded";
  check(**session, 7);
  EXPECT_EQ(gpu::shared_constant_count(), 1u) << "the size 7 merges into the same bytes, so shares the upload";
  auto second = Session::create(program.value(), options);
  ASSERT_TRUE(second.ok());
  check(**second, 5);
  EXPECT_EQ(gpu::shared_constant_count(), 1u) << "a second session shares it too";
  second->reset();
  session->reset();
  EXPECT_EQ(gpu::shared_constant_count(), 0u) << "gone with its last holder";
}

TEST_F(ShapeVariantsTest, BadShapesAreNamedAndChangeNothing) {
  auto program = dynamic_program();
  ASSERT_TRUE(program);
  auto session = Session::create(program, SessionOptions{});
  ASSERT_TRUE(session.ok());
  Session& s = **session;
  const size_t variants = s.shape_variant_count();  // the example's and the upper bounds'
  EXPECT_EQ(variants, 2u);
  Status above = s.set_input_shape(0, {17, kIn});
  EXPECT_NE(above.message().find("dim 'batch' = 17 (input 'x' axis 0) is above its bounds [1, 16]"),
            std::string::npos)
      << above.message();
  Status fixed = s.set_input_shape(0, {3, 65});
  EXPECT_NE(fixed.message().find("input 'x' axis 1 is 65 but the program fixes it at 64"), std::string::npos)
      << fixed.message();
  Status rank = s.set_input_shape(0, {3});
  EXPECT_NE(rank.message().find("input 'x' has rank 1, the program's is 2"), std::string::npos) << rank.message();
  EXPECT_EQ(s.dims(), std::vector<int64_t>{2});
  EXPECT_EQ(s.inputs()[0].shape, (graph::Shape{2, kIn}));
  EXPECT_EQ(s.shape_variant_count(), variants);
  run(s, 2);
}

// y = softmax(relu(x @ W)) over the last axis: relu(x @ W) [batch, 1024] is
// an intermediate the delegate keeps in its workspace.
graph::Graph softmax_model(int64_t batch, const Blob& weight) {
  graph::Graph g;
  graph::ValueId x = graph::add_graph_input(g, "x", DType::kF32, {batch, kIn}).value();
  graph::ValueId w = graph::add_graph_constant(g, "w", DType::kF32, {kIn, kOut}, weight).value();
  graph::ValueId m = graph::add_op(g, "matmul", "mm", {x, w}, {}).value()[0];
  graph::ValueId r = graph::add_op(g, "relu", "relu", {m}, {}).value()[0];
  graph::ValueId y = graph::add_op(g, "softmax", "softmax", {r}, {{"axis", int64_t{-1}}}).value()[0];
  EXPECT_TRUE(graph::add_graph_output(g, y).ok());
  return g;
}

// Memory is planned once for the dims' upper bounds: the inputs' and
// outputs' homes and the delegate's intermediates are made at creation for
// batch 16 and every size runs in them, however many sizes come and go.
TEST_F(ShapeVariantsTest, MemoryIsPlannedOnceForTheUpperBounds) {
  std::vector<float> w = weight_values();
  auto program = dynamic_program_of(softmax_model);
  ASSERT_TRUE(program);
  SessionOptions options;
  options.max_shape_variants = 2;
  auto session = Session::create(program, options);
  ASSERT_TRUE(session.ok()) << session.status().message();
  Session& s = **session;
  const SessionMemoryBytes planned = s.memory();
  EXPECT_EQ(planned.tensors, uint64_t{16 * (kIn + kOut) * 4}) << "x and y at batch 16";
  // relu(x @ W) at batch 16, and x @ W beside it (a GEMM's own output is
  // placed for when its epilogue cannot be folded).
  EXPECT_GE(planned.workspaces, uint64_t{16 * kOut * 4});
  EXPECT_LE(planned.workspaces, uint64_t{2 * 16 * kOut * 4});
  EXPECT_EQ(planned.states, 0u);
  for (int64_t batch : {2, 7, 16, 1, 5, 7, 3}) {
    ASSERT_TRUE(s.set_input_shape(0, {batch, kIn}).ok());
    std::vector<float> x(static_cast<size_t>(batch * kIn));
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(static_cast<int>(i % 7) - 3) * 0.01f;
    ASSERT_TRUE(s.set_input(0, x.data(), x.size() * 4).ok());
    Status ran = s.execute();
    ASSERT_TRUE(ran.ok()) << ran.message();
    std::vector<float> y(static_cast<size_t>(batch * kOut));
    ASSERT_TRUE(s.get_output(0, y.data(), y.size() * 4).ok());
    for (int64_t b = 0; b < batch; ++b) {  // the host reference, in double
      std::vector<double> row(kOut);
      double peak = 0, sum = 0;
      for (int64_t n = 0; n < kOut; ++n) {
        double acc = 0;
        for (int64_t k = 0; k < kIn; ++k) acc += double{x[static_cast<size_t>(b * kIn + k)]} * w[static_cast<size_t>(k * kOut + n)];
        row[static_cast<size_t>(n)] = acc > 0 ? acc : 0;
        peak = std::max(peak, row[static_cast<size_t>(n)]);
      }
      for (double& v : row) sum += (v = std::exp(v - peak));
      for (int64_t n = 0; n < kOut; ++n) {
        ASSERT_NEAR(y[static_cast<size_t>(b * kOut + n)], row[static_cast<size_t>(n)] / sum, 1e-6)
            << "batch " << batch << " row " << b << " column " << n;
      }
    }
    const SessionMemoryBytes now = s.memory();
    EXPECT_EQ(now.tensors, planned.tensors) << "batch " << batch;
    EXPECT_EQ(now.workspaces, planned.workspaces) << "batch " << batch;
  }
}

// y = relu(x @ W) + count, count += 1 each execute: a state whose shape does
// not follow the dim.
graph::Graph counting_model(int64_t batch, const Blob& weight) {
  graph::Graph g;
  graph::ValueId x = graph::add_graph_input(g, "x", DType::kF32, {batch, kIn}).value();
  graph::ValueId w = graph::add_graph_constant(g, "w", DType::kF32, {kIn, kOut}, weight).value();
  std::vector<uint8_t> zeros(kOut * 4, 0), one(4);
  const float f1 = 1.0f;
  std::memcpy(one.data(), &f1, 4);
  graph::ValueId count =
      graph::add_graph_state(g, "count", DType::kF32, {1, kOut}, Blob::take(std::move(zeros))).value();
  graph::ValueId step = graph::add_graph_constant(g, "one", DType::kF32, {1}, Blob::take(std::move(one))).value();
  graph::ValueId m = graph::add_op(g, "matmul", "mm", {x, w}, {}).value()[0];
  graph::ValueId r = graph::add_op(g, "relu", "relu", {m}, {}).value()[0];
  graph::ValueId y = graph::add_op(g, "add", "plus_count", {r, count}, {}).value()[0];
  graph::ValueId next = graph::add_op(g, "add", "count_up", {count, step}, {}).value()[0];
  EXPECT_TRUE(graph::set_state_update(g, count, next).ok());
  EXPECT_TRUE(graph::add_graph_output(g, y).ok());
  return g;
}

// A state lives in one memory for every size: the sizes a session makes
// read and update it there, so a change of size copies nothing and the
// session holds it once.
TEST_F(ShapeVariantsTest, AStateStaysInOneMemoryAcrossSizes) {
  std::vector<float> w = weight_values();
  auto program = dynamic_program_of(counting_model);
  ASSERT_TRUE(program);
  SessionOptions options;
  options.max_shape_variants = 3;
  auto session = Session::create(program, options);
  ASSERT_TRUE(session.ok()) << session.status().message();
  Session& s = **session;
  EXPECT_EQ(s.memory().states, uint64_t{kOut * 4}) << "one count for every size";
  float count = 0;
  for (int64_t batch : {2, 7, 16, 1, 7, 2, 5}) {
    ASSERT_TRUE(s.set_input_shape(0, {batch, kIn}).ok());
    EXPECT_TRUE(s.state_updated_in_place(0)) << "batch " << batch;
    std::vector<float> x(static_cast<size_t>(batch * kIn));
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(static_cast<int>(i % 7) - 3);
    ASSERT_TRUE(s.set_input(0, x.data(), x.size() * 4).ok());
    Status ran = s.execute();
    ASSERT_TRUE(ran.ok()) << ran.message();
    std::vector<float> y(static_cast<size_t>(batch * kOut));
    ASSERT_TRUE(s.get_output(0, y.data(), y.size() * 4).ok());
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t n = 0; n < kOut; ++n) {
        float acc = 0;  // small integers and eighths: exact in f32
        for (int64_t k = 0; k < kIn; ++k) acc += x[static_cast<size_t>(b * kIn + k)] * w[static_cast<size_t>(k * kOut + n)];
        ASSERT_EQ(y[static_cast<size_t>(b * kOut + n)], (acc > 0 ? acc : 0) + count)
            << "batch " << batch << " row " << b << " column " << n;
      }
    }
    count += 1;
    std::vector<float> state(kOut);
    ASSERT_TRUE(s.get_state(0, state.data(), state.size() * 4).ok());
    EXPECT_EQ(state, std::vector<float>(kOut, count)) << "after batch " << batch;
    EXPECT_EQ(s.memory().states, uint64_t{kOut * 4}) << "batch " << batch;
  }
  s.reset_state();
  ASSERT_TRUE(s.set_input_shape(0, {3, kIn}).ok());
  std::vector<float> state(kOut, -1);
  ASSERT_TRUE(s.get_state(0, state.data(), state.size() * 4).ok());
  EXPECT_EQ(state, std::vector<float>(kOut, 0.0f)) << "reset, then a change of size";
}

}  // namespace
}  // namespace gpuu::runtime
