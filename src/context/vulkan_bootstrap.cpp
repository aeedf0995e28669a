// Instance and device creation for gpuu-owned contexts. Validation (with
// synchronization validation) is opt-in; its messages go to the gpuu log.
#include "context/vulkan_bootstrap.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <cstring>

#include "base/log.h"
#include "context/vulkan_arm.h"
#include "context/vulkan_coopmat.h"

namespace gpuu {
namespace {

constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";
std::atomic<uint64_t> g_validation_messages{0};

VKAPI_ATTR VkBool32 VKAPI_CALL on_validation_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                     VkDebugUtilsMessageTypeFlagsEXT,
                                                     const VkDebugUtilsMessengerCallbackDataEXT* data, void*) {
  g_validation_messages.fetch_add(1);
  LogLevel level = (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) ? LogLevel::kError : LogLevel::kWarn;
  log(level, "vulkan.validation", data && data->pMessage ? data->pMessage : "(no message)");
  return VK_FALSE;
}

int device_rank(VkPhysicalDeviceType type) {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 0;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 1;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return 3;
    default: return 4;
  }
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v && (std::strcmp(v, "1") == 0 || std::strcmp(v, "true") == 0 || std::strcmp(v, "on") == 0);
}

bool layer_present(const vk::GlobalFunctions& g, const char* name) {
  uint32_t count = 0;
  if (g.vkEnumerateInstanceLayerProperties(&count, nullptr) != VK_SUCCESS) return false;
  std::vector<VkLayerProperties> layers(count);
  if (g.vkEnumerateInstanceLayerProperties(&count, layers.data()) != VK_SUCCESS) return false;
  for (const auto& l : layers) {
    if (std::strcmp(l.layerName, name) == 0) return true;
  }
  return false;
}

bool instance_extension_present(const vk::GlobalFunctions& g, const char* name) {
  uint32_t count = 0;
  if (g.vkEnumerateInstanceExtensionProperties(nullptr, &count, nullptr) != VK_SUCCESS) return false;
  std::vector<VkExtensionProperties> exts(count);
  if (g.vkEnumerateInstanceExtensionProperties(nullptr, &count, exts.data()) != VK_SUCCESS) return false;
  for (const auto& e : exts) {
    if (std::strcmp(e.extensionName, name) == 0) return true;
  }
  return false;
}

// GPUU_VULKAN_LAYERS: instance layers gpuu enables, in order, on the
// instances it creates (Arm's emulation layers: graph, then tensor).
std::vector<std::string> layer_list_from_env() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    const char* env = std::getenv("GPUU_VULKAN_LAYERS");
    std::string item;
    for (const char* p = env ? env : ""; ; ++p) {
      if (*p == ',' || *p == ':' || *p == '\0') {
        if (!item.empty()) out.push_back(item);
        item.clear();
        if (*p == '\0') break;
      } else if (!std::isspace(static_cast<unsigned char>(*p))) {
        item += *p;
      }
    }
    return out;
  }();
  return names;
}

// An instance that is destroyed unless released to a context.
struct InstanceHolder {
  VkInstance instance = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
  vk::InstanceFunctions fns;
  ~InstanceHolder() {
    if (messenger && fns.vkDestroyDebugUtilsMessengerEXT) fns.vkDestroyDebugUtilsMessengerEXT(instance, messenger, nullptr);
    if (instance && fns.vkDestroyInstance) fns.vkDestroyInstance(instance, nullptr);
  }
};

struct CreatedInstance {
  vk::GlobalFunctions global;
  std::shared_ptr<InstanceHolder> holder;
  uint32_t api_version = VK_API_VERSION_1_2;  // the instance's (VkApplicationInfo::apiVersion)
};

Result<CreatedInstance> create_instance(bool validation) {
  GPUU_ASSIGN_OR_RETURN(vk::GlobalFunctions global, vk::system_loader());
  uint32_t instance_version = VK_API_VERSION_1_0;
  if (global.vkEnumerateInstanceVersion) global.vkEnumerateInstanceVersion(&instance_version);
  if (instance_version < VK_API_VERSION_1_2) {
    return err(StatusCode::kUnsupported, "the Vulkan loader offers version ", VK_API_VERSION_MAJOR(instance_version),
               ".", VK_API_VERSION_MINOR(instance_version), "; gpuu needs 1.2 or newer");
  }

  std::vector<const char*> layers;
  std::vector<const char*> extensions;
  bool use_debug_utils = false;
  std::vector<std::string> extra = layer_list_from_env();
  for (const std::string& name : extra) {
    if (!layer_present(global, name.c_str())) {
      return err(StatusCode::kNotFound, "GPUU_VULKAN_LAYERS names layer '", name,
                 "', which the Vulkan loader does not find (is VK_LAYER_PATH set?)");
    }
    layers.push_back(name.c_str());
  }
  if (validation) {
    if (layer_present(global, kValidationLayer)) {
      layers.push_back(kValidationLayer);
      if (instance_extension_present(global, VK_EXT_DEBUG_UTILS_EXTENSION_NAME)) {
        extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
        use_debug_utils = true;
      }
    } else {
      log(LogLevel::kWarn, "context", "validation requested but ", kValidationLayer,
          " is not installed (Debian: vulkan-validationlayers); continuing without it");
    }
  }

  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "gpuu";
  app.pEngineName = "gpuu";
  app.apiVersion = std::min<uint32_t>(instance_version, VK_API_VERSION_1_3);

  VkDebugUtilsMessengerCreateInfoEXT messenger_info{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  messenger_info.messageSeverity =
      VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  messenger_info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                               VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                               VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  messenger_info.pfnUserCallback = on_validation_message;

  VkValidationFeatureEnableEXT enables[] = {VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
  VkValidationFeaturesEXT features{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
  features.enabledValidationFeatureCount = 1;
  features.pEnabledValidationFeatures = enables;

  VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  info.pApplicationInfo = &app;
  info.enabledLayerCount = static_cast<uint32_t>(layers.size());
  info.ppEnabledLayerNames = layers.data();
  info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
  if (!layers.empty()) {
    info.pNext = &features;
    if (use_debug_utils) features.pNext = &messenger_info;
  }

  auto holder = std::make_shared<InstanceHolder>();
  GPUU_VK_RETURN_IF_ERROR(global.vkCreateInstance(&info, nullptr, &holder->instance), "vkCreateInstance");
  GPUU_ASSIGN_OR_RETURN(holder->fns, vk::load_instance(global, holder->instance));
  if (use_debug_utils && holder->fns.vkCreateDebugUtilsMessengerEXT) {
    GPUU_VK_RETURN_IF_ERROR(
        holder->fns.vkCreateDebugUtilsMessengerEXT(holder->instance, &messenger_info, nullptr, &holder->messenger),
        "vkCreateDebugUtilsMessengerEXT");
  }
  return CreatedInstance{global, holder, app.apiVersion};
}

struct PhysicalDevices {
  std::vector<VkPhysicalDevice> handles;
  std::vector<PhysicalDeviceInfo> infos;  // same order
};

Result<PhysicalDevices> list_physical_devices(const InstanceHolder& inst) {
  uint32_t count = 0;
  GPUU_VK_RETURN_IF_ERROR(inst.fns.vkEnumeratePhysicalDevices(inst.instance, &count, nullptr),
                          "vkEnumeratePhysicalDevices");
  PhysicalDevices out;
  out.handles.resize(count);
  GPUU_VK_RETURN_IF_ERROR(inst.fns.vkEnumeratePhysicalDevices(inst.instance, &count, out.handles.data()),
                          "vkEnumeratePhysicalDevices");
  out.handles.resize(count);
  for (VkPhysicalDevice d : out.handles) {
    VkPhysicalDeviceProperties p;
    inst.fns.vkGetPhysicalDeviceProperties(d, &p);
    out.infos.push_back(PhysicalDeviceInfo{p.deviceName, p.deviceType, p.apiVersion});
  }
  return out;
}

// The features gpuu enables when the device has them.
struct FeatureChain {
  VkPhysicalDeviceFeatures2 features2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  VkPhysicalDeviceVulkan11Features v11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features v12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  FeatureChain() {
    features2.pNext = &v11;
    v11.pNext = &v12;
  }
};

}  // namespace

uint64_t validation_message_count() { return g_validation_messages.load(); }

bool validation_layer_available() {
  Result<vk::GlobalFunctions> global = vk::system_loader();
  return global.ok() && layer_present(global.value(), kValidationLayer);
}

Result<std::vector<PhysicalDeviceInfo>> enumerate_physical_devices() {
  GPUU_ASSIGN_OR_RETURN(CreatedInstance created, create_instance(false));
  GPUU_ASSIGN_OR_RETURN(PhysicalDevices devices, list_physical_devices(*created.holder));
  return devices.infos;
}

Result<size_t> choose_physical_device(const std::vector<PhysicalDeviceInfo>& devices, const std::string& selector_in) {
  if (devices.empty()) {
    return err(StatusCode::kUnsupported,
               "no Vulkan physical device was found (on a machine without a GPU, install mesa-vulkan-drivers)");
  }
  std::string selector = selector_in;
  const char* source = "device option";
  if (selector.empty()) {
    const char* env = std::getenv("GPUU_DEVICE");
    if (env && *env) {
      selector = env;
      source = "GPUU_DEVICE";
    }
  }
  if (!selector.empty()) {
    bool numeric = std::all_of(selector.begin(), selector.end(), [](unsigned char c) { return std::isdigit(c); });
    if (numeric) {
      size_t index = std::strtoul(selector.c_str(), nullptr, 10);
      if (index >= devices.size()) {
        return err(StatusCode::kNotFound, source, " '", selector, "': index out of range (", devices.size(),
                   " devices)");
      }
      return index;
    }
    for (size_t i = 0; i < devices.size(); ++i) {
      if (lower(devices[i].name).find(lower(selector)) != std::string::npos) return i;
    }
    std::string names;
    for (const auto& d : devices) names += (names.empty() ? "" : ", ") + d.name;
    return err(StatusCode::kNotFound, source, " '", selector, "' matches no device (have: ", names, ")");
  }
  size_t best = 0;
  for (size_t i = 1; i < devices.size(); ++i) {
    if (device_rank(devices[i].type) < device_rank(devices[best].type)) best = i;
  }
  return best;
}

Result<SharedGpuContextPtr> create_vulkan_context(const std::string& token, int64_t group_id,
                                                  const DeviceOptions& options) {
  bool validation = options.validation || env_flag("GPUU_VALIDATION");
  GPUU_ASSIGN_OR_RETURN(CreatedInstance created, create_instance(validation));
  InstanceHolder& inst = *created.holder;

  GPUU_ASSIGN_OR_RETURN(PhysicalDevices devices, list_physical_devices(inst));
  const std::vector<PhysicalDeviceInfo>& infos = devices.infos;
  GPUU_ASSIGN_OR_RETURN(size_t chosen, choose_physical_device(infos, options.device));
  VkPhysicalDevice pd = devices.handles[chosen];
  if (infos[chosen].api_version < VK_API_VERSION_1_2) {
    return err(StatusCode::kUnsupported, "device '", infos[chosen].name, "' supports Vulkan ",
               VK_API_VERSION_MAJOR(infos[chosen].api_version), ".", VK_API_VERSION_MINOR(infos[chosen].api_version),
               "; gpuu needs 1.2 or newer");
  }

  // The driver's extensions, and those of the enabled layers (Arm's emulation
  // layers, say, enabled through VK_INSTANCE_LAYERS), which a query without a
  // layer name leaves out.
  std::vector<VkExtensionProperties> available;
  auto add_extensions = [&](const char* layer) {
    uint32_t count = 0;
    if (inst.fns.vkEnumerateDeviceExtensionProperties(pd, layer, &count, nullptr) != VK_SUCCESS) return;
    std::vector<VkExtensionProperties> list(count);
    if (inst.fns.vkEnumerateDeviceExtensionProperties(pd, layer, &count, list.data()) != VK_SUCCESS) return;
    available.insert(available.end(), list.begin(), list.begin() + count);
  };
  add_extensions(nullptr);
  uint32_t layer_count = 0;
  inst.fns.vkEnumerateDeviceLayerProperties(pd, &layer_count, nullptr);
  std::vector<VkLayerProperties> device_layers(layer_count);
  inst.fns.vkEnumerateDeviceLayerProperties(pd, &layer_count, device_layers.data());
  for (uint32_t i = 0; i < layer_count; ++i) add_extensions(device_layers[i].layerName);
  auto offered = [&](const char* name) {
    return std::any_of(available.begin(), available.end(),
                       [&](const VkExtensionProperties& e) { return std::strcmp(e.extensionName, name) == 0; });
  };
  // The VGF backend's native path needs all three ARM extensions (Arm's
  // emulation layer offers them on any compute device).
  bool data_graph = offered(vk::kTensorsExtension) && offered(vk::kDataGraphExtension) &&
                    offered(vk::kDataGraphTosaExtension);

  // A compute queue: a compute-only family (async compute) first; with the
  // data-graph extensions, one that runs data-graph work too.
  uint32_t family_count = 0;
  inst.fns.vkGetPhysicalDeviceQueueFamilyProperties(pd, &family_count, nullptr);
  std::vector<VkQueueFamilyProperties> families(family_count);
  inst.fns.vkGetPhysicalDeviceQueueFamilyProperties(pd, &family_count, families.data());
  auto pick_family = [&](VkQueueFlags required) {
    int64_t family = -1;
    for (uint32_t i = 0; i < family_count; ++i) {
      if ((families[i].queueFlags & required) != required) continue;
      if (!(families[i].queueFlags & VK_QUEUE_GRAPHICS_BIT)) return static_cast<int64_t>(i);
      if (family < 0) family = i;
    }
    return family;
  };
  int64_t family = -1;
  if (data_graph) {
    family = pick_family(VK_QUEUE_COMPUTE_BIT | VK_QUEUE_DATA_GRAPH_BIT_ARM);
    if (family < 0) {
      log(LogLevel::kWarn, "context", "device '", infos[chosen].name,
          "' offers VK_ARM_data_graph but no queue family runs both compute and data-graph work; "
          "the VGF backend will use gpuu's TOSA executor");
      data_graph = false;
    }
  }
  if (family < 0) family = pick_family(VK_QUEUE_COMPUTE_BIT);
  if (family < 0) return err(StatusCode::kUnsupported, "device '", infos[chosen].name, "' has no compute queue");

  FeatureChain supported;
  VkPhysicalDeviceTensorFeaturesARM tensor_features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TENSOR_FEATURES_ARM};
  VkPhysicalDeviceDataGraphFeaturesARM graph_features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DATA_GRAPH_FEATURES_ARM};
  if (data_graph) {  // only then: a driver without the extensions need not know these structures
    supported.v12.pNext = &tensor_features;
    tensor_features.pNext = &graph_features;
  }
  // The matrix-core GEMM: VK_KHR_cooperative_matrix, and what its shaders
  // also need (f16 arithmetic and storage, the Vulkan memory model glslang
  // puts cooperative-matrix shaders on).
  const bool coopmat_offered = offered(vk::kCooperativeMatrixExtension);
  VkPhysicalDeviceCooperativeMatrixFeaturesKHR coopmat_features{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR};
  if (coopmat_offered) {  // only then, as for the ARM structures
    coopmat_features.pNext = supported.v12.pNext;
    supported.v12.pNext = &coopmat_features;
  }
  // Workgroup-scope matrices (VK_NV_cooperative_matrix2), on top of the above.
  const bool coopmat2_offered = coopmat_offered && offered(vk::kCooperativeMatrix2Extension);
  VkPhysicalDeviceCooperativeMatrix2FeaturesNV coopmat2_features{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV};
  if (coopmat2_offered) {
    coopmat2_features.pNext = supported.v12.pNext;
    supported.v12.pNext = &coopmat2_features;
  }
  // int8 dot products (the tiled conv2d_int / matmul_int kernels' OpSDot):
  // core in Vulkan 1.3, else VK_KHR_shader_integer_dot_product. Its feature
  // structure is chained only where one of the two makes it known.
  const bool dot_offered = offered(VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME);
  const bool dot_core = std::min(created.api_version, infos[chosen].api_version) >= VK_API_VERSION_1_3;
  VkPhysicalDeviceShaderIntegerDotProductFeatures dot_features{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES};
  if (dot_offered || dot_core) {
    dot_features.pNext = supported.v12.pNext;
    supported.v12.pNext = &dot_features;
  }
  inst.fns.vkGetPhysicalDeviceFeatures2(pd, &supported.features2);
  if (data_graph && !(tensor_features.tensors && graph_features.dataGraph)) {
    log(LogLevel::kWarn, "context", "device '", infos[chosen].name, "' offers the ARM data-graph extensions without ",
        tensor_features.tensors ? "the dataGraph" : "the tensors", " feature; the VGF backend will use gpuu's TOSA executor");
    data_graph = false;
  }
  FeatureChain enable;
  uint32_t enabled = 0;
  auto take = [&](VkBool32 have, VkBool32& want, DeviceFeature bit) {
    if (have) {
      want = VK_TRUE;
      enabled |= bit;
    }
  };
  take(supported.v12.timelineSemaphore, enable.v12.timelineSemaphore, kFeatureTimelineSemaphore);
  take(supported.v12.shaderFloat16, enable.v12.shaderFloat16, kFeatureShaderFloat16);
  take(supported.v11.storageBuffer16BitAccess, enable.v11.storageBuffer16BitAccess, kFeatureStorageBuffer16Bit);
  take(supported.features2.features.shaderInt64, enable.features2.features.shaderInt64, kFeatureShaderInt64);
  take(supported.v12.shaderInt8, enable.v12.shaderInt8, kFeatureShaderInt8);
  take(supported.v12.storageBuffer8BitAccess, enable.v12.storageBuffer8BitAccess, kFeatureStorageBuffer8Bit);
  take(supported.v12.vulkanMemoryModel, enable.v12.vulkanMemoryModel, kFeatureVulkanMemoryModel);
  VkPhysicalDeviceCooperativeMatrixFeaturesKHR enable_coopmat{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR};
  const bool coopmat = coopmat_offered && coopmat_features.cooperativeMatrix && supported.v12.vulkanMemoryModel &&
                       supported.v12.shaderFloat16 && supported.v11.storageBuffer16BitAccess;
  if (coopmat) {
    enable_coopmat.cooperativeMatrix = VK_TRUE;
    enabled |= kFeatureCooperativeMatrix;
  }
  VkPhysicalDeviceCooperativeMatrix2FeaturesNV enable_coopmat2{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV};
  const bool coopmat2 = coopmat && coopmat2_offered && coopmat2_features.cooperativeMatrixWorkgroupScope &&
                        coopmat2_features.cooperativeMatrixFlexibleDimensions &&
                        coopmat2_features.cooperativeMatrixTensorAddressing &&
                        coopmat2_features.cooperativeMatrixPerElementOperations;
  if (coopmat2) {
    enable_coopmat2.cooperativeMatrixWorkgroupScope = VK_TRUE;
    enable_coopmat2.cooperativeMatrixFlexibleDimensions = VK_TRUE;
    enable_coopmat2.cooperativeMatrixTensorAddressing = VK_TRUE;
    enable_coopmat2.cooperativeMatrixPerElementOperations = VK_TRUE;
    enabled |= kFeatureCooperativeMatrixWorkgroup;
  }
  VkPhysicalDeviceShaderIntegerDotProductFeatures enable_dot{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES};
  const bool dot = (dot_offered || dot_core) && dot_features.shaderIntegerDotProduct;
  if (dot) {
    enable_dot.shaderIntegerDotProduct = VK_TRUE;
    enabled |= kFeatureShaderIntegerDotProduct;
  }
  VkPhysicalDeviceTensorFeaturesARM enable_tensors{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TENSOR_FEATURES_ARM};
  VkPhysicalDeviceDataGraphFeaturesARM enable_graph{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DATA_GRAPH_FEATURES_ARM};
  if (data_graph) {
    enable_tensors.tensors = VK_TRUE;
    enable_graph.dataGraph = VK_TRUE;
    enable.v12.pNext = &enable_tensors;
    enable_tensors.pNext = &enable_graph;  // kFeatureDataGraph follows: SharedGpuContext::create derives it
  }

  if (coopmat) {  // ahead of the data-graph structures, which enable.v12 may point to
    enable_coopmat.pNext = enable.v12.pNext;
    enable.v12.pNext = &enable_coopmat;
  }
  if (coopmat2) {
    enable_coopmat2.pNext = enable.v12.pNext;
    enable.v12.pNext = &enable_coopmat2;
  }
  if (dot) {
    enable_dot.pNext = enable.v12.pNext;
    enable.v12.pNext = &enable_dot;
  }

  std::vector<std::string> extensions;
  // The portability subset must be enabled where it is offered.
  if (offered("VK_KHR_portability_subset")) extensions.emplace_back("VK_KHR_portability_subset");
  if (coopmat) extensions.emplace_back(vk::kCooperativeMatrixExtension);
  if (coopmat2) extensions.emplace_back(vk::kCooperativeMatrix2Extension);
  // On a 1.2 device the extension carries the SPIR-V instructions; a 1.3
  // device that still lists it gets it enabled too (harmless, and what a
  // validation layer that checks the extension wants).
  if (dot && dot_offered) extensions.emplace_back(VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME);
  if (data_graph) {
    for (const char* name : {vk::kTensorsExtension, vk::kDataGraphExtension, vk::kDataGraphTosaExtension}) {
      extensions.emplace_back(name);
    }
  }
  std::vector<const char*> ext_names;
  for (const auto& e : extensions) ext_names.push_back(e.c_str());

  float priority = 1.0f;
  VkDeviceQueueCreateInfo queue_info{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  queue_info.queueFamilyIndex = static_cast<uint32_t>(family);
  queue_info.queueCount = 1;
  queue_info.pQueuePriorities = &priority;
  VkDeviceCreateInfo device_info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  device_info.pNext = &enable.features2;
  device_info.queueCreateInfoCount = 1;
  device_info.pQueueCreateInfos = &queue_info;
  device_info.enabledExtensionCount = static_cast<uint32_t>(ext_names.size());
  device_info.ppEnabledExtensionNames = ext_names.data();
  VkDevice device = VK_NULL_HANDLE;
  GPUU_VK_RETURN_IF_ERROR(inst.fns.vkCreateDevice(pd, &device_info, nullptr, &device), "vkCreateDevice");
  auto destroy_device = reinterpret_cast<PFN_vkDestroyDevice>(inst.fns.vkGetDeviceProcAddr(device, "vkDestroyDevice"));
  auto get_queue = reinterpret_cast<PFN_vkGetDeviceQueue>(inst.fns.vkGetDeviceProcAddr(device, "vkGetDeviceQueue"));
  VkQueue queue = VK_NULL_HANDLE;
  get_queue(device, static_cast<uint32_t>(family), 0, &queue);

  SharedGpuContextCreateInfo info;
  info.token = token;
  info.group_id = group_id;
  info.instance = inst.instance;
  info.physical_device = pd;
  info.device = device;
  info.queue = queue;
  info.queue_family_index = static_cast<uint32_t>(family);
  info.owns_instance = true;
  info.owns_device = true;
  info.debug_messenger = inst.messenger;
  info.get_instance_proc_addr = created.global.vkGetInstanceProcAddr;
  info.enabled_device_extensions = extensions;
  info.enabled_features = enabled;
  Result<SharedGpuContextPtr> ctx = SharedGpuContext::create(std::move(info));
  if (!ctx.ok()) {
    destroy_device(device, nullptr);
    return ctx.status();
  }
  // The context owns instance and messenger now.
  inst.instance = VK_NULL_HANDLE;
  inst.messenger = VK_NULL_HANDLE;
  log(LogLevel::kInfo, "context", "created context '", token, "' group ", group_id, " on '", infos[chosen].name,
      "'", validation ? " with validation" : "");
  return ctx;
}

ContextFactory vulkan_context_factory(const DeviceOptions& options) {
  return [options](const std::string& token, int64_t group_id) {
    return create_vulkan_context(token, group_id, options);
  };
}

}  // namespace gpuu
