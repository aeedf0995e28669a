// The VGF backend on the test device: Arm's own VGF files through gpuu's TOSA
// executor, VGF delegates under every context mode, the RFC model mixing VGF
// and Vulkan delegates on one VkDevice, and a device that claims
// VK_ARM_data_graph without its entry points.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>

#include "backends/vgf/vgf_backend.h"
#include "backends/vgf/vgf_region.h"
#include "base/json_writer.h"
#include "context/shared_gpu_context_registry.h"
#include "kernels/vulkan_test_util.h"
#include "partition/partitioner.h"
#include "program/program_loader.h"
#include "program/program_writer.h"
#include "runtime/builtin_backends.h"
#include "runtime/session.h"
#include "support/test_vulkan_device.h"
#include "vgf/vgf_file.h"

namespace gpuu {
namespace {

using graph::DType;

// Arm's sample files live in ../shared beside the checkout (CI has it); a
// binary carried to another machine without it skips these two tests.
bool samples_present() {
  std::ifstream probe(std::string(GPUU_VGF_SAMPLES_DIR) + "/README.md");
  return probe.good();
}

std::vector<uint8_t> read_sample(const std::string& name) {
  std::ifstream in(std::string(GPUU_VGF_SAMPLES_DIR) + "/" + name, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST(VgfExecutor, ArmsSinMulFileComputesSinTimesX) {
  ASSERT_TRUE(samples_present()) << "missing test dependency " << GPUU_VGF_SAMPLES_DIR;
  std::vector<uint8_t> bytes = read_sample("sin_mul.vgf");
  ASSERT_FALSE(bytes.empty());
  Result<vgf::VgfFile> file = vgf::decode_vgf(bytes.data(), bytes.size());
  ASSERT_TRUE(file.ok()) << file.status().message();
  Result<graph::Graph> g = vgf::graph_from_vgf(file.value());
  ASSERT_TRUE(g.ok()) << g.status().message();
  cpu::HostTensor x = vulkan_test::random_tensor(DType::kF32, {1, 3, 4, 4}, 1, -3, 3);
  auto got = vulkan_test::run_on_vulkan(g.value(), {x});
  ASSERT_TRUE(got.ok()) << got.status().message();
  std::vector<double> in = x.to_doubles(), out = got.value()[0].to_doubles();
  for (size_t i = 0; i < in.size(); ++i) EXPECT_NEAR(out[i], std::sin(in[i]) * in[i], 3e-5) << i;
}

TEST(VgfExecutor, ArmsSinMulConstFileUsesItsConstant) {
  ASSERT_TRUE(samples_present()) << "missing test dependency " << GPUU_VGF_SAMPLES_DIR;
  std::vector<uint8_t> bytes = read_sample("sin_mul_const.vgf");
  Result<vgf::VgfFile> file = vgf::decode_vgf(bytes.data(), bytes.size());
  ASSERT_TRUE(file.ok()) << file.status().message();
  Result<graph::Graph> g = vgf::graph_from_vgf(file.value());
  ASSERT_TRUE(g.ok()) << g.status().message();
  cpu::HostTensor x = vulkan_test::random_tensor(DType::kF32, {1, 3, 4, 4}, 2, -3, 3);
  auto got = vulkan_test::run_on_vulkan(g.value(), {x});
  ASSERT_TRUE(got.ok()) << got.status().message();
  std::vector<double> in = x.to_doubles(), out = got.value()[0].to_doubles();
  for (size_t i = 0; i < in.size(); ++i) {
    double w = 0.5 * static_cast<double>(i);  // the file's constant: 0.0, 0.5, 1.0, ... 23.5
    EXPECT_NEAR(out[i], std::sin(in[i]) * w, 3e-5 * (1 + w)) << i;
  }
}

TEST(VgfExecutor, RegionRoundTripsThroughAVgfFileAndFusesItsChain) {
  // The RFC model's VGF suffix: sin, cos, reciprocal, mul, transpose.
  graph::Graph g;
  graph::ValueId x = graph::add_graph_input(g, "x", DType::kF32, {1, 3, 4, 4}).value();
  graph::ValueId s = graph::add_op(g, "sin", "sin_0", {x}, {}).value()[0];
  graph::ValueId c = graph::add_op(g, "cos", "cos_0", {x}, {}).value()[0];
  graph::ValueId r = graph::add_op(g, "reciprocal", "reciprocal_0", {c}, {}).value()[0];
  graph::ValueId m = graph::add_op(g, "mul", "mul_0", {s, r}, {}).value()[0];
  graph::ValueId t =
      graph::add_op(g, "transpose", "transpose_1", {m}, {{"perm", std::vector<int64_t>{0, 1, 3, 2}}}).value()[0];
  g.mark_output(t);
  Result<vgf::VgfFile> file = vgf::vgf_from_region(g);
  ASSERT_TRUE(file.ok()) << file.status().message();
  Result<std::vector<uint8_t>> bytes = vgf::encode_vgf(file.value());
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  Result<vgf::VgfFile> decoded = vgf::decode_vgf(bytes.value().data(), bytes.value().size());
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  Result<graph::Graph> back = vgf::graph_from_vgf(decoded.value());
  ASSERT_TRUE(back.ok()) << back.status().message();
  cpu::HostTensor in = vulkan_test::random_tensor(DType::kF32, {1, 3, 4, 4}, 3, -1.2, 1.2);
  vulkan_test::RunStats fused, unfused;
  kernels::KernelGraphOptions off;
  off.fuse_elementwise = false;
  auto a = vulkan_test::run_on_vulkan(back.value(), {in}, &fused);
  auto b = vulkan_test::run_on_vulkan(back.value(), {in}, &unfused, off);
  ASSERT_TRUE(a.ok() && b.ok()) << a.status().message() << b.status().message();
  auto want = cpu::run_graph(g, {in}).value();
  EXPECT_TRUE(vulkan_test::all_close(a.value()[0], want[0], 3e-5, 3e-5));
  EXPECT_TRUE(vulkan_test::all_close(b.value()[0], want[0], 3e-5, 3e-5));
  EXPECT_LT(fused.dispatches, unfused.dispatches) << "the executor fuses the elementwise chain";
  EXPECT_EQ(decoded.value().sequence.input_names[0], "x");
}

TEST(VgfExecutor, NewOpsTheVgfTableTakesRunAfterTosaOnTheVulkanKernels) {
  // Each op the VGF table accepts must pass the backend's own check (its TOSA
  // form raises to ops the Vulkan kernels run) and compute what the CPU does.
  struct Case {
    const char* op;
    DType dtype;
    int arity;
    graph::AttrMap attrs;
  };
  const Case cases[] = {{"tan", DType::kF32, 1, {}},
                        {"cosh", DType::kF32, 1, {}},
                        {"round", DType::kF32, 1, {}},
                        {"trunc", DType::kF32, 1, {}},
                        {"sign", DType::kF32, 1, {}},
                        {"sign", DType::kI32, 1, {}},
                        {"isnan", DType::kF32, 1, {}},
                        {"isinf", DType::kF32, 1, {}},
                        {"logical_not", DType::kI32, 1, {}},
                        {"logical_and", DType::kF32, 2, {}},
                        {"logical_xor", DType::kBool, 2, {}},
                        {"bitwise_or", DType::kI32, 2, {}},
                        {"bitwise_not", DType::kBool, 1, {}},
                        {"remainder", DType::kI32, 2, {}},
                        {"fmod", DType::kI32, 2, {}},
                        {"floor_divide", DType::kI32, 2, {}},
                        {"reduce_min", DType::kF32, 1, {{"axes", std::vector<int64_t>{1}}}},
                        {"reduce_prod", DType::kF32, 1, {{"axes", std::vector<int64_t>{0}}}},
                        {"reduce_any", DType::kBool, 1, {{"axes", std::vector<int64_t>{1}}}},
                        {"reduce_all", DType::kBool, 1, {{"axes", std::vector<int64_t>{0}}}}};
  uint32_t seed = 40;
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.op) + " " + graph::dtype_name(c.dtype));
    graph::Graph g;
    std::vector<graph::ValueId> ins;
    std::vector<cpu::HostTensor> tensors;
    for (int k = 0; k < c.arity; ++k) {
      ins.push_back(graph::add_graph_input(g, "x" + std::to_string(k), c.dtype, {3, 8}).value());
      tensors.push_back(vulkan_test::random_tensor(c.dtype, {3, 8}, seed++, c.dtype == DType::kBool ? 0 : -6,
                                                   c.dtype == DType::kBool ? 2 : 6));
    }
    g.mark_output(graph::add_op(g, c.op, std::string(c.op) + "_0", ins, c.attrs).value()[0]);
    EXPECT_EQ(vgf::VgfBackend().check(g, g.node(0)), "");
    Result<vgf::VgfFile> file = vgf::vgf_from_region(g);
    ASSERT_TRUE(file.ok()) << file.status().message();
    Result<graph::Graph> back = vgf::graph_from_vgf(file.value());
    ASSERT_TRUE(back.ok()) << back.status().message();
    auto got = vulkan_test::run_on_vulkan(back.value(), tensors);
    ASSERT_TRUE(got.ok()) << got.status().message();
    auto want = cpu::run_graph(g, tensors).value();
    EXPECT_TRUE(vulkan_test::all_close(got.value()[0], want[0], 1e-5, 1e-5));
  }
}

// A region through a VGF file and back, run on the executor (the Vulkan kernels).
Result<std::vector<cpu::HostTensor>> run_through_vgf(const graph::Graph& g, const std::vector<cpu::HostTensor>& in) {
  GPUU_ASSIGN_OR_RETURN(vgf::VgfFile file, vgf::vgf_from_region(g));
  GPUU_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, vgf::encode_vgf(file));
  GPUU_ASSIGN_OR_RETURN(vgf::VgfFile decoded, vgf::decode_vgf(bytes.data(), bytes.size()));
  GPUU_ASSIGN_OR_RETURN(graph::Graph back, vgf::graph_from_vgf(decoded));
  return vulkan_test::run_on_vulkan(back, in);
}

TEST(VgfExecutor, IndexPutRunsAsScatterOnTheVulkanKernels) {
  // A KV cache [1,3,6,4] taking new rows at runtime positions along axis 2
  // (three batches of SCATTER, raised as an element scatter), and the rows of
  // a matrix (one batch, raised as index_put).
  graph::Graph g;
  graph::ValueId cache = graph::add_graph_input(g, "cache", DType::kF32, {1, 3, 6, 4}).value();
  graph::ValueId pos = graph::add_graph_input(g, "pos", DType::kI32, {2}).value();
  graph::ValueId kv = graph::add_graph_input(g, "kv", DType::kF32, {1, 3, 2, 4}).value();
  graph::ValueId m = graph::add_graph_input(g, "m", DType::kI32, {5, 3}).value();
  graph::ValueId rows = graph::add_graph_input(g, "rows", DType::kI32, {2}).value();
  graph::ValueId r = graph::add_graph_input(g, "r", DType::kI32, {2, 3}).value();
  g.mark_output(graph::add_op(g, "index_put", "update", {cache, pos, kv}, {{"axis", int64_t{2}}}).value()[0]);
  g.mark_output(graph::add_op(g, "index_put", "put_rows", {m, rows, r}, {{"axis", int64_t{0}}}).value()[0]);
  for (const graph::Node& n : g.nodes()) EXPECT_EQ(vgf::VgfBackend().check(g, n), "") << n.name;
  for (std::vector<int32_t> at : {std::vector<int32_t>{5, 0}, {2, 3}}) {
    std::vector<cpu::HostTensor> in = {vulkan_test::random_tensor(DType::kF32, {1, 3, 6, 4}, 1, -1, 1),
                                       cpu::HostTensor::from_data<int32_t>({2}, at).value(),
                                       vulkan_test::random_tensor(DType::kF32, {1, 3, 2, 4}, 2, -1, 1),
                                       vulkan_test::random_tensor(DType::kI32, {5, 3}, 3, -9, 9),
                                       cpu::HostTensor::from_data<int32_t>({2}, {4, 1}).value(),
                                       vulkan_test::random_tensor(DType::kI32, {2, 3}, 4, -9, 9)};
    auto got = run_through_vgf(g, in);
    ASSERT_TRUE(got.ok()) << got.status().message();
    auto want = cpu::run_graph(g, in).value();
    EXPECT_TRUE(vulkan_test::all_close(got.value()[0], want[0], 0, 0)) << at[0];
    EXPECT_TRUE(vulkan_test::all_close(got.value()[1], want[1], 0, 0)) << at[0];
  }
}

TEST(VgfExecutor, RegionWhoseReshapesCancelOutCopiesItsInput) {
  // [1,2,1,4] -> [2,1,4] -> [1,2,1,4]: the raised graph's output would be its
  // input, which a delegate cannot bind twice; a copy stands in.
  graph::Graph g;
  graph::ValueId x = graph::add_graph_input(g, "x", DType::kF32, {1, 2, 1, 4}).value();
  graph::ValueId a = graph::add_op(g, "reshape", "view", {x}, {{"shape", std::vector<int64_t>{2, 1, 4}}}).value()[0];
  g.mark_output(graph::add_op(g, "reshape", "back", {a}, {{"shape", std::vector<int64_t>{1, 2, 1, 4}}}).value()[0]);
  cpu::HostTensor in = vulkan_test::random_tensor(DType::kF32, {1, 2, 1, 4}, 5, -1, 1);
  auto got = run_through_vgf(g, {in});
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_TRUE(vulkan_test::all_close(got.value()[0], in, 0, 0));
}

// The RFC model partitioned vgf_first (VGF -> Vulkan -> VGF), as a program.
struct RfcProgram {
  graph::Graph graph;
  std::shared_ptr<const program::Program> program;
};

RfcProgram rfc_program(const std::string& token, ContextMode mode) {
  RfcProgram p;
  graph::Graph& g = p.graph;
  graph::ValueId x = graph::add_graph_input(g, "x", DType::kF32, {1, 3, 8, 8}).value();
  std::vector<int64_t> channel = {2, 0, 1}, row = {3, 1, 2, 0}, col(48);
  for (size_t i = 0; i < col.size(); ++i) col[i] = std::vector<int64_t>{3, 1, 2, 0}[i % 4];
  auto blob = [](const std::vector<int64_t>& v) { return Blob::copy_of(v.data(), v.size() * 8); };
  graph::ValueId ci = graph::add_graph_constant(g, "channel_index", DType::kI64, {3}, blob(channel)).value();
  graph::ValueId gi = graph::add_graph_constant(g, "col_gather_index", DType::kI64, {1, 3, 4, 4}, blob(col)).value();
  graph::ValueId ri = graph::add_graph_constant(g, "row_index", DType::kI64, {4}, blob(row)).value();
  auto op = [&](const char* o, const char* n, std::vector<graph::ValueId> in, graph::AttrMap a = {}) {
    return graph::add_op(g, o, n, std::move(in), std::move(a)).value()[0];
  };
  graph::ValueId v = op("transpose", "transpose_0", {x}, {{"perm", std::vector<int64_t>{0, 1, 3, 2}}});
  v = op("avg_pool2d", "avg_pool2d_0", {v},
         {{"kernel", std::vector<int64_t>{2, 2}}, {"stride", std::vector<int64_t>{2, 2}}});
  v = op("index_select", "index_select_0", {v, ci}, {{"axis", int64_t{1}}});
  v = op("gather", "gather_0", {v, gi}, {{"axis", int64_t{3}}});
  v = op("index_select", "index_select_1", {v, ri}, {{"axis", int64_t{2}}});
  graph::ValueId s = op("sin", "sin_0", {v});
  graph::ValueId c = op("cos", "cos_0", {v});
  graph::ValueId r = op("reciprocal", "reciprocal_0", {c});
  graph::ValueId m = op("mul", "mul_0", {s, r});
  graph::ValueId y = op("transpose", "transpose_1", {m}, {{"perm", std::vector<int64_t>{0, 1, 3, 2}}});
  g.mark_output(y);
  partition::PartitionOptions options;
  options.prefer = Prefer::kVgfFirst;
  options.min_partition_size = 1;
  options.capabilities = runtime::registered_capabilities();
  Result<partition::PartitionResult> parts = partition::partition(g, options);
  EXPECT_TRUE(parts.ok()) << parts.status().message();
  SharedGpuCompileSpec spec;
  spec.token = token;
  spec.group_id = 7;
  spec.context_mode = mode;
  spec.prefer = Prefer::kVgfFirst;
  spec.min_partition_size = 1;
  spec.present = true;
  Result<std::vector<uint8_t>> bytes =
      program::build_program(g, parts.value(), spec, runtime::builtin_preprocessors());
  EXPECT_TRUE(bytes.ok()) << bytes.status().message();
  auto loaded = program::load_program_bytes(bytes.value().data(), bytes.value().size());
  EXPECT_TRUE(loaded.ok()) << loaded.status().message();
  p.program = loaded.value();
  return p;
}

cpu::HostTensor rfc_input() {
  std::vector<double> v(192);
  for (size_t i = 0; i < v.size(); ++i) v[i] = -0.8 + 1.6 * static_cast<double>(i) / 191.0;
  return cpu::HostTensor::from_doubles(DType::kF32, {1, 3, 8, 8}, v).value();
}

class VgfBackendTest : public testing::Test {
 protected:
  void TearDown() override { SharedGpuContextRegistry::get().clear_for_testing(); }
};

TEST_F(VgfBackendTest, RfcModelRunsAsVgfVulkanVgfOnOneDevice) {
  RfcProgram p = rfc_program("rfc", ContextMode::kLookupOrCreate);
  ASSERT_TRUE(p.program);
  const auto& d = p.program->delegates();
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0].backend_id, "VgfBackend");
  EXPECT_EQ(d[1].backend_id, "VulkanBackend");
  EXPECT_EQ(d[2].backend_id, "VgfBackend");
  Result<vgf::VgfFile> file = vgf::decode_vgf(p.program->processed_blob(0));
  ASSERT_TRUE(file.ok()) << "a VGF delegate's blob is a real VGF file: " << file.status().message();
  cpu::HostTensor x = rfc_input();
  auto want = cpu::run_graph(p.graph, {x}).value();
  for (SyncMode mode : {SyncMode::kTimeline, SyncMode::kQueueWaitIdle, SyncMode::kNone}) {
    runtime::SessionOptions options;
    options.overrides.sync_mode = mode;
    auto session = runtime::Session::create(p.program, options);
    ASSERT_TRUE(session.ok()) << session.status().message();
    auto handles = session.value()->delegate_handles();
    ASSERT_EQ(handles.size(), 3u);
    for (const auto* h : handles) EXPECT_EQ(h->context()->device(), handles[0]->context()->device());
    EXPECT_NE(handles[0]->command_pool(), handles[1]->command_pool());
    EXPECT_NE(handles[0]->command_pool(), handles[2]->command_pool());
    EXPECT_NE(handles[1]->command_pool(), handles[2]->command_pool());
    ASSERT_TRUE(session.value()->set_input(0, x.bytes.data(), x.bytes.size()).ok());
    runtime::ExecuteStats stats;
    Status ran = session.value()->execute(&stats);
    ASSERT_TRUE(ran.ok()) << ran.message();
    EXPECT_EQ(stats.delegate_submits, 3u);
    if (mode == SyncMode::kTimeline) {
      EXPECT_EQ(stats.host_waits, 1u) << "the host waits once per execute";
    }
    std::vector<float> y(48);
    ASSERT_TRUE(session.value()->get_output(0, y.data(), 192).ok());
    auto got = cpu::HostTensor::from_data<float>({1, 3, 4, 4}, y).value();
    EXPECT_TRUE(vulkan_test::all_close(got, want[0], 3e-5, 3e-5)) << to_string(mode);
  }
}

TEST_F(VgfBackendTest, EveryContextModeResolvesAsTheRfcSays) {
  cpu::HostTensor x = rfc_input();
  // disabled: private contexts, nothing registered.
  {
    RfcProgram p = rfc_program("modes", ContextMode::kDisabled);
    auto session = runtime::Session::create(p.program, {});
    ASSERT_TRUE(session.ok()) << session.status().message();
    EXPECT_EQ(SharedGpuContextRegistry::get().size(), 0u);
  }
  // lookup_only without a context: not found, naming the VGF delegate.
  {
    RfcProgram p = rfc_program("modes", ContextMode::kLookupOnly);
    auto session = runtime::Session::create(p.program, {});
    ASSERT_FALSE(session.ok());
    EXPECT_EQ(session.status().code(), StatusCode::kNotFound);
    EXPECT_NE(session.status().message().find("VGF delegate 0"), std::string::npos) << session.status().message();
  }
  // create_only: the first delegate creates, the second finds the key taken.
  {
    RfcProgram p = rfc_program("modes", ContextMode::kCreateOnly);
    auto session = runtime::Session::create(p.program, {});
    ASSERT_FALSE(session.ok());
    EXPECT_EQ(session.status().code(), StatusCode::kAlreadyExists);
    EXPECT_NE(session.status().message().find("create_only"), std::string::npos) << session.status().message();
    SharedGpuContextRegistry::get().clear_for_testing();
  }
  // lookup_or_create, then lookup_only finds what the first session made.
  {
    RfcProgram p = rfc_program("modes", ContextMode::kLookupOrCreate);
    auto first = runtime::Session::create(p.program, {});
    ASSERT_TRUE(first.ok()) << first.status().message();
    RfcProgram q = rfc_program("modes", ContextMode::kLookupOnly);
    auto second = runtime::Session::create(q.program, {});
    ASSERT_TRUE(second.ok()) << second.status().message();
    EXPECT_EQ(first.value()->primary_context(), second.value()->primary_context());
  }
}

TEST_F(VgfBackendTest, ADeviceClaimingDataGraphWithoutItsEntryPointsFailsClearly) {
  gpuu_test::AppDevice app;
  std::string why;
  ASSERT_TRUE(app.create(&why)) << why;
  // lavapipe has no VK_ARM_data_graph: the context only claims it.
  auto ctx = vulkan_test::register_app_device(app, "claims", 7, {"VK_ARM_data_graph"});
  ASSERT_TRUE(ctx.ok()) << ctx.status().message();
  RfcProgram p = rfc_program("claims", ContextMode::kLookupOnly);
  auto session = runtime::Session::create(p.program, {});
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(session.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(session.status().message().find("vkCreateDataGraphPipelinesARM is unavailable"), std::string::npos)
      << session.status().message();
  SharedGpuContextRegistry::get().clear_for_testing();
  ctx.value().reset();
  EXPECT_TRUE(app.still_usable(&why)) << why;
}

TEST_F(VgfBackendTest, WhatTheVgfBackendTakesAlsoRunsAfterTosa) {
  // gather with i32 indices is TOSA-expressible; whatever the VGF backend's
  // check says, the partition built with it must run and match the reference.
  graph::Graph g;
  graph::ValueId x = graph::add_graph_input(g, "x", DType::kF32, {2, 5}).value();
  std::vector<int32_t> idx = {4, 0, 1, 3, 3, 2};
  graph::ValueId i = graph::add_graph_constant(g, "idx", DType::kI32, {2, 3}, Blob::copy_of(idx.data(), 24)).value();
  graph::ValueId v = graph::add_op(g, "gather", "gather_0", {x, i}, {{"axis", int64_t{1}}}).value()[0];
  v = graph::add_op(g, "sin", "sin_0", {v}, {}).value()[0];
  v = graph::add_op(g, "mul", "mul_0", {v, v}, {}).value()[0];
  g.mark_output(v);
  std::string why = vgf::VgfBackend().check(g, g.node(0));
  partition::PartitionOptions options;
  options.prefer = Prefer::kVgfFirst;
  options.min_partition_size = 1;
  options.capabilities = runtime::registered_capabilities();
  auto parts = partition::partition(g, options);
  ASSERT_TRUE(parts.ok()) << parts.status().message();
  EXPECT_EQ(parts->regions[static_cast<size_t>(parts->region_of_node[0])].backend == partition::kVgfId,
            why.empty())
      << why;
  SharedGpuCompileSpec spec;
  spec.token = "gather_i32";
  spec.present = true;
  auto bytes = program::build_program(g, parts.value(), spec, runtime::builtin_preprocessors());
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  auto program = program::load_program_bytes(bytes->data(), bytes->size()).value();
  auto session = runtime::Session::create(program, {});
  ASSERT_TRUE(session.ok()) << session.status().message();
  cpu::HostTensor in = vulkan_test::random_tensor(DType::kF32, {2, 5}, 9, -2, 2);
  ASSERT_TRUE(session.value()->set_input(0, in.bytes.data(), in.bytes.size()).ok());
  ASSERT_TRUE(session.value()->execute().ok());
  std::vector<float> y(6);
  ASSERT_TRUE(session.value()->get_output(0, y.data(), 24).ok());
  auto want = cpu::run_graph(g, {in}).value();
  EXPECT_TRUE(vulkan_test::all_close(cpu::HostTensor::from_data<float>({2, 3}, y).value(), want[0], 2e-5, 2e-5));
}

TEST_F(VgfBackendTest, SpatialOpsTakenOnlyWhereTheirTosaFormRunsHere) {
  graph::Graph g;
  graph::ValueId x = graph::add_graph_input(g, "x", DType::kF32, {1, 2, 4, 4}).value();
  graph::ValueId x3 = graph::add_graph_input(g, "x3", DType::kF32, {1, 1, 40, 4, 4}).value();
  graph::ValueId w = graph::add_graph_input(g, "w", DType::kF32, {2, 2, 2, 2}).value();
  auto add = [&](const char* op, const char* name, std::vector<graph::ValueId> in, graph::AttrMap attrs) {
    graph::ValueId v = graph::add_op(g, op, name, std::move(in), std::move(attrs)).value()[0];
    g.mark_output(v);
  };
  add("resize", "up2", {x}, {{"size", std::vector<int64_t>{8, 8}}, {"mode", std::string("bilinear")}});
  add("resize", "down4", {x}, {{"size", std::vector<int64_t>{1, 4}}});  // 4x down: within RESIZE's 16x
  add("conv_transpose2d", "dilated", {x, w}, {{"dilation", std::vector<int64_t>{2, 2}}});
  add("max_pool3d", "pool3", {x3}, {{"kernel", std::vector<int64_t>{2, 2, 2}}});
  add("resize", "far", {graph::add_op(g, "reshape", "r", {x3}, {{"shape", std::vector<int64_t>{1, 1, 40, 16}}}).value()[0]},
      {{"size", std::vector<int64_t>{2, 16}}});  // 20x down: past RESIZE's 16x
  add("flip", "flip", {x}, {{"axes", std::vector<int64_t>{-1}}});
  vgf::VgfBackend vgf;
  auto check = [&](const std::string& name) {
    for (const graph::Node& n : g.nodes()) {
      if (n.name == name) return vgf.check(g, n);
    }
    return std::string("no node ") + name;
  };
  EXPECT_EQ(check("up2"), "");
  EXPECT_EQ(check("down4"), "");
  EXPECT_EQ(check("flip"), "");
  EXPECT_NE(check("dilated").find("TRANSPOSE_CONV2D has no dilation"), std::string::npos) << check("dilated");
  EXPECT_NE(check("far").find("no TOSA RESIZE"), std::string::npos) << check("far");
  EXPECT_NE(check("pool3").find("no 3-D pooling"), std::string::npos) << check("pool3");
}

TEST_F(VgfBackendTest, SpatialRegionRunsThroughAVgfFile) {
  // resize -> reflect pad -> conv_transpose2d -> flip -> expand, all on VGF.
  graph::Graph g;
  graph::ValueId x = graph::add_graph_input(g, "x", DType::kF32, {1, 2, 3, 4}).value();
  cpu::HostTensor wt = vulkan_test::random_tensor(DType::kF32, {2, 3, 2, 2}, 5, -1, 1);
  graph::ValueId w = graph::add_graph_constant(g, "w", DType::kF32, {2, 3, 2, 2}, wt.to_blob()).value();
  graph::ValueId v =
      graph::add_op(g, "resize", "resize_0", {x}, {{"size", std::vector<int64_t>{6, 8}}, {"mode", std::string("bilinear")}})
          .value()[0];
  v = graph::add_op(g, "pad", "pad_0", {v}, {{"pads", std::vector<int64_t>{0, 0, 0, 0, 1, 2, 2, 1}}, {"mode", std::string("reflect")}})
          .value()[0];
  v = graph::add_op(g, "conv_transpose2d", "deconv_0", {v, w},
                    {{"stride", std::vector<int64_t>{2, 2}}, {"padding", std::vector<int64_t>{1, 1}},
                     {"output_padding", std::vector<int64_t>{1, 0}}})
          .value()[0];
  v = graph::add_op(g, "flip", "flip_0", {v}, {{"axes", std::vector<int64_t>{2, 3}}}).value()[0];
  v = graph::add_op(g, "expand", "expand_0", {v}, {{"shape", std::vector<int64_t>{2, 1, 3, 17, 20}}}).value()[0];
  g.mark_output(v);
  partition::PartitionOptions options;
  options.prefer = Prefer::kVgfFirst;
  options.min_partition_size = 1;
  options.capabilities = runtime::registered_capabilities();
  auto parts = partition::partition(g, options);
  ASSERT_TRUE(parts.ok()) << parts.status().message();
  ASSERT_EQ(parts->regions.size(), 1u);
  EXPECT_EQ(parts->regions[0].backend, partition::kVgfId);
  SharedGpuCompileSpec spec;
  spec.token = "spatial";
  spec.present = true;
  auto bytes = program::build_program(g, parts.value(), spec, runtime::builtin_preprocessors());
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  auto program = program::load_program_bytes(bytes->data(), bytes->size()).value();
  auto session = runtime::Session::create(program, {});
  ASSERT_TRUE(session.ok()) << session.status().message();
  cpu::HostTensor in = vulkan_test::random_tensor(DType::kF32, {1, 2, 3, 4}, 9, -2, 2);
  ASSERT_TRUE(session.value()->set_input(0, in.bytes.data(), in.bytes.size()).ok());
  ASSERT_TRUE(session.value()->execute().ok());
  auto want = cpu::run_graph(g, {in}).value();
  std::vector<float> y(static_cast<size_t>(want[0].numel()));
  ASSERT_TRUE(session.value()->get_output(0, y.data(), y.size() * 4).ok());
  EXPECT_TRUE(vulkan_test::all_close(cpu::HostTensor::from_data<float>(want[0].shape, y).value(), want[0], 1e-5, 1e-5));
}

// x -> sin -> custom shader (y = 2x + 1, GLSL) -> cos, and the same with
// ordinary ops as the reference.
graph::Graph shader_graph(bool with_shader) {
  graph::Graph g;
  graph::ValueId x = graph::add_graph_input(g, "x", DType::kF32, {1000}).value();
  graph::ValueId v = graph::add_op(g, "sin", "sin_0", {x}, {}).value()[0];
  if (with_shader) {
    JsonWriter attrs;
    attrs.begin_object();
    attrs.key("entry_point").value("main");
    attrs.key("workgroup_sizes").begin_array().value(int64_t{64}).value(int64_t{1}).value(int64_t{1}).end_array();
    attrs.key("shader_language").value("GLSL");
    attrs.key("shader_code").value(
        "#version 450\n"
        "layout(local_size_x = 64) in;\n"
        "layout(std430, set = 0, binding = 0) readonly buffer In { float x[]; };\n"
        "layout(std430, set = 0, binding = 1) writeonly buffer Out { float y[]; };\n"
        "void main() { uint i = gl_GlobalInvocationID.x; if (i < 1000u) y[i] = x[i] * 2.0 + 1.0; }\n");
    attrs.key("input_0_binding").value(int64_t{0});
    attrs.key("input_0_vkdescriptortype").value("VK_DESCRIPTOR_TYPE_STORAGE_BUFFER");
    attrs.key("output_0_binding").value(int64_t{1});
    attrs.end_object();
    graph::AttrMap a = {{"domain_name", std::string("com.arm.VulkanCustomShader")},
                        {"operator_name", std::string("affine")},
                        {"implementation_attrs", attrs.str()},
                        {"num_outputs", int64_t{1}},
                        {"output_0_shape", std::vector<int64_t>{1000}},
                        {"output_0_dtype", std::string("f32")}};
    v = graph::add_op(g, "custom_shader", "affine_0", {v}, a).value()[0];
  } else {
    std::vector<float> two(1000, 2.0f), one(1000, 1.0f);
    graph::ValueId c2 = graph::add_graph_constant(g, "two", DType::kF32, {1000}, Blob::copy_of(two.data(), 4000)).value();
    graph::ValueId c1 = graph::add_graph_constant(g, "one", DType::kF32, {1000}, Blob::copy_of(one.data(), 4000)).value();
    v = graph::add_op(g, "mul", "mul_0", {v, c2}, {}).value()[0];
    v = graph::add_op(g, "add", "add_0", {v, c1}, {}).value()[0];
  }
  v = graph::add_op(g, "cos", "cos_0", {v}, {}).value()[0];
  g.mark_output(v);
  return g;
}

void run_custom_shader_program(Prefer prefer, const char* expected_backend) {
  // GLSL compiles at export, with glslc (a build dependency, so always here).
  ASSERT_EQ(std::system("glslc --version > /dev/null 2>&1"), 0) << "glslc is not on PATH";
  graph::Graph g = shader_graph(true);
  partition::PartitionOptions options;
  options.prefer = prefer;
  options.min_partition_size = 1;
  options.capabilities = runtime::registered_capabilities();
  auto parts = partition::partition(g, options);
  ASSERT_TRUE(parts.ok()) << parts.status().message();
  const partition::Region& shader_region = parts->regions[static_cast<size_t>(parts->region_of_node[1])];
  EXPECT_EQ(shader_region.nodes.size(), 1u) << "a custom shader gets a region of its own";
  EXPECT_EQ(shader_region.backend, expected_backend);
  SharedGpuCompileSpec spec;
  spec.token = std::string("shader_") + expected_backend;
  spec.present = true;
  auto bytes = program::build_program(g, parts.value(), spec, runtime::builtin_preprocessors());
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  auto program = program::load_program_bytes(bytes->data(), bytes->size()).value();
  if (std::string(expected_backend) == "VgfBackend") {
    int32_t shader_delegate = -1;
    for (size_t d = 0; d < program->delegates().size(); ++d) {
      for (const auto& node : program->delegates()[d].nodes) {
        if (node.name == "affine_0") shader_delegate = static_cast<int32_t>(d);
      }
    }
    ASSERT_GE(shader_delegate, 0);
    auto file = vgf::decode_vgf(program->processed_blob(shader_delegate));
    ASSERT_TRUE(file.ok()) << file.status().message();
    ASSERT_EQ(file->modules.size(), 1u);
    EXPECT_EQ(file->modules[0].type, vgf::ModuleType::kCompute);
    EXPECT_EQ(file->sequence.segments[0].type, vgf::ModuleType::kCompute);
    EXPECT_EQ(file->sequence.segments[0].dispatch_shape[0], 16u) << "1000 elements in groups of 64";
  }
  auto session = runtime::Session::create(program, {});
  ASSERT_TRUE(session.ok()) << session.status().message();
  cpu::HostTensor in = vulkan_test::random_tensor(DType::kF32, {1000}, 11, -3, 3);
  ASSERT_TRUE(session.value()->set_input(0, in.bytes.data(), in.bytes.size()).ok());
  Status ran = session.value()->execute();
  ASSERT_TRUE(ran.ok()) << ran.message();
  std::vector<float> y(1000);
  ASSERT_TRUE(session.value()->get_output(0, y.data(), 4000).ok());
  auto want = cpu::run_graph(shader_graph(false), {in}).value();
  EXPECT_TRUE(vulkan_test::all_close(cpu::HostTensor::from_data<float>({1000}, y).value(), want[0], 3e-5, 3e-5));
}

TEST_F(VgfBackendTest, CustomShaderBecomesACompiledComputeSegment) {
  run_custom_shader_program(Prefer::kVgfFirst, "VgfBackend");
}

TEST_F(VgfBackendTest, CustomShaderRunsOnTheVulkanBackendToo) {
  run_custom_shader_program(Prefer::kVulkanFirst, "VulkanBackend");
}

}  // namespace
// A node reading one value twice (x * x, as squares and variances do) is
// isolated with one input; its answer is its own, not that of x * y.
TEST(VgfBackendCheck, NodeReadingOneValueTwiceIsTaken) {
  using graph::DType;
  vgf::VgfBackend vgf;
  graph::Graph g;
  auto x = graph::add_graph_input(g, "x", DType::kF32, {2, 7}).value();
  auto y = graph::add_graph_input(g, "y", DType::kF32, {2, 7}).value();
  auto square = graph::add_op(g, "mul", "square", {x, x}, {}).value()[0];
  auto product = graph::add_op(g, "mul", "product", {x, y}, {}).value()[0];
  g.mark_output(square);
  g.mark_output(product);
  EXPECT_EQ(vgf.check(g, g.node(0)), "");
  EXPECT_EQ(vgf.check(g, g.node(1)), "");
}

}  // namespace gpuu
