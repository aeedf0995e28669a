// A program's device memory planned from the file alone, before (or without)
// any device: what a session would allocate for its tensors, states and
// delegates. A session with a budget checks it before allocating anything;
// gpuu-inspect --memory prints it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/blob.h"
#include "program/program.h"

namespace gpuu::runtime {

struct DelegateMemoryPlan {
  int32_t index = 0;
  std::string backend;
  std::string unknown;         // why its backend could not plan it; "" when planned
  uint64_t weights = 0;        // weights kept once per device (one another delegate reads counts here too)
  uint64_t constants = 0;      // constants of its own
  uint64_t intermediates = 0;  // the runtime's workspace for it and what the backend allocates itself
  uint64_t io = 0;             // the tensors it reads and writes (their homes are the session's), states aside
  uint64_t states = 0;         // the states it reads or writes
};

struct MemoryPlan {
  // The sizes planned at, one per dim (their upper bounds); empty for a static program.
  std::vector<int64_t> dims;
  std::vector<DelegateMemoryPlan> delegates;
  // Every delegate's own constants, plus weights kept once per device, each
  // counted once however many delegates read it.
  uint64_t weights = 0;
  // Of those, what is on no device now: what a session would upload.
  uint64_t new_weights = 0;
  std::vector<Blob> shared_weights;  // the weights kept once per device, each once
  std::vector<Blob> held_weights;    // those already on a device (a session uploads none of them)
  uint64_t tensors = 0;     // homes of the tensors delegates read or write (a state's update included; shared homes once)
  uint64_t states = 0;      // homes of the states
  uint64_t workspaces = 0;  // the runtime's workspaces for delegates' intermediates: the largest per context
  uint64_t backend_private = 0;  // intermediates backends allocate themselves
  // What a session would allocate now.
  uint64_t need() const { return new_weights + tensors + states + workspaces + backend_private; }
};

// Homes that tensors take by turns. A tensor that only GPU delegates write
// and read, all on one shared context, and that is no program input, output,
// state or state update, lives from the plan step that writes it to the last
// one that reads it; tensors whose lives do not meet share one home, as large
// as the largest of them. The delegates run one after another on the
// context's queue, each ordered after the work before it, so a later tensor
// may overwrite an earlier one once its last reader ran.
struct SharedHomes {
  std::vector<int32_t> home_of;       // by program tensor: its shared home, or -1 (one of its own)
  std::vector<uint64_t> home_bytes;   // by shared home: the largest of its tensors
};
// `tensor_bytes`: each program tensor's size (at the dims' upper bounds for a
// session's memory). No home is shared where the delegates are not all on one
// shared context (a delegate without shared keys has a private one).
SharedHomes plan_shared_homes(const program::Program& program, const std::vector<uint64_t>& tensor_bytes);

// The plan of `program` at its own sizes. Each delegate's backend plans its
// part (Backend::plan_memory); one that cannot is named in `unknown` and
// counts nothing. Tensors used only by CPU-fallback steps live in host memory
// and are not counted. A state whose update a delegate writes in place needs
// no home for the update: the plan counts one, so it may be a little high.
Result<MemoryPlan> plan_memory(const std::shared_ptr<const program::Program>& program);

// What a session of `program` allocates when it is made: a static program's
// plan; for a program with dims, the plan of `at_upper` (the program
// specialized at the dims' upper bounds, where a session plans its homes and
// workspaces) and the constants of its own that the program at its examples
// (where the session starts) adds.
Result<MemoryPlan> plan_session_memory(const std::shared_ptr<const program::Program>& program,
                                       const std::shared_ptr<const program::Program>& at_upper);

// plan_session_memory, specializing the program at its dims' upper bounds first.
Result<MemoryPlan> plan_memory_at_upper_bounds(const std::shared_ptr<const program::Program>& program);

// "1.5 MiB": `bytes` in the largest binary unit below it, one decimal.
std::string format_bytes(uint64_t bytes);

}  // namespace gpuu::runtime
