// Writes the fuzzer's seed corpus: the sample program from build_program, a
// builder-made program with every attribute kind, a CPU-only program, and a
// few cut-down variants, one file each, into the folder given.
#include <cstdio>
#include <string>

#include "program/program_writer.h"
#include "program/sample_program.h"

namespace {

using namespace gpuu;
using namespace gpuu::program;

bool save(const std::string& dir, const char* name, const Result<std::vector<uint8_t>>& bytes) {
  if (!bytes.ok()) {
    std::fprintf(stderr, "%s: %s\n", name, bytes.status().message().c_str());
    return false;
  }
  Status s = write_file_atomically(dir + "/" + name, bytes.value());
  if (!s.ok()) std::fprintf(stderr, "%s\n", s.message().c_str());
  return s.ok();
}

Result<std::vector<uint8_t>> every_attribute_kind() {
  ProgramBuilder b;
  int32_t in = b.add_tensor("in", graph::DType::kI8, {2, 3});
  int32_t k = b.add_constant("k", graph::DType::kI64, {1}, Blob::copy_of("\1\0\0\0\0\0\0\0", 8));
  int32_t mid = b.add_tensor("mid", graph::DType::kF16, {2, 3});
  int32_t out = b.add_tensor("out", graph::DType::kBool, {});
  b.add_delegate_call(b.add_delegate(DelegateDesc{"VulkanBackend",
                                                  make_shared_gpu_compile_specs(SharedGpuCompileSpec{}),
                                                  Blob::copy_of("blob", 4),
                                                  {in, k},
                                                  {mid},
                                                  {{"gather", "gather"}}}));
  graph::AttrMap attrs{{"i", int64_t{-5}},
                       {"f", 0.125},
                       {"s", std::string("text")},
                       {"is", std::vector<int64_t>{1, 2}},
                       {"fs", std::vector<double>{-1.0}}};
  b.add_cpu_node(CpuNodeInfo{"reduce", "reduce_any", attrs, {mid}, {out}});
  b.set_inputs({in});
  b.set_outputs({out});
  return b.finish();
}

Result<std::vector<uint8_t>> cpu_only() {
  ProgramBuilder b;
  int32_t x = b.add_tensor("x", graph::DType::kF32, {4});
  int32_t y = b.add_tensor("y", graph::DType::kF32, {4});
  b.add_cpu_node(CpuNodeInfo{"neg", "neg", {}, {x}, {y}});
  b.set_inputs({x});
  b.set_outputs({y});
  return b.finish();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT_DIR\n", argv[0]);
    return 1;
  }
  std::string dir = argv[1];
  auto m = gpuu_test::make_sample_model();
  bool ok = save(dir, "sample.gpuu", build_program(m.graph, m.partition, m.spec));
  // The same model with everything on the CPU, and with no constants shared.
  auto cpu = gpuu_test::make_sample_model();
  cpu.partition.regions = {{partition::kCpuId, {0, 1, 2, 3, 4, 5, 6}}};
  cpu.partition.region_of_node.assign(7, 0);
  ok = save(dir, "sample_cpu.gpuu", build_program(cpu.graph, cpu.partition, cpu.spec)) && ok;
  ok = save(dir, "attributes.gpuu", every_attribute_kind()) && ok;
  ok = save(dir, "cpu_only.gpuu", cpu_only()) && ok;
  return ok ? 0 : 1;
}
