// C ABI: partitioning a graph, reading the regions back, the explain report.
// Checks every argument, maps the options onto PartitionOptions, and keeps the
// result, the policy and the report in the gpuu_partition handle.
#include <memory>
#include <string>
#include <vector>

#include "runtime/builtin_backends.h"
#include "capi/capi_common.h"
#include "capi/first_release.h"
#include "capi/handles.h"
#include "partition/explain.h"
#include "partition/partitioner.h"

using namespace gpuu;
using namespace gpuu::capi;

namespace gpuu::capi {
namespace {

static_assert(static_cast<int>(Prefer::kVulkanFirst) == GPUU_PREFER_VULKAN_FIRST, "prefer drifted");

constexpr const char* kFn = "gpuu_graph_partition";

// The sizes of the first releases of the sized structs (the growth rule's floor).
constexpr size_t kFirstOptionsSize = FirstRelease<gpuu_partition_options>::size;
constexpr size_t kFirstDenySize = FirstRelease<gpuu_partition_deny>::size;
constexpr size_t kFirstPinSize = FirstRelease<gpuu_partition_pin>::size;
constexpr size_t kFirstOpCostSize = FirstRelease<gpuu_partition_op_cost>::size;

// Maps and checks the C options, collecting every problem into one error;
// returns GPUU_OK or the failure already recorded. Backend ids are checked
// against the registered backends by the partitioner.
gpuu_status to_options(const gpuu_partition_options& in, partition::PartitionOptions* out) {
  std::vector<std::string> problems;
  auto problem = [&](auto&&... parts) { problems.push_back(str_cat(parts...)); };
  if (in.prefer != GPUU_PREFER_AUTO && in.prefer != GPUU_PREFER_VGF_FIRST && in.prefer != GPUU_PREFER_VULKAN_FIRST) {
    problem("unknown prefer value ", static_cast<int64_t>(in.prefer));
  }
  out->prefer = static_cast<Prefer>(in.prefer);
  out->min_partition_size = in.min_partition_size;
  out->retry_pruned = in.retry_pruned != 0;

  std::vector<gpuu_partition_deny> deny;
  std::vector<gpuu_partition_pin> pins;
  std::vector<gpuu_partition_op_cost> costs;
  std::string why;
  if (!read_sized_array(in.deny, in.deny_count, kFirstDenySize, gpuu_partition_deny_init_sized, &deny, &why)) {
    problem("deny: ", why);
  }
  if (!read_sized_array(in.pins, in.pin_count, kFirstPinSize, gpuu_partition_pin_init_sized, &pins, &why)) {
    problem("pins: ", why);
  }
  if (!read_sized_array(in.op_costs, in.op_cost_count, kFirstOpCostSize, gpuu_partition_op_cost_init_sized, &costs, &why)) {
    problem("op_costs: ", why);
  }
  if (in.backend_count && !in.backends) problem("backends is NULL but backend_count is ", in.backend_count);
  // deny and pins: each entry names two strings, both required, for one
  // capability call; `first` and `second` are its fields in message order.
  auto apply_entries = [&](const char* table, const auto& entries, auto first, const char* first_name, auto second,
                           const char* second_name, auto apply) {
    for (size_t i = 0; i < entries.size(); ++i) {
      const char* a = entries[i].*first;
      const char* b = entries[i].*second;
      if (!a || !b) {
        problem(table, "[", i, "].", a ? second_name : first_name, " is NULL");
        continue;
      }
      Status s = apply(a, b);
      if (!s.ok()) problem(table, "[", i, "]: ", s.message());
    }
  };
  apply_entries("deny", deny, &gpuu_partition_deny::backend, "backend", &gpuu_partition_deny::op, "op",
                [&](const char* backend, const char* op) { return out->capabilities.deny(backend, op); });
  apply_entries("pins", pins, &gpuu_partition_pin::node, "node", &gpuu_partition_pin::backend, "backend",
                [&](const char* node, const char* backend) { return out->capabilities.pin(node, backend); });
  out->cost.gpu_crossing = in.gpu_crossing_cost;
  out->cost.cpu_crossing = in.cpu_crossing_cost;
  out->cost.gpu_region = in.gpu_region_cost;
  for (size_t i = 0; i < costs.size(); ++i) {
    const gpuu_partition_op_cost& c = costs[i];
    if (!c.op || !*c.op || !c.backend || !*c.backend) {
      problem("op_costs[", i, "].", !c.op || !*c.op ? "op" : "backend", " is NULL or empty");
      continue;
    }
    if (std::string(c.op) == "*") {
      out->cost.op_cost[c.backend] = c.cost;
    } else {
      out->cost.per_op[c.op][c.backend] = c.cost;
    }
  }
  if (in.backends) {
    for (size_t i = 0; i < in.backend_count; ++i) {
      if (!in.backends[i] || !*in.backends[i]) {
        problem("backends[", i, "] is NULL or empty");
      } else {
        out->backends.emplace_back(in.backends[i]);
      }
    }
  }
  if (problems.empty()) return GPUU_OK;
  std::string text = str_cat(kFn, ": ", problems[0]);
  for (size_t i = 1; i < problems.size(); ++i) text += "; " + problems[i];
  return fail(Status(StatusCode::kInvalidArgument, text));
}

// Region `region` of `p` into *r, or `function`'s out-of-range error.
gpuu_status find_region(const gpuu_partition* p, size_t region, const char* function, const partition::Region** r) {
  if (region >= p->result.regions.size()) {
    return fail_invalid(function, ": region ", region, " is out of range (", p->result.regions.size(), " regions)");
  }
  *r = &p->result.regions[region];
  return GPUU_OK;
}

}  // namespace
}  // namespace gpuu::capi

extern "C" {

GPUU_API void gpuu_partition_deny_init_sized(gpuu_partition_deny* deny, size_t struct_size) {
  init_sized(deny, struct_size, [](gpuu_partition_deny*) {});
}

GPUU_API void gpuu_partition_pin_init_sized(gpuu_partition_pin* pin, size_t struct_size) {
  init_sized(pin, struct_size, [](gpuu_partition_pin*) {});
}

GPUU_API void gpuu_partition_op_cost_init_sized(gpuu_partition_op_cost* op_cost, size_t struct_size) {
  init_sized(op_cost, struct_size, [](gpuu_partition_op_cost*) {});
}

GPUU_API void gpuu_partition_options_init_sized(gpuu_partition_options* options, size_t struct_size) {
  init_sized(options, struct_size, [](gpuu_partition_options* o) {
    partition::PartitionOptions defaults;
    o->prefer = static_cast<gpuu_prefer>(defaults.prefer);
    o->min_partition_size = defaults.min_partition_size;
    o->retry_pruned = defaults.retry_pruned ? 1 : 0;
    o->gpu_crossing_cost = defaults.cost.gpu_crossing;
    o->cpu_crossing_cost = defaults.cost.cpu_crossing;
    o->gpu_region_cost = defaults.cost.gpu_region;
  });
}

GPUU_API gpuu_status gpuu_graph_partition(const gpuu_graph* graph, const gpuu_partition_options* options,
                                          gpuu_partition** out) {
  return guarded(__func__, [&]() -> gpuu_status {
    if (!out) return fail_invalid(kFn, ": `out` is NULL");
    *out = nullptr;
    if (!graph) return fail_invalid(kFn, ": `graph` is NULL");
    gpuu_partition_options in;
    if (!read_sized(options, kFirstOptionsSize, gpuu_partition_options_init_sized, &in) && options) {
      return fail_invalid(kFn, ": options->struct_size is ", options->struct_size, ", below ", kFirstOptionsSize,
                          " (use gpuu_partition_options_init)");
    }
    // Every registered backend, each narrowed to its own check, so no
    // delegate is refused at init.
    partition::PartitionOptions opts;
    opts.capabilities = runtime::registered_capabilities();
    if (gpuu_status s = to_options(in, &opts)) return s;
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

GPUU_API gpuu_status gpuu_partition_region_backend(const gpuu_partition* partition, size_t region, const char** out) {
  return guarded(__func__, [&]() -> gpuu_status {
    if (!partition || !out) return fail_invalid("gpuu_partition_region_backend: `partition` or `out` is NULL");
    const partition::Region* r = nullptr;
    if (gpuu_status s = find_region(partition, region, "gpuu_partition_region_backend", &r)) return s;
    *out = r->backend.c_str();
    return GPUU_OK;
  });
}

GPUU_API gpuu_status gpuu_partition_region_node_count(const gpuu_partition* partition, size_t region, size_t* out) {
  return guarded(__func__, [&]() -> gpuu_status {
    if (!partition || !out) return fail_invalid("gpuu_partition_region_node_count: `partition` or `out` is NULL");
    const partition::Region* r = nullptr;
    if (gpuu_status s = find_region(partition, region, "gpuu_partition_region_node_count", &r)) return s;
    *out = r->nodes.size();
    return GPUU_OK;
  });
}

GPUU_API gpuu_status gpuu_partition_region_node(const gpuu_partition* partition, size_t region, size_t index,
                                                int32_t* node) {
  return guarded(__func__, [&]() -> gpuu_status {
    if (!partition || !node) return fail_invalid("gpuu_partition_region_node: `partition` or `node` is NULL");
    const partition::Region* r = nullptr;
    if (gpuu_status s = find_region(partition, region, "gpuu_partition_region_node", &r)) return s;
    if (index >= r->nodes.size()) {
      return fail_invalid("gpuu_partition_region_node: index ", index, " is out of range (region ", region, " has ",
                          r->nodes.size(), " nodes)");
    }
    *node = r->nodes[index];
    return GPUU_OK;
  });
}

GPUU_API gpuu_status gpuu_partition_node_backend(const gpuu_partition* partition, int32_t node, const char** backend,
                                                 size_t* region) {
  return guarded(__func__, [&]() -> gpuu_status {
    if (!partition || !backend) return fail_invalid("gpuu_partition_node_backend: `partition` or `backend` is NULL");
    const auto& of = partition->result.region_of_node;
    if (node < 0 || static_cast<size_t>(node) >= of.size()) {
      return fail_invalid("gpuu_partition_node_backend: node ", node, " is out of range (", of.size(), " nodes)");
    }
    if (of[static_cast<size_t>(node)] < 0) {
      return fail_invalid("gpuu_partition_node_backend: node ", node,
                          " is dead (its results reach no graph output): it is in no region and no backend runs it");
    }
    auto r = static_cast<size_t>(of[static_cast<size_t>(node)]);
    *backend = partition->result.regions[r].backend.c_str();
    if (region) *region = r;
    return GPUU_OK;
  });
}

GPUU_API const char* gpuu_partition_explain_json(const gpuu_partition* partition) {
  return partition ? partition->explain_json.c_str() : nullptr;
}

}  // extern "C"
