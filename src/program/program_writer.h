// Writing program files: a builder for hand-made programs and tests, and
// build_program, which turns a partitioned graph into a program.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/blob.h"
#include "base/status.h"
#include "compile_spec/shared_gpu_compile_spec.h"
#include "graph/graph.h"
#include "partition/partition_result.h"
#include "program/program.h"
#include "program/subgraph.h"

namespace gpuu::program {

// A delegate as the builder takes it: the processed blob's bytes rather than
// a segment index (the builder assigns and deduplicates segments).
struct DelegateDesc {
  std::string backend_id;
  std::vector<CompileSpecEntry> compile_specs;
  Blob processed;
  std::vector<int32_t> inputs;   // tensor indices
  std::vector<int32_t> outputs;  // tensor indices
  std::vector<NodeRef> nodes;
  Blob source;  // with dims: the region's SubGraph with its size expressions (empty: none)
};

// Collects a program, then lays it out: the flatbuffer, then every distinct
// constant or blob once, each at a 64-byte aligned file offset. The builder
// checks nothing while adding; finish() runs the loader's full validation on
// the result, so it never produces a file that load_program_* would refuse.
class ProgramBuilder {
 public:
  // Each returns the new tensor's index.
  int32_t add_tensor(std::string name, graph::DType dtype, graph::Shape shape,
                     std::vector<graph::AxisExpr> dim_exprs = {});
  int32_t add_constant(std::string name, graph::DType dtype, graph::Shape shape, Blob data);
  // Returns the delegate's index; add_delegate_call() puts it into the plan.
  int32_t add_delegate(DelegateDesc delegate);
  void add_delegate_call(int32_t delegate);
  void add_cpu_node(CpuNodeInfo node);
  // A state read by tensor `tensor`, which becomes `update` when the plan
  // ends, starting from `initial`. A program with states is format 2.0.
  void add_state(int32_t tensor, int32_t update, Blob initial);
  // Sizes that vary between executes; a program with dims is format x.1.
  void set_dims(std::vector<graph::SymbolicDim> dims) { dims_ = std::move(dims); }
  // The file's format major is at least `major` (a delegate blob's need).
  void require_format_major(uint16_t major) { min_format_major_ = std::max(min_format_major_, major); }
  void set_inputs(std::vector<int32_t> tensors) { inputs_ = std::move(tensors); }
  void set_outputs(std::vector<int32_t> tensors) { outputs_ = std::move(tensors); }

  // The file's bytes; the same additions always give the same bytes.
  Result<std::vector<uint8_t>> finish() const;
  // finish(), then writes `path` atomically: a temporary file in the same
  // folder, flushed to disk, renamed over `path`.
  Status write_file(const std::string& path) const;

 private:
  struct Tensor {
    std::string name;
    graph::DType dtype;
    graph::Shape shape;
    bool constant;
    Blob data;
    std::vector<graph::AxisExpr> dim_exprs;
  };
  std::vector<Tensor> tensors_;
  std::vector<DelegateDesc> delegates_;
  std::vector<PlanStep> plan_;
  struct State {
    int32_t tensor, update;
    Blob initial;
  };
  std::vector<State> states_;
  std::vector<int32_t> inputs_;
  std::vector<int32_t> outputs_;
  std::vector<graph::SymbolicDim> dims_;
  uint16_t min_format_major_ = 0;
};

// Writes `bytes` to `path` atomically (temporary file + fsync + rename).
Status write_file_atomically(const std::string& path, const std::vector<uint8_t>& bytes);

// A constant a processed blob reads from the program that is no value of the
// graph (a weight the backend rearranged at export, say).
struct AddedConstant {
  std::string name;
  graph::DType dtype = graph::DType::kF32;
  graph::Shape shape;
  Blob data;
  // Where `data` is a constant input of the region rearranged (a conv weight
  // in TOSA's OHWI): that constant's name, and the view and perm that make
  // `data` from its elements (StoredRearranged). A program with dims then
  // names this copy in the region's source instead of the model's constant,
  // which it stores only where something else reads it.
  std::string rearranges;
  graph::Shape view;
  std::vector<int64_t> perm;
};

// What a backend's preprocess step returns for one region.
struct PreprocessedRegion {
  Blob processed;                                     // the delegate's processed blob
  std::vector<CompileSpecEntry> extra_compile_specs;  // backend keys, after the six shared ones
  // Which of the region's constant inputs the blob reads from the program (by
  // name, through BackendInitContext::constants); unset: all of them (a
  // SubGraph names each). A constant input left out is the blob's own: the
  // program stores it only where something else reads it.
  std::optional<std::vector<std::string>> constants_read;
  // Program constants the blob reads that the graph does not have. One name
  // is one constant: two regions adding the same name add the same bytes.
  std::vector<AddedConstant> added_constants;
  // The least program format major a reader of this blob needs: set where
  // the blob relies on the reader to fill constants from the program
  // (kConstantRefsFormatMajor); 0: any reader.
  uint16_t format_major = 0;
};

// Lowers one region for one backend. `io` is the delegate's interface;
// `compile_specs` are the delegate's (shared keys and the caller's).
using PreprocessFn = std::function<Result<PreprocessedRegion>(
    const graph::Graph& graph, const partition::Region& region, const RegionIo& io,
    const std::vector<CompileSpecEntry>& compile_specs)>;

// Compile specs the application adds: to every delegate, and to the delegates
// of one backend id.
struct CallerCompileSpecs {
  std::vector<CompileSpecEntry> shared;
  std::map<std::string, std::vector<CompileSpecEntry>> by_backend;
};

// Preprocess callbacks by backend id; a backend with none (or an empty one)
// gets serialize_region().
using Preprocessors = std::map<std::string, PreprocessFn>;

// The program for a partitioned graph. Regions are taken in order: a GPU
// region becomes a delegate (its interface as region_io() says, the six
// shared compile specs from `shared_spec`, then `caller_specs`, checked
// together as a shared spec; its blob from the backend's preprocess
// callback, which gets those compile specs) plus a call in the plan; a CPU region becomes one CPU
// step per node. Program tensors are the graph's inputs, outputs, constants,
// states and their updates, and every value crossing a region boundary or
// touched by a CPU node, in value order; each graph state becomes a program
// state. With dims, each delegate also keeps its region as its source
// (serialize_region), which names every constant of the region: one its
// blob reads only as a rearranged copy (AddedConstant::rearranges), and
// nothing else reads, is named as that copy and stored only so.
// Deterministic: the same arguments give the same bytes.
Result<std::vector<uint8_t>> build_program(const graph::Graph& graph, const partition::PartitionResult& partition,
                                           const SharedGpuCompileSpec& shared_spec,
                                           const Preprocessors& preprocessors = {},
                                           const CallerCompileSpecs& caller_specs = {});

}  // namespace gpuu::program
