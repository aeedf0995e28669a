/*
 * gpuu.h: the one public header of gpuu, a C SDK that runs one exported ML
 * program across two GPU backends (VGF and Vulkan) sharing one Vulkan device.
 *
 * ABI policy: within a major version only additions are made. Option structs
 * begin with `struct_size`; set it with the matching *_init() function, which
 * fills the defaults, so that fields added later keep their defaults for old
 * callers. Enums are fixed at 32 bits.
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

#define GPUU_VERSION_MAJOR 0
#define GPUU_VERSION_MINOR 1
#define GPUU_VERSION_PATCH 0
/* (major << 22) | (minor << 12) | patch, as Vulkan packs its versions. */
#define GPUU_MAKE_VERSION(major, minor, patch) \
  ((((uint32_t)(major)) << 22) | (((uint32_t)(minor)) << 12) | ((uint32_t)(patch)))
#define GPUU_VERSION GPUU_MAKE_VERSION(GPUU_VERSION_MAJOR, GPUU_VERSION_MINOR, GPUU_VERSION_PATCH)

/* The version of the library loaded at run time, packed as GPUU_VERSION.
 * Compare its major with GPUU_VERSION_MAJOR to detect a mismatched library.
 * Thread-safe; never fails. */
GPUU_API uint32_t gpuu_version(void);

/* The same version as static text, "0.1.0". Borrowed, valid forever. */
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
typedef void (*gpuu_vk_void_function)(void);
/* PFN_vkGetInstanceProcAddr */
typedef gpuu_vk_void_function (*gpuu_vk_get_instance_proc_addr)(gpuu_vk_instance instance, const char* name);

/* ------------------------------------------------------------------------ */
/* Shared compile specs                                                     */
/* ------------------------------------------------------------------------ */

/* The six keys both GPU backends read from a delegate's compile specs. Values
 * are bytes: UTF-8 text for names and modes, ASCII decimal for integers. */
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

/* One compile spec: a key and its value bytes (not NUL-terminated). */
typedef struct gpuu_compile_spec {
  const char* key;
  const void* value;
  size_t value_size;
} gpuu_compile_spec;

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
GPUU_API void gpuu_context_overrides_init(gpuu_context_overrides* overrides);

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

/* Fills `spec` with the RFC's defaults: token "default", group 0,
 * lookup_or_create, timeline, min_partition_size 3, prefer auto. */
GPUU_API void gpuu_shared_spec_init(gpuu_shared_spec* spec);

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

GPUU_API void gpuu_device_options_init(gpuu_device_options* options);

typedef struct gpuu_context_resolve_options {
  uint32_t struct_size;
  const char* token;        /* default "default"; must not be empty */
  int64_t group_id;         /* default 0 */
  gpuu_context_mode mode;   /* default GPUU_CONTEXT_LOOKUP_OR_CREATE */
  gpuu_device_options device;
} gpuu_context_resolve_options;

GPUU_API void gpuu_context_resolve_options_init(gpuu_context_resolve_options* options);

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
  /* Optional. The device extensions the application enabled on `device`. */
  const char* const* enabled_device_extensions;
  uint32_t enabled_device_extension_count;
  /* gpuu_device_features the application enabled on `device`; backends use
   * only what is named here (f16 kernels need SHADER_FLOAT16 and
   * STORAGE_BUFFER_16BIT, i64 indices SHADER_INT64, ...). */
  uint32_t enabled_features;
} gpuu_external_context_desc;

GPUU_API void gpuu_external_context_desc_init(gpuu_external_context_desc* desc);

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
/* @@GRAPH_API@@ */

/* ------------------------------------------------------------------------ */
/* Partitioning                                                             */
/* ------------------------------------------------------------------------ */
/* @@PARTITION_API@@ */

/* ------------------------------------------------------------------------ */
/* Program files                                                            */
/* ------------------------------------------------------------------------ */
/* @@PROGRAM_API@@ */

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* GPUU_H_ */
