// Partition benchmark: builds a deterministic synthetic DAG (chains with skip
// connections, mostly ops both GPU backends take, some only Vulkan takes, some
// no GPU backend knows, a few custom shaders), times partition() and prints
// one JSON line. --write-graph saves the DAG, with each node's VGF support,
// so fx_partition_bench.py partitions the very same graph.
//
//   gpuu_partition_bench [--nodes N] [--runs R] [--warmup W] [--seed S]
//                        [--policy vgf_first|vulkan_first|auto] [--min-size M]
//                        [--write-graph PATH]
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "backends/vgf/vgf_capability.h"
#include "backends/vulkan/vulkan_capability.h"
#include "partition/capabilities.h"
#include "partition/explain.h"
#include "partition/partitioner.h"

namespace {

using gpuu::graph::DType;
using gpuu::graph::ValueId;

struct Args {
  int64_t nodes = 100000;
  int runs = 15;
  int warmup = 3;
  uint64_t seed = 1;
  std::string policy = "vgf_first";
  int64_t min_size = 3;
  std::string write_graph;
};

// SplitMix64: the same sequence on every platform.
struct Rng {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  uint64_t below(uint64_t n) { return next() % n; }
};

bool parse_args(int argc, char** argv, Args* a) {
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    auto need = [&](const char* what) -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs %s\n", k.c_str(), what);
        return nullptr;
      }
      return argv[++i];
    };
    const char* v = nullptr;
    if (k == "--nodes" && (v = need("a count"))) {
      a->nodes = std::atoll(v);
    } else if (k == "--runs" && (v = need("a count"))) {
      a->runs = std::atoi(v);
    } else if (k == "--warmup" && (v = need("a count"))) {
      a->warmup = std::atoi(v);
    } else if (k == "--seed" && (v = need("a number"))) {
      a->seed = std::strtoull(v, nullptr, 10);
    } else if (k == "--policy" && (v = need("a policy"))) {
      a->policy = v;
    } else if (k == "--min-size" && (v = need("a count"))) {
      a->min_size = std::atoll(v);
    } else if (k == "--write-graph" && (v = need("a path"))) {
      a->write_graph = v;
    } else {
      std::fprintf(stderr, "unknown or incomplete argument '%s'\n", k.c_str());
      return false;
    }
  }
  if (a->nodes < 1 || a->runs < 1 || a->warmup < 0 || a->min_size < 1) {
    std::fprintf(stderr, "--nodes, --runs, --min-size must be >= 1 and --warmup >= 0\n");
    return false;
  }
  return true;
}

// The synthetic DAG. Node i reads node i-1 (a chain); about one node in five
// also reads a node up to 32 back (skip connections, fan-out); every 500
// nodes a side branch restarts from an older value, giving parallel paths.
gpuu::graph::Graph build_graph(const Args& a) {
  gpuu::graph::Graph g;
  const gpuu::graph::Shape shape = {1, 64};
  Rng rng{a.seed};
  std::vector<ValueId> values = {g.add_input("x", DType::kF32, shape)};
  std::vector<uint8_t> zeros(64 * 8, 0);
  ValueId index = g.add_constant("index", DType::kI64, {64}, gpuu::Blob::copy_of(zeros.data(), zeros.size()));
  static const char* kBoth[] = {"add", "mul", "sin", "cos", "tanh", "relu", "sigmoid", "exp", "neg", "abs"};
  for (int64_t i = 0; i < a.nodes; ++i) {
    std::string name = "n" + std::to_string(i);
    ValueId prev = values.back();
    if (i % 500 == 499) prev = values[static_cast<size_t>(rng.below(values.size()))];
    uint64_t kind = rng.below(1000);
    gpuu::graph::Node node;
    node.name = name;
    if (kind < 80) {  // Vulkan only: i64 indices
      node.op = "index_select";
      node.inputs = {prev, index};
      node.attrs["axis"] = int64_t{1};
    } else if (kind < 110) {  // no GPU backend knows it
      node.op = "mystery_op";
      node.inputs = {prev};
    } else if (kind < 115) {  // a custom shader: a region of its own
      node.op = "custom_shader";
      node.inputs = {prev};
      node.attrs["domain_name"] = std::string(gpuu::partition::kVulkanCustomShaderDomain);
    } else if (kind < 315 && values.size() > 2) {  // a skip connection
      size_t back = 2 + static_cast<size_t>(rng.below(std::min<uint64_t>(values.size() - 1, 31)));
      node.op = "add";
      node.inputs = {prev, values[values.size() - back]};
    } else {
      node.op = kBoth[rng.below(10)];
      node.inputs = {prev};
    }
    ValueId out =
        g.add_value(gpuu::graph::Value{name + ":0", DType::kF32, shape, gpuu::graph::kNone, gpuu::graph::kNone});
    node.outputs = {out};
    g.add_node(std::move(node));
    values.push_back(out);
  }
  // Every value nobody reads is an output: a node whose result reached none
  // would be dead, left out of the partition, and the workload would shrink.
  const auto consumers = g.consumers();
  for (ValueId v : values) {
    if (g.value(v).producer >= 0 && consumers[static_cast<size_t>(v)].empty()) g.mark_output(v);
  }
  return g;
}

// One line per node: "<op> <vgf 0|1> <k> <producer node ids...>", -1 for the
// graph input x (constants are left out: fx sees them as attributes).
bool write_graph(const gpuu::graph::Graph& g, const std::string& path) {
  std::ofstream out(path);
  if (!out) return false;
  out << "gpuu-partition-bench-graph 1\n" << g.nodes().size() << "\n";
  for (size_t n = 0; n < g.nodes().size(); ++n) {
    const auto& node = g.nodes()[n];
    std::vector<int32_t> producers;
    for (ValueId v : node.inputs) {
      const auto& value = g.value(v);
      if (value.constant >= 0) continue;
      producers.push_back(value.producer);
    }
    bool vgf = gpuu::vgf::vgf_capability().check(g, static_cast<gpuu::graph::NodeId>(n)).ok();
    out << node.op << ' ' << (vgf ? 1 : 0) << ' ' << producers.size();
    for (int32_t p : producers) out << ' ' << p;
    out << '\n';
  }
  return static_cast<bool>(out);
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  if (!parse_args(argc, argv, &args)) return 2;
  gpuu::partition::PartitionOptions options;
  // The built-in backends' own declarations (no device needed to read them).
  options.capabilities = gpuu::partition::Capabilities({&gpuu::vgf::vgf_capability(), &gpuu::vulkan::vulkan_capability()});
  if (!gpuu::parse_prefer(args.policy, &options.prefer)) {
    std::fprintf(stderr, "unknown policy '%s' (vgf_first, vulkan_first, auto)\n", args.policy.c_str());
    return 2;
  }
  options.min_partition_size = args.min_size;

  gpuu::graph::Graph graph = build_graph(args);
  size_t edges = 0;
  for (const auto& n : graph.nodes()) edges += n.inputs.size();
  if (!args.write_graph.empty() && !write_graph(graph, args.write_graph)) {
    std::fprintf(stderr, "cannot write %s\n", args.write_graph.c_str());
    return 1;
  }

  std::vector<double> ms;
  size_t regions = 0;
  for (int i = 0; i < args.warmup + args.runs; ++i) {
    auto start = std::chrono::steady_clock::now();
    gpuu::Result<gpuu::partition::PartitionResult> r = gpuu::partition::partition(graph, options);
    auto end = std::chrono::steady_clock::now();
    if (!r.ok()) {
      std::fprintf(stderr, "partition failed: %s\n", r.status().message().c_str());
      return 1;
    }
    regions = r->regions.size();
    if (i >= args.warmup) ms.push_back(std::chrono::duration<double, std::milli>(end - start).count());
  }
  std::sort(ms.begin(), ms.end());
  // The explain report once, for scale: the C API builds it with every partition.
  gpuu::Result<gpuu::partition::Partitioned> traced = gpuu::partition::partition_with_trace(graph, options);
  if (!traced.ok()) return 1;
  auto explain_mid = std::chrono::steady_clock::now();
  size_t explain_bytes = gpuu::partition::explain_json(graph, options, *traced).size();
  double explain_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - explain_mid).count();
  double median = ms.size() % 2 ? ms[ms.size() / 2] : (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]) / 2;
  std::printf(
      "{\"tool\":\"gpuu\",\"policy\":\"%s\",\"nodes\":%lld,\"edges\":%zu,\"min_partition_size\":%lld,"
      "\"regions\":%zu,\"runs\":%d,\"warmup\":%d,\"median_ms\":%.3f,\"min_ms\":%.3f,\"max_ms\":%.3f,"
      "\"explain_ms\":%.3f,\"explain_bytes\":%zu}\n",
      args.policy.c_str(), static_cast<long long>(args.nodes), edges, static_cast<long long>(args.min_size), regions,
      args.runs, args.warmup, median, ms.front(), ms.back(), explain_ms, explain_bytes);
  return 0;
}
