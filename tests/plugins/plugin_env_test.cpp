// GPUU_BACKEND_PATH (set by ctest to a missing directory and the sample
// plugin's directory) is read when the process registry is first used.
#include <gtest/gtest.h>

#include "runtime/builtin_backends.h"

namespace gpuu::runtime {
namespace {

TEST(PluginEnv, RegistryLoadsThePluginsTheEnvironmentNamesAfterTheBuiltIns) {
  std::vector<std::string> ids = backend_registry().ids();
  ASSERT_EQ(ids.size(), 3u);
  EXPECT_EQ(ids[0], "VulkanBackend");
  EXPECT_EQ(ids[1], "VgfBackend");
  EXPECT_EQ(ids[2], "MtCpu");  // the missing directory before it was refused, not fatal
  const backends::Backend* mtcpu = backend_registry().find("MtCpu");
  ASSERT_NE(mtcpu->plugin_path(), nullptr);
  EXPECT_NE(std::string(mtcpu->plugin_path()).find("Gpuu_MtCpu_backend.so"), std::string::npos);
  EXPECT_EQ(backend_registry().find("VulkanBackend")->plugin_path(), nullptr);
}

TEST(PluginEnv, LoadingTheSameDirectoryAgainAddsNothing) {
  backend_registry();
  plugins::LoadReport again = plugin_loader().load(GPUU_SAMPLE_PLUGIN_DIR_FOR_ENV);
  EXPECT_TRUE(again.loaded.empty());
  EXPECT_TRUE(again.refused.empty()) << again.refused[0];
  EXPECT_EQ(backend_registry().ids().size(), 3u);
}

}  // namespace
}  // namespace gpuu::runtime
