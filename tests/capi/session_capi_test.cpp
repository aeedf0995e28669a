// Running programs through the C ABI alone: the RFC model built with the
// graph builder, partitioned, written, loaded and run on the test device,
// checked against a host reference; sync modes; gpuu-run; bad input; load-time
// backend options (0.6: VgfBackend's data_graph_path, every bad option in one
// message, vgf_path as the same option). The device is plain lavapipe: no
// VK_ARM_data_graph, so "native" is refused, saying why.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <dlfcn.h>
#include <vulkan/vulkan.h>

#include "gpuu.h"
#include "support/rfc_model_capi.h"
#include "support/test_vulkan_device.h"

namespace {

std::string last_error() { return gpuu_last_error(); }

std::vector<float> rfc_input() {
  std::vector<float> x(192);
  for (int i = 0; i < 192; ++i) x[static_cast<size_t>(i)] = static_cast<float>(-0.8 + 1.6 * i / 191.0);
  return x;
}

std::string temp_path(const std::string& name) {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir && *dir ? dir : "/tmp") + "/gpuu_session_capi_" + name;
}

// `graph` partitioned as `prefer` says (with `pins`), min_partition_size 1;
// nullptr on failure (gpuu_last_error() says why).
gpuu_partition* partition_graph(const gpuu_graph* graph, gpuu_prefer prefer, std::vector<gpuu_partition_pin> pins = {}) {
  gpuu_partition_options options;
  gpuu_partition_options_init(&options);
  options.prefer = prefer;
  options.min_partition_size = 1;
  options.pins = pins.empty() ? nullptr : pins.data();
  options.pin_count = pins.size();
  gpuu_partition* partition = nullptr;
  return gpuu_graph_partition(graph, &options, &partition) == GPUU_OK ? partition : nullptr;
}

// The RFC model, partitioned as `prefer` says (with `pins`), written to `path`.
void write_rfc_program(const std::string& path, gpuu_prefer prefer, std::vector<gpuu_partition_pin> pins = {}) {
  gpuu_graph* graph = gpuu_test_build_rfc_model();
  ASSERT_NE(graph, nullptr) << last_error();
  gpuu_partition* partition = partition_graph(graph, prefer, std::move(pins));
  ASSERT_NE(partition, nullptr) << last_error();
  gpuu_program_write_options write;
  gpuu_program_write_options_init(&write);
  write.token = "capi_session";
  write.group_id = 7;
  ASSERT_EQ(gpuu_program_write(graph, partition, &write, path.c_str()), GPUU_OK) << last_error();
  gpuu_partition_destroy(partition);
  gpuu_graph_destroy(graph);
}

struct RunResult {
  gpuu_status status = GPUU_OK;
  std::vector<float> y;
  gpuu_execute_stats stats{};
};

RunResult run_program(const std::string& path, const gpuu_session_options* options) {
  RunResult r;
  gpuu_program* program = nullptr;
  r.status = gpuu_program_load_file(path.c_str(), &program);
  if (r.status != GPUU_OK) return r;
  gpuu_session* session = nullptr;
  r.status = gpuu_session_create(program, options, &session);
  gpuu_program_release(program);  // the session holds its own reference
  if (r.status != GPUU_OK) return r;
  std::vector<float> x = rfc_input();
  r.status = gpuu_session_set_input(session, 0, x.data(), x.size() * 4);
  if (r.status == GPUU_OK) r.status = gpuu_session_execute(session);
  if (r.status == GPUU_OK) {
    r.y.resize(48);
    r.status = gpuu_session_get_output(session, 0, r.y.data(), r.y.size() * 4);
    r.stats.struct_size = sizeof(r.stats);
    gpuu_session_last_execute_stats(session, &r.stats);
  }
  gpuu_session_destroy(session);
  return r;
}

void expect_matches_reference(const std::vector<float>& y) {
  std::vector<float> x = rfc_input(), want(48);
  gpuu_test_rfc_model_reference(x.data(), want.data());
  ASSERT_EQ(y.size(), want.size());
  for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], want[i], 2e-5 * (1 + std::fabs(want[i]))) << i;
}

TEST(SessionCApi, RfcModelOnVulkanMatchesTheReference) {
  std::string path = temp_path("vulkan_first.gpuu");
  write_rfc_program(path, GPUU_PREFER_VULKAN_FIRST);
  RunResult r = run_program(path, nullptr);
  ASSERT_EQ(r.status, GPUU_OK) << last_error();
  expect_matches_reference(r.y);
  EXPECT_EQ(r.stats.delegate_submits, 1u);
  EXPECT_EQ(r.stats.host_waits, 1u) << "one wait per execute";
  std::remove(path.c_str());
}

// A host-visible VkBuffer made the way a C application makes one: through the
// Vulkan loader, on the device gpuu's session runs on.
class AppBuffer {
 public:
  AppBuffer(const gpuu_vulkan_handles& h, VkDeviceSize size, VkBufferUsageFlags usage) : device_(static_cast<VkDevice>(h.device)) {
    loader_ = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!loader_) return;
    auto gipa = reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(loader_, "vkGetInstanceProcAddr"));
    auto instance = static_cast<VkInstance>(h.instance);
    auto gdpa = reinterpret_cast<PFN_vkGetDeviceProcAddr>(gipa(instance, "vkGetDeviceProcAddr"));
    auto memory_properties = reinterpret_cast<PFN_vkGetPhysicalDeviceMemoryProperties>(
        gipa(instance, "vkGetPhysicalDeviceMemoryProperties"));
#define GPUU_LOAD(name) name##_ = reinterpret_cast<PFN_##name>(gdpa(device_, #name))
    GPUU_LOAD(vkCreateBuffer);
    GPUU_LOAD(vkDestroyBuffer);
    GPUU_LOAD(vkGetBufferMemoryRequirements);
    GPUU_LOAD(vkAllocateMemory);
    GPUU_LOAD(vkFreeMemory);
    GPUU_LOAD(vkBindBufferMemory);
    GPUU_LOAD(vkMapMemory);
#undef GPUU_LOAD
    VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    info.size = size;
    info.usage = usage;
    if (vkCreateBuffer_(device_, &info, nullptr, &buffer_) != VK_SUCCESS) return;
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements_(device_, buffer_, &req);
    VkPhysicalDeviceMemoryProperties props;
    memory_properties(static_cast<VkPhysicalDevice>(h.physical_device), &props);
    const VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    alloc.allocationSize = req.size;
    alloc.memoryTypeIndex = UINT32_MAX;
    for (uint32_t i = 0; i < props.memoryTypeCount && alloc.memoryTypeIndex == UINT32_MAX; ++i) {
      if ((req.memoryTypeBits & (1u << i)) && (props.memoryTypes[i].propertyFlags & want) == want) alloc.memoryTypeIndex = i;
    }
    if (alloc.memoryTypeIndex == UINT32_MAX || vkAllocateMemory_(device_, &alloc, nullptr, &memory_) != VK_SUCCESS) return;
    vkBindBufferMemory_(device_, buffer_, memory_, 0);
    vkMapMemory_(device_, memory_, 0, VK_WHOLE_SIZE, 0, &mapped_);
  }
  ~AppBuffer() {
    if (buffer_) vkDestroyBuffer_(device_, buffer_, nullptr);
    if (memory_) vkFreeMemory_(device_, memory_, nullptr);
    if (loader_) dlclose(loader_);
  }
  gpuu_vk_buffer handle() const { return reinterpret_cast<gpuu_vk_buffer>(buffer_); }
  float* floats() const { return static_cast<float*>(mapped_); }

 private:
  VkDevice device_;
  void* loader_ = nullptr;
  VkBuffer buffer_ = VK_NULL_HANDLE;
  VkDeviceMemory memory_ = VK_NULL_HANDLE;
  void* mapped_ = nullptr;
  PFN_vkCreateBuffer vkCreateBuffer_ = nullptr;
  PFN_vkDestroyBuffer vkDestroyBuffer_ = nullptr;
  PFN_vkGetBufferMemoryRequirements vkGetBufferMemoryRequirements_ = nullptr;
  PFN_vkAllocateMemory vkAllocateMemory_ = nullptr;
  PFN_vkFreeMemory vkFreeMemory_ = nullptr;
  PFN_vkBindBufferMemory vkBindBufferMemory_ = nullptr;
  PFN_vkMapMemory vkMapMemory_ = nullptr;
};

// 0.4: buffers with storage usage are used in place (binding slots), one
// queue submit per execute, GPU time only when asked for; a usage that
// allows neither use, and an unknown side, are refused by name.
TEST(SessionCApi, StorageBuffersAreUsedInPlaceAndGpuTimeIsOptIn) {
  std::string path = temp_path("in_place.gpuu");
  write_rfc_program(path, GPUU_PREFER_VULKAN_FIRST);
  gpuu_program* program = nullptr;
  ASSERT_EQ(gpuu_program_load_file(path.c_str(), &program), GPUU_OK) << last_error();
  gpuu_session_options options;
  gpuu_session_options_init(&options);
  EXPECT_EQ(options.gpu_timing, 0u);
  EXPECT_LT(options.wait_spin_us, 0);
  options.gpu_timing = 1;
  gpuu_session* session = nullptr;
  ASSERT_EQ(gpuu_session_create(program, &options, &session), GPUU_OK) << last_error();
  gpuu_program_release(program);
  gpuu_context* context = nullptr;
  ASSERT_EQ(gpuu_session_get_context(session, &context), GPUU_OK) << last_error();
  gpuu_vulkan_handles handles;
  handles.struct_size = sizeof(handles);
  ASSERT_EQ(gpuu_context_get_vulkan_handles(context, &handles), GPUU_OK) << last_error();
  const VkBufferUsageFlags usage =
      VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  AppBuffer in(handles, 192 * 4, usage), out(handles, 48 * 4, usage);
  AppBuffer copy_out(handles, 48 * 4, VK_BUFFER_USAGE_TRANSFER_DST_BIT);
  ASSERT_TRUE(in.floats() && out.floats() && copy_out.floats()) << "could not make application buffers";
  std::vector<float> x = rfc_input();
  std::memcpy(in.floats(), x.data(), x.size() * 4);
  ASSERT_EQ(gpuu_session_bind_buffer(session, GPUU_IO_INPUT, 0, in.handle(), 0, 192 * 4, usage), GPUU_OK) << last_error();
  ASSERT_EQ(gpuu_session_bind_buffer(session, GPUU_IO_OUTPUT, 0, out.handle(), 0, 48 * 4, usage), GPUU_OK) << last_error();
  EXPECT_EQ(gpuu_session_binding_in_place(session, GPUU_IO_INPUT, 0), 1);
  EXPECT_EQ(gpuu_session_binding_in_place(session, GPUU_IO_OUTPUT, 0), 1);
  ASSERT_EQ(gpuu_session_execute(session), GPUU_OK) << last_error();
  gpuu_execute_stats stats;
  stats.struct_size = sizeof(stats);
  ASSERT_EQ(gpuu_session_last_execute_stats(session, &stats), GPUU_OK);
  EXPECT_EQ(stats.queue_submits, 1u);
  EXPECT_GT(stats.gpu_time_us, 0.0);
  expect_matches_reference(std::vector<float>(out.floats(), out.floats() + 48));

  // The 0.2 call keeps its contract: TRANSFER usage, copied on the GPU.
  ASSERT_EQ(gpuu_session_bind_output_buffer(session, 0, copy_out.handle(), 0, 48 * 4), GPUU_OK) << last_error();
  EXPECT_EQ(gpuu_session_binding_in_place(session, GPUU_IO_OUTPUT, 0), 0);
  ASSERT_EQ(gpuu_session_execute(session), GPUU_OK) << last_error();
  expect_matches_reference(std::vector<float>(copy_out.floats(), copy_out.floats() + 48));

  EXPECT_EQ(gpuu_session_bind_buffer(session, GPUU_IO_OUTPUT, 0, out.handle(), 0, 48 * 4, 0),
            GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("neither STORAGE_BUFFER"), std::string::npos) << last_error();
  EXPECT_EQ(gpuu_session_bind_buffer(session, static_cast<gpuu_io>(7), 0, out.handle(), 0, 48 * 4, usage),
            GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("unknown io value 7"), std::string::npos) << last_error();
  ASSERT_EQ(gpuu_session_execute(session), GPUU_OK) << "the refusals left the session usable: " << last_error();
  gpuu_context_release(context);
  gpuu_session_destroy(session);  // before the buffers it reads and writes
  std::remove(path.c_str());
}

TEST(SessionCApi, DelegatesAndACpuStepAgreeUnderEverySyncMode) {
  std::string path = temp_path("split.gpuu");
  // index_select_1 on the CPU splits the Vulkan work into two delegates.
  write_rfc_program(path, GPUU_PREFER_VULKAN_FIRST, {gpuu_partition_pin{sizeof(gpuu_partition_pin), "index_select_1", "CpuFallback"}});
  gpuu_program* program = nullptr;
  ASSERT_EQ(gpuu_program_load_file(path.c_str(), &program), GPUU_OK) << last_error();
  ASSERT_EQ(gpuu_program_delegate_count(program), 2u);
  EXPECT_STREQ(gpuu_program_delegate_backend(program, 0), "VulkanBackend");
  gpuu_program_release(program);
  std::vector<std::vector<float>> outputs;
  for (gpuu_sync_mode mode : {GPUU_SYNC_TIMELINE, GPUU_SYNC_QUEUE_WAIT_IDLE, GPUU_SYNC_NONE}) {
    gpuu_context_overrides overrides;
    gpuu_context_overrides_init(&overrides);
    overrides.has_sync_mode = 1;
    overrides.sync_mode = mode;
    gpuu_session_options options;
    gpuu_session_options_init(&options);
    options.overrides = &overrides;
    RunResult r = run_program(path, &options);
    ASSERT_EQ(r.status, GPUU_OK) << mode << ": " << last_error();
    expect_matches_reference(r.y);
    EXPECT_EQ(r.stats.delegate_submits, 2u);
    outputs.push_back(r.y);
  }
  EXPECT_EQ(outputs[0], outputs[1]);
  EXPECT_EQ(outputs[0], outputs[2]);
  std::remove(path.c_str());
}

// A slice assignment into a copy of c, as PyTorch functionalizes it, built
// with the graph builder: slice_0 (the slice of the original) and a chain
// after it are dead; y = concat(c[:, :, :5], k, c[:, :, 6:]) * 2.
gpuu_graph* build_slice_assignment() {
  gpuu_graph* g = nullptr;
  if (gpuu_graph_create(&g) != GPUU_OK) return nullptr;
  const int64_t c_shape[4] = {1, 4, 8, 3}, k_shape[4] = {1, 4, 1, 3}, one[1] = {1};
  const float two = 2.0f;
  int32_t c = -1, k = -1, scale = -1;
  bool ok = gpuu_graph_add_input(g, "c", GPUU_DTYPE_F32, c_shape, 4, &c) == GPUU_OK &&
            gpuu_graph_add_input(g, "k", GPUU_DTYPE_F32, k_shape, 4, &k) == GPUU_OK &&
            gpuu_graph_add_constant(g, "two", GPUU_DTYPE_F32, one, 1, &two, sizeof(two), &scale) == GPUU_OK;
  auto add = [&](const char* op, const char* name, std::vector<int32_t> inputs, std::vector<gpuu_attr> attrs) {
    int32_t out = -1;
    size_t n_out = 0;
    ok = ok && gpuu_graph_add_node(g, op, name, inputs.data(), inputs.size(), attrs.data(), attrs.size(), &out, 1,
                                   &n_out) == GPUU_OK;
    return out;
  };
  auto ints = [](const char* name, const int64_t* values) {
    gpuu_attr a;
    gpuu_attr_init(&a);
    a.name = name;
    a.kind = GPUU_ATTR_INTS;
    a.ints = values;
    a.count = 1;
    return a;
  };
  const int64_t axis2[1] = {2}, at0[1] = {0}, at5[1] = {5}, at6[1] = {6}, at8[1] = {8};
  auto rows = [&](const int64_t* start, const int64_t* end) {
    return std::vector<gpuu_attr>{ints("axes", axis2), ints("starts", start), ints("ends", end)};
  };
  int32_t dead = add("slice", "slice_0", {c}, rows(at5, at6));
  add("neg", "dead_neg", {add("exp", "dead_exp", {dead}, {})}, {});
  int32_t head = add("slice", "slice_1", {c}, rows(at0, at5));
  int32_t tail = add("slice", "slice_2", {c}, rows(at6, at8));
  gpuu_attr axis;
  gpuu_attr_init(&axis);
  axis.name = "axis";
  axis.kind = GPUU_ATTR_INT;
  axis.i = 2;
  int32_t y = add("mul", "mul_0", {add("concat", "concat_0", {head, k, tail}, {axis}), scale}, {});
  if (!ok || gpuu_graph_mark_output(g, y) != GPUU_OK) {
    gpuu_graph_destroy(g);
    return nullptr;
  }
  return g;
}

TEST(SessionCApi, DeadNodesOfAGraphBuiltInCAreLeftOutUnderEveryPolicy) {
  std::vector<float> c(96), k(12);
  for (size_t i = 0; i < c.size(); ++i) c[i] = static_cast<float>(i) * 0.5f - 20.0f;
  for (size_t i = 0; i < k.size(); ++i) k[i] = 100.0f + static_cast<float>(i);
  std::vector<float> want(96);
  for (size_t i = 0; i < want.size(); ++i) {
    size_t row = (i / 3) % 8, channel = i / 24;
    want[i] = 2.0f * (row == 5 ? k[channel * 3 + i % 3] : c[i]);
  }
  for (gpuu_prefer prefer : {GPUU_PREFER_VGF_FIRST, GPUU_PREFER_VULKAN_FIRST, GPUU_PREFER_AUTO}) {
    SCOPED_TRACE(prefer);
    gpuu_graph* graph = build_slice_assignment();
    ASSERT_NE(graph, nullptr) << last_error();
    gpuu_partition* partition = partition_graph(graph, prefer);
    ASSERT_NE(partition, nullptr) << last_error();
    ASSERT_EQ(gpuu_partition_region_count(partition), 1u) << "one GPU region, no region for the dead nodes";
    size_t nodes = 0;
    ASSERT_EQ(gpuu_partition_region_node_count(partition, 0, &nodes), GPUU_OK);
    EXPECT_EQ(nodes, 4u);
    const char* backend = nullptr;
    EXPECT_EQ(gpuu_partition_node_backend(partition, 0, &backend, nullptr), GPUU_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(last_error(), "gpuu_partition_node_backend: node 0 is dead (its results reach no graph output): it is "
                            "in no region and no backend runs it");
    std::string path = temp_path("dead_nodes.gpuu");
    gpuu_program_write_options write;
    gpuu_program_write_options_init(&write);
    ASSERT_EQ(gpuu_program_write(graph, partition, &write, path.c_str()), GPUU_OK) << last_error();
    gpuu_partition_destroy(partition);
    gpuu_graph_destroy(graph);

    gpuu_program* program = nullptr;
    ASSERT_EQ(gpuu_program_load_file(path.c_str(), &program), GPUU_OK) << last_error();
    gpuu_session* session = nullptr;
    ASSERT_EQ(gpuu_session_create(program, nullptr, &session), GPUU_OK) << last_error();
    gpuu_program_release(program);
    std::vector<float> y(96);
    ASSERT_EQ(gpuu_session_set_input(session, 0, c.data(), c.size() * 4), GPUU_OK) << last_error();
    ASSERT_EQ(gpuu_session_set_input(session, 1, k.data(), k.size() * 4), GPUU_OK) << last_error();
    ASSERT_EQ(gpuu_session_execute(session), GPUU_OK) << last_error();
    ASSERT_EQ(gpuu_session_get_output(session, 0, y.data(), y.size() * 4), GPUU_OK) << last_error();
    gpuu_session_destroy(session);
    EXPECT_EQ(y, want);
    std::remove(path.c_str());
  }
}

TEST(SessionCApi, LookupOnlyOverrideWithoutAContextFailsWithItsMessage) {
  std::string path = temp_path("lookup_only.gpuu");
  write_rfc_program(path, GPUU_PREFER_VULKAN_FIRST);
  gpuu_context_overrides overrides;
  gpuu_context_overrides_init(&overrides);
  overrides.has_mode = 1;
  overrides.mode = GPUU_CONTEXT_LOOKUP_ONLY;
  overrides.token = "nobody_registered_this";
  gpuu_session_options options;
  gpuu_session_options_init(&options);
  options.overrides = &overrides;
  RunResult r = run_program(path, &options);
  EXPECT_EQ(r.status, GPUU_ERROR_NOT_FOUND);
  EXPECT_NE(last_error().find("'nobody_registered_this' group 7"), std::string::npos) << last_error();
  std::remove(path.c_str());
}

// 0.2 is the baseline: options that end before its last field are refused by
// name; a newer client's larger struct is read up to what gpuu knows.
TEST(SessionCApi, OptionsBelowTheFirstReleaseAreRefusedAndLargerOnesRead) {
  std::string path = temp_path("sized_client.gpuu");
  write_rfc_program(path, GPUU_PREFER_VGF_FIRST);
  gpuu_session_options options;
  gpuu_session_options_init(&options);
  options.struct_size = static_cast<uint32_t>(offsetof(gpuu_session_options, vgf_path));
  RunResult r = run_program(path, &options);
  EXPECT_EQ(r.status, GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("options->struct_size"), std::string::npos) << last_error();
  struct {
    gpuu_session_options known;
    unsigned char unknown[32];  // fields of a later release, set to nonsense
  } newer;
  gpuu_session_options_init(&newer.known);
  std::memset(newer.unknown, 0xA5, sizeof(newer.unknown));
  newer.known.struct_size = sizeof(newer);
  r = run_program(path, &newer.known);
  ASSERT_EQ(r.status, GPUU_OK) << last_error();
  expect_matches_reference(r.y);
  gpuu_session_options_init(&options);
  options.vgf_path = static_cast<gpuu_vgf_path>(99);
  r = run_program(path, &options);
  EXPECT_EQ(r.status, GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("unknown vgf_path value 99"), std::string::npos) << last_error();
  std::remove(path.c_str());
}

// A mapping the application made, used in place: refused unaligned or
// corrupt without being released, and released once, when nothing uses it.
TEST(SessionCApi, MappedProgramIsUsedInPlaceAndReleasedOnceWhenNothingUsesIt) {
  std::string path = temp_path("mapped.gpuu");
  write_rfc_program(path, GPUU_PREFER_VULKAN_FIRST);
  std::ifstream in(path, std::ios::binary);
  std::vector<char> file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::remove(path.c_str());
  const size_t size = file.size();
  void* bytes = std::aligned_alloc(64, (size + 64 + 63) / 64 * 64);
  ASSERT_NE(bytes, nullptr);
  int released = 0;
  auto release = [](void* user) { ++*static_cast<int*>(user); };

  gpuu_program* program = nullptr;
  std::memcpy(static_cast<char*>(bytes) + 8, file.data(), size);
  EXPECT_EQ(gpuu_program_load_mapped(static_cast<char*>(bytes) + 8, size, release, &released, &program),
            GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("64-byte aligned"), std::string::npos) << last_error();
  std::memcpy(bytes, file.data(), size);
  EXPECT_EQ(gpuu_program_load_mapped(bytes, size / 2, release, &released, &program), GPUU_ERROR_INVALID_FORMAT);
  EXPECT_EQ(program, nullptr);
  EXPECT_EQ(released, 0) << "a refused mapping stays the caller's";

  ASSERT_EQ(gpuu_program_load_mapped(bytes, size, release, &released, &program), GPUU_OK) << last_error();
  gpuu_session* session = nullptr;
  ASSERT_EQ(gpuu_session_create(program, nullptr, &session), GPUU_OK) << last_error();
  gpuu_program_release(program);
  EXPECT_EQ(released, 0) << "the session still uses the bytes";
  std::vector<float> x = rfc_input(), y(48);
  ASSERT_EQ(gpuu_session_set_input(session, 0, x.data(), x.size() * 4), GPUU_OK) << last_error();
  ASSERT_EQ(gpuu_session_execute(session), GPUU_OK) << last_error();
  ASSERT_EQ(gpuu_session_get_output(session, 0, y.data(), y.size() * 4), GPUU_OK) << last_error();
  expect_matches_reference(y);
  gpuu_session_destroy(session);
  EXPECT_EQ(released, 1);
  std::free(bytes);
}

TEST(SessionCApi, CorruptFilesAndBadInputsGetClearErrors) {
  std::string path = temp_path("corrupt.gpuu");
  write_rfc_program(path, GPUU_PREFER_VULKAN_FIRST);
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  gpuu_program* program = nullptr;
  EXPECT_EQ(gpuu_program_load_memory(bytes.data(), bytes.size() / 2, &program), GPUU_ERROR_INVALID_FORMAT);
  EXPECT_EQ(program, nullptr);
  EXPECT_FALSE(last_error().empty());
  EXPECT_EQ(gpuu_program_load_file("/nonexistent/x.gpuu", &program), GPUU_ERROR_IO) << last_error();

  ASSERT_EQ(gpuu_program_load_memory(bytes.data(), bytes.size(), &program), GPUU_OK) << last_error();
  gpuu_session* session = nullptr;
  ASSERT_EQ(gpuu_session_create(program, nullptr, &session), GPUU_OK) << last_error();
  gpuu_program_release(program);
  gpuu_tensor_info info;
  info.struct_size = sizeof(info);
  ASSERT_EQ(gpuu_session_input_info(session, 0, &info), GPUU_OK);
  EXPECT_STREQ(info.name, "x");
  EXPECT_EQ(info.dtype, GPUU_DTYPE_F32);
  ASSERT_EQ(info.rank, 4u);
  EXPECT_EQ(info.shape[3], 8);
  EXPECT_EQ(info.byte_size, 768u);
  EXPECT_EQ(gpuu_session_input_info(session, 1, &info), GPUU_ERROR_INVALID_ARGUMENT);
  std::vector<float> small(10);
  EXPECT_EQ(gpuu_session_set_input(session, 0, small.data(), 40), GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("takes 768 bytes, got 40"), std::string::npos) << last_error();
  EXPECT_EQ(gpuu_session_execute(session), GPUU_ERROR_FAILED_PRECONDITION) << "input never set";
  std::vector<float> x = rfc_input(), y(48);
  ASSERT_EQ(gpuu_session_set_input(session, 0, x.data(), 768), GPUU_OK);
  ASSERT_EQ(gpuu_session_execute(session), GPUU_OK) << last_error();
  ASSERT_EQ(gpuu_session_get_output(session, 0, y.data(), 192), GPUU_OK);
  expect_matches_reference(y);
  gpuu_context* ctx = nullptr;
  ASSERT_EQ(gpuu_session_get_context(session, &ctx), GPUU_OK);
  EXPECT_STREQ(gpuu_context_token(ctx), "capi_session");
  gpuu_session_destroy(session);
  EXPECT_NE(gpuu_context_device_name(ctx), nullptr) << "the context outlives the session while held";
  gpuu_context_release(ctx);
  gpuu_context_unregister("capi_session", 7);
  std::remove(path.c_str());
}

// --- Profiles (0.6) -------------------------------------------------------

// The RFC model with a CPU-fallback step between two Vulkan delegates, in a
// session made with `options`; nullptr (and a test failure) where that fails.
gpuu_session* rfc_session(const std::string& path, const gpuu_session_options* options) {
  write_rfc_program(path, GPUU_PREFER_VULKAN_FIRST,
                    {gpuu_partition_pin{sizeof(gpuu_partition_pin), "index_select_1", "CpuFallback"}});
  gpuu_program* program = nullptr;
  EXPECT_EQ(gpuu_program_load_file(path.c_str(), &program), GPUU_OK) << last_error();
  gpuu_session* session = nullptr;
  EXPECT_EQ(gpuu_session_create(program, options, &session), GPUU_OK) << last_error();
  gpuu_program_release(program);
  return session;
}

gpuu_status execute_rfc(gpuu_session* session) {
  std::vector<float> x = rfc_input();
  gpuu_status s = gpuu_session_set_input(session, 0, x.data(), x.size() * 4);
  return s == GPUU_OK ? gpuu_session_execute(session) : s;
}

TEST(SessionProfile, JsonTraceAndTextDescribeTheLastExecute) {
  std::string path = temp_path("profile.gpuu");
  gpuu_session_options options;
  gpuu_session_options_init(&options);
  EXPECT_EQ(options.profile, 0u) << "off by default";
  options.profile = 1;
  gpuu_session* session = rfc_session(path, &options);
  ASSERT_NE(session, nullptr);
  const char* text = nullptr;
  EXPECT_EQ(gpuu_session_profile_json(session, &text), GPUU_ERROR_FAILED_PRECONDITION);
  EXPECT_EQ(text, nullptr);
  EXPECT_NE(last_error().find("gpuu_session_profile_json: no successful execute yet"), std::string::npos)
      << last_error();
  ASSERT_EQ(execute_rfc(session), GPUU_OK) << last_error();

  const char* json = nullptr;
  ASSERT_EQ(gpuu_session_profile_json(session, &json), GPUU_OK) << last_error();
  const std::string doc = json;
  for (const char* part : {"{\"peaks_measured\":true", "\"memory_gbps\":", "\"kind\":\"delegate\"",
                           "\"backend\":\"VulkanBackend\"", "\"kind\":\"cpu\"", "\"node\":\"index_select_1\"",
                           "\"ops\":\"sin+cos+reciprocal+mul\"", "\"by_op\":["}) {
    EXPECT_NE(doc.find(part), std::string::npos) << part << " in " << doc;
  }
  const char* again = nullptr;
  ASSERT_EQ(gpuu_session_profile_json(session, &again), GPUU_OK);
  EXPECT_EQ(again, json) << "the same borrowed text until the next execute";

  const char* trace = nullptr;
  ASSERT_EQ(gpuu_session_profile_trace(session, &trace), GPUU_OK) << last_error();
  EXPECT_EQ(std::string(trace).rfind("{\"traceEvents\":[", 0), 0u) << trace;
  EXPECT_NE(std::string(trace).find("\"name\":\"host (CPU fallback)\""), std::string::npos) << trace;
  const char* table = nullptr;
  ASSERT_EQ(gpuu_session_profile_text(session, 3, &table), GPUU_OK) << last_error();
  EXPECT_NE(std::string(table).find("top 3 dispatches:"), std::string::npos) << table;
  EXPECT_NE(std::string(table).find("measured by gpuu"), std::string::npos) << table;

  EXPECT_EQ(gpuu_session_profile_json(session, nullptr), GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(gpuu_session_profile_trace(nullptr, &trace), GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("gpuu_session_profile_trace: session is NULL"), std::string::npos) << last_error();
  gpuu_session_destroy(session);
  std::remove(path.c_str());
}

TEST(SessionProfile, RefusedWhereTheSessionDoesNotProfile) {
  std::string path = temp_path("no_profile.gpuu");
  gpuu_session_options options;
  gpuu_session_options_init(&options);
  // A caller built before 0.6 passes a struct without the field: no profile.
  options.struct_size = offsetof(gpuu_session_options, profile);
  options.profile = 1;
  gpuu_session* session = rfc_session(path, &options);
  ASSERT_NE(session, nullptr);
  ASSERT_EQ(execute_rfc(session), GPUU_OK) << last_error();
  for (auto get : {&gpuu_session_profile_json, &gpuu_session_profile_trace}) {
    const char* text = nullptr;
    EXPECT_EQ(get(session, &text), GPUU_ERROR_FAILED_PRECONDITION);
    EXPECT_NE(last_error().find("the session does not profile (create it with gpuu_session_options.profile set)"),
              std::string::npos)
        << last_error();
  }
  const char* text = nullptr;
  EXPECT_EQ(gpuu_session_profile_text(session, 10, &text), GPUU_ERROR_FAILED_PRECONDITION);
  gpuu_session_destroy(session);
  std::remove(path.c_str());
}

#ifdef GPUU_RUN_PATH
TEST(GpuuRun, RunsAProgramAndPrintsTheDelegateLines) {
  std::string model = temp_path("run.gpuu"), input = temp_path("input0.bin"), output = temp_path("output.bin"),
              log = temp_path("run.log");
  write_rfc_program(model, GPUU_PREFER_VULKAN_FIRST, {gpuu_partition_pin{sizeof(gpuu_partition_pin), "index_select_1", "CpuFallback"}});
  std::vector<float> x = rfc_input();
  std::ofstream(input, std::ios::binary).write(reinterpret_cast<const char*>(x.data()), 768);
  std::string cmd = std::string(GPUU_RUN_PATH) + " --model_path " + model + " --input_list " + input +
                    " --output_path " + output + " --num_executions 5 > " + log + " 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream log_in(log);
  std::string text((std::istreambuf_iterator<char>(log_in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("[Vulkan] init: processed="), std::string::npos) << text;
  EXPECT_NE(text.find("compile_specs=gpu_shared_context_token=capi_session"), std::string::npos) << text;
  EXPECT_NE(text.find("[Vulkan] execute: handle="), std::string::npos) << text;
  EXPECT_NE(text.find("[CPU] execute: node=index_select_1"), std::string::npos) << text;
  EXPECT_NE(text.find("[Vulkan] destroy: handle="), std::string::npos) << text;
  EXPECT_NE(text.find("executions: 5, median"), std::string::npos) << text;
  std::ifstream out_in(output, std::ios::binary);
  std::vector<float> y(48);
  out_in.read(reinterpret_cast<char*>(y.data()), 192);
  EXPECT_EQ(out_in.gcount(), 192);
  expect_matches_reference(y);

  // A wrong-sized input file is refused with a message, not a crash.
  std::ofstream(input, std::ios::binary).write(reinterpret_cast<const char*>(x.data()), 100);
  cmd = std::string(GPUU_RUN_PATH) + " --model_path " + model + " --input_list " + input + " > " + log + " 2>&1";
  EXPECT_NE(std::system(cmd.c_str()), 0);
  std::ifstream again(log);
  std::string err_text((std::istreambuf_iterator<char>(again)), std::istreambuf_iterator<char>());
  EXPECT_NE(err_text.find("has 100 bytes, the program expects 768"), std::string::npos) << err_text;
  for (const std::string& f : {model, input, output, log}) std::remove(f.c_str());
}
#endif

// --- Load-time backend options (0.6) ------------------------------------

bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

gpuu_backend_option option(const char* backend, const char* key, const char* value) {
  gpuu_backend_option o;
  gpuu_backend_option_init(&o);
  o.backend = backend;
  o.key = key;
  o.value = value;
  return o;
}

// The VGF delegates' init lines while it lives ("init: ... path=..."); the
// log still reaches the tests' hook, so validation messages fail a test.
class VgfInitLines {
 public:
  VgfInitLines() { gpuu_set_log_callback(&record, this, GPUU_LOG_INFO); }
  ~VgfInitLines() { gpuu_test::install_log_hook(); }
  VgfInitLines(const VgfInitLines&) = delete;
  VgfInitLines& operator=(const VgfInitLines&) = delete;
  const std::vector<std::string>& lines() const { return lines_; }

 private:
  static void record(void* self, gpuu_log_level level, const char* component, const char* message) {
    gpuu_test::on_log(static_cast<int>(level), component, message);
    if (std::strcmp(component, "VGF") == 0 && std::strncmp(message, "init:", 5) == 0) {
      static_cast<VgfInitLines*>(self)->lines_.emplace_back(message);
    }
  }
  std::vector<std::string> lines_;
};

// The RFC program twice: vgf_first (two VGF delegates around a Vulkan one)
// and vulkan_first (no VGF delegate).
class BackendOptionsCapi : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    write_rfc_program(vgf_first_path(), GPUU_PREFER_VGF_FIRST);
    write_rfc_program(vulkan_first_path(), GPUU_PREFER_VULKAN_FIRST);
  }
  static void TearDownTestSuite() {
    std::remove(vgf_first_path().c_str());
    std::remove(vulkan_first_path().c_str());
    gpuu_context_unregister("capi_session", 7);
  }
  static std::string vgf_first_path() { return temp_path("options_vgf_first.gpuu"); }
  static std::string vulkan_first_path() { return temp_path("options_vulkan_first.gpuu"); }

  // Runs the program at `path` once with `options` and `vgf_path` (checking
  // the output against the reference when the session could be made).
  static gpuu_status run(const std::string& path, const std::vector<gpuu_backend_option>& options,
                         gpuu_vgf_path vgf_path = GPUU_VGF_PATH_AUTO) {
    gpuu_session_options o;
    gpuu_session_options_init(&o);
    o.vgf_path = vgf_path;
    o.backend_options = options.empty() ? nullptr : options.data();
    o.backend_option_count = options.size();
    RunResult r = run_program(path, &o);
    if (r.status == GPUU_OK) expect_matches_reference(r.y);
    return r.status;
  }
};

void expect_executor_by_request(const std::vector<std::string>& lines) {
  ASSERT_EQ(lines.size(), 2u) << "one line per VGF delegate";
  for (const std::string& line : lines) {
    EXPECT_TRUE(contains(line, "path=executor (the session asked for the executor)")) << line;
  }
}

TEST_F(BackendOptionsCapi, DataGraphPathExecutorRunsEveryVgfDelegateOnTheExecutor) {
  VgfInitLines log;
  ASSERT_EQ(run(vgf_first_path(), {option("VgfBackend", "data_graph_path", "executor")}), GPUU_OK) << last_error();
  expect_executor_by_request(log.lines());
}

TEST_F(BackendOptionsCapi, DataGraphPathNativeIsHonouredAndSaysWhyNotHere) {
  EXPECT_EQ(run(vgf_first_path(), {option("VgfBackend", "data_graph_path", "native")}), GPUU_ERROR_UNSUPPORTED);
  EXPECT_TRUE(contains(last_error(), "VGF delegate 0: the session asked for the native VK_ARM_data_graph path"))
      << last_error();
  // The default (auto) runs here, on the executor, saying why.
  VgfInitLines log;
  ASSERT_EQ(run(vgf_first_path(), {option("VgfBackend", "data_graph_path", "auto")}), GPUU_OK) << last_error();
  ASSERT_EQ(log.lines().size(), 2u);
  for (const std::string& line : log.lines()) EXPECT_TRUE(contains(line, "has no VK_ARM_data_graph")) << line;
}

TEST_F(BackendOptionsCapi, AnOptionForABackendWithoutDelegatesIsAccepted) {
  // Forcing native would fail a VGF delegate here: the program has none.
  EXPECT_EQ(run(vulkan_first_path(), {option("VgfBackend", "data_graph_path", "native")}), GPUU_OK) << last_error();
}

TEST_F(BackendOptionsCapi, EveryBadOptionIsNamedInOneMessageBeforeAnyDelegateInitialises) {
  VgfInitLines log;
  std::vector<gpuu_backend_option> options = {
      option("NpuBackend", "cores", "4"),
      option("VgfBackend", "path", "native"),
      option("VgfBackend", "data_graph_path", "fastest"),
      option("VulkanBackend", "tiles", "8"),
      option("VgfBackend", "data_graph_path", nullptr),
      option("VgfBackend", "data_graph_path", "executor"),
  };
  ASSERT_EQ(run(vgf_first_path(), options), GPUU_ERROR_INVALID_ARGUMENT);
  const std::string message = last_error();
  for (const char* expected : {
           "gpuu_session_create: backend options: ",
           "backend_options[4].value is NULL",
           "'NpuBackend:cores=4' names backend 'NpuBackend', which is not registered (registered: VulkanBackend, "
           "VgfBackend)",
           "'VgfBackend:path=native': VgfBackend has no option 'path' (its options: data_graph_path)",
           "'VgfBackend:data_graph_path=fastest': 'fastest' is not one of auto, native, executor",
           "'VulkanBackend:tiles=8': VulkanBackend has no option 'tiles' (its options: gemm_kernel)",
           "'VgfBackend:data_graph_path=executor' sets VgfBackend:data_graph_path again (first "
           "'VgfBackend:data_graph_path=fastest')",
       }) {
    EXPECT_TRUE(contains(message, expected)) << "missing: " << expected << "\nin: " << message;
  }
  EXPECT_TRUE(log.lines().empty()) << "a delegate initialised before the options were checked";
}

TEST_F(BackendOptionsCapi, TheVgfPathFieldIsTheSameOptionAndAConflictIsRefused) {
  {
    VgfInitLines log;
    ASSERT_EQ(run(vgf_first_path(), {}, GPUU_VGF_PATH_EXECUTOR), GPUU_OK) << last_error();
    expect_executor_by_request(log.lines());
  }
  EXPECT_EQ(run(vgf_first_path(), {}, GPUU_VGF_PATH_NATIVE), GPUU_ERROR_UNSUPPORTED);
  EXPECT_TRUE(contains(last_error(), "asked for the native VK_ARM_data_graph path")) << last_error();
  // Both, alike: fine.
  {
    VgfInitLines log;
    ASSERT_EQ(run(vgf_first_path(), {option("VgfBackend", "data_graph_path", "executor")}, GPUU_VGF_PATH_EXECUTOR),
              GPUU_OK)
        << last_error();
    expect_executor_by_request(log.lines());
  }
  // Both, different: refused, naming both.
  EXPECT_EQ(run(vgf_first_path(), {option("VgfBackend", "data_graph_path", "executor")}, GPUU_VGF_PATH_NATIVE),
            GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(last_error(), "vgf_path native conflicts with 'VgfBackend:data_graph_path=executor'"))
      << last_error();
  // The field at its default leaves the option alone.
  EXPECT_EQ(run(vgf_first_path(), {option("VgfBackend", "data_graph_path", "native")}, GPUU_VGF_PATH_AUTO),
            GPUU_ERROR_UNSUPPORTED);
}

TEST_F(BackendOptionsCapi, TheOptionArrayFollowsTheStructSizeRule) {
  gpuu_backend_option tiny = option("VgfBackend", "data_graph_path", "executor");
  tiny.struct_size = 4;
  EXPECT_EQ(run(vgf_first_path(), {tiny}), GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(last_error(), "options->backend_options: element 0 has struct_size 4")) << last_error();

  // A newer client's larger elements: read at its stride, the tails ignored.
  struct NewerOption {
    gpuu_backend_option known;
    unsigned char unknown[24];
  };
  NewerOption newer[2];
  for (NewerOption& n : newer) {
    gpuu_backend_option_init_sized(&n.known, sizeof(NewerOption));
    std::memset(n.unknown, 0xA5, sizeof(n.unknown));
  }
  newer[0].known.backend = "VgfBackend";
  newer[0].known.key = "data_graph_path";
  newer[0].known.value = "executor";
  newer[1].known.backend = "VgfBackend";
  newer[1].known.key = "no_such_key";
  newer[1].known.value = "x";
  gpuu_program* program = nullptr;
  ASSERT_EQ(gpuu_program_load_file(vgf_first_path().c_str(), &program), GPUU_OK) << last_error();
  gpuu_session_options o;
  gpuu_session_options_init(&o);
  o.backend_options = &newer[0].known;
  o.backend_option_count = 2;
  gpuu_session* session = nullptr;
  EXPECT_EQ(gpuu_session_create(program, &o, &session), GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(last_error(), "'VgfBackend:no_such_key=x'")) << "element 1 read at the caller's stride: "
                                                                      << last_error();
  EXPECT_FALSE(contains(last_error(), "data_graph_path=executor")) << last_error();
  o.backend_option_count = 1;
  EXPECT_EQ(gpuu_session_create(program, &o, &session), GPUU_OK) << last_error();
  gpuu_session_destroy(session);
  o.backend_options = nullptr;
  EXPECT_EQ(gpuu_session_create(program, &o, &session), GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(contains(last_error(), "NULL array with a nonzero count")) << last_error();
  gpuu_program_release(program);
}

#ifdef GPUU_RUN_PATH
std::string gpuu_run_output(const std::string& args) {
  std::string log = temp_path("options_run.log");
  std::string cmd = std::string(GPUU_RUN_PATH) + " " + args + " > " + log + " 2>&1";
  int rc = std::system(cmd.c_str());
  std::ifstream in(log);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::remove(log.c_str());
  return (rc == 0 ? "exit 0\n" : "exit nonzero\n") + text;
}

TEST_F(BackendOptionsCapi, GpuuRunTakesRepeatableBackendOptions) {
  std::string input = temp_path("options_input0.bin");
  std::vector<float> x = rfc_input();
  std::ofstream(input, std::ios::binary).write(reinterpret_cast<const char*>(x.data()), 768);
  const std::string base = "--model_path " + vgf_first_path() + " --input_list " + input + " ";
  std::string text = gpuu_run_output(base + "--backend_option VgfBackend:data_graph_path=executor");
  EXPECT_TRUE(contains(text, "exit 0\n")) << text;
  EXPECT_TRUE(contains(text, "path=executor (the session asked for the executor)")) << text;

  text = gpuu_run_output(base + "--backend_option VgfBackend:data_graph_path=fast --backend_option Npu:x=1");
  EXPECT_TRUE(contains(text, "exit nonzero\n")) << text;
  EXPECT_TRUE(contains(text, "'fast' is not one of auto, native, executor")) << text;
  EXPECT_TRUE(contains(text, "'Npu:x=1' names backend 'Npu'")) << text;

  text = gpuu_run_output(base + "--vgf_path native --backend_option VgfBackend:data_graph_path=executor");
  EXPECT_TRUE(contains(text, "vgf_path native conflicts with 'VgfBackend:data_graph_path=executor'")) << text;

  for (const char* malformed : {"VgfBackend", "VgfBackend:data_graph_path", ":k=v", "VgfBackend:=v"}) {
    text = gpuu_run_output(base + "--backend_option " + malformed);
    EXPECT_TRUE(contains(text, "exit nonzero\n")) << malformed;
    EXPECT_TRUE(contains(text, std::string("--backend_option takes ID:KEY=VALUE, got '") + malformed + "'")) << text;
  }
  std::remove(input.c_str());
}
#endif

}  // namespace
