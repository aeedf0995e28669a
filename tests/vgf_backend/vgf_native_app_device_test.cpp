// An application's own VkDevice and the native VGF path, under Arm's emulation
// layers (ctest sets VK_LAYER_PATH / LD_LIBRARY_PATH, and this test enables
// the layers on its own instance, graph first). gpuu takes the native path on
// an application's device only when the application says it enabled
// VK_ARM_tensors, VK_ARM_data_graph and its TOSA instruction set; otherwise
// its VGF delegates run on gpuu's executor, and forcing native says why.
// Debian's validation layer predates the extensions: not enabled here.
#include <gtest/gtest.h>
#include <vulkan/vulkan.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "backends/cpu/cpu_kernels.h"
#include "backends/vgf/vgf_options.h"
#include "context/shared_gpu_context_registry.h"
#include "context/vulkan_arm.h"
#include "graph/builder.h"
#include "partition/partitioner.h"
#include "program/program_loader.h"
#include "program/program_writer.h"
#include "runtime/builtin_backends.h"
#include "runtime/session.h"

namespace gpuu {
namespace {

// The application: its own instance with Arm's layers, a device with the three
// ARM extensions and their features on a queue that runs data-graph work.
struct ArmAppDevice {
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t family = 0;

  std::string create() {
    const char* layers[] = {"VK_LAYER_ML_Graph_Emulation", "VK_LAYER_ML_Tensor_Emulation"};
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.apiVersion = VK_API_VERSION_1_3;
    VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    info.pApplicationInfo = &app;
    info.enabledLayerCount = 2;
    info.ppEnabledLayerNames = layers;
    if (vkCreateInstance(&info, nullptr, &instance) != VK_SUCCESS) {
      return "vkCreateInstance with Arm's emulation layers failed (is VK_LAYER_PATH set?)";
    }
    uint32_t count = 1;
    vkEnumeratePhysicalDevices(instance, &count, &physical);
    if (count == 0) return "no physical device";
    uint32_t family_count = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(physical, &family_count, nullptr);
    std::vector<VkQueueFamilyProperties> families(family_count);
    vkGetPhysicalDeviceQueueFamilyProperties(physical, &family_count, families.data());
    bool found = false;
    for (uint32_t i = 0; i < family_count && !found; ++i) {
      VkQueueFlags want = VK_QUEUE_COMPUTE_BIT | VK_QUEUE_DATA_GRAPH_BIT_ARM;
      if ((families[i].queueFlags & want) == want) family = i, found = true;
    }
    if (!found) return "no queue family runs compute and data-graph work";
    VkPhysicalDeviceTensorFeaturesARM tensors{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TENSOR_FEATURES_ARM};
    VkPhysicalDeviceDataGraphFeaturesARM graph{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DATA_GRAPH_FEATURES_ARM};
    VkPhysicalDeviceVulkan12Features v12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    tensors.tensors = VK_TRUE;
    graph.dataGraph = VK_TRUE;
    v12.timelineSemaphore = VK_TRUE;
    tensors.pNext = &graph;
    v12.pNext = &tensors;
    VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    features.pNext = &v12;
    const char* extensions[] = {"VK_ARM_tensors", "VK_ARM_data_graph", "VK_ARM_data_graph_instruction_set_tosa"};
    float priority = 1.0f;
    VkDeviceQueueCreateInfo queue_info{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    queue_info.queueFamilyIndex = family;
    queue_info.queueCount = 1;
    queue_info.pQueuePriorities = &priority;
    VkDeviceCreateInfo device_info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    device_info.pNext = &features;
    device_info.queueCreateInfoCount = 1;
    device_info.pQueueCreateInfos = &queue_info;
    device_info.enabledExtensionCount = 3;
    device_info.ppEnabledExtensionNames = extensions;
    if (vkCreateDevice(physical, &device_info, nullptr, &device) != VK_SUCCESS) return "vkCreateDevice failed";
    vkGetDeviceQueue(device, family, 0, &queue);
    return "";
  }

  ~ArmAppDevice() {
    if (device) vkDestroyDevice(device, nullptr);
    if (instance) vkDestroyInstance(instance, nullptr);
  }
};

// Registers the application's device under (token, 1), naming `extensions` as enabled.
void register_app_device(const ArmAppDevice& app, const std::string& token, std::vector<std::string> extensions) {
  SharedGpuContextCreateInfo info;
  info.token = token;
  info.group_id = 1;
  info.instance = app.instance;
  info.physical_device = app.physical;
  info.device = app.device;
  info.queue = app.queue;
  info.queue_family_index = app.family;
  info.enabled_device_extensions = std::move(extensions);
  info.enabled_features = kFeatureTimelineSemaphore;
  auto ctx = SharedGpuContext::create(std::move(info));
  ASSERT_TRUE(ctx.ok()) << ctx.status().message();
  ASSERT_TRUE(SharedGpuContextRegistry::get().register_context({token, 1}, ctx.value()).ok());
}

// x -> sin -> mul(x) -> tanh, one VGF delegate that looks its context up.
std::shared_ptr<const program::Program> vgf_program(const std::string& token) {
  graph::Graph g;
  auto x = graph::add_graph_input(g, "x", graph::DType::kF32, {4, 16}).value();
  auto s = graph::add_op(g, "sin", "sin_0", {x}, {}).value()[0];
  auto m = graph::add_op(g, "mul", "mul_0", {s, x}, {}).value()[0];
  g.mark_output(graph::add_op(g, "tanh", "tanh_0", {m}, {}).value()[0]);
  partition::PartitionOptions options;
  options.prefer = Prefer::kVgfFirst;
  options.min_partition_size = 1;
  options.capabilities = runtime::registered_capabilities();
  auto parts = partition::partition(g, options).value();
  SharedGpuCompileSpec spec;
  spec.token = token;
  spec.group_id = 1;
  spec.context_mode = ContextMode::kLookupOnly;
  spec.present = true;
  auto bytes = program::build_program(g, parts, spec, runtime::builtin_preprocessors()).value();
  return program::load_program_bytes(bytes.data(), bytes.size()).value();
}

std::vector<float> run(const std::shared_ptr<const program::Program>& program, vgf::DataGraphPath path,
                       Status* status) {
  runtime::SessionOptions options;
  options.backend_options = {vgf::data_graph_path_option(path)};
  auto session = runtime::Session::create(program, options);
  if (!session.ok()) {
    *status = session.status();
    return {};
  }
  std::vector<float> x(64), y(64);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) * 0.05f - 1.6f;
  EXPECT_TRUE(session.value()->set_input(0, x.data(), 256).ok());
  *status = session.value()->execute();
  if (status->ok()) EXPECT_TRUE(session.value()->get_output(0, y.data(), 256).ok());
  return y;
}

class VgfNativeAppDevice : public testing::Test {
 protected:
  void SetUp() override {
    std::string why = app_.create();
    ASSERT_EQ(why, "") << why;
  }
  void TearDown() override { SharedGpuContextRegistry::get().clear_for_testing(); }
  ArmAppDevice app_;
};

TEST_F(VgfNativeAppDevice, NativeWhenTheApplicationEnabledTheExtensions) {
  register_app_device(app_, "app_with_arm", {"VK_ARM_tensors", "VK_ARM_data_graph",
                                             "VK_ARM_data_graph_instruction_set_tosa"});
  auto program = vgf_program("app_with_arm");
  Status native, executor;
  std::vector<float> a = run(program, vgf::DataGraphPath::kNative, &native);
  ASSERT_TRUE(native.ok()) << native.message();
  std::vector<float> b = run(program, vgf::DataGraphPath::kExecutor, &executor);
  ASSERT_TRUE(executor.ok()) << executor.message();
  for (size_t i = 0; i < a.size(); ++i) {
    float x = static_cast<float>(i) * 0.05f - 1.6f;
    EXPECT_NEAR(a[i], std::tanh(std::sin(x) * x), 1e-5) << i;
    EXPECT_NEAR(a[i], b[i], 1e-6) << i;
  }
}

TEST_F(VgfNativeAppDevice, ExecutorWhenTheApplicationDidNotSaySo) {
  // The device has the extensions, but the application listed none of them:
  // gpuu cannot know they are on, so it keeps to its executor.
  register_app_device(app_, "app_silent", {});
  auto program = vgf_program("app_silent");
  Status forced;
  run(program, vgf::DataGraphPath::kNative, &forced);
  ASSERT_FALSE(forced.ok());
  EXPECT_NE(forced.message().find("has no VK_ARM_data_graph"), std::string::npos) << forced.message();
  Status automatic;
  std::vector<float> y = run(program, vgf::DataGraphPath::kAuto, &automatic);
  ASSERT_TRUE(automatic.ok()) << automatic.message();
  EXPECT_NEAR(y[10], std::tanh(std::sin(-1.1f) * -1.1f), 1e-5);
}

}  // namespace
}  // namespace gpuu
