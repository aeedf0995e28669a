/* gpuu backend plugin ABI: what a dynamically loaded backend (.so) exports so
 * that gpuu can partition to it, lower regions for it and run its delegates.
 * C99, C types only; it does not include gpuu.h or vulkan.h. See
 * docs/plugins.md for the file-naming rule, discovery and lifetimes.
 *
 * Versioning (after Arm NN's dynamic backends): a plugin built against API
 * M.m loads into a runtime with API M'.m' when M == M' and m <= m'. Within a
 * major, fields are only appended to the structs that carry struct_size; a
 * reader reads only the fields that fit in the writer's struct_size. Fields
 * added after 1.0 say "Added in 1.x": gpuu reads a plugin's descriptor only
 * up to its struct_size, and a plugin reads gpuu_plugin_init_args only up to
 * args->struct_size. */
#ifndef GPUU_BACKEND_H_
#define GPUU_BACKEND_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GPUU_BACKEND_API_VERSION_MAJOR 1
#define GPUU_BACKEND_API_VERSION_MINOR 1

/* The one symbol a plugin exports (extern "C", default visibility). */
#define GPUU_BACKEND_PLUGIN_ENTRY "gpuu_backend_plugin_get"

#if defined(_WIN32)
#define GPUU_BACKEND_EXPORT __declspec(dllexport)
#else
#define GPUU_BACKEND_EXPORT __attribute__((visibility("default")))
#endif

/* Element types, numbered as gpuu's graph numbers them. */
typedef enum gpuu_plugin_dtype {
  GPUU_PLUGIN_DTYPE_F32 = 0,
  GPUU_PLUGIN_DTYPE_F16 = 1,
  GPUU_PLUGIN_DTYPE_I32 = 2,
  GPUU_PLUGIN_DTYPE_I64 = 3,
  GPUU_PLUGIN_DTYPE_I8 = 4,
  GPUU_PLUGIN_DTYPE_BOOL = 5,
  GPUU_PLUGIN_DTYPE_I16 = 6,
  GPUU_PLUGIN_DTYPE_FORCE32 = 0x7FFFFFFF
} gpuu_plugin_dtype;

typedef enum gpuu_plugin_attr_kind {
  GPUU_PLUGIN_ATTR_INT = 0,
  GPUU_PLUGIN_ATTR_FLOAT = 1,
  GPUU_PLUGIN_ATTR_STRING = 2,
  GPUU_PLUGIN_ATTR_INTS = 3,
  GPUU_PLUGIN_ATTR_FLOATS = 4,
  GPUU_PLUGIN_ATTR_FORCE32 = 0x7FFFFFFF
} gpuu_plugin_attr_kind;

/* A value of the graph: a named tensor with static shape. `constant_data` is
 * non-null for constants (little-endian, dense, `constant_size` bytes). */
typedef struct gpuu_plugin_value {
  const char* name;
  gpuu_plugin_dtype dtype;
  uint32_t rank;
  const int64_t* dims;
  const void* constant_data;
  size_t constant_size;
} gpuu_plugin_value;

typedef struct gpuu_plugin_attr {
  const char* name;
  gpuu_plugin_attr_kind kind;
  int64_t i;                 /* INT */
  double f;                  /* FLOAT */
  const char* s;             /* STRING */
  const int64_t* ints;       /* INTS, `count` entries */
  const double* floats;      /* FLOATS, `count` entries */
  size_t count;
} gpuu_plugin_attr;

/* A node: inputs and outputs index the graph's values (-1: an absent
 * optional input). Attributes are sorted by name. */
typedef struct gpuu_plugin_node {
  uint32_t struct_size;
  const char* name;
  const char* op; /* gpuu op registry name: "add", "matmul", "linear", ... */
  size_t input_count;
  const int32_t* inputs;
  size_t output_count;
  const int32_t* outputs;
  size_t attr_count;
  const gpuu_plugin_attr* attrs;
} gpuu_plugin_node;

/* A graph (for preprocess: the region as a standalone graph whose inputs are
 * the values it reads from outside and whose outputs are those it hands on). */
typedef struct gpuu_plugin_graph {
  uint32_t struct_size;
  size_t value_count;
  const gpuu_plugin_value* values;
  size_t node_count;
  const gpuu_plugin_node* nodes; /* in execution order */
  size_t input_count;
  const int32_t* inputs;
  size_t output_count;
  const int32_t* outputs;
} gpuu_plugin_graph;

typedef struct gpuu_plugin_compile_spec {
  const char* key;
  const uint8_t* value;
  size_t value_size;
} gpuu_plugin_compile_spec;

/* One load-time option the backend takes (API 1.1). The application sets it
 * per session as {backend id, key, value} (gpuu_session_options'
 * backend_options, gpuu-run --backend_option, Python's backend_options=);
 * gpuu refuses an undeclared key, or a value outside `values`, before any
 * delegate initialises, and `init` receives every declared key. An array
 * element: every element has element 0's struct_size, its stride. */
typedef struct gpuu_plugin_option_decl {
  uint32_t struct_size;
  const char* key;           /* non-empty, unique among the backend's keys */
  const char* const* values; /* the values it takes, values[0..value_count) */
  size_t value_count;        /* 0: free-form (init checks the value) */
  const char* default_value; /* what init gets when the application sets none; one of `values` */
  const char* description;   /* one line, for gpuu-inspect --backends; may be NULL */
} gpuu_plugin_option_decl;

/* A load-time option as init receives it (API 1.1). */
typedef struct gpuu_plugin_option {
  const char* key;
  const char* value;
} gpuu_plugin_option;

/* Bytes a plugin allocates and its own free_bytes releases. */
typedef struct gpuu_plugin_bytes {
  uint8_t* data;
  size_t size;
} gpuu_plugin_bytes;

/* One delegate input or output. `host` is set for host plugins (the runtime
 * has made the data current before execute and reads outputs after it);
 * `buffer`/`offset`/`size` name the VkBuffer range on the shared context. All
 * stay valid, at the same addresses, until destroy. */
typedef struct gpuu_plugin_tensor {
  void* host;
  uint64_t buffer; /* VkBuffer */
  uint64_t offset;
  uint64_t size;
} gpuu_plugin_tensor;

/* The shared context's Vulkan handles (dispatchable handles as pointers). A
 * device plugin records its own command buffers from its own pool and hands
 * each to `submit`, which orders it after the delegates before it (the
 * context's timeline semaphore or queue, as the program's sync mode says). */
/* vkGetInstanceProcAddr's shape without vulkan.h (cast it to
 * PFN_vkGetInstanceProcAddr: one function pointer type to another). */
typedef void (*gpuu_plugin_void_function)(void);
typedef gpuu_plugin_void_function (*gpuu_plugin_get_instance_proc_addr)(void* instance, const char* name);

typedef struct gpuu_plugin_vulkan {
  uint32_t struct_size;
  void* instance;        /* VkInstance */
  void* physical_device; /* VkPhysicalDevice */
  void* device;          /* VkDevice */
  void* queue;           /* VkQueue: submit only through `submit` */
  uint32_t queue_family_index;
  gpuu_plugin_get_instance_proc_addr get_instance_proc_addr;
  void* runtime;                /* pass back to submit */
  /* Only during execute. 0 on success, else writes why into `error`. */
  int (*submit)(void* runtime, void* command_buffer, char* error, size_t error_capacity);
} gpuu_plugin_vulkan;

typedef struct gpuu_plugin_init_args {
  uint32_t struct_size;
  const uint8_t* blob; /* what preprocess returned, read from the program */
  size_t blob_size;
  const gpuu_plugin_compile_spec* compile_specs;
  size_t compile_spec_count;
  const gpuu_plugin_vulkan* vulkan;
  const gpuu_plugin_tensor* inputs; /* the region's inputs, in its order */
  size_t input_count;
  const gpuu_plugin_tensor* outputs;
  size_t output_count;
  /* Added in 1.1: every option the backend declares, in key order, with the
   * application's value or the default; valid for the call only. */
  const gpuu_plugin_option* options;
  size_t option_count;
} gpuu_plugin_init_args;

/* The backend runs on the host: its I/O arrive as host pointers. */
#define GPUU_BACKEND_PLUGIN_RUNS_ON_HOST 0x1u

/* Returned by the entry point; static storage, valid while the .so is loaded
 * (gpuu never unloads it). Functions returning int give 0 on success, else
 * non-zero with a NUL-terminated reason written into `error` (truncated to
 * `error_capacity`). gpuu may call check/preprocess from several threads and
 * init/execute/destroy of different handles concurrently; one handle is never
 * used by two threads at once. */
typedef struct gpuu_backend_plugin {
  uint32_t struct_size;
  uint32_t api_version_major; /* GPUU_BACKEND_API_VERSION_MAJOR built against */
  uint32_t api_version_minor;
  const char* id;             /* unique backend id, e.g. "MtCpu" */
  uint32_t backend_version;   /* the backend's own version */
  uint32_t flags;             /* GPUU_BACKEND_PLUGIN_* */
  double default_node_cost;   /* cost of one node for the partitioner's auto policy */
  const char* const* ops;     /* ops it may take (for docs and inspect); check decides */
  size_t op_count;
  uint32_t dtype_mask;        /* bit (1 << gpuu_plugin_dtype) for each dtype it takes */

  int (*is_available)(void);
  /* NULL when the backend takes `node`, else why not (static or thread-local
   * storage, valid until the next call on this thread). */
  const char* (*check)(const gpuu_plugin_graph* graph, const gpuu_plugin_node* node);
  int (*preprocess)(const gpuu_plugin_graph* region, const gpuu_plugin_compile_spec* compile_specs,
                    size_t compile_spec_count, gpuu_plugin_bytes* out, char* error, size_t error_capacity);
  void (*free_bytes)(gpuu_plugin_bytes* bytes);
  int (*init)(const gpuu_plugin_init_args* args, void** handle, char* error, size_t error_capacity);
  int (*execute)(void* handle, char* error, size_t error_capacity);
  void (*destroy)(void* handle);
  /* Added in 1.1: the load-time options it takes, options[0..option_count)
   * (static storage); NULL/0: none. A 1.0 plugin's descriptor ends above. */
  const gpuu_plugin_option_decl* options;
  size_t option_count;
} gpuu_backend_plugin;

typedef const gpuu_backend_plugin* (*gpuu_backend_plugin_get_fn)(void);

/* Each plugin defines this (the name GPUU_BACKEND_PLUGIN_ENTRY). */
GPUU_BACKEND_EXPORT const gpuu_backend_plugin* gpuu_backend_plugin_get(void);

#ifdef __cplusplus
}
#endif

#endif /* GPUU_BACKEND_H_ */
