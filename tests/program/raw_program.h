// A test-only program encoder that writes whatever it is told, bypassing the
// writer's validation, so each loader check can be hit by a hand-made file.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "program/program.h"
#include "program/program_generated.h"

namespace gpuu_test {

struct RawTensor {
  std::optional<std::string> name;
  uint8_t dtype = 0;
  std::vector<int64_t> shape;
  std::optional<uint32_t> segment;  // set: a constant
  bool misalign_shape = false;      // place the [long] shape 4 bytes off 8-byte alignment
};

struct RawSegment {
  std::optional<uint64_t> offset;  // unset: placed after the previous one, aligned
  std::optional<uint64_t> size;    // unset: data.size()
  std::vector<std::string> names;
  std::vector<uint8_t> data;
};

struct RawSpec {
  std::optional<std::string> key;
  std::vector<uint8_t> value;
};

struct RawNode {
  std::optional<std::string> name;
  std::optional<std::string> op;
};

struct RawDelegate {
  std::optional<std::string> backend_id;
  std::vector<RawSpec> specs;
  uint32_t processed = 0;
  std::vector<uint32_t> inputs, outputs;
  std::vector<RawNode> nodes;
};

struct RawAttr {
  std::string name;
  uint8_t type = 1;  // fb::AttrValue
  bool omit_value = false;
  int64_t int_value = 0;
};

struct RawStep {
  uint8_t type = 1;  // fb::Step: 1 delegate call, 2 cpu node
  bool omit_table = false;
  uint32_t delegate = 0;
  RawNode node;
  std::vector<RawAttr> attrs;
  std::vector<uint32_t> inputs, outputs;
};

struct RawState {
  uint32_t tensor = 0, update = 0, initial = 0;
};

struct RawProgram {
  bool has_version = true;
  uint16_t major = gpuu::program::kFormatMajor;
  uint16_t minor = gpuu::program::kFormatMinor;
  std::optional<uint64_t> data_start;  // unset: the flatbuffer's size, aligned
  std::vector<RawTensor> tensors;
  std::vector<uint32_t> inputs, outputs;
  std::vector<RawSegment> segments;
  std::vector<RawDelegate> delegates;
  std::vector<RawStep> plan;
  std::vector<RawState> states;  // written only when non-empty, as the writer does
  std::optional<uint64_t> file_size;  // set: truncate or zero-pad to this size
};

inline std::vector<uint8_t> encode_raw(const RawProgram& raw) {
  namespace fb = gpuu::fb;
  auto align = [](uint64_t v) { return (v + 63) / 64 * 64; };
  auto encode = [&](uint64_t data_start, const std::vector<uint64_t>& offsets) {
    flatbuffers::FlatBufferBuilder fbb;
    fbb.ForceDefaults(true);
    auto opt_string = [&](const std::optional<std::string>& s) {
      return s ? fbb.CreateString(*s) : flatbuffers::Offset<flatbuffers::String>();
    };
    std::vector<flatbuffers::Offset<fb::Tensor>> tensors;
    for (const RawTensor& t : raw.tensors) {
      auto name = opt_string(t.name);
      flatbuffers::Offset<flatbuffers::Vector<int64_t>> shape;
      if (t.misalign_shape) {
        // Written by hand as 32-bit halves so that the data starts 4 bytes past
        // an 8-byte boundary, which the builder itself never does.
        fbb.Align(8);
        fbb.PushElement<uint32_t>(0);
        fbb.StartVector(t.shape.size() * 2, 4);
        for (size_t i = t.shape.size(); i-- > 0;) {
          auto bits = static_cast<uint64_t>(t.shape[i]);
          fbb.PushElement<uint32_t>(static_cast<uint32_t>(bits >> 32));
          fbb.PushElement<uint32_t>(static_cast<uint32_t>(bits));
        }
        shape = flatbuffers::Offset<flatbuffers::Vector<int64_t>>(fbb.EndVector(t.shape.size()));
      } else {
        shape = fbb.CreateVector(t.shape);
      }
      fb::ConstantRef ref(t.segment.value_or(0));
      tensors.push_back(
          fb::CreateTensor(fbb, name, static_cast<fb::DType>(t.dtype), shape, t.segment ? &ref : nullptr));
    }
    std::vector<flatbuffers::Offset<fb::Segment>> segments;
    for (size_t i = 0; i < raw.segments.size(); ++i) {
      const RawSegment& s = raw.segments[i];
      segments.push_back(
          fb::CreateSegment(fbb, offsets[i], s.size.value_or(s.data.size()), fbb.CreateVectorOfStrings(s.names)));
    }
    std::vector<flatbuffers::Offset<fb::Delegate>> delegates;
    for (const RawDelegate& d : raw.delegates) {
      std::vector<flatbuffers::Offset<fb::CompileSpec>> specs;
      for (const RawSpec& s : d.specs)
        specs.push_back(fb::CreateCompileSpec(fbb, opt_string(s.key), fbb.CreateVector(s.value)));
      std::vector<flatbuffers::Offset<fb::NodeRef>> nodes;
      for (const RawNode& n : d.nodes) nodes.push_back(fb::CreateNodeRef(fbb, opt_string(n.name), opt_string(n.op)));
      delegates.push_back(fb::CreateDelegate(fbb, opt_string(d.backend_id), fbb.CreateVector(specs), d.processed,
                                             fbb.CreateVector(d.inputs), fbb.CreateVector(d.outputs),
                                             fbb.CreateVector(nodes)));
    }
    std::vector<flatbuffers::Offset<fb::PlanStep>> plan;
    for (const RawStep& s : raw.plan) {
      flatbuffers::Offset<void> table;
      if (!s.omit_table) {
        if (s.type == static_cast<uint8_t>(fb::Step::CpuNode)) {
          std::vector<flatbuffers::Offset<fb::Attr>> attrs;
          for (const RawAttr& a : s.attrs) {
            flatbuffers::Offset<void> v;
            if (!a.omit_value) v = fb::CreateIntAttr(fbb, a.int_value).Union();
            attrs.push_back(fb::CreateAttr(fbb, fbb.CreateString(a.name), static_cast<fb::AttrValue>(a.type), v));
          }
          table = fb::CreateCpuNode(fbb, opt_string(s.node.name), opt_string(s.node.op), fbb.CreateVector(attrs),
                                    fbb.CreateVector(s.inputs), fbb.CreateVector(s.outputs))
                      .Union();
        } else {
          table = fb::CreateDelegateCall(fbb, s.delegate).Union();
        }
      }
      plan.push_back(fb::CreatePlanStep(fbb, static_cast<fb::Step>(s.type), table));
    }
    flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::State>>> states;
    if (!raw.states.empty()) {
      std::vector<flatbuffers::Offset<fb::State>> entries;
      for (const RawState& s : raw.states) entries.push_back(fb::CreateState(fbb, s.tensor, s.update, s.initial));
      states = fbb.CreateVector(entries);
    }
    fb::FormatVersion version(raw.major, raw.minor);
    auto root = fb::CreateProgram(fbb, raw.has_version ? &version : nullptr, data_start, fbb.CreateVector(tensors),
                                  fbb.CreateVector(raw.inputs), fbb.CreateVector(raw.outputs),
                                  fbb.CreateVector(segments), fbb.CreateVector(delegates), fbb.CreateVector(plan),
                                  states);
    fb::FinishProgramBuffer(fbb, root);
    return std::vector<uint8_t>(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
  };
  std::vector<uint64_t> offsets(raw.segments.size(), 0);
  const uint64_t auto_start = align(encode(0, offsets).size());
  const uint64_t data_start = raw.data_start.value_or(auto_start);
  uint64_t cursor = auto_start;
  for (size_t i = 0; i < raw.segments.size(); ++i) {
    offsets[i] = raw.segments[i].offset.value_or(cursor);
    cursor = align(std::max(cursor, offsets[i] + raw.segments[i].data.size()));
  }
  std::vector<uint8_t> file = encode(data_start, offsets);
  file.resize(std::max<uint64_t>(file.size(), auto_start), 0);
  for (size_t i = 0; i < raw.segments.size(); ++i) {
    const std::vector<uint8_t>& d = raw.segments[i].data;
    if (offsets[i] + d.size() > file.size()) file.resize(offsets[i] + d.size(), 0);
    std::copy(d.begin(), d.end(), file.begin() + static_cast<std::ptrdiff_t>(offsets[i]));
  }
  if (raw.file_size) file.resize(*raw.file_size, 0);
  return file;
}

}  // namespace gpuu_test
