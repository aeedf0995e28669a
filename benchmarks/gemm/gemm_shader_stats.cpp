// What the driver made of the GEMM shaders: per embedded shader and
// specialization (as the kernel selector passes them), the statistics
// VK_KHR_pipeline_executable_properties reports (on NVIDIA: registers per
// invocation, which bound how many workgroups share a multiprocessor, and so
// how well barriers and memory latency are hidden). A diagnostic for tuning,
// not a benchmark: it makes its own device with that extension enabled.
//
//   gemm_shader_stats [SHADER[:SPEC,SPEC,...] ...]   (SHADER: a name, or FILE.spv)
//
// Default: the GEMM shaders gpuu picks on GPUs, specialized for a 4096^3
// matmul with vector reads.
#include <vulkan/vulkan.h>  // first: with prototypes (gpuu's own headers load entry points)

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "context/vulkan_coopmat.h"  // for Vulkan headers older than the extension
#include "kernels/shader_library.h"
#include "spirv_file.h"

namespace {

bool check(VkResult r, const char* what) {
  if (r != VK_SUCCESS) std::fprintf(stderr, "gemm_shader_stats: %s failed (VkResult %d)\n", what, r);
  return r == VK_SUCCESS;
}

struct Request {
  std::string shader;
  std::vector<int32_t> spec;
};

Request parse(const std::string& arg) {
  Request r;
  size_t colon = arg.find(':');
  r.shader = arg.substr(0, colon);
  if (colon == std::string::npos) return r;
  std::string rest = arg.substr(colon + 1);
  for (size_t pos = 0; pos <= rest.size();) {
    size_t comma = rest.find(',', pos);
    if (comma == std::string::npos) comma = rest.size();
    r.spec.push_back(std::atoi(rest.substr(pos, comma - pos).c_str()));
    pos = comma + 1;
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<Request> requests;
  for (int i = 1; i < argc; ++i) requests.push_back(parse(argv[i]));
  if (requests.empty()) {
    // bias 0, B n-contiguous, vector A and B, aligned or not; coopmat:
    // 16x16x16 and the tile.
    requests = {{"gemm_f32_t8", {0, 0, 1, 1, 1}},
                {"gemm_f32_t8", {0, 0, 1, 1, 0}},
                {"gemm_f32", {0, 0, 1, 1, 1}},
                {"gemm_coopmat_f16", {0, 0, 1, 1, 1, 16, 16, 16, 128, 128}},
                {"gemm_coopmat_f16", {0, 0, 1, 1, 0, 16, 16, 16, 128, 128}},
                {"gemm_coopmat_tall_f16", {0, 0, 1, 1, 1, 16, 16, 16, 256, 128}},
                {"conv2d_gemm_coopmat_tall_f16", {0, 0, 1, 0, 0, 16, 16, 16, 256, 128}}};
  }

  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.apiVersion = VK_API_VERSION_1_3;
  VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ici.pApplicationInfo = &app;
  VkInstance instance;
  if (!check(vkCreateInstance(&ici, nullptr, &instance), "vkCreateInstance")) return 1;
  uint32_t count = 0;
  vkEnumeratePhysicalDevices(instance, &count, nullptr);
  if (count == 0) {
    std::fprintf(stderr, "gemm_shader_stats: no Vulkan device\n");
    return 1;
  }
  std::vector<VkPhysicalDevice> devices(count);
  vkEnumeratePhysicalDevices(instance, &count, devices.data());
  VkPhysicalDevice gpu = devices[0];
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(gpu, &props);

  uint32_t ext_count = 0;
  vkEnumerateDeviceExtensionProperties(gpu, nullptr, &ext_count, nullptr);
  std::vector<VkExtensionProperties> offered(ext_count);
  vkEnumerateDeviceExtensionProperties(gpu, nullptr, &ext_count, offered.data());
  auto has = [&](const char* name) {
    for (const auto& e : offered) {
      if (!std::strcmp(e.extensionName, name)) return true;
    }
    return false;
  };
  if (!has(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME)) {
    std::fprintf(stderr, "gemm_shader_stats: %s lacks VK_KHR_pipeline_executable_properties\n", props.deviceName);
    return 1;
  }
  std::vector<const char*> extensions = {VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME};
  const bool coopmat = has(gpuu::vk::kCooperativeMatrixExtension);
  if (coopmat) extensions.push_back(gpuu::vk::kCooperativeMatrixExtension);

  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR exec{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
  exec.pipelineExecutableInfo = VK_TRUE;
  VkPhysicalDeviceCooperativeMatrixFeaturesKHR cm{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR};
  cm.cooperativeMatrix = VK_TRUE;
  cm.pNext = &exec;
  VkPhysicalDeviceVulkan12Features v12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  v12.shaderFloat16 = VK_TRUE;
  v12.vulkanMemoryModel = VK_TRUE;
  v12.vulkanMemoryModelDeviceScope = VK_TRUE;
  v12.pNext = coopmat ? static_cast<void*>(&cm) : static_cast<void*>(&exec);
  VkPhysicalDeviceVulkan11Features v11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  v11.storageBuffer16BitAccess = VK_TRUE;
  v11.pNext = &v12;
  float priority = 1.0f;
  VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qci.queueCount = 1;
  qci.pQueuePriorities = &priority;
  VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  dci.pNext = &v11;
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  dci.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  dci.ppEnabledExtensionNames = extensions.data();
  VkDevice device;
  if (!check(vkCreateDevice(gpu, &dci, nullptr, &device), "vkCreateDevice")) return 1;
  auto get_props = reinterpret_cast<PFN_vkGetPipelineExecutablePropertiesKHR>(
      vkGetDeviceProcAddr(device, "vkGetPipelineExecutablePropertiesKHR"));
  auto get_stats = reinterpret_cast<PFN_vkGetPipelineExecutableStatisticsKHR>(
      vkGetDeviceProcAddr(device, "vkGetPipelineExecutableStatisticsKHR"));
  if (!get_props || !get_stats) {
    std::fprintf(stderr, "gemm_shader_stats: the driver lacks the vkGetPipelineExecutable*KHR entry points\n");
    return 1;
  }

  // Every GEMM form binds four storage buffers and at most 128 bytes of push constants.
  VkDescriptorSetLayoutBinding bindings[4];
  for (uint32_t b = 0; b < 4; ++b) {
    bindings[b] = {b, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
  }
  VkDescriptorSetLayoutCreateInfo dsl{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  dsl.bindingCount = 4;
  dsl.pBindings = bindings;
  VkDescriptorSetLayout set_layout;
  if (!check(vkCreateDescriptorSetLayout(device, &dsl, nullptr, &set_layout), "vkCreateDescriptorSetLayout")) return 1;
  VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, 128};
  VkPipelineLayoutCreateInfo plci{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  plci.setLayoutCount = 1;
  plci.pSetLayouts = &set_layout;
  plci.pushConstantRangeCount = 1;
  plci.pPushConstantRanges = &push;
  VkPipelineLayout layout;
  if (!check(vkCreatePipelineLayout(device, &plci, nullptr, &layout), "vkCreatePipelineLayout")) return 1;

  std::printf("{\"device\": \"%s\", \"shaders\": [\n", props.deviceName);
  int rc = 0;
  for (size_t r = 0; r < requests.size(); ++r) {
    const Request& req = requests[r];
    // SHADER: an embedded shader's name, or a SPIR-V file (a variant under measurement).
    std::vector<uint32_t> words;
    if (req.shader.size() > 4 && req.shader.compare(req.shader.size() - 4, 4, ".spv") == 0) {
      words = gpuu::bench::read_spirv_file(req.shader);
    } else if (const gpuu::kernels::EmbeddedShader* shader = gpuu::kernels::find_shader(req.shader)) {
      words.assign(shader->words, shader->words + shader->word_count);
    }
    if (words.empty()) {
      std::fprintf(stderr, "gemm_shader_stats: no embedded shader or SPIR-V file '%s'\n", req.shader.c_str());
      rc = 1;
      continue;
    }
    VkShaderModuleCreateInfo smci{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    smci.codeSize = words.size() * 4;
    smci.pCode = words.data();
    VkShaderModule module;
    if (!check(vkCreateShaderModule(device, &smci, nullptr, &module), "vkCreateShaderModule")) return 1;
    std::vector<VkSpecializationMapEntry> entries;
    for (uint32_t i = 0; i < req.spec.size(); ++i) entries.push_back({i, 4 * i, 4});
    VkSpecializationInfo spec{static_cast<uint32_t>(entries.size()), entries.data(), 4 * req.spec.size(),
                              req.spec.data()};
    VkComputePipelineCreateInfo cpci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    cpci.flags = VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
    cpci.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
    cpci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    cpci.stage.module = module;
    cpci.stage.pName = "main";
    cpci.stage.pSpecializationInfo = &spec;
    cpci.layout = layout;
    VkPipeline pipeline;
    if (!check(vkCreateComputePipelines(device, VK_NULL_HANDLE, 1, &cpci, nullptr, &pipeline), req.shader.c_str())) {
      vkDestroyShaderModule(device, module, nullptr);
      rc = 1;
      continue;
    }
    VkPipelineInfoKHR info{VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR};
    info.pipeline = pipeline;
    uint32_t executables = 0;
    get_props(device, &info, &executables, nullptr);
    std::string spec_text;
    for (int32_t v : req.spec) spec_text += (spec_text.empty() ? "" : ",") + std::to_string(v);
    std::printf("%s  {\"shader\": \"%s\", \"spec\": [%s], \"stats\": {", r ? ",\n" : "", req.shader.c_str(),
                spec_text.c_str());
    for (uint32_t e = 0; e < executables; ++e) {
      VkPipelineExecutableInfoKHR ei{VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR};
      ei.pipeline = pipeline;
      ei.executableIndex = e;
      uint32_t n = 0;
      get_stats(device, &ei, &n, nullptr);
      std::vector<VkPipelineExecutableStatisticKHR> stats(n, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR});
      get_stats(device, &ei, &n, stats.data());
      for (uint32_t s = 0; s < n; ++s) {
        std::printf("%s\"%s\": ", s || e ? ", " : "", stats[s].name);
        switch (stats[s].format) {
          case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR: std::printf("%s", stats[s].value.b32 ? "true" : "false"); break;
          case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR: std::printf("%lld", static_cast<long long>(stats[s].value.i64)); break;
          case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR: std::printf("%llu", static_cast<unsigned long long>(stats[s].value.u64)); break;
          default: std::printf("%g", stats[s].value.f64); break;
        }
      }
    }
    std::printf("}}");
    vkDestroyPipeline(device, pipeline, nullptr);
    vkDestroyShaderModule(device, module, nullptr);
  }
  std::printf("\n]}\n");
  vkDestroyPipelineLayout(device, layout, nullptr);
  vkDestroyDescriptorSetLayout(device, set_layout, nullptr);
  vkDestroyDevice(device, nullptr);
  vkDestroyInstance(instance, nullptr);
  return rc;
}
