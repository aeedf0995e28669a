// libFuzzer target for the VGF decoders: any byte string must give either an
// error or a file that validates, whose TOSA graph modules parse (or are
// refused) and raise to gpuu graphs that verify — never a crash, a leak or
// undefined behaviour. Built as a fuzzer with clang (GPUU_BUILD_FUZZERS=ON)
// and, everywhere, as a replay tool over the seed corpus.
#include <cstddef>
#include <cstdint>

#include "graph/verifier.h"
#include "vgf/tosa_graph.h"
#include "vgf/tosa_lowering.h"
#include "vgf/tosa_spirv.h"
#include "vgf/vgf_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpuu::vgf;
  gpuu::Result<VgfFile> file = decode_vgf(data, size);
  if (!file.ok()) return 0;
  if (!validate_vgf(file.value()).ok()) return 0;
  const VgfFile& f = file.value();
  for (const Segment& segment : f.sequence.segments) {
    if (segment.type != ModuleType::kGraph || segment.module_index >= f.modules.size()) continue;
    const Module& module = f.modules[segment.module_index];
    if (!module.has_code || module.spirv.empty()) continue;
    gpuu::Result<TosaGraph> graph = parse_tosa_module(module.spirv.data(), module.spirv.size());
    if (!graph.ok()) continue;
    // Attach the file's constants as the runtime does, then raise to gpuu ops.
    bool attached = true;
    for (const GraphConstantBinding& b : segment.effective_constant_bindings()) {
      if (b.constant_table_index >= f.constants.size()) {
        attached = false;
        break;
      }
      attached = set_graph_constant_data(graph.value(), b.graph_constant_id,
                                         f.constants[b.constant_table_index].data)
                     .ok() &&
                 attached;
    }
    if (!attached) continue;
    gpuu::Result<gpuu::graph::Graph> raised = tosa_to_gpuu(graph.value());
    if (raised.ok()) (void)gpuu::graph::verify(raised.value());
  }
  return 0;
}
