// C ABI: the graph builder. Checks the C arguments, converts them to the IR and
// hands them to graph::add_op & co., which refuse bad input without changing
// the graph; read-back getters borrow from the graph.
#include <cstring>
#include <string>
#include <vector>

#include "capi/capi_common.h"
#include "capi/handles.h"
#include "graph/builder.h"
#include "graph/op_registry.h"
#include "graph/verifier.h"

using namespace gpuu;
using namespace gpuu::capi;

namespace gpuu::capi {
namespace {

using graph::DType;

static_assert(static_cast<int>(DType::kF32) == GPUU_DTYPE_F32 && static_cast<int>(DType::kF16) == GPUU_DTYPE_F16 &&
                  static_cast<int>(DType::kI32) == GPUU_DTYPE_I32 && static_cast<int>(DType::kI64) == GPUU_DTYPE_I64 &&
                  static_cast<int>(DType::kI8) == GPUU_DTYPE_I8 && static_cast<int>(DType::kBool) == GPUU_DTYPE_BOOL &&
                  static_cast<int>(DType::kI16) == GPUU_DTYPE_I16,
              "dtypes drifted");
static_assert(graph::kMaxRank == GPUU_MAX_RANK, "max rank drifted");
static_assert(static_cast<int>(graph::AttrKind::kFloats) == GPUU_ATTR_FLOATS, "attribute kinds drifted");

gpuu_status check_dtype(const char* function, const char* name, gpuu_dtype dtype, DType* out) {
  if (static_cast<int64_t>(dtype) < GPUU_DTYPE_F32 || static_cast<int64_t>(dtype) >= graph::kDTypeCount) {
    return fail_invalid(function, ": '", name, "': unknown dtype value ", static_cast<int64_t>(dtype));
  }
  *out = static_cast<DType>(dtype);
  return GPUU_OK;
}

gpuu_status read_shape(const char* function, const char* name, const int64_t* shape, size_t rank, graph::Shape* out) {
  if (rank > GPUU_MAX_RANK) return fail_invalid(function, ": '", name, "': rank ", rank, " exceeds ", GPUU_MAX_RANK);
  if (rank && !shape) return fail_invalid(function, ": '", name, "': `shape` is NULL but rank is ", rank);
  out->assign(shape, shape + rank);
  return GPUU_OK;
}

// Copies the C attributes into an AttrMap, refusing malformed entries.
gpuu_status read_attrs(const char* node, const gpuu_attr* attrs, size_t n_attrs, graph::AttrMap* out) {
  std::vector<gpuu_attr> given;
  std::string why;
  if (!read_sized_array(attrs, n_attrs, &gpuu_attr_init_sized, &given, &why)) {
    return fail_invalid("gpuu_graph_add_node: node '", node, "': attrs: ", why);
  }
  for (size_t i = 0; i < given.size(); ++i) {
    const gpuu_attr& a = given[i];
    if (!a.name || !*a.name) return fail_invalid("node '", node, "': attrs[", i, "] has no name");
    std::string name = a.name;
    if (out->count(name)) return fail_invalid("node '", node, "': attribute '", name, "' is given twice");
    switch (a.kind) {
      case GPUU_ATTR_INT:
        (*out)[name] = a.i;
        break;
      case GPUU_ATTR_FLOAT:
        (*out)[name] = a.f;
        break;
      case GPUU_ATTR_STRING:
        if (!a.s) return fail_invalid("node '", node, "': attribute '", name, "' is a string but `s` is NULL");
        (*out)[name] = std::string(a.s);
        break;
      case GPUU_ATTR_INTS:
        if (a.count && !a.ints) return fail_invalid("node '", node, "': attribute '", name, "' has count ", a.count, " but `ints` is NULL");
        (*out)[name] = std::vector<int64_t>(a.ints, a.ints + a.count);
        break;
      case GPUU_ATTR_FLOATS:
        if (a.count && !a.floats) {
          return fail_invalid("node '", node, "': attribute '", name, "' has count ", a.count, " but `floats` is NULL");
        }
        (*out)[name] = std::vector<double>(a.floats, a.floats + a.count);
        break;
      default:
        return fail_invalid("node '", node, "': attribute '", name, "' has unknown kind ", static_cast<int64_t>(a.kind));
    }
  }
  return GPUU_OK;
}

// gpuu_graph_add_constant and gpuu_graph_add_state: a value `what` ("constant",
// "state") with its bytes, added by `add` once the C arguments are checked.
using AddWithData = Result<graph::ValueId> (*)(graph::Graph&, std::string, DType, graph::Shape, Blob,
                                               graph::GraphNames*);
gpuu_status add_with_data(const char* function, const char* what, AddWithData add, gpuu_graph* graph,
                          const char* name, gpuu_dtype dtype, const int64_t* shape, size_t rank, const void* data,
                          size_t size, int32_t* out_value) {
  if (out_value) *out_value = -1;
  if (!graph) return fail_invalid(function, ": `graph` is NULL");
  if (!name) return fail_invalid(function, ": `name` is NULL");
  if (size && !data) return fail_invalid(function, ": '", name, "': `data` is NULL but size is ", size);
  DType dt = DType::kF32;
  graph::Shape dims;
  if (gpuu_status s = check_dtype(function, name, dtype, &dt)) return s;
  if (gpuu_status s = read_shape(function, name, shape, rank, &dims)) return s;
  // Check the size before copying: a wrong size might also be a huge one.
  std::string why = graph::shape_problem(dims);
  if (why.empty() && size != static_cast<uint64_t>(graph::shape_numel(dims)) * graph::dtype_size(dt)) {
    return fail_invalid(what, " '", name, "': ", size, " bytes of data, but ", graph::dtype_name(dt), " ",
                        graph::shape_to_string(dims), " needs ", graph::shape_numel(dims) * graph::dtype_size(dt));
  }
  Blob bytes = why.empty() ? Blob::copy_of(data, size) : Blob();
  Result<graph::ValueId> id = add(graph->graph, name, dt, std::move(dims), std::move(bytes), &graph->names);
  if (!id.ok()) return fail(id.status());
  if (out_value) *out_value = id.value();
  return GPUU_OK;
}

bool valid_value(const gpuu_graph* g, int32_t value) {
  return g && value >= 0 && static_cast<size_t>(value) < g->graph.values().size();
}

bool valid_node(const gpuu_graph* g, int32_t node) {
  return g && node >= 0 && static_cast<size_t>(node) < g->graph.nodes().size();
}

// The shared "array out" convention: *count always receives the length; `ids`
// (may be NULL when capacity is 0) receives the ids when they fit.
gpuu_status copy_ids(const char* function, const std::vector<int32_t>& ids, int32_t* out, size_t capacity, size_t* count) {
  if (!count) return fail_invalid(function, ": `count` is NULL");
  *count = ids.size();
  if (!out && capacity) return fail_invalid(function, ": `ids` is NULL but capacity is ", capacity);
  if (capacity < ids.size()) {
    if (!out && capacity == 0) return GPUU_OK;  // a size query
    return fail_invalid(function, ": capacity ", capacity, " is less than the ", ids.size(), " ids to return");
  }
  if (!ids.empty()) std::memcpy(out, ids.data(), ids.size() * sizeof(int32_t));
  return GPUU_OK;
}

// What gpuu_graph_node_inputs and gpuu_graph_node_outputs share; `list` is
// the node's id list the entry point `function` reads.
gpuu_status node_ids(const char* function, const gpuu_graph* graph, int32_t node,
                     const std::vector<graph::ValueId> graph::Node::*list, int32_t* ids, size_t capacity,
                     size_t* count) {
  if (count) *count = 0;
  if (!valid_node(graph, node)) return fail_invalid(function, ": no node with id ", node);
  return copy_ids(function, graph->graph.node(node).*list, ids, capacity, count);
}

}  // namespace
}  // namespace gpuu::capi

extern "C" {

GPUU_API void gpuu_attr_init_sized(gpuu_attr* attr, size_t struct_size) {
  init_sized(attr, struct_size, [](gpuu_attr* attr) {
    attr->kind = GPUU_ATTR_INT;
  });
}

GPUU_API gpuu_status gpuu_graph_create(gpuu_graph** out) {
  return guarded(__func__, [&]() -> gpuu_status {
    if (!out) return fail_invalid("gpuu_graph_create: `out` is NULL");
    *out = new gpuu_graph;
    return GPUU_OK;
  });
}

GPUU_API void gpuu_graph_destroy(gpuu_graph* graph) { delete graph; }

GPUU_API gpuu_status gpuu_graph_add_input(gpuu_graph* graph, const char* name, gpuu_dtype dtype, const int64_t* shape,
                                          size_t rank, int32_t* out_value) {
  return guarded(__func__, [&]() -> gpuu_status {
    if (out_value) *out_value = -1;
    if (!graph) return fail_invalid("gpuu_graph_add_input: `graph` is NULL");
    if (!name) return fail_invalid("gpuu_graph_add_input: `name` is NULL");
    DType dt = DType::kF32;
    graph::Shape dims;
    if (gpuu_status s = check_dtype("gpuu_graph_add_input", name, dtype, &dt)) return s;
    if (gpuu_status s = read_shape("gpuu_graph_add_input", name, shape, rank, &dims)) return s;
    Result<graph::ValueId> id = graph::add_graph_input(graph->graph, name, dt, std::move(dims), &graph->names);
    if (!id.ok()) return fail(id.status());
    if (out_value) *out_value = id.value();
    return GPUU_OK;
  });
}

GPUU_API gpuu_status gpuu_graph_add_constant(gpuu_graph* graph, const char* name, gpuu_dtype dtype,
                                             const int64_t* shape, size_t rank, const void* data, size_t size,
                                             int32_t* out_value) {
  return guarded(__func__, [&]() -> gpuu_status {
    return add_with_data("gpuu_graph_add_constant", "constant", &graph::add_graph_constant, graph, name, dtype, shape,
                         rank, data, size, out_value);
  });
}

GPUU_API gpuu_status gpuu_graph_add_state(gpuu_graph* graph, const char* name, gpuu_dtype dtype, const int64_t* shape,
                                          size_t rank, const void* data, size_t size, int32_t* out_value) {
  return guarded(__func__, [&]() -> gpuu_status {
    return add_with_data("gpuu_graph_add_state", "state", &graph::add_graph_state, graph, name, dtype, shape, rank,
                         data, size, out_value);
  });
}

GPUU_API gpuu_status gpuu_graph_set_state_update(gpuu_graph* graph, int32_t state_value, int32_t update) {
  return guarded(__func__, [&]() -> gpuu_status {
    if (!graph) return fail_invalid("gpuu_graph_set_state_update: `graph` is NULL");
    return to_c(graph::set_state_update(graph->graph, state_value, update));
  });
}

GPUU_API gpuu_status gpuu_graph_add_dim(gpuu_graph* graph, const char* name, int64_t min, int64_t max,
                                        int64_t example) {
  return guarded(__func__, [&]() -> gpuu_status {
    constexpr const char* kFn = "gpuu_graph_add_dim";
    if (!graph) return fail_invalid(kFn, ": `graph` is NULL");
    if (!name || !*name) return fail_invalid(kFn, ": `name` is NULL or empty");
    std::vector<graph::SymbolicDim> dims = graph->graph.dims();
    for (const graph::SymbolicDim& d : dims) {
      if (d.name == name) return fail_invalid(kFn, ": dim '", name, "' is declared already");
    }
    if (dims.size() >= graph::kMaxSymbolicDims) {
      return fail_invalid(kFn, ": dim '", name, "': a graph has at most ", graph::kMaxSymbolicDims, " dims");
    }
    if (!graph->dim_recordings.empty()) {
      return fail_invalid(kFn, ": dim '", name, "' comes after recordings were added (declare every dim first)");
    }
    if (!graph::dim_bounds_ordered(graph::SymbolicDim{name, min, max, example})) {
      return fail_invalid(kFn, ": dim '", name, "': min ", min, ", example ", example, ", max ", max,
                          " are not ordered 0 <= min <= example <= max <= ", graph::kMaxDim);
    }
    dims.push_back(graph::SymbolicDim{name, min, max, example});
    graph->graph.set_dims(std::move(dims));
    return GPUU_OK;
  });
}

GPUU_API gpuu_status gpuu_graph_add_dim_recording(gpuu_graph* graph, const gpuu_graph* recording,
                                                  const int64_t* sizes, size_t count) {
  return guarded(__func__, [&]() -> gpuu_status {
    constexpr const char* kFn = "gpuu_graph_add_dim_recording";
    if (!graph || !recording) return fail_invalid(kFn, ": `graph` or `recording` is NULL");
    const std::vector<graph::SymbolicDim>& dims = graph->graph.dims();
    if (count != dims.size()) return fail_invalid(kFn, ": ", count, " sizes for ", dims.size(), " dims");
    if (count && !sizes) return fail_invalid(kFn, ": `sizes` is NULL but count is ", count);
    std::vector<int64_t> at(sizes, sizes + count);
    if (Status in = graph::check_dims_in_bounds(dims, at); !in.ok()) {
      return fail_invalid(kFn, ": ", in.message());
    }
    graph::Graph copy = recording->graph;
    // Only small constants are compared (symbolic.h): the weights need not stay.
    for (size_t c = 0; c < copy.constants().size(); ++c) {
      if (copy.constants()[c].data.size() > graph::kComparedConstantBytes) copy.mutable_constant(c).data = Blob();
    }
    graph->dim_recordings.emplace_back(std::move(at), std::move(copy));
    return GPUU_OK;
  });
}

GPUU_API gpuu_status gpuu_graph_fit_dims(gpuu_graph* graph) {
  return guarded(__func__, [&]() -> gpuu_status {
    if (!graph) return fail_invalid("gpuu_graph_fit_dims: `graph` is NULL");
    std::vector<graph::DimRecording> recordings;
    for (const auto& [sizes, g] : graph->dim_recordings) recordings.push_back(graph::DimRecording{sizes, &g});
    Status fitted = graph::fit_dims(graph->graph, recordings);
    graph->dim_recordings.clear();
    if (!fitted.ok()) return fail(fitted);
    return GPUU_OK;
  });
}

GPUU_API gpuu_status gpuu_graph_add_node(gpuu_graph* graph, const char* op, const char* name, const int32_t* inputs,
                                         size_t n_inputs, const gpuu_attr* attrs, size_t n_attrs, int32_t* outputs,
                                         size_t outputs_capacity, size_t* n_outputs) {
  return guarded(__func__, [&]() -> gpuu_status {
    if (n_outputs) *n_outputs = 0;
    if (!graph) return fail_invalid("gpuu_graph_add_node: `graph` is NULL");
    if (!op) return fail_invalid("gpuu_graph_add_node: `op` is NULL");
    if (!name) return fail_invalid("gpuu_graph_add_node: `name` is NULL (op '", op, "')");
    if (n_inputs && !inputs) return fail_invalid("gpuu_graph_add_node: node '", name, "': `inputs` is NULL but n_inputs is ", n_inputs);
    if (outputs_capacity && !outputs) {
      return fail_invalid("gpuu_graph_add_node: node '", name, "': `outputs` is NULL but outputs_capacity is ",
                          outputs_capacity);
    }
    graph::AttrMap attr_map;
    if (gpuu_status s = read_attrs(name, attrs, n_attrs, &attr_map)) return s;
    std::vector<graph::ValueId> ins(inputs, inputs + n_inputs);

    // Infer first, so a too-small output array is refused before the graph changes.
    graph::Node probe;
    probe.name = name;
    probe.op = op;
    probe.inputs = ins;
    probe.attrs = attr_map;
    std::vector<graph::Value> inferred;
    Status inferred_status = graph::infer(graph->graph, probe, &inferred);
    if (!inferred_status.ok()) return fail(inferred_status);
    if (inferred.size() > outputs_capacity) {
      if (n_outputs) *n_outputs = inferred.size();
      return fail_invalid("node '", name, "' (", op, "): it has ", inferred.size(), " outputs but outputs_capacity is ",
                          outputs_capacity);
    }

    Result<std::vector<graph::ValueId>> ids =
        graph::add_op(graph->graph, op, name, std::move(ins), std::move(attr_map), &graph->names);
    if (!ids.ok()) return fail(ids.status());
    for (size_t i = 0; i < ids->size(); ++i) outputs[i] = (*ids)[i];
    if (n_outputs) *n_outputs = ids->size();
    return GPUU_OK;
  });
}

GPUU_API gpuu_status gpuu_graph_mark_output(gpuu_graph* graph, int32_t value) {
  return guarded(__func__, [&]() -> gpuu_status {
    if (!graph) return fail_invalid("gpuu_graph_mark_output: `graph` is NULL");
    return to_c(graph::add_graph_output(graph->graph, value));
  });
}

GPUU_API gpuu_status gpuu_graph_verify(const gpuu_graph* graph) {
  return guarded(__func__, [&]() -> gpuu_status {
    if (!graph) return fail_invalid("gpuu_graph_verify: `graph` is NULL");
    return to_c(graph::verify(graph->graph));
  });
}

GPUU_API size_t gpuu_graph_value_count(const gpuu_graph* graph) { return graph ? graph->graph.values().size() : 0; }

GPUU_API const char* gpuu_graph_value_name(const gpuu_graph* graph, int32_t value) {
  return valid_value(graph, value) ? graph->graph.value(value).name.c_str() : nullptr;
}

GPUU_API gpuu_status gpuu_graph_value_dtype(const gpuu_graph* graph, int32_t value, gpuu_dtype* out) {
  return guarded(__func__, [&]() -> gpuu_status {
    if (!out) return fail_invalid("gpuu_graph_value_dtype: `out` is NULL");
    if (!valid_value(graph, value)) return fail_invalid("gpuu_graph_value_dtype: no value with id ", value);
    *out = static_cast<gpuu_dtype>(graph->graph.value(value).dtype);
    return GPUU_OK;
  });
}

GPUU_API gpuu_status gpuu_graph_value_shape(const gpuu_graph* graph, int32_t value, int64_t* dims, size_t capacity,
                                            size_t* rank) {
  return guarded(__func__, [&]() -> gpuu_status {
    if (!rank) return fail_invalid("gpuu_graph_value_shape: `rank` is NULL");
    *rank = 0;
    if (!valid_value(graph, value)) return fail_invalid("gpuu_graph_value_shape: no value with id ", value);
    const graph::Shape& shape = graph->graph.value(value).shape;
    *rank = shape.size();
    if (!dims && capacity) return fail_invalid("gpuu_graph_value_shape: `dims` is NULL but capacity is ", capacity);
    if (!dims) return GPUU_OK;  // a rank query
    if (capacity < shape.size()) {
      return fail_invalid("gpuu_graph_value_shape: capacity ", capacity, " is less than the rank ", shape.size(),
                          " of value '", graph->graph.value(value).name, "'");
    }
    for (size_t i = 0; i < shape.size(); ++i) dims[i] = shape[i];
    return GPUU_OK;
  });
}

GPUU_API gpuu_status gpuu_graph_value_producer(const gpuu_graph* graph, int32_t value, int32_t* node) {
  return guarded(__func__, [&]() -> gpuu_status {
    if (!node) return fail_invalid("gpuu_graph_value_producer: `node` is NULL");
    *node = -1;
    if (!valid_value(graph, value)) return fail_invalid("gpuu_graph_value_producer: no value with id ", value);
    *node = graph->graph.value(value).producer;
    return GPUU_OK;
  });
}

GPUU_API int32_t gpuu_graph_value_is_constant(const gpuu_graph* graph, int32_t value) {
  return valid_value(graph, value) && graph->graph.value(value).constant != graph::kNone ? 1 : 0;
}

GPUU_API gpuu_status gpuu_graph_find_value(const gpuu_graph* graph, const char* name, int32_t* out_value) {
  return guarded(__func__, [&]() -> gpuu_status {
    if (!out_value) return fail_invalid("gpuu_graph_find_value: `out_value` is NULL");
    *out_value = -1;
    if (!graph) return fail_invalid("gpuu_graph_find_value: `graph` is NULL");
    if (!name) return fail_invalid("gpuu_graph_find_value: `name` is NULL");
    graph::ValueId id = graph::kNone;
    if (graph->names.covers(graph->graph)) {
      id = graph->names.find_value(name);
    } else {
      // The graph was filled by another route; scan rather than mutate a const graph.
      const auto& values = graph->graph.values();
      for (size_t i = 0; i < values.size() && id == graph::kNone; ++i) {
        if (values[i].name == name) id = static_cast<graph::ValueId>(i);
      }
    }
    if (id == graph::kNone) return fail(err(StatusCode::kNotFound, "gpuu_graph_find_value: no value named '", name, "'"));
    *out_value = id;
    return GPUU_OK;
  });
}

GPUU_API size_t gpuu_graph_node_count(const gpuu_graph* graph) { return graph ? graph->graph.nodes().size() : 0; }

GPUU_API const char* gpuu_graph_node_name(const gpuu_graph* graph, int32_t node) {
  return valid_node(graph, node) ? graph->graph.node(node).name.c_str() : nullptr;
}

GPUU_API const char* gpuu_graph_node_op(const gpuu_graph* graph, int32_t node) {
  return valid_node(graph, node) ? graph->graph.node(node).op.c_str() : nullptr;
}

GPUU_API gpuu_status gpuu_graph_node_inputs(const gpuu_graph* graph, int32_t node, int32_t* ids, size_t capacity,
                                            size_t* count) {
  return guarded(__func__, [&]() -> gpuu_status {
    return node_ids("gpuu_graph_node_inputs", graph, node, &graph::Node::inputs, ids, capacity, count);
  });
}

GPUU_API gpuu_status gpuu_graph_node_outputs(const gpuu_graph* graph, int32_t node, int32_t* ids, size_t capacity,
                                             size_t* count) {
  return guarded(__func__, [&]() -> gpuu_status {
    return node_ids("gpuu_graph_node_outputs", graph, node, &graph::Node::outputs, ids, capacity, count);
  });
}

GPUU_API gpuu_status gpuu_graph_inputs(const gpuu_graph* graph, int32_t* ids, size_t capacity, size_t* count) {
  return guarded(__func__, [&]() -> gpuu_status {
    if (count) *count = 0;
    if (!graph) return fail_invalid("gpuu_graph_inputs: `graph` is NULL");
    return copy_ids("gpuu_graph_inputs", graph->graph.inputs(), ids, capacity, count);
  });
}

GPUU_API gpuu_status gpuu_graph_outputs(const gpuu_graph* graph, int32_t* ids, size_t capacity, size_t* count) {
  return guarded(__func__, [&]() -> gpuu_status {
    if (count) *count = 0;
    if (!graph) return fail_invalid("gpuu_graph_outputs: `graph` is NULL");
    return copy_ids("gpuu_graph_outputs", graph->graph.outputs(), ids, capacity, count);
  });
}

GPUU_API gpuu_status gpuu_graph_states(const gpuu_graph* graph, int32_t* ids, size_t capacity, size_t* count) {
  return guarded(__func__, [&]() -> gpuu_status {
    if (count) *count = 0;
    if (!graph) return fail_invalid("gpuu_graph_states: `graph` is NULL");
    std::vector<int32_t> values;
    for (const graph::State& state : graph->graph.states()) values.push_back(state.value);
    return copy_ids("gpuu_graph_states", values, ids, capacity, count);
  });
}

GPUU_API gpuu_status gpuu_graph_state_update(const gpuu_graph* graph, int32_t state_value, int32_t* update) {
  return guarded(__func__, [&]() -> gpuu_status {
    if (!update) return fail_invalid("gpuu_graph_state_update: `update` is NULL");
    *update = -1;
    if (!valid_value(graph, state_value)) {
      return fail_invalid("gpuu_graph_state_update: no value with id ", state_value);
    }
    int32_t state = graph->graph.value(state_value).state;
    if (state == graph::kNone) {
      return fail_invalid("gpuu_graph_state_update: value '", graph->graph.value(state_value).name, "' reads no state");
    }
    *update = graph->graph.states()[static_cast<size_t>(state)].update;
    return GPUU_OK;
  });
}

GPUU_API size_t gpuu_op_count(void) { return graph::all_ops().size(); }

GPUU_API const char* gpuu_op_name(size_t index) {
  const auto& ops = graph::all_ops();
  return index < ops.size() ? ops[index].name.c_str() : nullptr;
}

}  // extern "C"
