// Loader robustness: every truncation and thousands of byte flips of a valid
// file give an error or a valid program, never a crash; each semantic check,
// hit by a hand-made file, names the field (and offset) that is wrong.
#include "program/program_loader.h"

#include <gtest/gtest.h>

#include <functional>
#include <random>

#include "program/program_writer.h"
#include "program/raw_program.h"
#include "program/sample_program.h"

namespace gpuu::program {
namespace {

using gpuu_test::RawProgram;

std::vector<uint8_t> text_bytes(const std::string& s) { return std::vector<uint8_t>(s.begin(), s.end()); }

std::vector<gpuu_test::RawSpec> shared_specs() {
  std::vector<gpuu_test::RawSpec> out;
  for (const CompileSpecEntry& e : make_shared_gpu_compile_specs(SharedGpuCompileSpec{}))
    out.push_back({e.key, e.value});
  return out;
}

// Tensors: 0 x (input), 1 w, 2 w2 (constants sharing segment 0), 3 t, 4 u, 5 y.
// Plan: delegate 0 (VGF: x, w -> t), cpu relu (t -> u), delegate 1 (Vulkan: u, w2 -> y).
RawProgram valid_raw() {
  RawProgram r;
  r.tensors = {{"x", 0, {1, 4}, {}}, {"w", 0, {4}, 0u},    {"w2", 0, {4}, 0u},
               {"t", 0, {1, 4}, {}}, {"u", 0, {1, 4}, {}}, {"y", 0, {1, 4}, {}}};
  r.inputs = {0};
  r.outputs = {5};
  r.segments = {{{}, {}, {"w", "w2"}, std::vector<uint8_t>(16, 1)},
                {{}, {}, {"delegate 0 (VgfBackend)"}, text_bytes("vgf blob")},
                {{}, {}, {"delegate 1 (VulkanBackend)"}, text_bytes("vulkan blob")}};
  r.delegates = {{"VgfBackend", shared_specs(), 1, {0, 1}, {3}, {{"mul0", "mul"}}},
                 {"VulkanBackend", shared_specs(), 2, {4, 2}, {5}, {{"add0", "add"}}}};
  gpuu_test::RawStep relu;
  relu.type = static_cast<uint8_t>(fb::Step::CpuNode);
  relu.node = {"relu0", "relu"};
  relu.attrs = {{"axis", 1, false, 3}};
  relu.inputs = {3};
  relu.outputs = {4};
  gpuu_test::RawStep call0, call1;
  call1.delegate = 1;
  r.plan = {call0, relu, call1};
  return r;
}

// valid_raw() plus state "s" (tensor 6, f32 [1, 4], initial bytes in segment
// 3) that the Vulkan delegate reads and the CPU step's "u" updates: format 2.0.
RawProgram stateful_raw() {
  RawProgram r = valid_raw();
  r.major = kStatefulFormatMajor;
  r.tensors.push_back({"s", 0, {1, 4}, {}});
  r.segments.push_back({{}, {}, {"initial value of state 's'"}, std::vector<uint8_t>(16, 7)});
  r.delegates[1].inputs.push_back(6);
  r.states = {{6, 4, 3}};
  return r;
}

Status load_status(const std::vector<uint8_t>& bytes) {
  Result<std::shared_ptr<const Program>> p = load_program_bytes(bytes.data(), bytes.size());
  return p.ok() ? Status::Ok() : p.status();
}

std::vector<uint8_t> sample_file() {
  auto m = gpuu_test::make_sample_model();
  Result<std::vector<uint8_t>> bytes = build_program(m.graph, m.partition, m.spec);
  EXPECT_TRUE(bytes.ok()) << bytes.status().message();
  return bytes.ok() ? bytes.value() : std::vector<uint8_t>{};
}

TEST(ProgramLoader, HandMadeValidProgramLoads) {
  std::vector<uint8_t> bytes = encode_raw(valid_raw());
  Result<std::shared_ptr<const Program>> p = load_program_bytes(bytes.data(), bytes.size());
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p.value()->plan().size(), 3u);
  EXPECT_EQ(p.value()->dedup_saved_bytes(), 16u);
}

TEST(ProgramLoader, HigherMinorVersionLoads) {
  RawProgram raw = valid_raw();
  raw.minor = kFormatMinor + 5;  // minor versions only add fields an older reader may skip
  std::vector<uint8_t> bytes = encode_raw(raw);
  Result<std::shared_ptr<const Program>> p = load_program_bytes(bytes.data(), bytes.size());
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p.value()->format_minor(), kFormatMinor + 5);
}

// The shared keys are parsed once, at load; the program's one sync mode is
// the delegates' common one, and a file whose delegates disagree is refused
// naming every delegate and its mode.
TEST(ProgramLoader, DelegatesMustAgreeOnSyncMode) {
  RawProgram raw = valid_raw();
  auto set_sync = [](std::vector<gpuu_test::RawSpec>& specs, const std::string& mode) {
    for (gpuu_test::RawSpec& spec : specs) {
      if (spec.key && *spec.key == kSpecSyncMode) spec.value = text_bytes(mode);
    }
  };
  set_sync(raw.delegates[0].specs, "queue_wait_idle");
  set_sync(raw.delegates[1].specs, "queue_wait_idle");
  std::vector<uint8_t> agreeing = encode_raw(raw);
  Result<std::shared_ptr<const Program>> p = load_program_bytes(agreeing.data(), agreeing.size());
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p.value()->sync_mode(), SyncMode::kQueueWaitIdle);
  EXPECT_EQ(p.value()->delegates()[1].shared.sync_mode, SyncMode::kQueueWaitIdle);
  EXPECT_EQ(p.value()->delegates()[1].shared.token, "default");

  set_sync(raw.delegates[1].specs, "none");
  Status s = load_status(encode_raw(raw));
  ASSERT_EQ(s.code(), StatusCode::kInvalidFormat) << s.message();
  EXPECT_NE(s.message().find("disagree on gpu_shared_sync_mode"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("delegates[0] (VgfBackend) queue_wait_idle"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("delegates[1] (VulkanBackend) none"), std::string::npos) << s.message();
}

TEST(ProgramLoader, EveryTruncationIsAnError) {
  std::vector<uint8_t> file = sample_file();
  ASSERT_FALSE(file.empty());
  for (size_t n = 0; n < file.size(); ++n) {
    Status s = load_status(std::vector<uint8_t>(file.begin(), file.begin() + static_cast<std::ptrdiff_t>(n)));
    ASSERT_FALSE(s.ok()) << "truncated to " << n << " of " << file.size() << " bytes";
    ASSERT_TRUE(s.code() == StatusCode::kInvalidFormat || s.code() == StatusCode::kUnsupported) << s.to_string();
  }
  EXPECT_TRUE(load_status(file).ok());
}

TEST(ProgramLoader, RandomByteFlipsNeverCrash) {
  std::vector<uint8_t> file = sample_file();
  ASSERT_FALSE(file.empty());
  std::mt19937 rng(20240611);
  int refused = 0, accepted = 0;
  for (int i = 0; i < 12000; ++i) {
    std::vector<uint8_t> bad = file;
    int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) {
      // Most flips land in the flatbuffer, where the structure is.
      size_t limit = (rng() % 4 == 0) ? bad.size() : std::min<size_t>(bad.size(), 1024);
      bad[rng() % limit] ^= static_cast<uint8_t>(1 + rng() % 255);
    }
    Result<std::shared_ptr<const Program>> p = load_program_bytes(bad.data(), bad.size());
    if (p.ok()) {
      ++accepted;
      // A program that passed must be safe to walk in full.
      const Program& prog = *p.value();
      for (size_t s = 0; s < prog.segments().size(); ++s) {
        Blob b = prog.segment_data(static_cast<int32_t>(s));
        volatile uint8_t sink = 0;
        for (size_t k = 0; k < b.size(); ++k) sink = sink ^ b.data()[k];
      }
      for (size_t d = 0; d < prog.delegates().size(); ++d)
        EXPECT_FALSE(prog.processed_blob(static_cast<int32_t>(d)).data() == nullptr);
    } else {
      ++refused;
      EXPECT_FALSE(p.status().message().empty());
    }
  }
  // Flips inside segment data or padding leave a valid program; most others do not.
  EXPECT_GT(refused, 1000);
  EXPECT_GT(accepted, 0);
}

TEST(ProgramLoader, RefusesGarbageAndForeignFiles) {
  EXPECT_NE(load_status({}).message().find("too small"), std::string::npos);
  EXPECT_NE(load_status(text_bytes("hello world, not a program")).message().find("expected 'GPUU'"), std::string::npos);
  std::vector<uint8_t> fake = text_bytes(std::string("\x10\0\0\0GPUU", 8));
  fake.resize(64, 0xEE);
  EXPECT_NE(load_status(fake).message().find("verification failed"), std::string::npos);
  EXPECT_EQ(load_program_bytes(nullptr, 10).status().code(), StatusCode::kInvalidArgument);
}

struct BadCase {
  const char* name;
  std::function<void(RawProgram&)> mutate;
  const char* expected;
  StatusCode code = StatusCode::kInvalidFormat;
  RawProgram (*base)() = valid_raw;  // the valid program mutate() breaks
};

class ProgramLoaderRefuses : public ::testing::TestWithParam<BadCase> {};

TEST_P(ProgramLoaderRefuses, WithMessage) {
  RawProgram raw = GetParam().base();
  GetParam().mutate(raw);
  Status s = load_status(encode_raw(raw));
  ASSERT_FALSE(s.ok()) << "expected: " << GetParam().expected;
  EXPECT_EQ(s.code(), GetParam().code) << s.message();
  EXPECT_NE(s.message().find(GetParam().expected), std::string::npos) << s.message();
  EXPECT_EQ(s.message().rfind("program: ", 0), 0u) << s.message();
}

gpuu_test::RawStep cpu_step(std::string name, std::vector<uint32_t> in, std::vector<uint32_t> out) {
  gpuu_test::RawStep s;
  s.type = static_cast<uint8_t>(fb::Step::CpuNode);
  s.node = {std::move(name), "neg"};
  s.inputs = std::move(in);
  s.outputs = std::move(out);
  return s;
}

const BadCase kBadCases[] = {
    {"MissingVersion", [](RawProgram& r) { r.has_version = false; }, "format version is missing"},
    {"OtherMajorVersion", [](RawProgram& r) { r.major = 5; }, "format version 5.0 is not supported",
     StatusCode::kUnsupported},
    {"DataStartPastEnd", [](RawProgram& r) { r.data_start = 1 << 20; }, "data_start 1048576 (at byte"},
    {"DataStartUnaligned", [](RawProgram& r) { r.data_start = 8; }, "is not a multiple of 64"},
    {"FlatbufferPastDataStart", [](RawProgram& r) { r.data_start = 64; }, "the flatbuffer extends past data_start 64"},
    {"SegmentUnaligned",
     [](RawProgram& r) {
       r.segments[1].offset = 1000 * 64 + 8;
       r.file_size = 70000;
     },
     "segment 1 ('delegate 0 (VgfBackend)') at offset 64008 is not 64-byte aligned (at byte"},
    {"SegmentInsideFlatbuffer",
     [](RawProgram& r) {
       r.segments.push_back({0, 8, {"early"}, {}});
       r.delegates[0].processed = 3;
     },
     "segment 3 ('early') at offset 0 lies inside the flatbuffer"},
    {"SegmentPastEnd",
     [](RawProgram& r) {
       r.segments[2].size = 4096;
       r.file_size.reset();
     },
     "size 4096 lies past end of file"},
    {"TensorNameMissing", [](RawProgram& r) { r.tensors[1].name.reset(); }, "tensors[1].name is missing"},
    {"TensorNameEmpty", [](RawProgram& r) { r.tensors[1].name = ""; }, "tensors[1].name (at byte"},
    {"TensorNameRepeats", [](RawProgram& r) { r.tensors[4].name = "x"; }, "tensors[4].name 'x' (at byte"},
    {"UnknownDType", [](RawProgram& r) { r.tensors[0].dtype = 9; }, "tensors[0].dtype = 9 (at byte"},
    {"NegativeDimension",
     [](RawProgram& r) {
       r.tensors[3].shape = {1, -4};
     },
     "tensors[3].shape[1] = -4 (at byte"},
    {"ElementCountOverflow",
     [](RawProgram& r) {
       r.tensors[3].shape = {1LL << 40, 1LL << 40};
     },
     "element count overflows"},
    {"ByteSizeOverflow", [](RawProgram& r) { r.tensors[3].shape = {1LL << 62}; }, "byte size overflows"},
    {"RankAboveGraphLimit", [](RawProgram& r) { r.tensors[3].shape = {1, 1, 1, 1, 1, 1, 1, 1, 4}; },
     "tensors[3].shape [1,1,1,1,1,1,1,1,4] (at byte"},
    {"MisalignedShape", [](RawProgram& r) { r.tensors[3].misalign_shape = true; }, "tensors[3].shape (at byte"},
    {"ConstantSegmentOutOfRange", [](RawProgram& r) { r.tensors[1].segment = 7; },
     "tensors[1].constant.segment = 7 (at byte"},
    {"ConstantSizeMismatch", [](RawProgram& r) { r.tensors[1].shape = {5}; },
     "tensors[1] ('w') is f32 [5] (20 bytes) but its segment 0 holds 16 bytes"},
    {"InputOutOfRange", [](RawProgram& r) { r.inputs = {57}; }, "inputs[0] = 57 (at byte"},
    {"InputRepeats",
     [](RawProgram& r) {
       r.inputs = {0, 0};
     },
     "inputs[1] = 0"},
    {"InputIsConstant",
     [](RawProgram& r) {
       r.inputs = {0, 1};
     },
     "is a constant, not a graph input"},
    {"OutputOutOfRange", [](RawProgram& r) { r.outputs = {6}; }, "outputs[0] = 6 (at byte"},
    {"DelegateInputOutOfRange", [](RawProgram& r) { r.delegates[1].inputs[0] = 57; },
     "delegates[1].inputs[0] = 57 (at byte"},
    {"DelegateOutputOutOfRange",
     [](RawProgram& r) {
       r.delegates[0].outputs = {3, 99};
     },
     "delegates[0].outputs[1] = 99 (at byte"},
    {"DelegateInputRepeats",
     [](RawProgram& r) {
       r.delegates[0].inputs = {0, 1, 0};
     },
     "delegates[0].inputs[2] = 0"},
    {"BackendIdMissing", [](RawProgram& r) { r.delegates[1].backend_id.reset(); },
     "delegates[1].backend_id is missing"},
    {"SpecKeyMissing",
     [](RawProgram& r) {
       r.delegates[0].specs.push_back({{}, {1}});
     },
     "delegates[0].compile_specs[6].key is missing"},
    {"SpecKeyRepeats", [](RawProgram& r) { r.delegates[0].specs.push_back(r.delegates[0].specs[2]); },
     "delegates[0].compile_specs[6].key 'gpu_shared_sync_mode' (at byte"},
    {"SharedSpecValueBad", [](RawProgram& r) { r.delegates[1].specs[1].value = text_bytes("sometimes"); },
     "delegates[1].compile_specs: compile spec 'gpu_shared_context_mode': unknown value 'sometimes'"},
    {"ProcessedOutOfRange", [](RawProgram& r) { r.delegates[1].processed = 3; }, "delegates[1].processed = 3 (at byte"},
    {"DelegateWithoutNodes", [](RawProgram& r) { r.delegates[0].nodes.clear(); }, "took no graph nodes"},
    {"DelegateWithoutOutputs", [](RawProgram& r) { r.delegates[0].outputs.clear(); },
     "delegates[0] (VgfBackend) has no outputs"},
    {"NodeNameMissing", [](RawProgram& r) { r.delegates[0].nodes[0].name.reset(); },
     "delegates[0].nodes[0].name is missing"},
    {"NodeOpMissing", [](RawProgram& r) { r.delegates[1].nodes[0].op.reset(); }, "delegates[1].nodes[0].op is missing"},
    {"NodeNameRepeats", [](RawProgram& r) { r.plan[1].node.name = "mul0"; }, "plan[1].name 'mul0' (at byte"},
    {"PlanDelegateOutOfRange", [](RawProgram& r) { r.plan[2].delegate = 5; }, "plan[2].delegate = 5 (at byte"},
    {"PlanStepEmpty",
     [](RawProgram& r) {
       r.plan[1].type = 0;
       r.plan[1].omit_table = true;
     },
     "plan[1] (at byte"},
    {"PlanStepUnknownType", [](RawProgram& r) { r.plan[1].type = 9; }, "plan[1].step_type = 9"},
    {"PlanStepTableMissing", [](RawProgram& r) { r.plan[0].omit_table = true; }, "the step's table is missing"},
    {"CpuOpMissing", [](RawProgram& r) { r.plan[1].node.op.reset(); }, "plan[1].op is missing"},
    {"CpuInputOutOfRange",
     [](RawProgram& r) {
       r.plan[1].inputs = {3, 12};
     },
     "plan[1].inputs[1] = 12 (at byte"},
    {"CpuNodeWithoutOutputs", [](RawProgram& r) { r.plan[1].outputs.clear(); }, "has no outputs"},
    {"AttrTypeUnknown", [](RawProgram& r) { r.plan[1].attrs[0].type = 17; }, "not a known attribute type"},
    {"AttrValueMissing", [](RawProgram& r) { r.plan[1].attrs[0].omit_value = true; }, "the value is missing"},
    {"AttrNameRepeats", [](RawProgram& r) { r.plan[1].attrs.push_back(r.plan[1].attrs[0]); },
     "plan[1].attrs[1].name 'axis'"},
    {"ReadBeforeWrite", [](RawProgram& r) { std::swap(r.plan[0], r.plan[1]); },
     "plan[0] (cpu node 'relu0') reads tensor 3 ('t') before any step writes it"},
    {"WrittenTwice", [](RawProgram& r) { r.plan.push_back(cpu_step("again", {0}, {4})); },
     "plan[3] (cpu node 'again') writes tensor 4 ('u'), already written by plan[1] (cpu node 'relu0')"},
    {"WritesGraphInput", [](RawProgram& r) { r.plan.push_back(cpu_step("clobber", {5}, {0})); },
     "writes tensor 0 ('x'), which is a graph input or a constant"},
    {"WritesConstant",
     [](RawProgram& r) {
       r.delegates[1].outputs = {5, 2};
     },
     "plan[2] (delegate 1, VulkanBackend) writes tensor 2 ('w2')"},
    {"DelegateCalledTwice", [](RawProgram& r) { r.plan.push_back(r.plan[0]); }, "delegates[0] is called twice"},
    {"DelegateNeverCalled",
     [](RawProgram& r) {
       r.delegates.push_back(r.delegates[0]);
       r.delegates.back().nodes = {{"spare", "mul"}};
     },
     "delegates[2] (VgfBackend) is never called by the plan"},
    {"OutputNeverWritten",
     [](RawProgram& r) {
       r.tensors.push_back({"z", 0, {1}, {}});
       r.outputs.push_back(6);
     },
     "outputs[1] = 6 ('z') is never written by the plan"},
};

TEST(ProgramLoader, StatefulProgramLoads) {
  std::vector<uint8_t> bytes = encode_raw(stateful_raw());
  Result<std::shared_ptr<const Program>> p = load_program_bytes(bytes.data(), bytes.size());
  ASSERT_TRUE(p.ok()) << p.status().message();
  ASSERT_EQ(p.value()->states().size(), 1u);
  const StateInfo& s = p.value()->states()[0];
  EXPECT_EQ(s.tensor, 6);
  EXPECT_EQ(s.update, 4);
  EXPECT_EQ(s.initial_segment, 3);
  Blob initial = p.value()->state_initial_data(0);
  ASSERT_EQ(initial.size(), 16u);
  EXPECT_EQ(initial.data()[15], 7);
}

// A corrupt state table is refused with every problem named, not the first alone.
TEST(ProgramLoader, StateTableProblemsAreNamedAllAtOnce) {
  RawProgram raw = stateful_raw();
  raw.tensors.push_back({"s16", 1, {1, 4}, {}});  // 7: f16
  raw.states = {{6, 1, 3},    // update: constant 'w', f32 [4]
                {6, 7, 3},    // the same tensor again, an f16 update
                {0, 4, 3},    // reads graph input 'x'
                {40, 4, 9}};  // tensor and initial out of range
  Status s = load_status(encode_raw(raw));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidFormat);
  for (const char* part : {"7 problems in the state table",
                           "states[0] ('s'): its update tensor 1 ('w') is a constant",
                           "states[1] ('s'): states[0] reads the same tensor",
                           "states[1] ('s') is f32 [1,4] but its update tensor 7 ('s16') is f16 [1,4]",
                           "states[2] ('x'): its tensor 0 is a graph input", "states[3].tensor = 40 (at byte",
                           "states[3].initial = 9 (at byte"}) {
    EXPECT_NE(s.message().find(part), std::string::npos) << part << "\n" << s.message();
  }
}

// The same checks on stateful_raw(), for the state table.
BadCase on_stateful(const char* name, std::function<void(RawProgram&)> mutate, const char* expected) {
  return BadCase{name, std::move(mutate), expected, StatusCode::kInvalidFormat, stateful_raw};
}

const BadCase kBadStateCases[] = {
    on_stateful("StatesNeedFormat2", [](RawProgram& r) { r.major = kFormatMajor; },
                "a program with states is format 2.x, but this file says 1.0"),
    on_stateful("StateInitialSizeWrong", [](RawProgram& r) { r.segments[3].data.resize(12); },
                "states[0] ('s') is f32 [1,4] (16 bytes) but its initial segment 3 holds 12 bytes"),
    on_stateful("StateTensorIsOutput", [](RawProgram& r) { r.outputs.push_back(6); },
                "states[0] ('s'): its tensor 6 is a graph output"),
    on_stateful("StateUpdatesItself", [](RawProgram& r) { r.states[0].update = 6; },
                "states[0] ('s'): its update is its own tensor"),
    on_stateful("StateUpdateIsAStateTensor",
                [](RawProgram& r) {
                  r.tensors.push_back({"s2", 0, {1, 4}, {}});
                  r.states.push_back({7, 6, 3});
                },
                "state 's2': its update is the tensor states[0] reads"),
    on_stateful("StepWritesStateTensor", [](RawProgram& r) { r.plan.push_back(cpu_step("clobber", {5}, {6})); },
                "plan[3] (cpu node 'clobber') writes tensor 6 ('s'), which a state reads"),
    on_stateful("StateUpdateNeverWritten",
                [](RawProgram& r) {
                  r.tensors.push_back({"z", 0, {1, 4}, {}});
                  r.states[0].update = 7;
                },
                "states[0] ('s'): its update tensor 7 ('z') is never written by the plan"),
};

INSTANTIATE_TEST_SUITE_P(StateChecks, ProgramLoaderRefuses, ::testing::ValuesIn(kBadStateCases),
                         [](const ::testing::TestParamInfo<BadCase>& info) { return std::string(info.param.name); });

INSTANTIATE_TEST_SUITE_P(Checks, ProgramLoaderRefuses, ::testing::ValuesIn(kBadCases),
                         [](const ::testing::TestParamInfo<BadCase>& info) { return std::string(info.param.name); });

TEST(ProgramLoader, SegmentPastEndMessageNamesOffsetSizeAndFileSize) {
  RawProgram raw = valid_raw();
  std::vector<uint8_t> full = encode_raw(raw);
  Result<std::shared_ptr<const Program>> ok = load_program_bytes(full.data(), full.size());
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  const SegmentInfo last = ok.value()->segments()[2];
  ASSERT_EQ(last.size, 11u);
  // Cutting the file short moves nothing in the flatbuffer.
  raw.file_size = last.offset + 7;
  Status s = load_status(encode_raw(raw));
  std::string expected = str_cat("program: segment 2 ('delegate 1 (VulkanBackend)') at offset ", last.offset,
                                 " size 11 lies past end of file (", last.offset + 7, " bytes) (at byte ");
  EXPECT_EQ(s.message().rfind(expected, 0), 0u) << s.message();
}

}  // namespace
}  // namespace gpuu::program
