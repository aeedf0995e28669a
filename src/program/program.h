// A loaded gpuu program: tensors, data segments, delegates and the ordered
// plan, decoded from a verified file. Constant and blob bytes are Blob views
// into the file (a memory map when loaded from disk), never copies.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/blob.h"
#include "base/status.h"
#include "compile_spec/shared_gpu_compile_spec.h"
#include "graph/graph.h"

namespace gpuu::program {

// Format 1.x. A reader refuses another major; a higher minor only adds fields.
inline constexpr uint16_t kFormatMajor = 1;
inline constexpr uint16_t kFormatMinor = 0;
// A program with states is format 2.0, so that a 1.x reader, which would
// skip the table it does not know and run the program without its states,
// refuses it instead. Programs without states stay 1.0, byte for byte.
inline constexpr uint16_t kStatefulFormatMajor = 2;
// A program whose delegate blobs leave constants to the program's store in a
// way a reader must resolve (a VGF blob's empty constant records, filled by
// name at init) is format 3.0 (states allowed too), so that a 2.x reader,
// which would find the records empty, refuses the file by its version.
inline constexpr uint16_t kConstantRefsFormatMajor = 3;
// A program with dims whose delegate sources name a constant by the
// rearranged copy its blob reads (SgTensor.stored_as; the original is then
// not stored) is format 4.0, so that a 3.x reader, which would look for the
// original when it prepares another size, refuses the file by its version.
inline constexpr uint16_t kRearrangedSourcesFormatMajor = 4;
// A program with dims (symbolic sizes) is minor 1: a reader of minor 0 skips
// them and runs it at the example sizes, as the file's shapes say.
inline constexpr uint16_t kSymbolicFormatMinor = 1;
inline constexpr uint64_t kSegmentAlignment = 64;
inline constexpr const char* kProgramFileIdentifier = "GPUU";
inline constexpr const char* kSubGraphFileIdentifier = "GPSG";

struct TensorInfo {
  std::string name;
  graph::DType dtype = graph::DType::kF32;
  graph::Shape shape;
  int32_t segment = -1;  // the constant's data segment; -1 for non-constants
  std::vector<graph::AxisExpr> dim_exprs;  // axes that follow the program's dims; shape holds the example
  bool is_constant() const { return segment >= 0; }
};

struct SegmentInfo {
  uint64_t offset = 0;  // from the start of the file, a multiple of kSegmentAlignment
  uint64_t size = 0;
  std::vector<std::string> names;  // every constant / blob stored here
  Blob owned;  // a blob made after loading (specialize.h), in place of file bytes
};

// A graph node a delegate took (its computation lives in the processed blob).
struct NodeRef {
  std::string name;
  std::string op;
  bool operator==(const NodeRef& o) const { return name == o.name && op == o.op; }
};

struct DelegateInfo {
  std::string backend_id;  // "VgfBackend", "VulkanBackend"
  std::vector<CompileSpecEntry> compile_specs;
  // The shared keys among compile_specs, parsed once when the file is loaded.
  SharedGpuCompileSpec shared;
  int32_t processed_segment = -1;
  // With dims: the segment of the region as a SubGraph with its size
  // expressions, preprocessed again at other sizes (specialize.h); else -1.
  int32_t source_segment = -1;
  std::vector<int32_t> inputs;   // tensor indices
  std::vector<int32_t> outputs;  // tensor indices
  std::vector<NodeRef> nodes;
};

struct CpuNodeInfo {
  std::string name;
  std::string op;
  graph::AttrMap attrs;
  std::vector<int32_t> inputs;   // tensor indices
  std::vector<int32_t> outputs;  // tensor indices
  std::vector<graph::AttrExpr> attr_exprs;  // integer attributes that follow the program's dims
};

// A program state: tensor `tensor` reads it, `update` is what it becomes
// when the plan ends, `initial_segment` holds its starting bytes. Its name,
// dtype and shape are the read tensor's.
struct StateInfo {
  int32_t tensor = -1;
  int32_t update = -1;
  int32_t initial_segment = -1;
};

struct PlanStep {
  enum class Kind : uint8_t { kDelegate = 0, kCpuNode = 1 };
  Kind kind = Kind::kDelegate;
  int32_t delegate = -1;  // kDelegate: index into Program::delegates()
  CpuNodeInfo cpu_node;   // kCpuNode
};

class Program {
 public:
  uint16_t format_major() const { return format_major_; }
  uint16_t format_minor() const { return format_minor_; }
  uint64_t file_size() const { return file_.size(); }
  uint64_t data_start() const { return data_start_; }

  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const std::vector<int32_t>& inputs() const { return inputs_; }
  const std::vector<int32_t>& outputs() const { return outputs_; }
  const std::vector<SegmentInfo>& segments() const { return segments_; }
  const std::vector<DelegateInfo>& delegates() const { return delegates_; }
  const std::vector<PlanStep>& plan() const { return plan_; }
  const std::vector<StateInfo>& states() const { return states_; }
  // Sizes that vary between executes (graph/symbolic.h); empty for a static
  // program. Shapes and blobs hold the sizes at each dim's example.
  const std::vector<graph::SymbolicDim>& dims() const { return dims_; }
  // The one sync mode of the program: every delegate's gpu_shared_sync_mode
  // (the loader refuses a file whose delegates disagree); timeline when the
  // program has no delegates.
  SyncMode sync_mode() const { return sync_mode_; }

  // Index of the tensor named `name`, or -1.
  int32_t find_tensor(std::string_view name) const;

  // Views into the file; they keep the file's memory alive on their own.
  Blob segment_data(int32_t segment) const;
  Blob constant_data(int32_t tensor) const;  // empty Blob for a non-constant
  Blob processed_blob(int32_t delegate) const;
  Blob state_initial_data(int32_t state) const;

  // Bytes that would be stored without deduplication: every constant and
  // processed blob counted once per use, minus the bytes actually stored.
  uint64_t dedup_saved_bytes() const;

 private:
  friend class ProgramDecoder;
  friend class ProgramSpecializer;
  Blob file_;
  uint16_t format_major_ = 0;
  uint16_t format_minor_ = 0;
  uint64_t data_start_ = 0;
  // The member list reads like TosaGraph's (vgf/tosa_graph.h); element types differ.
  std::vector<TensorInfo> tensors_;
  std::vector<int32_t> inputs_;
  std::vector<int32_t> outputs_;
  std::vector<SegmentInfo> segments_;
  std::vector<DelegateInfo> delegates_;
  std::vector<PlanStep> plan_;
  std::vector<StateInfo> states_;
  std::vector<graph::SymbolicDim> dims_;
  SyncMode sync_mode_ = SyncMode::kTimeline;
  std::unordered_map<std::string, int32_t> tensor_index_;
};

// Bytes of a tensor of `dtype` and `shape`, or an error naming `where` when a
// dimension is negative or the count overflows.
Result<uint64_t> tensor_byte_size(graph::DType dtype, const graph::Shape& shape, const std::string& where);

}  // namespace gpuu::program
