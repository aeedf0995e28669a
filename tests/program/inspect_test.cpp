// gpuu-inspect, run as a process on a program written by build_program: the
// text report, the JSON document and the Graphviz graph, plus its errors.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <sstream>

#include "base/json.h"
#include "program/program_writer.h"
#include "program/sample_program.h"

extern char** environ;

namespace gpuu::program {
namespace {

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

class InspectTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gpuu_inspect_test_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    program_ = dir_ + "/sample.gpuu";
    auto m = gpuu_test::make_sample_model();
    Result<std::vector<uint8_t>> bytes = build_program(m.graph, m.partition, m.spec);
    ASSERT_TRUE(bytes.ok()) << bytes.status().message();
    ASSERT_TRUE(write_file_atomically(program_, bytes.value()).ok());
  }
  void TearDown() override {
    for (const char* f : {"/sample.gpuu", "/out.txt", "/err.txt", "/bad.gpuu"}) unlink((dir_ + f).c_str());
    rmdir(dir_.c_str());
  }

  // Runs gpuu-inspect with `args`, capturing stdout and stderr through files.
  RunResult run(std::vector<std::string> args) {
    std::string out_path = dir_ + "/out.txt", err_path = dir_ + "/err.txt";
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    args.insert(args.begin(), GPUU_INSPECT_PATH);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    RunResult r;
    int rc = posix_spawn(&pid, GPUU_INSPECT_PATH, &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    EXPECT_EQ(rc, 0) << "cannot start " << GPUU_INSPECT_PATH;
    if (rc != 0) return r;
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status)) << "gpuu-inspect did not exit normally (signal?)";
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = slurp(out_path);
    r.err = slurp(err_path);
    return r;
  }

  std::string dir_;
  std::string program_;
};

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

TEST_F(InspectTest, TextShowsDelegatesPlanSpecsAndConstants) {
  RunResult r = run({program_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string& t = r.out;
  EXPECT_TRUE(contains(t, "VgfBackend: 1 delegate, 3 nodes")) << t;
  EXPECT_TRUE(contains(t, "VulkanBackend: 1 delegate, 3 nodes")) << t;
  EXPECT_TRUE(contains(t, "CpuFallback: 1 step, 1 node")) << t;
  EXPECT_TRUE(contains(t, "[0] delegate 0: VgfBackend, 3 nodes")) << t;
  EXPECT_TRUE(contains(t, "nodes: matmul0 (matmul) add0 (add) relu0 (clamp)")) << t;
  EXPECT_TRUE(contains(t, "[1] CpuFallback: softmax0 (softmax)")) << t;
  EXPECT_TRUE(contains(t, "attrs: axis=-1 beta=1.5")) << t;
  EXPECT_TRUE(contains(t, "[2] delegate 1: VulkanBackend, 3 nodes")) << t;
  EXPECT_TRUE(contains(t, "gpu_shared_context_token = scene0")) << t;
  EXPECT_TRUE(contains(t, "gpu_shared_group_id = 7")) << t;
  EXPECT_TRUE(contains(t, "gpu_shared_sync_mode = timeline")) << t;
  EXPECT_TRUE(contains(t, "inputs: h3, w1, scale, h2")) << t;
  EXPECT_TRUE(contains(t, "w1  f32 [8,8]  256 bytes  segment 0")) << t;
  EXPECT_TRUE(contains(t, "scale  f32 [8]  32 bytes  segment 1 (shared by 2 names)")) << t;
  EXPECT_TRUE(contains(t, "deduplication saved 32 bytes")) << t;
  // Plan order: the VGF delegate, then the CPU step, then the Vulkan delegate.
  EXPECT_LT(t.find("[0] delegate 0"), t.find("[1] CpuFallback"));
  EXPECT_LT(t.find("[1] CpuFallback"), t.find("[2] delegate 1"));
}

TEST_F(InspectTest, JsonIsValidAndComplete) {
  RunResult r = run({"--json", program_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Result<JsonValue> doc = parse_json(r.out);
  ASSERT_TRUE(doc.ok()) << doc.status().message() << "\n" << r.out;
  const JsonValue& j = doc.value();
  EXPECT_EQ(j.find("dedup_saved_bytes")->as_integer(), 32);
  const JsonValue::Array& delegates = j.find("delegates")->as_array();
  ASSERT_EQ(delegates.size(), 2u);
  EXPECT_EQ(delegates[0].find("backend_id")->as_string(), "VgfBackend");
  EXPECT_EQ(delegates[0].find("node_count")->as_integer(), 3);
  EXPECT_EQ(delegates[0].find("nodes")->as_array()[2].find("op")->as_string(), "clamp");
  EXPECT_EQ(delegates[1].find("backend_id")->as_string(), "VulkanBackend");
  EXPECT_EQ(delegates[1].find("processed")->find("format")->as_string(), "SubGraph");
  const JsonValue::Array& specs = delegates[1].find("compile_specs")->as_array();
  ASSERT_EQ(specs.size(), 6u);
  EXPECT_EQ(specs[0].find("key")->as_string(), "gpu_shared_context_token");
  EXPECT_EQ(specs[0].find("value")->as_string(), "scene0");
  const JsonValue::Array& plan = j.find("plan")->as_array();
  ASSERT_EQ(plan.size(), 3u);
  EXPECT_EQ(plan[1].find("kind")->as_string(), "cpu");
  EXPECT_EQ(plan[1].find("attrs")->find("axis")->as_integer(), -1);
  EXPECT_EQ(j.find("constants")->as_array().size(), 3u);
  EXPECT_EQ(j.find("inputs")->as_array()[0].find("name")->as_string(), "x");
  EXPECT_EQ(j.find("outputs")->as_array()[0].find("name")->as_string(), "y");
  const JsonValue::Array& parts = j.find("partitions")->as_array();
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[2].find("backend")->as_string(), "CpuFallback");
  EXPECT_EQ(parts[2].find("nodes")->as_integer(), 1);
}

TEST_F(InspectTest, DotColoursNodesByBackendAndDrawsTensorEdges) {
  RunResult r = run({"--dot", program_});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string& d = r.out;
  EXPECT_EQ(d.rfind("digraph gpuu_program {", 0), 0u) << d;
  EXPECT_TRUE(contains(d, "\"n:matmul0\" [fillcolor=\"#f4a261\", label=\"matmul0\\nmatmul\"]")) << d;  // VGF
  EXPECT_TRUE(contains(d, "\"n:matmul1\" [fillcolor=\"#8ecae6\"")) << d;                               // Vulkan
  EXPECT_TRUE(contains(d, "\"n:softmax0\" [fillcolor=\"#d9d9d9\"")) << d;                              // CPU
  EXPECT_TRUE(contains(d, "\"in:x\" -> \"n:matmul0\" [label=\"x\"]")) << d;
  EXPECT_TRUE(contains(d, "\"n:add0\" -> \"n:relu0\" [label=\"h1\"]")) << d;  // inside the VGF region
  EXPECT_TRUE(contains(d, "\"n:relu0\" -> \"n:softmax0\" [label=\"h2\"]")) << d;
  EXPECT_TRUE(contains(d, "\"n:relu0\" -> \"n:add1\" [label=\"h2\"]")) << d;  // VGF -> Vulkan
  EXPECT_TRUE(contains(d, "\"n:add1\" -> \"out:y\" [label=\"y\"]")) << d;
  EXPECT_TRUE(contains(d, "cluster_d0")) << d;
  EXPECT_EQ(d.substr(d.size() - 2), "}\n");
}

// The op table is where gpuu.h sends readers for each op's attributes: it
// gives every attribute's kind and the default a node takes without it.
TEST_F(InspectTest, OpsTableGivesAttributeKindsAndDefaults) {
  RunResult md = run({"--ops"});
  ASSERT_EQ(md.exit_code, 0) << md.err;
  EXPECT_TRUE(contains(md.out, "| `layer_norm` | x, weight?, bias? | normalized_ndim: int, eps: float = 1e-05 |"))
      << md.out;
  EXPECT_TRUE(contains(md.out, "stride: ints (default: kernel), padding: ints = [0, 0], ceil_mode: int = 0")) << md.out;
  EXPECT_TRUE(contains(md.out, "| `clamp` | x | min?: float, max?: float |")) << md.out;
  EXPECT_TRUE(contains(md.out, "approximate: string = \"none\"")) << md.out;

  RunResult js = run({"--ops", "--json"});
  ASSERT_EQ(js.exit_code, 0) << js.err;
  Result<JsonValue> doc = parse_json(js.out);
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  const JsonValue* conv = nullptr;
  for (const JsonValue& op : doc.value().find("ops")->as_array()) {
    if (op.find("name")->as_string() == "conv2d") conv = &op;
  }
  ASSERT_NE(conv, nullptr);
  const JsonValue::Array& attrs = conv->find("attributes")->as_array();
  ASSERT_FALSE(attrs.empty());
  EXPECT_EQ(attrs[0].find("name")->as_string(), "stride");
  ASSERT_NE(attrs[0].find("default"), nullptr);
  const JsonValue::Array& stride = attrs[0].find("default")->as_array();
  ASSERT_EQ(stride.size(), 2u);
  EXPECT_EQ(stride[0].as_integer(), 1);
}

TEST_F(InspectTest, ErrorsGoToStderrWithExitCodeOne) {
  RunResult missing = run({dir_ + "/none.gpuu"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_TRUE(missing.out.empty());
  EXPECT_TRUE(contains(missing.err, "cannot open")) << missing.err;

  std::string bad = dir_ + "/bad.gpuu";
  std::string bytes = slurp(program_);
  std::ofstream(bad, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  RunResult truncated = run({"--json", bad});
  EXPECT_EQ(truncated.exit_code, 1);
  EXPECT_TRUE(contains(truncated.err, "gpuu-inspect: program:")) << truncated.err;

  EXPECT_EQ(run({}).exit_code, 1);
  EXPECT_EQ(run({"--frobnicate", program_}).exit_code, 1);
  EXPECT_EQ(run({program_, program_}).exit_code, 1);
}

}  // namespace
}  // namespace gpuu::program
