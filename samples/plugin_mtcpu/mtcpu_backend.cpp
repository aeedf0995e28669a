// MtCpu: a sample gpuu backend plugin that runs f32 add/sub/mul/relu/matmul/
// linear on the host with several threads. It shows the whole plugin life:
// check a node, serialise a region into its own blob, parse it at init, run;
// and a load-time option (threads). Builds against include/gpuu_backend.h only.
#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gpuu_backend.h"

namespace {

enum Op : uint32_t { kAdd, kSub, kMul, kRelu, kMatmul, kLinear };
const char* const kOpNames[] = {"add", "sub", "mul", "relu", "matmul", "linear"};
constexpr uint32_t kBlobMagic = 0x5550434D;  // "MCPU"

bool op_code(const char* name, uint32_t* out) {
  for (uint32_t k = 0; k < 6; ++k) {
    if (std::strcmp(name, kOpNames[k]) == 0) return *out = k, true;
  }
  return false;
}

bool same_shape(const gpuu_plugin_value& a, const gpuu_plugin_value& b) {
  return a.rank == b.rank && std::equal(a.dims, a.dims + a.rank, b.dims);
}

const char* check(const gpuu_plugin_graph* g, const gpuu_plugin_node* n) {
  uint32_t op = 0;
  if (!op_code(n->op, &op)) return "op not supported by MtCpu";
  for (size_t k = 0; k < n->input_count; ++k) {
    if (n->inputs[k] >= 0 && g->values[n->inputs[k]].dtype != GPUU_PLUGIN_DTYPE_F32) return "MtCpu takes f32 only";
  }
  const gpuu_plugin_value& out = g->values[n->outputs[0]];
  if (op <= kMul) {
    if (!same_shape(g->values[n->inputs[0]], out) || !same_shape(g->values[n->inputs[1]], out)) {
      return "MtCpu elementwise ops need equal shapes (no broadcast)";
    }
  }
  if (op == kMatmul && (g->values[n->inputs[0]].rank != 2 || g->values[n->inputs[1]].rank != 2)) {
    return "MtCpu matmul is 2-D only";
  }
  if (op == kLinear && (g->values[n->inputs[0]].rank != 2)) return "MtCpu linear takes a 2-D input only";
  return nullptr;
}

// Blob: magic, value count, per value {numel, rank, dims, has_data, data},
// node count, per node {op, input count, inputs, output}, input/output lists.
struct Writer {
  std::vector<uint8_t> bytes;
  template <typename T>
  void put(T v) {
    const auto* p = reinterpret_cast<const uint8_t*>(&v);
    bytes.insert(bytes.end(), p, p + sizeof v);
  }
};

int preprocess(const gpuu_plugin_graph* g, const gpuu_plugin_compile_spec*, size_t, gpuu_plugin_bytes* out,
               char* error, size_t capacity) {
  Writer w;
  w.put(kBlobMagic);
  w.put(static_cast<uint32_t>(g->value_count));
  for (size_t v = 0; v < g->value_count; ++v) {
    const gpuu_plugin_value& val = g->values[v];
    w.put(static_cast<uint32_t>(val.rank));
    for (uint32_t d = 0; d < val.rank; ++d) w.put(val.dims[d]);
    w.put(static_cast<uint32_t>(val.constant_data != nullptr));
    if (val.constant_data) {
      const auto* p = static_cast<const uint8_t*>(val.constant_data);
      w.bytes.insert(w.bytes.end(), p, p + val.constant_size);
    }
  }
  w.put(static_cast<uint32_t>(g->node_count));
  for (size_t k = 0; k < g->node_count; ++k) {
    const gpuu_plugin_node& n = g->nodes[k];
    uint32_t op = 0;
    if (!op_code(n.op, &op) || check(g, &n)) {
      std::snprintf(error, capacity, "node '%s' (op %s) is not MtCpu's", n.name, n.op);
      return 1;
    }
    w.put(op);
    w.put(static_cast<uint32_t>(n.input_count));
    for (size_t i = 0; i < n.input_count; ++i) w.put(n.inputs[i]);
    w.put(n.outputs[0]);
  }
  for (auto [count, ids] : {std::pair{g->input_count, g->inputs}, std::pair{g->output_count, g->outputs}}) {
    w.put(static_cast<uint32_t>(count));
    for (size_t k = 0; k < count; ++k) w.put(ids[k]);
  }
  out->size = w.bytes.size();
  out->data = static_cast<uint8_t*>(std::malloc(out->size));
  if (!out->data) return std::snprintf(error, capacity, "out of memory"), 1;
  std::memcpy(out->data, w.bytes.data(), out->size);
  return 0;
}

void free_bytes(gpuu_plugin_bytes* b) {
  std::free(b->data);
  b->data = nullptr;
  b->size = 0;
}

struct Tensor {
  std::vector<int64_t> dims;
  std::vector<float> storage;  // constants and intermediates
  float* data = nullptr;       // storage, or the runtime's I/O memory
};

struct Node {
  uint32_t op;
  std::vector<int32_t> inputs;
  int32_t output;
};

struct Delegate {
  std::vector<Tensor> values;
  std::vector<Node> nodes;
  unsigned threads = 1;
};

struct Reader {
  const uint8_t* p;
  size_t left;
  bool ok = true;
  template <typename T>
  T get() {
    T v{};
    if (left < sizeof v) return ok = false, v;
    std::memcpy(&v, p, sizeof v);
    p += sizeof v, left -= sizeof v;
    return v;
  }
};

// Runs body(begin, end) over [0, n) split across the delegate's threads.
template <typename F>
void parallel_for(unsigned threads, int64_t n, F body) {
  int64_t per = (n + threads - 1) / threads;
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads && per * t < n; ++t) {
    pool.emplace_back(body, per * t, std::min(n, per * (t + 1)));
  }
  body(0, std::min(n, per));
  for (std::thread& t : pool) t.join();
}

// A thread count, 1..64, from `text`; false for anything else.
bool parse_threads(const std::string& text, unsigned* out) {
  char* end = nullptr;
  long t = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end || t < 1 || t > 64) return false;
  *out = static_cast<unsigned>(t);
  return true;
}

int init(const gpuu_plugin_init_args* args, void** handle, char* error, size_t capacity) {
  auto fail = [&](const char* why) { return std::snprintf(error, capacity, "MtCpu blob: %s", why), 1; };
  auto d = std::make_unique<Delegate>();
  Reader r{args->blob, args->blob_size};
  if (r.get<uint32_t>() != kBlobMagic || !r.ok) return fail("bad magic");
  uint32_t value_count = r.get<uint32_t>();
  if (!r.ok || value_count > args->blob_size) return fail("bad value count");
  d->values.resize(value_count);
  for (Tensor& t : d->values) {
    uint32_t rank = r.get<uint32_t>();
    if (!r.ok || rank > 8) return fail("bad rank");
    int64_t n = 1;
    for (uint32_t k = 0; k < rank; ++k) t.dims.push_back(r.get<int64_t>()), n *= t.dims.back();
    if (!r.ok || n < 0) return fail("bad shape");
    uint32_t has_data = r.get<uint32_t>();
    if (has_data && r.left < static_cast<size_t>(n) * 4) return fail("truncated constant");
    t.storage.resize(static_cast<size_t>(n));
    if (has_data) std::memcpy(t.storage.data(), r.p, static_cast<size_t>(n) * 4), r.p += n * 4, r.left -= n * 4;
    t.data = t.storage.data();
  }
  uint32_t node_count = r.get<uint32_t>();
  for (uint32_t k = 0; r.ok && k < node_count && k <= args->blob_size; ++k) {
    Node n{r.get<uint32_t>(), {}, 0};
    uint32_t inputs = r.get<uint32_t>();
    for (uint32_t i = 0; r.ok && i < inputs && i < 4; ++i) n.inputs.push_back(r.get<int32_t>());
    n.output = r.get<int32_t>();
    if (n.op > kLinear || n.output < 0 || n.output >= static_cast<int32_t>(value_count)) return fail("bad node");
    for (int32_t i : n.inputs) {
      if (i >= static_cast<int32_t>(value_count)) return fail("bad node input");
    }
    d->nodes.push_back(n);
  }
  // The region's inputs and outputs live in the runtime's memory.
  for (auto [tensors, count] : {std::pair{args->inputs, args->input_count}, std::pair{args->outputs, args->output_count}}) {
    if (r.get<uint32_t>() != count || !r.ok) return fail("I/O count differs from the runtime's");
    for (size_t k = 0; k < count; ++k) {
      int32_t id = r.get<int32_t>();
      if (!r.ok || id < 0 || id >= static_cast<int32_t>(value_count) || !tensors[k].host) return fail("bad I/O");
      d->values[static_cast<size_t>(id)].data = static_cast<float*>(tensors[k].host);
    }
  }
  d->threads = std::max(1u, std::min(4u, std::thread::hardware_concurrency()));
  for (size_t k = 0; k < args->compile_spec_count; ++k) {
    const gpuu_plugin_compile_spec& s = args->compile_specs[k];
    if (std::strcmp(s.key, "mtcpu_threads") == 0) {
      std::string v(reinterpret_cast<const char*>(s.value), s.value_size);
      if (!parse_threads(v, &d->threads)) {
        return std::snprintf(error, capacity, "mtcpu_threads '%s' is not 1..64", v.c_str()), 1;
      }
    }
  }
  // The load-time option (API 1.1: within args->struct_size) wins over the
  // compile spec the program was exported with; "auto" leaves that choice.
  if (args->struct_size >= offsetof(gpuu_plugin_init_args, option_count) + sizeof(args->option_count)) {
    for (size_t k = 0; k < args->option_count; ++k) {
      const gpuu_plugin_option& o = args->options[k];
      if (std::strcmp(o.key, "threads") == 0 && std::strcmp(o.value, "auto") != 0 && !parse_threads(o.value, &d->threads)) {
        return std::snprintf(error, capacity, "option threads '%s' is not auto or 1..64", o.value), 1;
      }
    }
  }
  *handle = d.release();
  return 0;
}

void run_node(const Delegate& d, const Node& n) {
  const Tensor& a = d.values[static_cast<size_t>(n.inputs[0])];
  const Tensor& out = d.values[static_cast<size_t>(n.output)];
  float* y = out.data;
  const float* x = a.data;
  if (n.op <= kRelu) {
    const float* b = n.op == kRelu ? nullptr : d.values[static_cast<size_t>(n.inputs[1])].data;
    int64_t count = 1;
    for (int64_t dim : out.dims) count *= dim;
    uint32_t op = n.op;
    parallel_for(d.threads, count, [=](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) {
        y[i] = op == kAdd ? x[i] + b[i] : op == kSub ? x[i] - b[i] : op == kMul ? x[i] * b[i] : std::max(x[i], 0.0f);
      }
    });
    return;
  }
  // matmul: [M,K] x [K,N]; linear: [M,K] x [N,K]^T (+ bias[N]).
  const Tensor& w = d.values[static_cast<size_t>(n.inputs[1])];
  const float* bias = n.op == kLinear && n.inputs.size() > 2 && n.inputs[2] >= 0
                          ? d.values[static_cast<size_t>(n.inputs[2])].data : nullptr;
  int64_t M = a.dims[0], K = a.dims[1], N = out.dims[1];
  bool transposed = n.op == kLinear;
  const float* wd = w.data;
  parallel_for(d.threads, M, [=](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      for (int64_t j = 0; j < N; ++j) {
        float acc = bias ? bias[j] : 0.0f;
        for (int64_t k = 0; k < K; ++k) acc += x[i * K + k] * (transposed ? wd[j * K + k] : wd[k * N + j]);
        y[i * N + j] = acc;
      }
    }
  });
}

int execute(void* handle, char*, size_t) {
  const auto* d = static_cast<const Delegate*>(handle);
  for (const Node& n : d->nodes) run_node(*d, n);
  return 0;
}

void destroy(void* handle) { delete static_cast<Delegate*>(handle); }

int is_available() { return 1; }

const gpuu_plugin_option_decl kOptions[] = {
    {sizeof(gpuu_plugin_option_decl), "threads", nullptr, 0, "auto",
     "worker threads per delegate, 1..64 (auto: the compile spec mtcpu_threads, else min(4, cores))"},
};

const gpuu_backend_plugin kPlugin = {
    sizeof(gpuu_backend_plugin),
    GPUU_BACKEND_API_VERSION_MAJOR,
    GPUU_BACKEND_API_VERSION_MINOR,
    "MtCpu",
    1,
    GPUU_BACKEND_PLUGIN_RUNS_ON_HOST,
    4.0,
    kOpNames,
    6,
    1u << GPUU_PLUGIN_DTYPE_F32,
    is_available,
    check,
    preprocess,
    free_bytes,
    init,
    execute,
    destroy,
    kOptions,
    1,
};

}  // namespace

extern "C" GPUU_BACKEND_EXPORT const gpuu_backend_plugin* gpuu_backend_plugin_get(void) { return &kPlugin; }
