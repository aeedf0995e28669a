/*
 * gpuu.h: the one public header of gpuu, a C SDK that runs one exported ML
 * program across GPU backends sharing one Vulkan device (the built-in VGF and
 * Vulkan backends, and backends loaded from plugins), with a CPU fallback.
 *
 * ABI policy: 0.2 is the ABI baseline (0.1 callers must be rebuilt); from
 * 0.2 on only additions are made within a major version. Every struct the
 * caller fills or receives begins with `uint32_t struct_size`; set it with the
 * matching *_init() function, which fills the defaults. gpuu accepts any
 * struct_size from the struct's 0.2 size up: fields past the caller's size
 * take their defaults (inputs) or are not written (outputs), and bytes past
 * what this library knows are ignored. No growable struct is embedded by
 * value in another: they are passed by pointer. In an array of structs every
 * element has element 0's struct_size, which is also the array's stride.
 * Fields added after 0.2 say "Added in 0.x". gpuu_X_init(p) is a macro that
 * passes sizeof(*p) to the exported gpuu_X_init_sized, which writes exactly
 * that many bytes: a caller built against an older header never has more
 * written than its struct holds. Enums are fixed at 32 bits.
 * bindings/c/gpuu_abi.json describes this header for FFI bindings.
 *
 * Ownership rule (used by every function below):
 *   - what a *_create / *_resolve / *_register / *_lookup function returns
 *     through an out-pointer is the caller's and must be released with the
 *     matching *_release / *_destroy function;
 *   - strings and arrays returned by getters are borrowed: they stay valid
 *     while the object they came from is alive and unchanged;
 *   - pointers passed in are borrowed for the duration of the call only,
 *     unless the function says otherwise.
 *
 * Errors: every fallible function returns a gpuu_status. On failure the
 * calling thread's gpuu_last_error() says what was wrong and where. A failed
 * call leaves its arguments and every other object usable. gpuu never aborts
 * the process.
 *
 * Threads: functions marked "thread-safe" may be called concurrently from any
 * thread. Others may be called from any thread, but not concurrently on the
 * same object.
 *
 * Vulkan: this header does not include vulkan.h. Handles are declared with the
 * same underlying types as vulkan.h's (struct VkInstance_T* and so on), so
 * values of type VkInstance, VkDevice, ... pass in and out without casts, and
 * the two headers can be included in either order.
 */
#ifndef GPUU_H_
#define GPUU_H_

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define GPUU_API __declspec(dllexport)
#elif defined(__GNUC__) || defined(__clang__)
#define GPUU_API __attribute__((visibility("default")))
#else
#define GPUU_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Versions                                                                 */
/* ------------------------------------------------------------------------ */

/* The version's one home: CMake (the project version, the package config
 * version, pkg-config's gpuu.pc and the shared library's file name) and the
 * Python package's metadata read these three lines. The shared library's
 * SONAME follows the ABI's major version: libgpuu.so.<major> from 1.0 on.
 * Before 1.0, where a minor release may break the ABI, it names the ABI
 * baseline instead: libgpuu.so.0.2 (see the ABI policy above). */
#define GPUU_VERSION_MAJOR 0
#define GPUU_VERSION_MINOR 9
#define GPUU_VERSION_PATCH 0
/* (major << 22) | (minor << 12) | patch, as Vulkan packs its versions. */
#define GPUU_MAKE_VERSION(major, minor, patch) \
  ((((uint32_t)(major)) << 22) | (((uint32_t)(minor)) << 12) | ((uint32_t)(patch)))
#define GPUU_VERSION GPUU_MAKE_VERSION(GPUU_VERSION_MAJOR, GPUU_VERSION_MINOR, GPUU_VERSION_PATCH)

/* The version of the library loaded at run time, packed as GPUU_VERSION.
 * Compare its major with GPUU_VERSION_MAJOR to detect a mismatched library.
 * Thread-safe; never fails. */
GPUU_API uint32_t gpuu_version(void);

/* The same version as static text, "MAJOR.MINOR.PATCH" in decimal.
 * Borrowed, valid forever. Thread-safe; never fails. */
GPUU_API const char* gpuu_version_string(void);

/* ------------------------------------------------------------------------ */
/* Status codes and errors                                                  */
/* ------------------------------------------------------------------------ */

typedef enum gpuu_status {
  GPUU_OK = 0,
  GPUU_ERROR_INVALID_ARGUMENT = 1,  /* a bad value, key, shape or handle from the caller */
  GPUU_ERROR_NOT_FOUND = 2,         /* e.g. lookup_only found no context under the key */
  GPUU_ERROR_ALREADY_EXISTS = 3,    /* e.g. create_only found one under the key */
  GPUU_ERROR_UNSUPPORTED = 4,       /* the device or build lacks a required feature */
  GPUU_ERROR_INVALID_FORMAT = 5,    /* a corrupt or inconsistent file or blob */
  GPUU_ERROR_IO = 6,                /* a file could not be read or written */
  GPUU_ERROR_OUT_OF_MEMORY = 7,     /* host or device memory ran out */
  GPUU_ERROR_VULKAN = 8,            /* a Vulkan call failed; the message names it */
  GPUU_ERROR_DEVICE_LOST = 9,       /* VK_ERROR_DEVICE_LOST */
  GPUU_ERROR_FAILED_PRECONDITION = 10, /* the call is not valid in the object's state */
  GPUU_ERROR_INTERNAL = 11,         /* a bug in gpuu: please report the message */
  GPUU_STATUS_FORCE32 = 0x7FFFFFFF
} gpuu_status;

/* A short static name for `status` ("ok", "not found", ...). Unknown values
 * give "unknown status". Thread-safe; never fails. */
GPUU_API const char* gpuu_status_string(gpuu_status status);

/* The message of the last failed gpuu call on the calling thread, or "" if
 * none failed yet. Borrowed: valid until the next gpuu call on this thread.
 * Successful calls do not clear it. Thread-safe (per-thread storage). */
GPUU_API const char* gpuu_last_error(void);

/* ------------------------------------------------------------------------ */
/* Logging                                                                  */
/* ------------------------------------------------------------------------ */

typedef enum gpuu_log_level {
  GPUU_LOG_ERROR = 0,
  GPUU_LOG_WARN = 1,
  GPUU_LOG_INFO = 2,
  GPUU_LOG_DEBUG = 3,
  GPUU_LOG_TRACE = 4,
  GPUU_LOG_LEVEL_FORCE32 = 0x7FFFFFFF
} gpuu_log_level;

/* Names of enum values, as gpuu spells them in compile specs, options,
 * environment variables and messages; for log levels "error", "warn",
 * "info", "debug", "trace". gpuu_X_name(value) returns the static name of
 * `value`, or NULL for a value the enum does not have. Enums with names
 * number their values from 0 without gaps (their FORCE32 value aside), so a
 * binding lists them by asking for 0, 1, 2, ... until NULL.
 * gpuu_X_from_name(name, &value) writes the value named `name` (exactly, case
 * and all); GPUU_ERROR_INVALID_ARGUMENT for a NULL argument or an unknown
 * name, with a message that lists the known ones (*out is then unchanged).
 * Thread-safe. Added in 0.6. */
GPUU_API const char* gpuu_log_level_name(gpuu_log_level level);
GPUU_API gpuu_status gpuu_log_level_from_name(const char* name, gpuu_log_level* out);

/* `component` names the source: "context", "VGF", "Vulkan", "runtime",
 * "vulkan.validation" (a message of the Khronos validation layer), ...
 * Both strings are borrowed for the duration of the call. The callback may be
 * called from any thread gpuu runs on, concurrently; it must not call back
 * into gpuu_set_log_callback. */
typedef void (*gpuu_log_callback)(void* user_data, gpuu_log_level level, const char* component,
                                  const char* message);

/* Sends every message at `max_level` or more severe to `callback`. A NULL
 * callback restores the default logger, which writes to stderr with the
 * threshold read from the GPUU_LOG environment variable (error, warn, info,
 * debug or trace; default warn). Thread-safe. */
GPUU_API void gpuu_set_log_callback(gpuu_log_callback callback, void* user_data, gpuu_log_level max_level);

/* ------------------------------------------------------------------------ */
/* Vulkan handle types (see the note at the top)                            */
/* ------------------------------------------------------------------------ */

#if defined(__LP64__) || defined(_WIN64) || defined(__x86_64__) || defined(__aarch64__) || \
    defined(__powerpc64__) || (defined(__riscv) && __riscv_xlen == 64)
#define GPUU_VK_NON_DISPATCHABLE(name) struct name##_T*
#else
#define GPUU_VK_NON_DISPATCHABLE(name) uint64_t
#endif
typedef struct VkInstance_T* gpuu_vk_instance;             /* VkInstance */
typedef struct VkPhysicalDevice_T* gpuu_vk_physical_device; /* VkPhysicalDevice */
typedef struct VkDevice_T* gpuu_vk_device;                  /* VkDevice */
typedef struct VkQueue_T* gpuu_vk_queue;                    /* VkQueue */
typedef GPUU_VK_NON_DISPATCHABLE(VkSemaphore) gpuu_vk_semaphore; /* VkSemaphore */
typedef GPUU_VK_NON_DISPATCHABLE(VkBuffer) gpuu_vk_buffer;       /* VkBuffer */
typedef void (*gpuu_vk_void_function)(void);
/* PFN_vkGetInstanceProcAddr */
typedef gpuu_vk_void_function (*gpuu_vk_get_instance_proc_addr)(gpuu_vk_instance instance, const char* name);

/* ------------------------------------------------------------------------ */
/* Shared compile specs                                                     */
/* ------------------------------------------------------------------------ */

/* The six shared keys: every GPU delegate's compile specs carry them, and
 * the delegate's shared context is resolved by them. Values are bytes: UTF-8
 * text for names and modes, ASCII decimal for integers. */
#define GPUU_SPEC_CONTEXT_TOKEN "gpu_shared_context_token"
#define GPUU_SPEC_CONTEXT_MODE "gpu_shared_context_mode"
#define GPUU_SPEC_SYNC_MODE "gpu_shared_sync_mode"
#define GPUU_SPEC_GROUP_ID "gpu_shared_group_id"
#define GPUU_SPEC_MIN_PARTITION_SIZE "gpu_shared_min_partition_size"
#define GPUU_SPEC_PREFER "gpu_shared_prefer"
#define GPUU_MAX_TOKEN_LENGTH 255

/* How a delegate finds its shared context under (token, group_id). */
typedef enum gpuu_context_mode {
  GPUU_CONTEXT_DISABLED = 0,         /* a private context, never registered */
  GPUU_CONTEXT_LOOKUP_ONLY = 1,      /* must already be registered, else GPUU_ERROR_NOT_FOUND */
  GPUU_CONTEXT_LOOKUP_OR_CREATE = 2, /* default: the first user creates and registers it */
  GPUU_CONTEXT_CREATE_ONLY = 3,      /* must not exist yet, else GPUU_ERROR_ALREADY_EXISTS */
  GPUU_CONTEXT_MODE_FORCE32 = 0x7FFFFFFF
} gpuu_context_mode;

typedef enum gpuu_sync_mode {
  GPUU_SYNC_TIMELINE = 0,        /* default: delegates chained on a timeline semaphore */
  GPUU_SYNC_QUEUE_WAIT_IDLE = 1, /* wait for the queue after each delegate */
  GPUU_SYNC_NONE = 2,            /* no waits between delegates */
  GPUU_SYNC_MODE_FORCE32 = 0x7FFFFFFF
} gpuu_sync_mode;

typedef enum gpuu_prefer {
  GPUU_PREFER_AUTO = 0,
  GPUU_PREFER_VGF_FIRST = 1,
  GPUU_PREFER_VULKAN_FIRST = 2,
  GPUU_PREFER_FORCE32 = 0x7FFFFFFF
} gpuu_prefer;

/* Names as the compile specs spell them: context modes "disabled",
 * "lookup_only", "lookup_or_create", "create_only"; sync modes "timeline",
 * "queue_wait_idle", "none"; policies "auto", "vgf_first", "vulkan_first".
 * As gpuu_log_level_name and gpuu_log_level_from_name. Added in 0.6. */
GPUU_API const char* gpuu_context_mode_name(gpuu_context_mode mode);
GPUU_API gpuu_status gpuu_context_mode_from_name(const char* name, gpuu_context_mode* out);
GPUU_API const char* gpuu_sync_mode_name(gpuu_sync_mode mode);
GPUU_API gpuu_status gpuu_sync_mode_from_name(const char* name, gpuu_sync_mode* out);
GPUU_API const char* gpuu_prefer_name(gpuu_prefer prefer);
GPUU_API gpuu_status gpuu_prefer_from_name(const char* name, gpuu_prefer* out);

/* One compile spec: a key and its value bytes (not NUL-terminated). An array
 * element: set struct_size with gpuu_compile_spec_init. */
typedef struct gpuu_compile_spec {
  uint32_t struct_size;
  const char* key;
  const void* value;
  size_t value_size;
} gpuu_compile_spec;

/* Fills `spec` with an empty spec (NULL key, no value). Never fails. */
GPUU_API void gpuu_compile_spec_init_sized(gpuu_compile_spec* spec, size_t struct_size);
#define gpuu_compile_spec_init(spec) gpuu_compile_spec_init_sized((spec), sizeof(*(spec)))

/* Load-time overrides of the context keys: the application's word wins over
 * what the program file says. Fields left at their *_init() values override
 * nothing. */
typedef struct gpuu_context_overrides {
  uint32_t struct_size;
  const char* token;        /* NULL: keep the file's token */
  int64_t group_id;         /* used when has_group_id is nonzero */
  int32_t has_group_id;
  int32_t has_mode;
  gpuu_context_mode mode;   /* used when has_mode is nonzero */
  int32_t has_sync_mode;
  gpuu_sync_mode sync_mode; /* used when has_sync_mode is nonzero */
} gpuu_context_overrides;

/* Fills `overrides` with "override nothing". Never fails. */
GPUU_API void gpuu_context_overrides_init_sized(gpuu_context_overrides* overrides, size_t struct_size);
#define gpuu_context_overrides_init(overrides) gpuu_context_overrides_init_sized((overrides), sizeof(*(overrides)))

/* The parsed shared keys. */
typedef struct gpuu_shared_spec {
  uint32_t struct_size;
  char token[GPUU_MAX_TOKEN_LENGTH + 1]; /* NUL-terminated */
  int64_t group_id;
  gpuu_context_mode mode;
  gpuu_sync_mode sync_mode;
  int64_t min_partition_size;
  gpuu_prefer prefer;
  int32_t present; /* nonzero when any shared key (or a context override) was given */
} gpuu_shared_spec;

/* Fills `spec` with the shared keys' defaults: token "default", group 0,
 * lookup_or_create, timeline, min_partition_size 3, prefer auto. The other
 * *_init functions (context resolve, partition and program write options)
 * give the same defaults, and the Python package reads them from these
 * functions. Never fails. */
GPUU_API void gpuu_shared_spec_init_sized(gpuu_shared_spec* spec, size_t struct_size);
#define gpuu_shared_spec_init(spec) gpuu_shared_spec_init_sized((spec), sizeof(*(spec)))

/* Parses the shared keys among `specs[0..count)` into `out` (whose
 * struct_size must be set), then applies `overrides` (may be NULL). Keys
 * without the "gpu_shared_" prefix belong to other backends and are ignored.
 * Returns GPUU_ERROR_INVALID_ARGUMENT, with a message naming key and value, for
 * an unknown gpu_shared_ key, a repeated key, an unknown mode, a non-integer or
 * out-of-range integer, or an empty token. Thread-safe. */
GPUU_API gpuu_status gpuu_shared_spec_parse(const gpuu_compile_spec* specs, size_t count,
                                            const gpuu_context_overrides* overrides, gpuu_shared_spec* out);

/* ------------------------------------------------------------------------ */
/* Shared GPU contexts                                                      */
/* ------------------------------------------------------------------------ */

/* A counted reference to a shared GPU context: instance, physical device,
 * device, one compute queue and its family, an optional timeline semaphore.
 * Every reference keeps the context alive, whatever the order of teardown:
 * the Vulkan objects gpuu owns are destroyed once, when the last reference
 * and the registry entry are gone. */
typedef struct gpuu_context gpuu_context;

/* What gpuu may destroy of an application-supplied context. */
typedef enum gpuu_ownership_flags {
  GPUU_OWN_NOTHING = 0,
  GPUU_OWN_INSTANCE = 1,
  GPUU_OWN_DEVICE = 2,
  GPUU_OWN_TIMELINE_SEMAPHORE = 4,
  GPUU_OWNERSHIP_FORCE32 = 0x7FFFFFFF
} gpuu_ownership_flags;

/* Optional device features, as enabled on a context's device. */
typedef enum gpuu_device_features {
  GPUU_FEATURE_TIMELINE_SEMAPHORE = 1,   /* Vulkan 1.2 timelineSemaphore */
  GPUU_FEATURE_SHADER_FLOAT16 = 2,       /* Vulkan 1.2 shaderFloat16 */
  GPUU_FEATURE_STORAGE_BUFFER_16BIT = 4, /* Vulkan 1.1 storageBuffer16BitAccess */
  GPUU_FEATURE_SHADER_INT64 = 8,         /* Vulkan 1.0 shaderInt64 */
  GPUU_FEATURE_SHADER_INT8 = 16,         /* Vulkan 1.2 shaderInt8 */
  GPUU_FEATURE_STORAGE_BUFFER_8BIT = 32, /* Vulkan 1.2 storageBuffer8BitAccess */
  /* VK_ARM_tensors, VK_ARM_data_graph and VK_ARM_data_graph_instruction_set_tosa
   * enabled, on a queue family with VK_QUEUE_DATA_GRAPH_BIT_ARM: the VGF
   * backend's native path. gpuu derives this bit itself: for an application's
   * device it is set when the three extensions are among
   * enabled_device_extensions and the queue family runs data-graph work (the
   * application must also have enabled the tensors and dataGraph features). */
  GPUU_FEATURE_DATA_GRAPH = 64,
  GPUU_FEATURE_VULKAN_MEMORY_MODEL = 128, /* Vulkan 1.2 vulkanMemoryModel */
  /* VK_KHR_cooperative_matrix enabled with its cooperativeMatrix feature:
   * f16 matmul, linear and conv2d run on matrix cores where the device also
   * has SHADER_FLOAT16, STORAGE_BUFFER_16BIT and VULKAN_MEMORY_MODEL and a
   * subgroup size of 32. For an application's device gpuu clears this bit
   * unless the extension is among enabled_device_extensions. */
  GPUU_FEATURE_COOPERATIVE_MATRIX = 256,
  /* shaderIntegerDotProduct (Vulkan 1.3, or VK_KHR_shader_integer_dot_product):
   * the int8 conv2d_int and matmul_int kernels multiply packed 4 x i8 words
   * with dot-product instructions. For an application's device gpuu clears
   * this bit unless the device is Vulkan 1.3 or the extension is among
   * enabled_device_extensions. */
  GPUU_FEATURE_SHADER_INTEGER_DOT_PRODUCT = 512,
  /* VK_NV_cooperative_matrix2 enabled with its cooperativeMatrixWorkgroupScope,
   * cooperativeMatrixFlexibleDimensions, cooperativeMatrixTensorAddressing and
   * cooperativeMatrixPerElementOperations features (with COOPERATIVE_MATRIX):
   * f16 matmul and linear can run on workgroup-scope matrices
   * (VulkanBackend:gemm_kernel=coopmat2). For an application's device gpuu
   * clears this bit unless the extension is among enabled_device_extensions. */
  GPUU_FEATURE_COOPERATIVE_MATRIX_WORKGROUP = 1024,
  GPUU_DEVICE_FEATURES_FORCE32 = 0x7FFFFFFF
} gpuu_device_features;

/* How gpuu picks and creates a device when it creates a context. */
typedef struct gpuu_device_options {
  uint32_t struct_size;
  /* NULL: read the GPUU_DEVICE environment variable; if that is unset too,
   * take the first discrete or integrated GPU, else the CPU device. Otherwise
   * a decimal index into vkEnumeratePhysicalDevices or a case-insensitive
   * substring of the device name. */
  const char* device;
  /* Enables VK_LAYER_KHRONOS_validation (with synchronization validation)
   * when nonzero, or when the GPUU_VALIDATION environment variable is "1".
   * Its messages go to the log with component "vulkan.validation". */
  int32_t enable_validation;
} gpuu_device_options;

GPUU_API void gpuu_device_options_init_sized(gpuu_device_options* options, size_t struct_size);
#define gpuu_device_options_init(options) gpuu_device_options_init_sized((options), sizeof(*(options)))

typedef struct gpuu_context_resolve_options {
  uint32_t struct_size;
  const char* token;        /* default "default"; must not be empty */
  int64_t group_id;         /* default 0 */
  gpuu_context_mode mode;   /* default GPUU_CONTEXT_LOOKUP_OR_CREATE */
  const gpuu_device_options* device; /* NULL: the defaults of gpuu_device_options_init */
} gpuu_context_resolve_options;

GPUU_API void gpuu_context_resolve_options_init_sized(gpuu_context_resolve_options* options, size_t struct_size);
#define gpuu_context_resolve_options_init(options) gpuu_context_resolve_options_init_sized((options), sizeof(*(options)))

/* Finds or creates the context for (token, group_id) as `mode` says, exactly as
 * a delegate does at init: DISABLED creates a private context that is not
 * registered; LOOKUP_ONLY fails with GPUU_ERROR_NOT_FOUND when nothing is
 * registered; LOOKUP_OR_CREATE creates it once even when many threads race;
 * CREATE_ONLY fails with GPUU_ERROR_ALREADY_EXISTS when the key is taken.
 * On success *out is a new reference (release it with gpuu_context_release).
 * Thread-safe. */
GPUU_API gpuu_status gpuu_context_resolve(const gpuu_context_resolve_options* options, gpuu_context** out);

/* The lookup alone: a new reference in *out, or GPUU_ERROR_NOT_FOUND.
 * Thread-safe. */
GPUU_API gpuu_status gpuu_context_lookup(const char* token, int64_t group_id, gpuu_context** out);

/* An application-supplied Vulkan context. The handles must come from one
 * instance; the queue must belong to `queue_family_index` and support
 * compute. */
typedef struct gpuu_external_context_desc {
  uint32_t struct_size;
  const char* token; /* must not be empty */
  int64_t group_id;
  gpuu_vk_instance instance;
  gpuu_vk_physical_device physical_device;
  gpuu_vk_device device;
  gpuu_vk_queue queue;
  uint32_t queue_family_index;
  /* Optional. A timeline semaphore gpuu may signal and wait on. If null, gpuu
   * creates its own (and owns it) when the device has timeline semaphores
   * enabled (Vulkan 1.2 feature timelineSemaphore). */
  gpuu_vk_semaphore timeline_semaphore;
  /* Optional. The application's loader entry; NULL uses the system loader. */
  gpuu_vk_get_instance_proc_addr get_instance_proc_addr;
  /* gpuu_ownership_flags: what gpuu destroys when the context goes. */
  uint32_t ownership;
  /* Optional. If the application also submits to `queue`, it hands in its own
   * lock: gpuu calls queue_lock before and queue_unlock after every use of the
   * queue, from any thread. Both or neither must be set. */
  void (*queue_lock)(void* user_data);
  void (*queue_unlock)(void* user_data);
  void* queue_lock_user_data;
  /* Optional. The device extensions the application enabled on `device`.
   * VGF delegates run natively through VK_ARM_data_graph on the device only
   * if these include VK_ARM_tensors, VK_ARM_data_graph and
   * VK_ARM_data_graph_instruction_set_tosa (with the tensors and dataGraph
   * features enabled) and `queue_family_index` has VK_QUEUE_DATA_GRAPH_BIT_ARM;
   * otherwise they run on gpuu's TOSA executor (see gpuu_vgf_path). */
  const char* const* enabled_device_extensions;
  uint32_t enabled_device_extension_count;
  /* gpuu_device_features the application enabled on `device`; backends use
   * only what is named here (f16 kernels need SHADER_FLOAT16 and
   * STORAGE_BUFFER_16BIT, i64 indices SHADER_INT64, ...). */
  uint32_t enabled_features;
} gpuu_external_context_desc;

GPUU_API void gpuu_external_context_desc_init_sized(gpuu_external_context_desc* desc, size_t struct_size);
#define gpuu_external_context_desc_init(desc) gpuu_external_context_desc_init_sized((desc), sizeof(*(desc)))

/* Registers the application's Vulkan objects under (token, group_id), so that
 * delegates with mode lookup_only or lookup_or_create use them. gpuu destroys
 * only what `ownership` names. Fails with GPUU_ERROR_ALREADY_EXISTS if another
 * context holds the key, GPUU_ERROR_INVALID_ARGUMENT for a missing handle or
 * token. If `out` is not NULL it receives a new reference. Thread-safe. */
GPUU_API gpuu_status gpuu_context_register_external(const gpuu_external_context_desc* desc, gpuu_context** out);

/* Removes the registry's reference under (token, group_id). The context lives
 * on while any other reference (a session, a delegate, a gpuu_context*) holds
 * it. GPUU_ERROR_NOT_FOUND if nothing is registered there. Thread-safe. */
GPUU_API gpuu_status gpuu_context_unregister(const char* token, int64_t group_id);

/* Another reference to `context`. Thread-safe. */
GPUU_API gpuu_context* gpuu_context_retain(gpuu_context* context);

/* Drops a reference. NULL is ignored. Thread-safe. */
GPUU_API void gpuu_context_release(gpuu_context* context);

/* The raw handles of a context (one gpuu created, or the application's). */
typedef struct gpuu_vulkan_handles {
  uint32_t struct_size;
  gpuu_vk_instance instance;
  gpuu_vk_physical_device physical_device;
  gpuu_vk_device device;
  gpuu_vk_queue queue;
  uint32_t queue_family_index;
  gpuu_vk_semaphore timeline_semaphore; /* may be null */
  uint32_t ownership;                   /* gpuu_ownership_flags: what gpuu will destroy */
  uint32_t api_version;                 /* the device's VkPhysicalDeviceProperties::apiVersion */
  uint32_t enabled_features;            /* gpuu_device_features */
} gpuu_vulkan_handles;

/* Copies the handles into `out` (whose struct_size must be set). The handles
 * are borrowed: valid while a reference to `context` is held. Thread-safe. */
GPUU_API gpuu_status gpuu_context_get_vulkan_handles(const gpuu_context* context, gpuu_vulkan_handles* out);

/* The device name, e.g. "llvmpipe (LLVM 15.0.6, 256 bits)". Borrowed: valid
 * while a reference to `context` is held. NULL for a NULL context. */
GPUU_API const char* gpuu_context_device_name(const gpuu_context* context);

/* The token and group the context is registered under (for a private,
 * DISABLED context: the token it was resolved with). Borrowed as above. */
GPUU_API const char* gpuu_context_token(const gpuu_context* context);
GPUU_API int64_t gpuu_context_group_id(const gpuu_context* context);

/* Number of device extensions enabled on the context's device, and the
 * name at `index` (borrowed as above; NULL when out of range). */
GPUU_API uint32_t gpuu_context_extension_count(const gpuu_context* context);
GPUU_API const char* gpuu_context_extension_name(const gpuu_context* context, uint32_t index);

/* Lists the physical devices the system loader sees, one per call:
 * the name of device `index` goes to `name` (at most `name_size` bytes,
 * NUL-terminated) and its VkPhysicalDeviceType to *type (may be NULL).
 * GPUU_ERROR_NOT_FOUND when `index` is past the last device; GPUU_ERROR_VULKAN
 * or GPUU_ERROR_UNSUPPORTED when no Vulkan loader or driver is present. */
GPUU_API gpuu_status gpuu_enumerate_devices(uint32_t index, char* name, size_t name_size, int32_t* type);

/* ------------------------------------------------------------------------ */
/* Graph builder (the export side)                                          */
/* ------------------------------------------------------------------------ */
/* A graph is built in topological order: graph inputs and constants first
 * (or whenever they are needed), then nodes whose inputs already exist. Each
 * node is checked against gpuu's op registry as it is added (op name, input
 * count, attribute names and kinds, dtypes, shapes) and its outputs are
 * inferred, so a graph that gpuu accepted is always well formed. A refused
 * call leaves the graph exactly as it was: the builder may carry on.
 *
 * Values (graph inputs, constants, node outputs) and nodes are numbered from 0
 * in the order they were created; those ids are stable for the life of the
 * graph. Node outputs are named "<node name>:0", "<node name>:1", ...
 *
 * The ops, with their inputs, attributes (kind and default) and dtypes, are
 * listed in docs/ops.md, which is generated from the op registry:
 * `gpuu-inspect --ops` prints the same table, and gpuu_op_count() and
 * gpuu_op_name() list the ops at run time. Axis attributes may be negative
 * (counted from the end). custom_shader's implementation_attrs is a JSON
 * object with at least "entry_point" and "workgroup_sizes". */

/* Element types. Sizes: 4, 2, 4, 8, 1 and 1 bytes; BOOL holds 0 or 1. */
typedef enum gpuu_dtype {
  GPUU_DTYPE_F32 = 0,
  GPUU_DTYPE_F16 = 1,
  GPUU_DTYPE_I32 = 2,
  GPUU_DTYPE_I64 = 3,
  GPUU_DTYPE_I8 = 4,
  GPUU_DTYPE_BOOL = 5,
  GPUU_DTYPE_I16 = 6, /* since 0.9: 16-bit integer activations (a16w8 quantized programs) */
  GPUU_DTYPE_FORCE32 = 0x7FFFFFFF
} gpuu_dtype;

/* Dtype names as graph attributes (cast's dtype), docs/ops.md and messages
 * spell them: "f32", "f16", "i32", "i64", "i8", "bool". As
 * gpuu_log_level_name and gpuu_log_level_from_name. Added in 0.6. */
GPUU_API const char* gpuu_dtype_name(gpuu_dtype dtype);
GPUU_API gpuu_status gpuu_dtype_from_name(const char* name, gpuu_dtype* out);

/* The largest rank of any shape in a graph. Every dim lies in [0, 2^31 - 1]. */
#define GPUU_MAX_RANK 8

typedef struct gpuu_graph gpuu_graph;

/* Creates an empty graph in *out; release it with gpuu_graph_destroy.
 * GPUU_ERROR_INVALID_ARGUMENT if `out` is NULL. */
GPUU_API gpuu_status gpuu_graph_create(gpuu_graph** out);

/* Destroys `graph` and everything it holds (constants' data included). NULL is
 * ignored. */
GPUU_API void gpuu_graph_destroy(gpuu_graph* graph);

/* Adds a graph input named `name` (non-empty, unique among values) of
 * `dtype` and shape `shape[0..rank)` (`shape` may be NULL when rank is 0).
 * Its id goes to *out_value (may be NULL; -1 on failure).
 * GPUU_ERROR_INVALID_ARGUMENT for a NULL graph or name, a taken name, an
 * unknown dtype, a rank above GPUU_MAX_RANK or a negative or too large dim. */
GPUU_API gpuu_status gpuu_graph_add_input(gpuu_graph* graph, const char* name, gpuu_dtype dtype, const int64_t* shape,
                                          size_t rank, int32_t* out_value);

/* Adds a constant tensor: as gpuu_graph_add_input, plus its contents, `size`
 * bytes at `data`, little-endian, row-major; `size` must equal the element
 * count times the dtype size. The bytes are copied: `data` is borrowed for the
 * call only. GPUU_ERROR_INVALID_ARGUMENT as for inputs, or for a wrong size. */
GPUU_API gpuu_status gpuu_graph_add_constant(gpuu_graph* graph, const char* name, gpuu_dtype dtype,
                                             const int64_t* shape, size_t rank, const void* data, size_t size,
                                             int32_t* out_value);

/* Adds a program state: a tensor kept across executes, one per session, such
 * as a model's KV cache, running statistics or step counter (a buffer the
 * model mutates). As gpuu_graph_add_constant, `data` holding its initial
 * value, which every session starts from. The value returned reads the state
 * in a run and is named as it; it is neither a graph input nor an output.
 * Set what the state becomes when a run ends with
 * gpuu_graph_set_state_update. Errors as gpuu_graph_add_constant's. Added in
 * 0.7. */
GPUU_API gpuu_status gpuu_graph_add_state(gpuu_graph* graph, const char* name, gpuu_dtype dtype, const int64_t* shape,
                                          size_t rank, const void* data, size_t size, int32_t* out_value);

/* Makes `update` the value the state read by `state_value` holds when a run
 * ends. GPUU_ERROR_INVALID_ARGUMENT for a bad id, a value that reads no
 * state, a state whose update is set already, an update that is a constant
 * or a state's value (add a copy node, such as a reshape to the same shape),
 * or one whose dtype or shape differ from the state's. Added in 0.7. */
GPUU_API gpuu_status gpuu_graph_set_state_update(gpuu_graph* graph, int32_t state_value, int32_t update);

/* Dynamic sizes (added in 0.8). A graph is built at example sizes; a dim
 * names a size that may vary between executes (a batch, a sequence length),
 * with bounds min <= example <= max (min >= 0; the example is the size the
 * graph was built at). gpuu_graph_fit_dims then finds, from recordings of
 * the same model at other sizes (each another graph built the same way),
 * how every size and integer attribute follows the dims, and programs
 * written from the graph accept any sizes within bounds
 * (gpuu_session_set_input_shapes). Errors: GPUU_ERROR_INVALID_ARGUMENT for
 * NULL or bad arguments, a repeated name, more than 16 dims, unordered
 * bounds, or dims declared after a recording was added. */
GPUU_API gpuu_status gpuu_graph_add_dim(gpuu_graph* graph, const char* name, int64_t min, int64_t max,
                                        int64_t example);

/* Adds a recording: `recording`, the same model built with the dims at
 * sizes[0..count) (one per dim, in order). The graph keeps what it needs;
 * the recording may be destroyed at once. Fitting needs, for each dim, one
 * recording that moves it alone from its example; further ones check the
 * fit. GPUU_ERROR_INVALID_ARGUMENT for NULL arguments, a count that is not
 * the number of dims, or sizes outside the bounds. */
GPUU_API gpuu_status gpuu_graph_add_dim_recording(gpuu_graph* graph, const gpuu_graph* recording,
                                                  const int64_t* sizes, size_t count);

/* Fits the graph's sizes and integer attributes to affine functions of its
 * dims (a + b*batch + c*seq) from its recordings and drops them. On failure
 * (GPUU_ERROR_INVALID_ARGUMENT) the message names every problem at once: a
 * dim without a recording that moves it alone, a structure that changes with
 * the dims (another op count or wiring: Python control flow on a size), a
 * size that is not affine in them, a constant or state whose shape changes
 * or a small constant whose numbers do (folded from a size), a size that
 * goes negative within bounds; the graph keeps no fit then. */
GPUU_API gpuu_status gpuu_graph_fit_dims(gpuu_graph* graph);

typedef enum gpuu_attr_kind {
  GPUU_ATTR_INT = 0,    /* field i */
  GPUU_ATTR_FLOAT = 1,  /* field f */
  GPUU_ATTR_STRING = 2, /* field s: NUL-terminated UTF-8 */
  GPUU_ATTR_INTS = 3,   /* fields ints and count */
  GPUU_ATTR_FLOATS = 4, /* fields floats and count */
  GPUU_ATTR_KIND_FORCE32 = 0x7FFFFFFF
} gpuu_attr_kind;

/* One node attribute: a name and a value of one kind; the fields of the other
 * kinds are ignored. The kind must be the one the op's schema names: an int
 * where a float is due is refused, not converted. An array element: set
 * struct_size with gpuu_attr_init. */
typedef struct gpuu_attr {
  uint32_t struct_size;
  const char* name;
  gpuu_attr_kind kind;
  int64_t i;
  double f;
  const char* s;
  const int64_t* ints;
  const double* floats;
  size_t count;
} gpuu_attr;

/* Fills `attr` with an unnamed INT attribute of value 0. Never fails. */
GPUU_API void gpuu_attr_init_sized(gpuu_attr* attr, size_t struct_size);
#define gpuu_attr_init(attr) gpuu_attr_init_sized((attr), sizeof(*(attr)))

/* Appends node `name` (non-empty, unique among nodes) running `op` on
 * `inputs[0..n_inputs)` (value ids; -1 leaves an optional input out, and
 * trailing optional inputs may simply be omitted) with `attrs[0..n_attrs)`.
 * Attributes left out take their defaults, which the node then stores.
 * The ids of its outputs go to `outputs[0..outputs_capacity)` and their number
 * to *n_outputs (may be NULL); every op but custom_shader has one output.
 * If `outputs_capacity` is too small the node is not added and *n_outputs says
 * how many are needed. All arguments are borrowed for the call only.
 * GPUU_ERROR_INVALID_ARGUMENT, with a message naming the node and the input or
 * attribute at fault, for: an unknown op, a taken or empty name, a wrong input
 * count, a bad value id, a required input left out, an unknown, repeated,
 * missing or wrongly kinded attribute, an attribute value out of range, a
 * dtype the op does not take, or shapes that do not fit together. The graph is
 * unchanged after any failure. */
GPUU_API gpuu_status gpuu_graph_add_node(gpuu_graph* graph, const char* op, const char* name, const int32_t* inputs,
                                         size_t n_inputs, const gpuu_attr* attrs, size_t n_attrs, int32_t* outputs,
                                         size_t outputs_capacity, size_t* n_outputs);

/* Marks `value` as a graph output (in call order). GPUU_ERROR_INVALID_ARGUMENT
 * for a bad id or a value that is already an output. */
GPUU_API gpuu_status gpuu_graph_mark_output(gpuu_graph* graph, int32_t value);

/* Checks the whole graph: unique names, one producer per value, topological
 * order, each node's inference matching its stored outputs, constant sizes,
 * at least one output (or a state), every state's update set. A graph built
 * only through this API fails only when it has neither outputs nor states,
 * or a state without update. GPUU_ERROR_INVALID_ARGUMENT with a message naming the value
 * or node at fault. May run concurrently with the other read-only functions
 * below on the same graph. */
GPUU_API gpuu_status gpuu_graph_verify(const gpuu_graph* graph);

/* Read-back. Functions that take `const gpuu_graph*` do not change the graph
 * and may run concurrently with each other. Returned strings are borrowed:
 * valid until the graph is changed or destroyed.
 *
 * Id arrays follow one convention: *count receives the number of ids; `ids`
 * receives them when `capacity` is at least that. Pass ids = NULL and
 * capacity = 0 to ask for the count alone. A smaller nonzero capacity is
 * GPUU_ERROR_INVALID_ARGUMENT (nothing written but *count). */

/* Number of values (inputs, constants and node outputs); 0 for NULL. */
GPUU_API size_t gpuu_graph_value_count(const gpuu_graph* graph);

/* Name of value `value`, or NULL for a bad id. */
GPUU_API const char* gpuu_graph_value_name(const gpuu_graph* graph, int32_t value);

/* Dtype of `value`. GPUU_ERROR_INVALID_ARGUMENT for a bad id or NULL out. */
GPUU_API gpuu_status gpuu_graph_value_dtype(const gpuu_graph* graph, int32_t value, gpuu_dtype* out);

/* Rank of `value` to *rank and its dims to dims[0..rank) when dims is not
 * NULL (`capacity` must then be at least the rank; GPUU_MAX_RANK always is).
 * GPUU_ERROR_INVALID_ARGUMENT for a bad id, a NULL rank or a small capacity. */
GPUU_API gpuu_status gpuu_graph_value_shape(const gpuu_graph* graph, int32_t value, int64_t* dims, size_t capacity,
                                            size_t* rank);

/* The node that produces `value` to *node, or -1 for graph inputs and
 * constants. GPUU_ERROR_INVALID_ARGUMENT for a bad id or NULL node. */
GPUU_API gpuu_status gpuu_graph_value_producer(const gpuu_graph* graph, int32_t value, int32_t* node);

/* 1 when `value` is a constant, 0 otherwise (also for a bad id). */
GPUU_API int32_t gpuu_graph_value_is_constant(const gpuu_graph* graph, int32_t value);

/* The id of the value named `name` to *out_value (-1 when absent).
 * GPUU_ERROR_NOT_FOUND when no value has that name;
 * GPUU_ERROR_INVALID_ARGUMENT for NULL arguments. */
GPUU_API gpuu_status gpuu_graph_find_value(const gpuu_graph* graph, const char* name, int32_t* out_value);

/* Number of nodes; 0 for NULL. */
GPUU_API size_t gpuu_graph_node_count(const gpuu_graph* graph);

/* Name and op of node `node`, or NULL for a bad id. */
GPUU_API const char* gpuu_graph_node_name(const gpuu_graph* graph, int32_t node);
GPUU_API const char* gpuu_graph_node_op(const gpuu_graph* graph, int32_t node);

/* Input value ids of `node` (-1 where an optional input was left out) and
 * its output value ids, by the id-array convention above.
 * GPUU_ERROR_INVALID_ARGUMENT for a bad node id, a NULL count or a small
 * capacity. */
GPUU_API gpuu_status gpuu_graph_node_inputs(const gpuu_graph* graph, int32_t node, int32_t* ids, size_t capacity,
                                            size_t* count);
GPUU_API gpuu_status gpuu_graph_node_outputs(const gpuu_graph* graph, int32_t node, int32_t* ids, size_t capacity,
                                             size_t* count);

/* The graph inputs (in creation order) and the graph outputs (in marking
 * order), by the id-array convention above. */
GPUU_API gpuu_status gpuu_graph_inputs(const gpuu_graph* graph, int32_t* ids, size_t capacity, size_t* count);
GPUU_API gpuu_status gpuu_graph_outputs(const gpuu_graph* graph, int32_t* ids, size_t capacity, size_t* count);

/* The values that read the graph's states, in creation order, with the
 * (ids, capacity, count) convention of gpuu_graph_inputs; and the update
 * of the state `state_value` reads to *update (-1 until set;
 * GPUU_ERROR_INVALID_ARGUMENT for a value that reads no state). Added in
 * 0.7. */
GPUU_API gpuu_status gpuu_graph_states(const gpuu_graph* graph, int32_t* ids, size_t capacity, size_t* count);
GPUU_API gpuu_status gpuu_graph_state_update(const gpuu_graph* graph, int32_t state_value, int32_t* update);

/* The registered ops, sorted by name: their number, and the name at `index`
 * (static, valid forever; NULL past the end). Thread-safe. */
GPUU_API size_t gpuu_op_count(void);
GPUU_API const char* gpuu_op_name(size_t index);

/* ------------------------------------------------------------------------ */
/* Partitioning                                                             */
/* ------------------------------------------------------------------------ */
/* A partition splits a graph into regions, each run by one backend, named by
 * its id: a registered GPU backend ("VgfBackend": TOSA graph regions in a VGF
 * file; "VulkanBackend": gpuu's own compute kernels; any other registered
 * backend by its own id) or the CPU fallback ("CpuFallback"). Every node is
 * in exactly one region; regions come in execution order (every edge goes
 * from a region to itself or to a later one, so every region is convex: no
 * path leaves it and comes back); GPU regions are connected. The same graph
 * and options always give the same partition, and partitioning takes time
 * near-linear in the graph's size.
 *
 * Policies: a preference list of GPU backends; each in turn takes maximal
 * regions of the nodes it supports among those still free; then GPU regions
 * with fewer than min_partition_size nodes are pruned and their nodes stay on
 * the CPU. The list is `backends` when given, else from gpuu_prefer:
 * VGF_FIRST is VgfBackend, VulkanBackend, then every other registered GPU
 * backend in registration order (VULKAN_FIRST: the first two swapped). AUTO
 * scores one candidate led by each registered GPU backend plus a per-node
 * labelling by the cost model and keeps the cheapest (the earlier on a tie).
 * Two exceptions to pruning: a custom_shader node of domain
 * "com.arm.VulkanCustomShader" always gets a region of its own and keeps it,
 * and so does a region that holds a pinned node.
 *
 * What each backend takes (ops and dtypes) is its own declaration: see
 * `gpuu-inspect --ops` and docs/ops.md. The CPU takes everything, including
 * ops no GPU backend knows.
 *
 * Backend ids in options must be registered (or "CpuFallback" where allowed);
 * gpuu_graph_partition names every unknown id and lists the registered ones. */

/* `backend` (a GPU backend id: the CPU cannot be denied anything) takes no
 * node that runs `op`. Initialise with gpuu_partition_deny_init. */
typedef struct gpuu_partition_deny {
  uint32_t struct_size;
  const char* backend;
  const char* op;
} gpuu_partition_deny;

/* The node named `node` goes to `backend` (a GPU backend id or "CpuFallback")
 * whatever the policy, and its region is never pruned. Initialise with
 * gpuu_partition_pin_init. */
typedef struct gpuu_partition_pin {
  uint32_t struct_size;
  const char* node;
  const char* backend;
} gpuu_partition_pin;

/* The cost of one node running `op` on `backend` (an id, "CpuFallback"
 * included). op "*" sets the backend's default for every op without an entry
 * of its own (defaults: each GPU backend's declared cost, VgfBackend 1,
 * VulkanBackend 2; CpuFallback 10). Initialise with gpuu_partition_op_cost_init. */
typedef struct gpuu_partition_op_cost {
  uint32_t struct_size;
  const char* op;
  const char* backend;
  double cost;
} gpuu_partition_op_cost;

typedef struct gpuu_partition_options {
  uint32_t struct_size;
  gpuu_prefer prefer;         /* default GPUU_PREFER_AUTO; not read when backend_count > 0 */
  int64_t min_partition_size; /* default 3; must be >= 1 */
  /* Default 0: pruned nodes stay on the CPU.
   * Nonzero: each GPU backend's pruned nodes are first offered to the next
   * GPU backends of the preference list, which may add them to their regions
   * (still subject to min_partition_size). */
  int32_t retry_pruned;
  /* Every array below may be NULL when its count is 0; the struct arrays are
   * read with the stride of their element 0's struct_size. */
  const gpuu_partition_deny* deny;
  size_t deny_count;
  const gpuu_partition_pin* pins;
  size_t pin_count;
  /* The cost model of AUTO, in abstract units (only ratios matter); every
   * cost must be finite and >= 0. Defaults in brackets. */
  double gpu_crossing_cost; /* a tensor handed between two GPU backends [3] */
  double cpu_crossing_cost; /* a tensor handed between a GPU backend and the CPU [15] */
  double gpu_region_cost;   /* each GPU region: one more submit [1] */
  /* Costs by (op, backend); they extend the built-in table (conv2d, matmul
   * and linear: VgfBackend 4, VulkanBackend 8, CpuFallback 100); a later
   * entry for the same pair wins. */
  const gpuu_partition_op_cost* op_costs;
  size_t op_cost_count;
  /* An explicit preference list of GPU backend ids: exactly these, in this
   * order (CpuFallback is always the fallback and may not be listed). Empty:
   * the list comes from prefer. */
  const char* const* backends;
  size_t backend_count;
} gpuu_partition_options;

/* Fill each struct with its defaults and struct_size (NULL is ignored; never
 * fail). Call the *_init macros: they pass the caller's sizeof. */
GPUU_API void gpuu_partition_deny_init_sized(gpuu_partition_deny* deny, size_t struct_size);
#define gpuu_partition_deny_init(deny) gpuu_partition_deny_init_sized((deny), sizeof(*(deny)))
GPUU_API void gpuu_partition_pin_init_sized(gpuu_partition_pin* pin, size_t struct_size);
#define gpuu_partition_pin_init(pin) gpuu_partition_pin_init_sized((pin), sizeof(*(pin)))
GPUU_API void gpuu_partition_op_cost_init_sized(gpuu_partition_op_cost* op_cost, size_t struct_size);
#define gpuu_partition_op_cost_init(op_cost) gpuu_partition_op_cost_init_sized((op_cost), sizeof(*(op_cost)))

/* Fills `options` with the defaults above. NULL is ignored. Never fails. */
GPUU_API void gpuu_partition_options_init_sized(gpuu_partition_options* options, size_t struct_size);
#define gpuu_partition_options_init(options) gpuu_partition_options_init_sized((options), sizeof(*(options)))

/* The outcome of partitioning one graph. Independent of the graph once made:
 * the graph may change or go away meanwhile (but a program must be written
 * from the same, unchanged graph). */
typedef struct gpuu_partition gpuu_partition;

/* Partitions `graph` with `options` (NULL: the defaults) into a new partition
 * in *out (release it with gpuu_partition_destroy; NULL on failure). The
 * partition records prefer and min_partition_size for the program writer to
 * bake into the delegates' compile specs, and an explain report. A node whose
 * results reach no graph output (a dead node) joins no region, under every
 * policy: the program never runs it.
 * All arguments are borrowed for the call. May run concurrently with other
 * calls that only read `graph`.
 * GPUU_ERROR_INVALID_ARGUMENT, with a message naming what is wrong, for a
 * NULL graph or out, a struct_size that is not set, an unknown prefer value,
 * a backend id that is not registered (all of them named at once, with the
 * registered ids), min_partition_size < 1, a NULL array with a nonzero count,
 * a NULL or empty op, node name or backend id, a denial for the CPU, a denied op that is
 * neither a known op nor used by the graph, a pin naming no node (or a name
 * several nodes share), a pin to a backend that cannot take that node (the
 * message says why), a node pinned to two backends, a negative or non-finite
 * cost, or a malformed graph (a value id out of range, nodes out of
 * topological order, a value produced twice). */
GPUU_API gpuu_status gpuu_graph_partition(const gpuu_graph* graph, const gpuu_partition_options* options,
                                          gpuu_partition** out);

/* Destroys `partition`. NULL is ignored. */
GPUU_API void gpuu_partition_destroy(gpuu_partition* partition);

/* The functions below only read `partition`: they may run concurrently. */

/* Number of regions; 0 for NULL. */
GPUU_API size_t gpuu_partition_region_count(const gpuu_partition* partition);

/* The backend id of region `region` (in execution order) to *out, borrowed:
 * valid until the partition is destroyed.
 * GPUU_ERROR_INVALID_ARGUMENT for a NULL argument or a region out of range. */
GPUU_API gpuu_status gpuu_partition_region_backend(const gpuu_partition* partition, size_t region, const char** out);

/* The number of nodes in region `region` to *out.
 * GPUU_ERROR_INVALID_ARGUMENT for a NULL argument or a region out of range. */
GPUU_API gpuu_status gpuu_partition_region_node_count(const gpuu_partition* partition, size_t region, size_t* out);

/* The graph node id of the `index`-th node of region `region` to *node. Nodes
 * of a region come in graph order (a topological order).
 * GPUU_ERROR_INVALID_ARGUMENT for a NULL argument, or a region or index out
 * of range. */
GPUU_API gpuu_status gpuu_partition_region_node(const gpuu_partition* partition, size_t region, size_t index,
                                                int32_t* node);

/* The id of the backend that runs graph node `node` to *backend (borrowed:
 * valid until the partition is destroyed), and the index of its region to
 * *region (may be NULL).
 * GPUU_ERROR_INVALID_ARGUMENT for a NULL partition or backend, a node id
 * out of range, or a dead node (no backend runs it; the message says so). */
GPUU_API gpuu_status gpuu_partition_node_backend(const gpuu_partition* partition, int32_t node, const char** backend,
                                                 size_t* region);

/* The explain report as JSON text (UTF-8, NUL-terminated): the policy and
 * options; for AUTO every candidate's estimated cost and the choice; a
 * summary per backend and per region (backend, node count, first and last
 * node, tensors in and out); per program state (0.7) its name, dtype, shape,
 * update value, the regions that read it and the one that computes its
 * update ("states"); and per node its name, op, backend, region and,
 * for each other backend, why not ("unsupported: TOSA 1.0 has no i64 tensors
 * (input 1 of gather_0 is i64)", "denied by user", "pinned to CpuFallback by
 * user", "pruned: region of 2 nodes < min_partition_size 3", "taken first by
 * VgfBackend (vgf_first)", ...) and, where retry_pruned offered it to a
 * backend, the outcome. A dead node has backend null, region -1 and, for
 * every backend, "dead: its results reach no graph output, ..."; the summary
 * counts them (dead_nodes). The same graph and options give the same text.
 * Borrowed: valid until the partition is destroyed. NULL for NULL. */
GPUU_API const char* gpuu_partition_explain_json(const gpuu_partition* partition);

/* ------------------------------------------------------------------------ */
/* Program files                                                            */
/* ------------------------------------------------------------------------ */
/* A program file holds everything needed to run one partitioned graph: its
 * tensors, one delegate per GPU region (its backend's id, compile specs, the
 * backend's processed blob, the names and ops of the graph nodes it took),
 * the CPU-fallback nodes, and the plan that orders them. Constants and blobs are stored once per distinct content, each
 * 64-byte aligned, so a loader can use them in place from a memory map.
 * The same graph, partition and options always give the same bytes.
 * Inspect a file with the gpuu-inspect tool. */

/* Compile specs for the delegates of one backend (an array element: set
 * struct_size with gpuu_backend_compile_specs_init). Added in 0.3. */
typedef struct gpuu_backend_compile_specs {
  uint32_t struct_size;
  const char* backend;            /* a registered backend id: "VgfBackend", "VulkanBackend", a plugin's */
  const gpuu_compile_spec* specs; /* specs[0..count); may be NULL when count is 0 */
  size_t count;
} gpuu_backend_compile_specs;

/* Fills `specs` with no backend and no specs. Never fails. Added in 0.3. */
GPUU_API void gpuu_backend_compile_specs_init_sized(gpuu_backend_compile_specs* specs, size_t struct_size);
#define gpuu_backend_compile_specs_init(specs) gpuu_backend_compile_specs_init_sized((specs), sizeof(*(specs)))

/* Shared-context settings baked into every delegate's compile specs (the six
 * GPUU_SPEC_* keys); prefer and min_partition_size come from the partition.
 * The application may still override the context keys when it loads the
 * program. A delegate's compile specs are, in order: the six shared keys,
 * extra_shared_compile_specs, the specs of its backend's entry in
 * backend_compile_specs, then those its backend adds; its backend's
 * preprocess sees them all at export. A gpu_shared_ key among the extra specs
 * is checked like the six and may not repeat one of them. */
typedef struct gpuu_program_write_options {
  uint32_t struct_size;
  const char* token;        /* default "default"; non-empty, at most GPUU_MAX_TOKEN_LENGTH bytes */
  int64_t group_id;         /* default 0; must be >= 0 */
  gpuu_context_mode mode;   /* default GPUU_CONTEXT_LOOKUP_OR_CREATE */
  gpuu_sync_mode sync_mode; /* default GPUU_SYNC_TIMELINE */
  /* Added in 0.3: specs for every delegate; default none. */
  const gpuu_compile_spec* extra_shared_compile_specs;
  size_t extra_shared_compile_spec_count;
  /* Added in 0.3: specs for the delegates of one backend id each (an id at
   * most once); default none. */
  const gpuu_backend_compile_specs* backend_compile_specs;
  size_t backend_compile_specs_count;
} gpuu_program_write_options;

/* Fills `options` with the defaults above. Never fails. */
GPUU_API void gpuu_program_write_options_init_sized(gpuu_program_write_options* options, size_t struct_size);
#define gpuu_program_write_options_init(options) gpuu_program_write_options_init_sized((options), sizeof(*(options)))

/* Writes the program for `graph` as partitioned by `partition` (which must
 * come from partitioning that same graph) to the file `path`. `options` may
 * be NULL for the defaults. The file is written atomically: a temporary file
 * beside `path` is flushed and renamed over it, so readers never see half a
 * program and a failed call leaves an existing file untouched. All arguments
 * are borrowed for the call. Thread-safe as long as nothing modifies `graph`
 * or `partition` meanwhile.
 * Returns GPUU_ERROR_INVALID_ARGUMENT for a NULL handle or path, a bad option
 * (empty or too long token, negative group_id, unknown mode, a NULL spec key,
 * a bad or repeated gpu_shared_ spec, an unknown or repeated backend id in
 * backend_compile_specs: the message names it) or a partition
 * that does not match the graph (a node in no region or in two, a region that
 * reads a value before it is produced); GPUU_ERROR_IO when the file cannot be
 * written (the message names the path). */
GPUU_API gpuu_status gpuu_program_write(const gpuu_graph* graph, const gpuu_partition* partition,
                                        const gpuu_program_write_options* options, const char* path);

/* As gpuu_program_write, but the program's bytes go to a new buffer: *out_data
 * (caller's; free it with gpuu_program_bytes_free) and *out_size. On failure
 * *out_data is NULL and *out_size 0. Same errors, except GPUU_ERROR_IO, plus
 * GPUU_ERROR_OUT_OF_MEMORY. */
GPUU_API gpuu_status gpuu_program_write_to_memory(const gpuu_graph* graph, const gpuu_partition* partition,
                                                  const gpuu_program_write_options* options, void** out_data,
                                                  size_t* out_size);

/* Frees a buffer from gpuu_program_write_to_memory. NULL is ignored. */
GPUU_API void gpuu_program_bytes_free(void* data);

/* ------------------------------------------------------------------------ */
/* Running programs                                                         */
/* ------------------------------------------------------------------------ */

/* A loaded program file: immutable, and safe to share between threads and
 * sessions. A session keeps its own reference, so the program may be released
 * while sessions made from it live on. */
typedef struct gpuu_program gpuu_program;

/* Maps the file at `path` (read-only; constants are used in place), verifies
 * it and checks every index, size and offset. On success *out is the
 * caller's. GPUU_ERROR_IO when the file cannot be read, GPUU_ERROR_INVALID_FORMAT
 * (the message names the field and byte offset) for a corrupt file.
 * Thread-safe. */
GPUU_API gpuu_status gpuu_program_load_file(const char* path, gpuu_program** out);

/* The same from `size` bytes at `data`, which are copied. Thread-safe. */
GPUU_API gpuu_status gpuu_program_load_memory(const void* data, size_t size, gpuu_program** out);

/* The same from `size` bytes at `data` used in place, not copied: a mapping
 * the application made (its own file mapping, an asset it mapped). `data`
 * must be 64-byte aligned and its bytes must stay valid and unchanged until
 * gpuu calls `release(user)`, once, when nothing uses them any more: the
 * program, its sessions and the device copies of its weights (which other
 * sessions may share) all gone. `release` may be NULL. On failure `release`
 * is not called and the bytes stay the caller's.
 * GPUU_ERROR_INVALID_ARGUMENT for NULL data, size 0 or unaligned data;
 * otherwise as gpuu_program_load_file. Thread-safe. Added in 0.9. */
GPUU_API gpuu_status gpuu_program_load_mapped(const void* data, size_t size, void (*release)(void* user), void* user,
                                              gpuu_program** out);

/* Drops the caller's reference. NULL is ignored. Thread-safe. */
GPUU_API void gpuu_program_release(gpuu_program* program);

/* Number of delegates and the backend id of delegate `index` ("VgfBackend",
 * "VulkanBackend", a plugin backend's id; NULL when out of range). Borrowed
 * from the program. */
GPUU_API size_t gpuu_program_delegate_count(const gpuu_program* program);
GPUU_API const char* gpuu_program_delegate_backend(const gpuu_program* program, size_t index);

/* The program's dims (gpuu_graph_add_dim, 0.8): sizes that may vary between
 * executes. 0 for NULL or a static program. */
GPUU_API size_t gpuu_program_dim_count(const gpuu_program* program);

/* Dim `index`'s name (borrowed from the program) to *out and its bounds and
 * example size; GPUU_ERROR_INVALID_ARGUMENT when out of range. Added in 0.8. */
GPUU_API gpuu_status gpuu_program_dim_info(const gpuu_program* program, size_t index, const char** out,
                                           int64_t* dim_min, int64_t* dim_max, int64_t* dim_example);

/* Standalone VGF export: writes each VGF delegate of `program` as
 * `dir/<delegate index>.vgf` (a complete VGF file, readable by Arm's tools)
 * with a scenario JSON for Arm's scenario runner (0.11) beside it
 * (`<delegate index>.json`): the VGF as a graph resource, each input and
 * output of the delegate as a tensor (a storage buffer for a custom-shader
 * COMPUTE segment) whose uid is its name, bound at its descriptor set and
 * binding by a dispatch_vgf command.
 * Inputs are read from `<delegate index>.input_<i>.npy`, written here filled
 * with zeros (replace them with real data), outputs go to
 * `<delegate index>.output_<i>.npy`; the scenario runs as written:
 * `scenario_runner --scenario dir/<delegate index>.json` on a device with
 * VK_ARM_data_graph (or Arm's emulation layers). Creates `dir` if needed.
 * *vgf_count (may be NULL) receives the number of VGF files.
 * GPUU_ERROR_IO naming the path when a file cannot be written. */
GPUU_API gpuu_status gpuu_program_extract_vgf(const gpuu_program* program, const char* dir, size_t* vgf_count);

/* A standalone VGF file (one written by Arm's model converter, say) as a
 * program of one VGF delegate that runs it: the program's inputs and outputs
 * are the file's model inputs and outputs, in its sequence order, named by
 * its input/output names (input_<i> / output_<i> where the file has none) and
 * typed and shaped by their resources (gpuu_session_input_info tells them).
 * The file's bytes are copied, unchanged, into the program as the delegate's
 * blob. `options` (may be NULL for the defaults of
 * gpuu_program_write_options_init) gives the delegate's shared-context
 * compile specs, as for gpuu_program_write (extra or per-backend compile specs
 * are refused: a VGF file carries its own). On success *out is the caller's.
 * Formats 0.0.x to 0.5.x (Arm's VGF library up to 0.11) are read; the file
 * must hold exactly one segment: a GRAPH segment of TOSA gpuu's executor runs,
 * or a COMPUTE segment. Added in 0.2. Thread-safe.
 * Returns GPUU_ERROR_INVALID_ARGUMENT for NULL `out`, NULL or empty data, or a
 * bad option; GPUU_ERROR_INVALID_FORMAT for bytes that are not a VGF file or a
 * corrupt one (the message names the section and byte offset);
 * GPUU_ERROR_UNSUPPORTED for a file gpuu cannot run (several segments, a
 * placeholder module without code, a TOSA operator or element format gpuu
 * lacks: the message names it). */
GPUU_API gpuu_status gpuu_program_from_vgf(const void* data, size_t size, const gpuu_program_write_options* options,
                                           gpuu_program** out);

/* As gpuu_program_from_vgf, for the VGF file at `path` (read whole).
 * GPUU_ERROR_IO naming the path when it cannot be read. */
GPUU_API gpuu_status gpuu_program_from_vgf_file(const char* path, const gpuu_program_write_options* options,
                                                gpuu_program** out);

/* A program made runnable: delegates initialised on their shared context,
 * buffers and command buffers ready. Not thread-safe: one thread at a time
 * per session (several sessions may run concurrently). */
typedef struct gpuu_session gpuu_session;

/* How VGF delegates run their graphs. AUTO: natively through VK_ARM_data_graph
 * (data-graph pipelines on VK_ARM_tensors that alias the delegate's buffers)
 * where the context's device has GPUU_FEATURE_DATA_GRAPH, otherwise on gpuu's
 * TOSA executor (its own Vulkan compute kernels). NATIVE: the native path or
 * GPUU_ERROR_UNSUPPORTED naming why not. EXECUTOR: always gpuu's executor.
 * The "[VGF] init:" log line says which path each delegate took and why.
 * Since 0.6 this is VgfBackend's option "data_graph_path" (values "auto",
 * "native", "executor": see gpuu_backend_option); the enum and
 * gpuu_session_options.vgf_path stay for 0.x callers. */
typedef enum gpuu_vgf_path {
  GPUU_VGF_PATH_AUTO = 0,
  GPUU_VGF_PATH_NATIVE = 1,
  GPUU_VGF_PATH_EXECUTOR = 2,
  GPUU_VGF_PATH_FORCE32 = 0x7FFFFFFF
} gpuu_vgf_path;

/* "auto", "native", "executor". As gpuu_log_level_name and
 * gpuu_log_level_from_name. Added in 0.6. */
GPUU_API const char* gpuu_vgf_path_name(gpuu_vgf_path path);
GPUU_API gpuu_status gpuu_vgf_path_from_name(const char* name, gpuu_vgf_path* out);

/* One load-time option of one backend: `key` set to `value` for every
 * delegate of backend `backend` (an array element: set struct_size with
 * gpuu_backend_option_init). Each backend, built in or plugin, declares the
 * keys it takes, each with its allowed values (or free-form) and default;
 * `gpuu-inspect --backends` lists them. VgfBackend takes "data_graph_path"
 * ("auto", "native" or "executor": see gpuu_vgf_path). Added in 0.6. */
typedef struct gpuu_backend_option {
  uint32_t struct_size;
  const char* backend; /* a registered backend id: "VgfBackend", a plugin's id */
  const char* key;
  const char* value;
} gpuu_backend_option;

/* Fills `option` with no backend, key or value. Never fails. Added in 0.6. */
GPUU_API void gpuu_backend_option_init_sized(gpuu_backend_option* option, size_t struct_size);
#define gpuu_backend_option_init(option) gpuu_backend_option_init_sized((option), sizeof(*(option)))

typedef struct gpuu_session_options {
  uint32_t struct_size;
  /* Token, group, mode, sync mode over the file's; NULL overrides nothing. */
  const gpuu_context_overrides* overrides;
  /* When a delegate creates the context; NULL: gpuu_device_options_init's. */
  const gpuu_device_options* device;
  /* Default GPUU_VGF_PATH_AUTO. Any other value is the backend option
   * VgfBackend:data_graph_path; setting both to different values is an error. */
  gpuu_vgf_path vgf_path;
  /* Added in 0.4: nonzero measures each delegate's GPU time with timestamps
   * (gpuu_execute_stats.gpu_time_us). They serialise the GPU (several
   * microseconds per delegate on a discrete GPU), so the default 0 is for
   * running and 1 for profiling. */
  uint32_t gpu_timing;
  /* Added in 0.4: how long a host wait polls the GPU's progress before it
   * sleeps, in microseconds (a sleeping wait wakes tens of microseconds
   * late; polling keeps one host core busy). Negative, the default: 1000 on
   * a GPU, 0 on a CPU device such as lavapipe. */
  double wait_spin_us;
  /* Added in 0.6: load-time options of backends, backend_options[0..count)
   * (borrowed for the call); default none. Each delegate's backend receives
   * its own, every key it declares set to the value given or its default. */
  const gpuu_backend_option* backend_options;
  size_t backend_option_count;
  /* Added in 0.6: nonzero profiles every execute (gpuu_session_profile_json):
   * a GPU timestamp after every dispatch, which serialises the GPU (each
   * dispatch waits for the one before it, so a profiled execute runs slower
   * than a plain one), and each delegate's GPU time. The first profiling
   * session on a context measures the device's peak rates with a few short
   * kernels (memory bandwidth, f32 FMA and, with cooperative matrices, f16
   * matrix throughput; well under a second on a GPU), since Vulkan reports
   * none; profiles give achieved rates as fractions of them. Default 0. */
  uint32_t profile;
  /* Added in 0.8: for a program with dims, how many sets of sizes a session
   * keeps ready at once (each the program specialized there, its pipelines
   * and recorded work; the least recently used goes when one more is
   * needed). Their device memory is one, planned for the dims' upper bounds:
   * a session makes the program there first, as one of them. 0, the
   * default, means 4. */
  uint32_t max_shape_variants;
  /* Added in 0.9: the device memory the session may take, in bytes
   * (gpuu_session_memory's figures, weights counted where the session
   * uploads them: those already on the device for another session are
   * free); 0, the default, means no limit. gpuu_session_create plans the
   * need from the program before it allocates anything (`gpuu-inspect
   * --memory PROGRAM` prints the plan) and checks again once the delegates
   * are made (a backend's scratch is known only then): over the limit it
   * returns GPUU_ERROR_OUT_OF_MEMORY, the message naming the need, its parts
   * and the limit, and nothing of the session is left. */
  uint64_t device_memory_limit;
  /* Added in 0.9: a file that keeps the driver's compiled pipelines across
   * processes (borrowed for the call), or NULL, the default, for none. At
   * session create the device's pipeline cache is seeded from it, so that
   * pipelines compiled by an earlier process are not compiled again; its
   * data is written back (to a temporary file renamed over it) after
   * session create and at session destroy where it grew. The file names the
   * device and driver it was made on: one made elsewhere, truncated or
   * damaged, or one that cannot be read, is ignored with one GPUU_LOG_WARN
   * message naming the path and why, and replaced when written back; one
   * that cannot be written gives a warning too. Never a failure. Sessions on
   * one device share one cache, so each file gets every pipeline the device
   * made so far. */
  const char* pipeline_cache_path;
} gpuu_session_options;

GPUU_API void gpuu_session_options_init_sized(gpuu_session_options* options, size_t struct_size);
#define gpuu_session_options_init(options) gpuu_session_options_init_sized((options), sizeof(*(options)))

/* Initialises every delegate through its backend (each resolves the shared
 * context by its compile specs and `options`, and makes its own command
 * pool). Before any delegate initialises, the backend options are checked
 * against the backends' declarations: GPUU_ERROR_INVALID_ARGUMENT names every
 * bad one at once (a backend id not registered, listing the registered ones;
 * a key the backend does not declare, listing its keys; a value outside the
 * key's allowed values, listing them; a key set twice; a NULL string; vgf_path
 * against a different VgfBackend:data_graph_path). An option for a registered
 * backend the program has no delegate of is accepted. Delegate failures name
 * the delegate: GPUU_ERROR_NOT_FOUND (lookup_only and nothing registered),
 * GPUU_ERROR_ALREADY_EXISTS (create_only and the key is taken),
 * GPUU_ERROR_UNSUPPORTED (a backend or device feature is missing),
 * GPUU_ERROR_INVALID_FORMAT; GPUU_ERROR_OUT_OF_MEMORY where the session would
 * pass options->device_memory_limit (0.9), naming the need, its parts and the
 * limit. On success *out is the caller's. Thread-safe
 * with respect to other sessions. */
GPUU_API gpuu_status gpuu_session_create(const gpuu_program* program, const gpuu_session_options* options,
                                         gpuu_session** out);

/* Waits for the session's GPU work, destroys its delegates (each drops its
 * reference to the shared context) and frees it. NULL is ignored. */
GPUU_API void gpuu_session_destroy(gpuu_session* session);

/* A program input or output. `name` and `shape` are borrowed from the session. */
typedef struct gpuu_tensor_info {
  uint32_t struct_size;
  const char* name;
  gpuu_dtype dtype;
  uint32_t rank;
  const int64_t* shape;
  size_t byte_size;
} gpuu_tensor_info;

GPUU_API size_t gpuu_session_input_count(const gpuu_session* session);
GPUU_API size_t gpuu_session_output_count(const gpuu_session* session);
/* Fills `out` (struct_size set) for input/output `index`; GPUU_ERROR_INVALID_ARGUMENT when out of range. */
GPUU_API gpuu_status gpuu_session_input_info(const gpuu_session* session, size_t index, gpuu_tensor_info* out);

/* Dynamic sizes (added in 0.8). Sets every input's shape for what follows:
 * shapes[0..count) holds input 0's shape, then input 1's, and so on, each
 * of the input's rank (gpuu_session_input_info), count their sum. Fixed
 * axes must be the program's; an axis that is a dim on its own sets it, and
 * every axis that follows dims must agree. GPUU_ERROR_INVALID_ARGUMENT names
 * every problem at once: the dim and its bounds, the inputs that disagree,
 * the axis; nothing changes then. New sizes run the program specialized
 * there (preprocessed and initialised on first use, then kept, see
 * gpuu_session_options.max_shape_variants): the inputs' and outputs' shapes
 * and byte sizes change (ask gpuu_session_*_info again; names and shapes it
 * gave before are no longer valid), states carry over, while input data set
 * and buffers bound before do not (set and bind them again). For a static
 * program, shapes equal to the inputs' are accepted and change nothing. */
GPUU_API gpuu_status gpuu_session_set_input_shapes(gpuu_session* session, const int64_t* shapes, size_t count);

/* The size of dim `index` (gpuu_program_dim_info) the session runs at now to
 * *size. GPUU_ERROR_INVALID_ARGUMENT when out of range. Added in 0.8. */
GPUU_API gpuu_status gpuu_session_dim(const gpuu_session* session, size_t index, int64_t* size);

/* How many sets of sizes the session holds ready, the one it runs at
 * included: each the program specialized and recorded there once, kept until
 * gpuu_session_options.max_shape_variants is reached (the least recently
 * used goes first). 1 for a program without dims; 0 for NULL. Added in 0.9. */
GPUU_API size_t gpuu_session_shape_variant_count(const gpuu_session* session);
GPUU_API gpuu_status gpuu_session_output_info(const gpuu_session* session, size_t index, gpuu_tensor_info* out);

/* Copies input `index` from host memory: `size` must equal its byte size
 * (little-endian elements, row-major). GPUU_ERROR_INVALID_ARGUMENT otherwise,
 * naming the input, its type and both sizes; the session stays usable. */
GPUU_API gpuu_status gpuu_session_set_input(gpuu_session* session, size_t index, const void* data, size_t size);

/* Takes input `index` from `buffer` (a VkBuffer on the delegates' device,
 * with TRANSFER_SRC usage) at every execute, copied on the GPU in the
 * execute's own submit; a null buffer returns to host memory. The
 * application must not write the range while an execute runs. `size` must
 * equal the input's byte size. gpuu_session_bind_buffer (0.4) reads it in
 * place instead where the buffer has STORAGE_BUFFER usage. */
GPUU_API gpuu_status gpuu_session_bind_input_buffer(gpuu_session* session, size_t index, gpuu_vk_buffer buffer,
                                                    uint64_t offset, uint64_t size);

/* Also writes output `index` into `buffer` (TRANSFER_DST usage) at every
 * execute, on the GPU; it is complete when gpuu_session_execute returns. */
GPUU_API gpuu_status gpuu_session_bind_output_buffer(gpuu_session* session, size_t index, gpuu_vk_buffer buffer,
                                                     uint64_t offset, uint64_t size);
/* Which side of the program a binding is on. Added in 0.4. */
typedef enum gpuu_io {
  GPUU_IO_INPUT = 0,
  GPUU_IO_OUTPUT = 1,
  GPUU_IO_FORCE32 = 0x7FFFFFFF
} gpuu_io;
/* Binds `buffer` (a VkBuffer on the delegates' device, created with the
 * VkBufferUsageFlags `usage`) to input or output `index`; a null buffer
 * returns it to host memory. With VK_BUFFER_USAGE_STORAGE_BUFFER_BIT the
 * delegates read or write the range in place, without a copy, where they can:
 * their recorded command buffers are re-pointed at it once, here, never per
 * execute. Where they cannot (a tensor on several devices, a delegate that
 * aliases its own memory such as the native VGF path, an offset that is not
 * a multiple of the device's minStorageBufferOffsetAlignment) or without
 * storage usage, a GPU copy in each execute's submit moves it, which needs
 * TRANSFER_SRC (input) or TRANSFER_DST (output) usage.
 * GPUU_ERROR_INVALID_ARGUMENT names a wrong size, a usage that allows neither,
 * or an output range overlapping another bound range. Added in 0.4. */
GPUU_API gpuu_status gpuu_session_bind_buffer(gpuu_session* session, gpuu_io io, size_t index, gpuu_vk_buffer buffer,
                                              uint64_t offset, uint64_t size, uint32_t usage);
/* 1 when input or output `index` is bound to a buffer used in place, 0 when
 * it is copied, unbound or out of range. Added in 0.4. */
GPUU_API int gpuu_session_binding_in_place(const gpuu_session* session, gpuu_io io, size_t index);

/* Runs the plan: delegates are submitted in order, chained on the context's
 * timeline semaphore (or as the sync mode says); the host waits only before
 * a CPU-fallback step that needs GPU data and once at the end. Returns when
 * the outputs are ready. GPUU_ERROR_FAILED_PRECONDITION when an input was
 * never set. After a failure the session stays usable. */
GPUU_API gpuu_status gpuu_session_execute(gpuu_session* session);

/* Copies output `index` of the last successful execute into `data`; `size`
 * must equal its byte size. Outputs stay in device memory: the host reads
 * them through one staging copy, made in the execute's own submit for an
 * output read after the previous execute, else here, on demand. */
GPUU_API gpuu_status gpuu_session_get_output(const gpuu_session* session, size_t index, void* data, size_t size);

/* Program states. A program may keep tensors from one execute to the next:
 * a model's KV cache, running statistics or step counter (the buffers its
 * forward mutates, torch.export's mutated buffers). Each session has its
 * own, set to the initial values the program file holds when the session is
 * created; an execute reads them and leaves them updated. They stay where
 * the delegates run (a device buffer updated in place where the delegate
 * computing the update can, else copied over on the GPU after the execute;
 * host memory where only CPU-fallback steps touch them): they come to the
 * host only through gpuu_session_get_state. States are neither inputs nor
 * outputs. After a failed execute a state holds its old or its new value;
 * set or reset it to be sure. The functions of this section were added in
 * 0.7. */

/* The number of states; 0 for NULL or a program without states. */
GPUU_API size_t gpuu_session_state_count(const gpuu_session* session);

/* Fills `out` (struct_size set) for state `index`: its name (the model's
 * buffer name, "cache" or "layers.0.attn.k_cache"), dtype, shape and byte
 * size; borrowed from the session. GPUU_ERROR_INVALID_ARGUMENT when out of
 * range. */
GPUU_API gpuu_status gpuu_session_state_info(const gpuu_session* session, size_t index, gpuu_tensor_info* out);

/* The index of the state named `name` to *index. GPUU_ERROR_NOT_FOUND
 * naming `name` and the program's states; GPUU_ERROR_INVALID_ARGUMENT for
 * NULL arguments. */
GPUU_API gpuu_status gpuu_session_state_index(const gpuu_session* session, const char* name, size_t* index);

/* Copies state `index` into `data`; `size` must equal its byte size. It is
 * the initial value, what gpuu_session_set_state wrote, or what the last
 * execute left; a state on the device is read through one staging copy.
 * GPUU_ERROR_INVALID_ARGUMENT for a bad index, a wrong size or NULL data,
 * naming the state; the session stays usable. */
GPUU_API gpuu_status gpuu_session_get_state(const gpuu_session* session, size_t index, void* data, size_t size);

/* Replaces state `index` with `size` bytes at `data` (its byte size;
 * little-endian elements, row-major), which the next execute reads: to seed
 * a cache, say. Errors as gpuu_session_get_state's. */
GPUU_API gpuu_status gpuu_session_set_state(gpuu_session* session, size_t index, const void* data, size_t size);

/* Sets every state back to its initial value. GPUU_ERROR_INVALID_ARGUMENT
 * for a NULL session. */
GPUU_API gpuu_status gpuu_session_reset_state(gpuu_session* session);

/* 1 when the delegate that computes state `index`'s update writes it into
 * the state's own device memory (no second buffer, no copy per execute), 0
 * when the update is copied over after each execute, or for a bad index. */
GPUU_API int gpuu_session_state_in_place(const gpuu_session* session, size_t index);

/* What the last execute did: submits, host waits, host copies between devices. */
typedef struct gpuu_execute_stats {
  uint32_t struct_size;
  uint32_t delegate_submits;
  uint32_t host_waits;
  uint32_t host_copies;
  /* Added in 0.4: vkQueueSubmit calls (delegates sharing a queue go in one,
   * except under GPUU_SYNC_QUEUE_WAIT_IDLE). */
  uint32_t queue_submits;
  /* Added in 0.4: the delegates' GPU time in microseconds, where
   * gpuu_session_options.gpu_timing asked for it; else -1. */
  double gpu_time_us;
} gpuu_execute_stats;
GPUU_API gpuu_status gpuu_session_last_execute_stats(const gpuu_session* session, gpuu_execute_stats* out);

/* Device memory the session holds, in bytes (added in 0.8). A program with
 * dims holds tensors, states and workspaces once for all its sizes, planned
 * for the dims' upper bounds (intermediates: for the largest size made, where
 * the upper bounds could not be); weights, backends' own memory and staging
 * are each size's it keeps ready. */
typedef struct gpuu_session_memory {
  uint32_t struct_size;
  /* Inputs, outputs and tensors passed between steps. */
  uint64_t tensor_bytes;
  /* The program's states (gpuu_session_state_count). */
  uint64_t state_bytes;
  /* Intermediates inside delegates that the runtime gives them (the Vulkan
   * backend's and the VGF backend's executor's). */
  uint64_t workspace_bytes;
  /* Added in 0.9: the constants the session's delegates read on the device.
   * Large ones (weights) are uploaded once per device and shared by every
   * session and delegate that reads the same bytes: each counts once here,
   * and also in other sessions that read it. */
  uint64_t weight_bytes;
  /* Added in 0.9: host-readable copies of outputs and states the host read
   * from device memory it cannot read fast (made on first read; none where
   * the device's memory is the host's, as on lavapipe). */
  uint64_t staging_bytes;
  /* Added in 0.9: device memory backends allocate themselves: the Vulkan
   * kernels' scratch (split-K partials), the native VGF path's intermediate
   * tensors and data-graph session memory. */
  uint64_t backend_private_bytes;
} gpuu_session_memory;
GPUU_API gpuu_status gpuu_session_memory_info(const gpuu_session* session, gpuu_session_memory* out);

/* The last successful execute's profile (gpuu_session_options.profile) as
 * JSON text: "devices", each with its measured peaks ("memory_gbps",
 * "f32_tflops", "f16_matrix_tflops"; null where unknown); "plan", in plan
 * order, each delegate ("kind": "delegate", "index", "backend", "gpu_us")
 * with its "dispatches" (per dispatch: "label", the node or fused nodes it
 * implements; "ops", their gpuu ops; "kernel"; "choice" and "why", the
 * lowering's pick where it made one, as for GEMMs; "gpu_us"; "flops";
 * "bytes", read plus written; "tflops", "gbps" and their fractions of the
 * peaks "flops_of_peak", "bytes_of_peak") and each CPU-fallback step
 * ("kind": "cpu", "node", "op", "host_us"); and "by_op", the dispatches
 * summed per op, most GPU time first. *out is borrowed from the session:
 * valid until its next execute or its destroy. GPUU_ERROR_FAILED_PRECONDITION
 * when the session was created without the profile option, or has not
 * executed successfully yet (the message says which);
 * GPUU_ERROR_INVALID_ARGUMENT for a NULL session or `out`. Added in 0.6. */
GPUU_API gpuu_status gpuu_session_profile_json(const gpuu_session* session, const char** out);

/* The same execute as a Chrome trace (JSON with "traceEvents", for
 * chrome://tracing or Perfetto): one event per dispatch, begin and duration
 * in microseconds, on a track per delegate; CPU-fallback steps on a host
 * track. Steps lie end to end in plan order (the host's and the device's
 * clocks are not aligned). Borrowed and failing as gpuu_session_profile_json.
 * Added in 0.6. */
GPUU_API gpuu_status gpuu_session_profile_trace(const gpuu_session* session, const char** out);

/* The same for people, as gpuu-run --profile prints it: the peaks, the plan's
 * steps with their times, a table per op and the `top` dispatches of most GPU
 * time. Borrowed: valid until the next call of this function on the session,
 * its next execute or its destroy; fails as gpuu_session_profile_json.
 * Added in 0.6. */
GPUU_API gpuu_status gpuu_session_profile_text(const gpuu_session* session, size_t top, const char** out);

/* The sync mode the session runs with (the file's, or the override). */
GPUU_API gpuu_sync_mode gpuu_session_sync_mode(const gpuu_session* session);

/* A new reference to the context the session's GPU delegates run on (the
 * first delegate's); GPUU_ERROR_NOT_FOUND for a program without GPU delegates. */
GPUU_API gpuu_status gpuu_session_get_context(const gpuu_session* session, gpuu_context** out);

/* ------------------------------------------------------------------------ */
/* Backends and plugins                                                     */
/* ------------------------------------------------------------------------ */

/* Backends are named by id: the built-in ones ("VulkanBackend", "VgfBackend")
 * and those loaded from plugin files (include/gpuu_backend.h, docs/plugins.md).
 * Each declares the load-time options it takes (gpuu_backend_option).
 * The environment variable GPUU_BACKEND_PATH (':'-separated absolute paths of
 * directories or plugin files) is read once, when any function here, or a
 * session, first needs the backend list; refusals there are logged. The
 * functions of this section were added in 0.3. */

/* Loads the plugins `path_list` names (same syntax as GPUU_BACKEND_PATH). A
 * directory is scanned in name order for files with ".so" in their name; each
 * must be named <vendor>_<name>_backend.so[.N...], export
 * gpuu_backend_plugin_get, declare a compatible plugin API version (same
 * major, minor <= GPUU_BACKEND_API_VERSION_MINOR), fill every vtable function,
 * declare its load-time options well-formed (API 1.1) and bring an id no
 * backend has yet. A file already loaded (by canonical
 * path) is skipped. A refused file or path does not stop the others: the call
 * returns GPUU_ERROR_INVALID_ARGUMENT and gpuu_last_error() lists every
 * refusal as "<path>: <why>", one per line. *out_loaded (may be NULL) counts
 * the backends this call registered. Plugins stay loaded for the life of the
 * process. Thread-safe. */
GPUU_API gpuu_status gpuu_backends_load(const char* path_list, size_t* out_loaded);

/* How many backends are registered: built-in first, then plugins in load order. */
GPUU_API size_t gpuu_backends_count(void);

/* The id of backend `index` (registration order), or NULL past the end.
 * Borrowed, valid forever (backends are never unregistered). Thread-safe. */
GPUU_API const char* gpuu_backends_id(size_t index);

/* The backend's own version (a plugin's backend_version), 0 past the end. */
GPUU_API uint32_t gpuu_backends_version(size_t index);

/* The canonical path of the plugin file backend `index` came from, or NULL for
 * a built-in backend or past the end. Borrowed, valid forever. */
GPUU_API const char* gpuu_backends_plugin_path(size_t index);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* GPUU_H_ */
