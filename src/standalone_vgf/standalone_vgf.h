// Standalone VGF export: each VGF delegate of a program written as its own
// .vgf file with a scenario JSON for Arm's scenario runner beside it, for
// deployments without gpuu (RFC: VGF must remain available as a standalone
// export flow). And the way back: a standalone VGF file (Arm-made, say)
// wrapped as a program of one VGF delegate. Between file formats only (the
// program file and the VGF container): no backend is involved, the delegates
// are found by the VGF backend's id.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "compile_spec/shared_gpu_compile_spec.h"
#include "program/program.h"
#include "vgf/vgf_file.h"

namespace gpuu::vgf {

// One file of a scenario: its name (relative to the scenario JSON) and bytes.
struct ScenarioFile {
  std::string name;
  std::vector<uint8_t> bytes;
};

// What Arm's scenario runner needs to run one VGF file as written.
struct Scenario {
  std::string json;                  // the scenario JSON (Arm's schema, scenario runner 0.11)
  std::vector<ScenarioFile> inputs;  // one .npy per model input, zero-filled placeholders
  std::vector<std::string> outputs;  // the .npy file each model output is written to
};

// The scenario for `file` saved as `vgf_file_name` beside the JSON. Resources:
// the VGF as a graph resource (uid "graph"); each model input and output as a
// tensor (GRAPH segments: TENSOR_ARM resources) or a storage buffer (COMPUTE
// segments), uid = its name in the sequence, src/dst `<stem>.input_<i>.npy` /
// `<stem>.output_<i>.npy` (`stem` = the VGF file name without ".vgf").
// Commands: one dispatch_vgf (0.11's name for dispatch_graph) binding every
// model input and output at its descriptor set and binding number. No frame
// boundary: the runner writes `dst` files without one, and 0.11 calls
// mark_boundary deprecated while frame_boundary needs VK_EXT_frame_boundary.
// kUnsupported for files Arm's runner cannot be fed as written (a model
// input or output in no descriptor set of any segment, a format no .npy type matches).
Result<Scenario> scenario_for_vgf(const VgfFile& file, const std::string& vgf_file_name);

// The .npy bytes (format 1.0) of a zero-filled array for a tensor of VkFormat
// `vk_format` and `shape`; kUnsupported for a format without a NumPy type.
Result<std::vector<uint8_t>> zero_npy(uint32_t vk_format, const std::vector<int64_t>& shape);

// Writes `dir/<delegate index>.vgf` and `dir/<delegate index>.json` for every
// VgfBackend delegate (creating `dir` if needed), with the scenario's input
// .npy files (zeros: replace them with real data); `written` (optional) gets
// the paths. kIo naming the path when a file cannot be written.
Status extract_vgf_delegates(const program::Program& program, const std::string& dir,
                             std::vector<std::string>* written = nullptr);

// A program of one VgfBackend delegate running the standalone VGF file
// `bytes` (kept as the delegate's blob, unchanged): program inputs and outputs
// are the file's model inputs and outputs, named by its sequence names (or
// input_<i> / output_<i>), typed by their resources; `spec` gives the six
// shared compile-spec keys. The file must decode and be one gpuu runs
// (kInvalidFormat for a file that is not VGF or is corrupt, kUnsupported for
// several segments, placeholder modules, TOSA gpuu lacks, unknown formats).
Result<std::vector<uint8_t>> program_from_vgf(const uint8_t* bytes, size_t size, const SharedGpuCompileSpec& spec);

}  // namespace gpuu::vgf
