// libFuzzer target for the program loader: any byte string must give either a
// program that is safe to walk in full or an error, never a crash. Built as a
// fuzzer with clang (GPUU_BUILD_FUZZERS=ON) and, everywhere, as a replay tool
// that runs the seed corpus through the same entry point.
#include <cstddef>
#include <cstdint>

#include "program/program_loader.h"
#include "program/subgraph.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto program = gpuu::program::load_program_bytes(data, size);
  if (!program.ok()) return 0;
  const gpuu::program::Program& p = *program.value();
  // Touch everything a runtime would: every segment byte, every blob decoded.
  volatile uint8_t sink = 0;
  for (size_t s = 0; s < p.segments().size(); ++s) {
    gpuu::Blob b = p.segment_data(static_cast<int32_t>(s));
    for (size_t i = 0; i < b.size(); ++i) sink = sink ^ b.data()[i];
  }
  for (size_t d = 0; d < p.delegates().size(); ++d) {
    gpuu::Blob blob = p.processed_blob(static_cast<int32_t>(d));
    auto sub = gpuu::program::parse_subgraph(blob.data(), blob.size(),
                                             gpuu::program::program_constant_lookup(program.value()));
    (void)sub;
  }
  return 0;
}
