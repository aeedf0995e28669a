// A SPIR-V file's words, for benchmarks that run a variant of a built-in
// kernel (bench_gemm --spirv, gemm_shader_stats FILE.spv).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace gpuu::bench {

// Empty where the file cannot be read.
inline std::vector<uint32_t> read_spirv_file(const std::string& path) {
  std::vector<uint32_t> words;
  if (std::FILE* f = std::fopen(path.c_str(), "rb")) {
    uint32_t w;
    while (std::fread(&w, 4, 1, f) == 1) words.push_back(w);
    std::fclose(f);
  }
  return words;
}

}  // namespace gpuu::bench
