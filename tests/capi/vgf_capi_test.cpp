// C ABI: a standalone VGF file as a program (gpuu_program_from_vgf / _file),
// on Arm's reference file sin_mul_const.vgf (y = sin(x) * W, W a graph
// constant holding 0.0, 0.5, ... 23.5).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "gpuu.h"

namespace {

const std::string kSamples = GPUU_VGF_SAMPLES_DIR;

std::vector<char> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(VgfCapi, ArmFileRunsAsAProgramOfOneVgfDelegate) {
  gpuu_program_write_options options;
  gpuu_program_write_options_init(&options);
  options.token = "vgf_capi";
  gpuu_program* program = nullptr;
  ASSERT_EQ(gpuu_program_from_vgf_file((kSamples + "/sin_mul_const.vgf").c_str(), &options, &program), GPUU_OK)
      << gpuu_last_error();
  ASSERT_EQ(gpuu_program_delegate_count(program), 1u);
  EXPECT_STREQ(gpuu_program_delegate_backend(program, 0), "VgfBackend");
  gpuu_session* session = nullptr;
  ASSERT_EQ(gpuu_session_create(program, nullptr, &session), GPUU_OK) << gpuu_last_error();
  gpuu_program_release(program);
  ASSERT_EQ(gpuu_session_input_count(session), 1u);
  ASSERT_EQ(gpuu_session_output_count(session), 1u);
  gpuu_tensor_info info;
  info.struct_size = sizeof(info);
  ASSERT_EQ(gpuu_session_input_info(session, 0, &info), GPUU_OK);
  EXPECT_STREQ(info.name, "input_0");
  EXPECT_EQ(info.dtype, GPUU_DTYPE_F32);
  ASSERT_EQ(info.rank, 4u);
  EXPECT_EQ(info.byte_size, 48u * 4);
  std::vector<float> x(48), y(48);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.1f * static_cast<float>(i) - 2.0f;
  ASSERT_EQ(gpuu_session_set_input(session, 0, x.data(), x.size() * 4), GPUU_OK) << gpuu_last_error();
  ASSERT_EQ(gpuu_session_execute(session), GPUU_OK) << gpuu_last_error();
  ASSERT_EQ(gpuu_session_get_output(session, 0, y.data(), y.size() * 4), GPUU_OK) << gpuu_last_error();
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_NEAR(y[i], std::sin(x[i]) * 0.5f * static_cast<float>(i), 1e-5) << i;
  }
  gpuu_session_destroy(session);
}

TEST(VgfCapi, MemoryVariantTakesTheSameBytes) {
  std::vector<char> bytes = read_file(kSamples + "/sin_mul.vgf");
  ASSERT_FALSE(bytes.empty());
  gpuu_program* program = nullptr;
  ASSERT_EQ(gpuu_program_from_vgf(bytes.data(), bytes.size(), nullptr, &program), GPUU_OK) << gpuu_last_error();
  EXPECT_EQ(gpuu_program_delegate_count(program), 1u);
  gpuu_program_release(program);
}

TEST(VgfCapi, BadInputIsNamed) {
  gpuu_program* program = reinterpret_cast<gpuu_program*>(0x1);
  EXPECT_EQ(gpuu_program_from_vgf(nullptr, 0, nullptr, &program), GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(program, nullptr);
  EXPECT_EQ(gpuu_program_from_vgf("x", 1, nullptr, nullptr), GPUU_ERROR_INVALID_ARGUMENT);
  std::string junk(256, 'j');
  EXPECT_EQ(gpuu_program_from_vgf(junk.data(), junk.size(), nullptr, &program), GPUU_ERROR_INVALID_FORMAT);
  EXPECT_NE(std::string(gpuu_last_error()).find("magic"), std::string::npos) << gpuu_last_error();
  EXPECT_EQ(gpuu_program_from_vgf_file("/nonexistent/dir/model.vgf", nullptr, &program), GPUU_ERROR_IO);
  EXPECT_NE(std::string(gpuu_last_error()).find("/nonexistent/dir/model.vgf"), std::string::npos);
  gpuu_program_write_options options;
  gpuu_program_write_options_init(&options);
  options.group_id = -1;
  EXPECT_EQ(gpuu_program_from_vgf_file((kSamples + "/sin_mul.vgf").c_str(), &options, &program),
            GPUU_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(gpuu_last_error()).find("group_id"), std::string::npos) << gpuu_last_error();
  // Arm's fixture with a 1-word stand-in for its SPIR-V decodes but cannot run.
  EXPECT_EQ(gpuu_program_from_vgf_file((kSamples + "/single_maxpool_graph_v0_4_3.vgf").c_str(), nullptr, &program),
            GPUU_ERROR_INVALID_FORMAT);
  EXPECT_NE(std::string(gpuu_last_error()).find("SPIR-V"), std::string::npos) << gpuu_last_error();
  EXPECT_EQ(program, nullptr);
}

}  // namespace
