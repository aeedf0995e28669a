// C ABI: partitioning a graph, reading the regions back, the explain report.
// Checks every argument, maps the options onto PartitionOptions, and keeps the
// result, the policy and the report in the gpuu_partition handle.
#include <memory>
#include <string>

#include "runtime/builtin_backends.h"
#include "capi/capi_common.h"
#include "capi/handles.h"
#include "partition/explain.h"
#include "partition/partitioner.h"

namespace gpuu::capi {
namespace {

using partition::Backend;

static_assert(GPUU_BACKEND_VGF == static_cast<int>(Backend::kVgf), "backends drifted");
static_assert(GPUU_BACKEND_VULKAN == static_cast<int>(Backend::kVulkan), "backends drifted");
static_assert(GPUU_BACKEND_CPU == static_cast<int>(Backend::kCpu), "backends drifted");
static_assert(static_cast<int>(Prefer::kVulkanFirst) == GPUU_PREFER_VULKAN_FIRST, "prefer drifted");

constexpr const char* kFn = "gpuu_graph_partition";

bool backend_ok(gpuu_backend b) { return b == GPUU_BACKEND_VGF || b == GPUU_BACKEND_VULKAN || b == GPUU_BACKEND_CPU; }

// Maps and checks the C options; returns GPUU_OK or the failure already recorded.
gpuu_status to_options(const gpuu_partition_options& in, partition::PartitionOptions* out) {
  if (in.prefer != GPUU_PREFER_AUTO && in.prefer != GPUU_PREFER_VGF_FIRST && in.prefer != GPUU_PREFER_VULKAN_FIRST) {
    return fail_invalid(kFn, ": unknown prefer value ", static_cast<int64_t>(in.prefer));
  }
  out->prefer = static_cast<Prefer>(in.prefer);
  out->min_partition_size = in.min_partition_size;
  out->retry_pruned = in.retry_pruned != 0;
  if (in.deny_count && !in.deny) return fail_invalid(kFn, ": deny is NULL but deny_count is ", in.deny_count);
  if (in.pin_count && !in.pins) return fail_invalid(kFn, ": pins is NULL but pin_count is ", in.pin_count);
  if (in.op_cost_count && !in.op_costs) {
    return fail_invalid(kFn, ": op_costs is NULL but op_cost_count is ", in.op_cost_count);
  }
  for (size_t i = 0; i < in.deny_count; ++i) {
    const gpuu_partition_deny& d = in.deny[i];
    if (!backend_ok(d.backend)) {
      return fail_invalid(kFn, ": deny[", i, "] has unknown backend value ", static_cast<int64_t>(d.backend));
    }
    if (!d.op) return fail_invalid(kFn, ": deny[", i, "].op is NULL");
    Status s = out->capabilities.deny(static_cast<Backend>(d.backend), d.op);
    if (!s.ok()) return fail_invalid(kFn, ": deny[", i, "]: ", s.message());
  }
  for (size_t i = 0; i < in.pin_count; ++i) {
    const gpuu_partition_pin& p = in.pins[i];
    if (!backend_ok(p.backend)) {
      return fail_invalid(kFn, ": pins[", i, "] has unknown backend value ", static_cast<int64_t>(p.backend));
    }
    if (!p.node) return fail_invalid(kFn, ": pins[", i, "].node is NULL");
    Status s = out->capabilities.pin(p.node, static_cast<Backend>(p.backend));
    if (!s.ok()) return fail_invalid(kFn, ": pins[", i, "]: ", s.message());
  }
  for (int b = 0; b < partition::kBackendCount; ++b) out->cost.op_cost[static_cast<size_t>(b)] = in.op_cost[b];
  out->cost.gpu_crossing = in.gpu_crossing_cost;
  out->cost.cpu_crossing = in.cpu_crossing_cost;
  out->cost.gpu_region = in.gpu_region_cost;
  for (size_t i = 0; i < in.op_cost_count; ++i) {
    const gpuu_partition_op_cost& c = in.op_costs[i];
    if (!c.op || !*c.op) return fail_invalid(kFn, ": op_costs[", i, "].op is NULL or empty");
    out->cost.per_op[c.op] = {c.cost[0], c.cost[1], c.cost[2]};
  }
  return GPUU_OK;
}

const partition::Region* region_at(const gpuu_partition* p, size_t region) {
  if (!p || region >= p->result.regions.size()) return nullptr;
  return &p->result.regions[region];
}

}  // namespace
}  // namespace gpuu::capi

using namespace gpuu;
using namespace gpuu::capi;

extern "C" {

GPUU_API const char* gpuu_backend_name(gpuu_backend backend) {
  if (!backend_ok(backend)) return "unknown backend";
  return partition::backend_id(static_cast<partition::Backend>(backend));
}

GPUU_API void gpuu_partition_options_init(gpuu_partition_options* options) {
  if (!options) return;
  *options = gpuu_partition_options{};
  options->struct_size = sizeof(gpuu_partition_options);
  partition::PartitionOptions defaults;
  options->prefer = static_cast<gpuu_prefer>(defaults.prefer);
  options->min_partition_size = defaults.min_partition_size;
  options->retry_pruned = defaults.retry_pruned ? 1 : 0;
  for (int b = 0; b < partition::kBackendCount; ++b) {
    options->op_cost[b] = defaults.cost.op_cost[static_cast<size_t>(b)];
  }
  options->gpu_crossing_cost = defaults.cost.gpu_crossing;
  options->cpu_crossing_cost = defaults.cost.cpu_crossing;
  options->gpu_region_cost = defaults.cost.gpu_region;
}

GPUU_API gpuu_status gpuu_graph_partition(const gpuu_graph* graph, const gpuu_partition_options* options,
                                          gpuu_partition** out) {
  return guarded(__func__, [&]() -> gpuu_status {
    if (!out) return fail_invalid(kFn, ": `out` is NULL");
    *out = nullptr;
    if (!graph) return fail_invalid(kFn, ": `graph` is NULL");
    gpuu_partition_options defaults;
    if (!options) {
      gpuu_partition_options_init(&defaults);
      options = &defaults;
    }
    if (!struct_size_ok(options, sizeof(gpuu_partition_options))) {
      return fail_invalid(kFn, ": options->struct_size is not set (use gpuu_partition_options_init)");
    }
    partition::PartitionOptions opts;
    if (gpuu_status s = to_options(*options, &opts)) return s;
    // The backends' own tables decide what they take, so no delegate is
    // refused at init.
    runtime::narrow_to_builtin_backends(opts.capabilities);
    Result<partition::Partitioned> p = partition::partition_with_trace(graph->graph, opts);
    if (!p.ok()) return fail(p.status());
    auto handle = std::make_unique<gpuu_partition>();
    handle->explain_json = partition::explain_json(graph->graph, opts, *p);
    handle->result = std::move(p->result);
    // A program written from this partition carries the shared keys, with the
    // policy it was partitioned under; the context keys keep their defaults
    // until the program writer's options set them.
    handle->shared_spec.prefer = opts.prefer;
    handle->shared_spec.min_partition_size = opts.min_partition_size;
    handle->shared_spec.present = true;
    *out = handle.release();
    return GPUU_OK;
  });
}

GPUU_API void gpuu_partition_destroy(gpuu_partition* partition) { delete partition; }

GPUU_API size_t gpuu_partition_region_count(const gpuu_partition* partition) {
  return partition ? partition->result.regions.size() : 0;
}

GPUU_API gpuu_status gpuu_partition_region_backend(const gpuu_partition* partition, size_t region, gpuu_backend* out) {
  return guarded(__func__, [&]() -> gpuu_status {
    if (!partition || !out) return fail_invalid("gpuu_partition_region_backend: `partition` or `out` is NULL");
    const partition::Region* r = region_at(partition, region);
    if (!r) {
      return fail_invalid("gpuu_partition_region_backend: region ", region, " is out of range (",
                          partition->result.regions.size(), " regions)");
    }
    *out = static_cast<gpuu_backend>(r->backend);
    return GPUU_OK;
  });
}

GPUU_API gpuu_status gpuu_partition_region_node_count(const gpuu_partition* partition, size_t region, size_t* out) {
  return guarded(__func__, [&]() -> gpuu_status {
    if (!partition || !out) return fail_invalid("gpuu_partition_region_node_count: `partition` or `out` is NULL");
    const partition::Region* r = region_at(partition, region);
    if (!r) {
      return fail_invalid("gpuu_partition_region_node_count: region ", region, " is out of range (",
                          partition->result.regions.size(), " regions)");
    }
    *out = r->nodes.size();
    return GPUU_OK;
  });
}

GPUU_API gpuu_status gpuu_partition_region_node(const gpuu_partition* partition, size_t region, size_t index,
                                                int32_t* node) {
  return guarded(__func__, [&]() -> gpuu_status {
    if (!partition || !node) return fail_invalid("gpuu_partition_region_node: `partition` or `node` is NULL");
    const partition::Region* r = region_at(partition, region);
    if (!r) {
      return fail_invalid("gpuu_partition_region_node: region ", region, " is out of range (",
                          partition->result.regions.size(), " regions)");
    }
    if (index >= r->nodes.size()) {
      return fail_invalid("gpuu_partition_region_node: index ", index, " is out of range (region ", region, " has ",
                          r->nodes.size(), " nodes)");
    }
    *node = r->nodes[index];
    return GPUU_OK;
  });
}

GPUU_API gpuu_status gpuu_partition_node_backend(const gpuu_partition* partition, int32_t node, gpuu_backend* backend,
                                                 size_t* region) {
  return guarded(__func__, [&]() -> gpuu_status {
    if (!partition || !backend) return fail_invalid("gpuu_partition_node_backend: `partition` or `backend` is NULL");
    const auto& of = partition->result.region_of_node;
    if (node < 0 || static_cast<size_t>(node) >= of.size()) {
      return fail_invalid("gpuu_partition_node_backend: node ", node, " is out of range (", of.size(), " nodes)");
    }
    auto r = static_cast<size_t>(of[static_cast<size_t>(node)]);
    *backend = static_cast<gpuu_backend>(partition->result.regions[r].backend);
    if (region) *region = r;
    return GPUU_OK;
  });
}

GPUU_API const char* gpuu_partition_explain_json(const gpuu_partition* partition) {
  return partition ? partition->explain_json.c_str() : nullptr;
}

}  // extern "C"
