// A SPIR-V file's words, for benchmarks that run a variant of a built-in
// kernel (bench_gemm and bench_dispatch --spirv, gemm_shader_stats FILE.spv).
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kernels/kernel_cache.h"

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

// A --spirv argument NAME=FILE as (NAME, FILE); none where it has no '=' or no name.
inline std::optional<std::pair<std::string, std::string>> parse_spirv_variant(const std::string& arg) {
  const size_t eq = arg.find('=');
  if (eq == std::string::npos || eq == 0) return std::nullopt;
  return std::pair{arg.substr(0, eq), arg.substr(eq + 1)};
}

// A --spirv argument appended to `variants`; false, after saying why on
// stderr as `bench`, where it is not NAME=FILE.
inline bool take_spirv_variant(const char* arg, std::vector<std::pair<std::string, std::string>>& variants,
                               const char* bench) {
  const std::optional<std::pair<std::string, std::string>> variant = parse_spirv_variant(arg);
  if (!variant) {
    std::fprintf(stderr, "%s: --spirv wants NAME=FILE, got '%s'\n", bench, arg);
    return false;
  }
  variants.push_back(*variant);
  return true;
}

// Each (NAME, FILE) of `variants` stands in for built-in kernel NAME in
// `cache` from now on; false, after saying why on stderr as `bench`, where a
// file cannot be read.
inline bool add_spirv_variants(kernels::KernelCache& cache,
                               const std::vector<std::pair<std::string, std::string>>& variants, const char* bench) {
  for (const auto& [name, file] : variants) {
    std::vector<uint32_t> words = read_spirv_file(file);
    if (words.empty()) {
      std::fprintf(stderr, "%s: --spirv %s: cannot read SPIR-V from %s\n", bench, name.c_str(), file.c_str());
      return false;
    }
    cache.add_spirv(name, std::move(words));
  }
  return true;
}

}  // namespace gpuu::bench
