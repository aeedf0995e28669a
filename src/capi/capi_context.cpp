// C ABI: shared GPU contexts. A gpuu_context* is one counted reference that
// wraps one std::shared_ptr to the context.
#include <atomic>
#include <cstring>

#include "capi/capi_common.h"
#include "context/shared_gpu_context_registry.h"
#include "context/vulkan_bootstrap.h"

struct gpuu_context {
  gpuu::SharedGpuContextPtr ptr;
  std::atomic<int32_t> refs{1};
};

using namespace gpuu;
using namespace gpuu::capi;

namespace gpuu::capi {
namespace {

static_assert(static_cast<uint32_t>(kFeatureStorageBuffer8Bit) == static_cast<uint32_t>(GPUU_FEATURE_STORAGE_BUFFER_8BIT),
              "features drifted");
static_assert(static_cast<uint32_t>(kFeatureDataGraph) == static_cast<uint32_t>(GPUU_FEATURE_DATA_GRAPH),
              "features drifted");
static_assert(static_cast<uint32_t>(kFeatureVulkanMemoryModel) ==
                  static_cast<uint32_t>(GPUU_FEATURE_VULKAN_MEMORY_MODEL),
              "features drifted");
static_assert(static_cast<uint32_t>(kFeatureCooperativeMatrix) ==
                  static_cast<uint32_t>(GPUU_FEATURE_COOPERATIVE_MATRIX),
              "features drifted");
static_assert(static_cast<uint32_t>(kFeatureShaderIntegerDotProduct) ==
                  static_cast<uint32_t>(GPUU_FEATURE_SHADER_INTEGER_DOT_PRODUCT),
              "features drifted");
static_assert(static_cast<uint32_t>(kFeatureCooperativeMatrixWorkgroup) ==
                  static_cast<uint32_t>(GPUU_FEATURE_COOPERATIVE_MATRIX_WORKGROUP),
              "features drifted");

gpuu_context* wrap(SharedGpuContextPtr ptr) { return wrap_context(std::move(ptr)); }

gpuu_status check_token(const char* function, const char* token) {
  if (!token || !*token) return fail_invalid(function, ": the token is NULL or empty");
  if (std::strlen(token) > GPUU_MAX_TOKEN_LENGTH) {
    return fail_invalid(function, ": the token is longer than ", GPUU_MAX_TOKEN_LENGTH, " bytes");
  }
  return GPUU_OK;
}

DeviceOptions to_device_options(const gpuu_device_options& o) {
  DeviceOptions d;
  if (o.device) d.device = o.device;
  d.validation = o.enable_validation != 0;
  return d;
}

}  // namespace

gpuu_context* wrap_context(SharedGpuContextPtr ctx) {
  auto* c = new gpuu_context;
  c->ptr = std::move(ctx);
  return c;
}
}  // namespace gpuu::capi

extern "C" {

// Each *_init_sized has this shape (capi_program.cpp's too): one line per ABI struct, its
// defaults in the lambda; init_sized (capi_common.h) holds the logic they share.
GPUU_API void gpuu_device_options_init_sized(gpuu_device_options* p, size_t struct_size) {
  init_sized(p, struct_size, [](gpuu_device_options*) {});
}

GPUU_API void gpuu_context_resolve_options_init_sized(gpuu_context_resolve_options* options, size_t struct_size) {
  init_sized(options, struct_size, [](gpuu_context_resolve_options* options) {
    set_context_defaults(options);
    options->device = nullptr;
  });
}

GPUU_API void gpuu_external_context_desc_init_sized(gpuu_external_context_desc* desc, size_t struct_size) {
  init_sized(desc, struct_size, [](gpuu_external_context_desc* desc) {
    desc->ownership = GPUU_OWN_NOTHING;
  });
}

GPUU_API gpuu_status gpuu_context_resolve(const gpuu_context_resolve_options* options, gpuu_context** out) {
  return guarded(__func__, [&]() -> gpuu_status {
    constexpr const char* kFn = "gpuu_context_resolve";
    gpuu_context_resolve_options given;
    if (!read_sized(options, &gpuu_context_resolve_options_init_sized, &given)) {
      return fail_struct_size(kFn, "options", options);
    }
    options = &given;
    gpuu_device_options device;
    if (options->device && !read_sized(options->device, &gpuu_device_options_init_sized, &device)) {
      return fail_struct_size(kFn, "options->device", options->device);
    }
    if (!options->device) gpuu_device_options_init(&device);
    if (!out) return fail_invalid("gpuu_context_resolve: `out` is NULL");
    *out = nullptr;
    if (gpuu_status s = check_token("gpuu_context_resolve", options->token)) return s;
    if (options->mode < GPUU_CONTEXT_DISABLED || options->mode > GPUU_CONTEXT_CREATE_ONLY) {
      return fail_invalid("gpuu_context_resolve: unknown mode value ", static_cast<int>(options->mode));
    }
    if (options->group_id < 0) return fail_invalid("gpuu_context_resolve: group_id ", options->group_id, " is < 0");
    SharedGpuCompileSpec spec;
    spec.token = options->token;
    spec.group_id = options->group_id;
    spec.context_mode = static_cast<ContextMode>(options->mode);
    spec.present = true;
    Result<SharedGpuContextPtr> ctx = resolve_shared_context(spec, vulkan_context_factory(to_device_options(device)));
    if (!ctx.ok()) return fail(ctx.status());
    *out = wrap(ctx.value());
    return GPUU_OK;
  });
}

GPUU_API gpuu_status gpuu_context_lookup(const char* token, int64_t group_id, gpuu_context** out) {
  return guarded(__func__, [&]() -> gpuu_status {
    if (!out) return fail_invalid("gpuu_context_lookup: `out` is NULL");
    *out = nullptr;
    if (gpuu_status s = check_token("gpuu_context_lookup", token)) return s;
    SharedGpuContextPtr ctx = SharedGpuContextRegistry::get().lookup(ContextKey{token, group_id});
    if (!ctx) {
      return fail(err(StatusCode::kNotFound, "no shared GPU context is registered under token '", token, "' group ",
                      group_id));
    }
    *out = wrap(std::move(ctx));
    return GPUU_OK;
  });
}

GPUU_API gpuu_status gpuu_context_register_external(const gpuu_external_context_desc* desc, gpuu_context** out) {
  return guarded(__func__, [&]() -> gpuu_status {
    if (out) *out = nullptr;
    gpuu_external_context_desc given;
    if (!read_sized(desc, &gpuu_external_context_desc_init_sized, &given)) {
      return fail_struct_size("gpuu_context_register_external", "desc", desc);
    }
    desc = &given;
    if (gpuu_status s = check_token("gpuu_context_register_external", desc->token)) return s;
    if (desc->group_id < 0) {
      return fail_invalid("gpuu_context_register_external: group_id ", desc->group_id, " is < 0");
    }
    if (desc->ownership & ~static_cast<uint32_t>(GPUU_OWN_INSTANCE | GPUU_OWN_DEVICE | GPUU_OWN_TIMELINE_SEMAPHORE)) {
      return fail_invalid("gpuu_context_register_external: unknown ownership bits 0x", std::hex, desc->ownership);
    }
    if (desc->enabled_device_extension_count && !desc->enabled_device_extensions) {
      return fail_invalid("gpuu_context_register_external: enabled_device_extensions is NULL but its count is ",
                          desc->enabled_device_extension_count);
    }
    ContextKey key{desc->token, desc->group_id};
    SharedGpuContextCreateInfo info;
    info.token = desc->token;
    info.group_id = desc->group_id;
    info.instance = desc->instance;
    info.physical_device = desc->physical_device;
    info.device = desc->device;
    info.queue = desc->queue;
    info.queue_family_index = desc->queue_family_index;
    info.timeline_semaphore = reinterpret_cast<VkSemaphore>(desc->timeline_semaphore);
    info.owns_instance = desc->ownership & GPUU_OWN_INSTANCE;
    info.owns_device = desc->ownership & GPUU_OWN_DEVICE;
    info.owns_timeline_semaphore = (desc->ownership & GPUU_OWN_TIMELINE_SEMAPHORE) && desc->timeline_semaphore;
    info.get_instance_proc_addr = reinterpret_cast<PFN_vkGetInstanceProcAddr>(desc->get_instance_proc_addr);
    info.external_queue_lock = ExternalQueueLock{desc->queue_lock, desc->queue_unlock, desc->queue_lock_user_data};
    for (uint32_t i = 0; i < desc->enabled_device_extension_count; ++i) {
      if (!desc->enabled_device_extensions[i]) {
        return fail_invalid("gpuu_context_register_external: enabled_device_extensions[", i, "] is NULL");
      }
      info.enabled_device_extensions.emplace_back(desc->enabled_device_extensions[i]);
    }
    info.enabled_features = desc->enabled_features;
    // Taking the key and wrapping the handles is one step under the registry's
    // lock: a caller that loses the key never wraps (and so never destroys)
    // handles another caller registered.
    Result<SharedGpuContextPtr> ctx = SharedGpuContextRegistry::get().create_registered(
        key, [&] { return SharedGpuContext::create(std::move(info)); });
    if (!ctx.ok()) {
      return fail(err(ctx.status().code(), "gpuu_context_register_external: ", ctx.status().message()));
    }
    if (out) *out = wrap(ctx.value());
    return GPUU_OK;
  });
}

GPUU_API gpuu_status gpuu_context_unregister(const char* token, int64_t group_id) {
  return guarded(__func__, [&]() -> gpuu_status {
    if (gpuu_status s = check_token("gpuu_context_unregister", token)) return s;
    return to_c(SharedGpuContextRegistry::get().unregister(ContextKey{token, group_id}));
  });
}

GPUU_API gpuu_context* gpuu_context_retain(gpuu_context* context) {
  if (context) context->refs.fetch_add(1);
  return context;
}

GPUU_API void gpuu_context_release(gpuu_context* context) {
  if (context && context->refs.fetch_sub(1) == 1) delete context;
}

GPUU_API gpuu_status gpuu_context_get_vulkan_handles(const gpuu_context* context, gpuu_vulkan_handles* out) {
  return guarded(__func__, [&]() -> gpuu_status {
    if (!context) return fail_invalid("gpuu_context_get_vulkan_handles: context is NULL");
    gpuu_vulkan_handles h{};
    h.struct_size = sizeof(h);
    const SharedGpuContext& c = *context->ptr;
    h.instance = c.instance();
    h.physical_device = c.physical_device();
    h.device = c.device();
    h.queue = c.queue();
    h.queue_family_index = c.queue_family_index();
    h.timeline_semaphore = reinterpret_cast<gpuu_vk_semaphore>(c.timeline_semaphore());
    h.ownership = (c.owns_instance() ? GPUU_OWN_INSTANCE : 0) | (c.owns_device() ? GPUU_OWN_DEVICE : 0) |
                     (c.owns_timeline_semaphore() ? GPUU_OWN_TIMELINE_SEMAPHORE : 0);
    h.api_version = c.properties().apiVersion;
    h.enabled_features = c.enabled_features();
    if (!write_sized(h, out)) return fail_struct_size("gpuu_context_get_vulkan_handles", "out", out);
    return GPUU_OK;
  });
}

GPUU_API const char* gpuu_context_device_name(const gpuu_context* context) {
  return context ? context->ptr->properties().deviceName : nullptr;
}

GPUU_API const char* gpuu_context_token(const gpuu_context* context) {
  return context ? context->ptr->token().c_str() : nullptr;
}

GPUU_API int64_t gpuu_context_group_id(const gpuu_context* context) {
  return context ? context->ptr->group_id() : 0;
}

GPUU_API uint32_t gpuu_context_extension_count(const gpuu_context* context) {
  return context ? static_cast<uint32_t>(context->ptr->enabled_device_extensions().size()) : 0;
}

GPUU_API const char* gpuu_context_extension_name(const gpuu_context* context, uint32_t index) {
  if (!context || index >= context->ptr->enabled_device_extensions().size()) return nullptr;
  return context->ptr->enabled_device_extensions()[index].c_str();
}

GPUU_API gpuu_status gpuu_enumerate_devices(uint32_t index, char* name, size_t name_size, int32_t* type) {
  return guarded(__func__, [&]() -> gpuu_status {
    if (!name || name_size == 0) return fail_invalid("gpuu_enumerate_devices: `name` is NULL or name_size is 0");
    Result<std::vector<PhysicalDeviceInfo>> devices = enumerate_physical_devices();
    if (!devices.ok()) return fail(devices.status());
    if (index >= devices.value().size()) {
      return fail(err(StatusCode::kNotFound, "gpuu_enumerate_devices: index ", index, " is past the last of ",
                      devices.value().size(), " devices"));
    }
    const PhysicalDeviceInfo& d = devices.value()[index];
    std::strncpy(name, d.name.c_str(), name_size - 1);
    name[name_size - 1] = '\0';
    if (type) *type = static_cast<int32_t>(d.type);
    return GPUU_OK;
  });
}

}  // extern "C"
