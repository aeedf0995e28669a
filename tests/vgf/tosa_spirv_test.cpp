// The TOSA SPIR-V emitter and parser: the golden modules word for word, the
// goldens parsed back, emit/parse round trips of every TOSA operator, and the
// parser's behaviour on truncated, corrupted and malformed modules.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "vgf/tosa_graph.h"
#include "vgf/tosa_spirv.h"

namespace gpuu::vgf {
namespace {

using E = TosaElementType;

std::vector<uint32_t> read_words(const std::string& name) {
  std::string path = std::string(GPUU_VGF_SAMPLES_DIR) + "/" + name;
  std::vector<uint32_t> words;
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) {
    ADD_FAILURE() << "cannot open " << path;
    return words;
  }
  uint32_t w;
  while (std::fread(&w, sizeof w, 1, f) == 1) words.push_back(w);
  std::fclose(f);
  return words;
}

// y = sin(x) * x (or * w, W = graph constant 0), exactly as spirv-tosa-graph.md §7 describes it.
TosaGraph sin_mul_graph(bool with_constant) {
  TosaGraph g;
  g.generator = 0x00070000;  // the goldens were assembled by spirv-as (SPIRV-Tools, tool id 7)
  const std::vector<int64_t> shape = {1, 3, 4, 4};
  TosaTensorId x = g.add_input(E::kF32, shape, 0, 0, "x");
  TosaTensorId other = x;
  if (with_constant) other = g.add_graph_constant(E::kF32, shape, 0, Blob(), "w");
  TosaTensorId s = g.add_operator(TosaOp::kSin, {}, {x}, {{E::kF32, shape}});
  TosaTensorId y = g.add_operator(TosaOp::kMul, {TosaAttribute::zero_point(E::kI8)}, {s, other}, {{E::kF32, shape}});
  g.add_output(y, 0, 1, "y");
  return g;
}

std::string first_word_difference(const std::vector<uint32_t>& got, const std::vector<uint32_t>& want) {
  for (size_t i = 0; i < std::max(got.size(), want.size()); ++i) {
    if (i >= got.size() || i >= want.size() || got[i] != want[i]) {
      char buf[128];
      std::snprintf(buf, sizeof buf, "word %zu: got %08x, want %08x (sizes %zu / %zu)", i,
                    i < got.size() ? got[i] : 0u, i < want.size() ? want[i] : 0u, got.size(), want.size());
      return buf;
    }
  }
  return "";
}

TEST(TosaSpirvGolden, SinMulIsEmittedWordForWord) {
  std::vector<uint32_t> golden = read_words("sin_mul.spv");
  ASSERT_EQ(golden.size(), 176u);
  Result<std::vector<uint32_t>> words = emit_tosa_module(sin_mul_graph(false));
  ASSERT_TRUE(words.ok()) << words.status().message();
  EXPECT_EQ(first_word_difference(*words, golden), "");
}

TEST(TosaSpirvGolden, SinMulConstIsEmittedWordForWord) {
  std::vector<uint32_t> golden = read_words("sin_mul_const.spv");
  ASSERT_EQ(golden.size(), 183u);
  Result<std::vector<uint32_t>> words = emit_tosa_module(sin_mul_graph(true));
  ASSERT_TRUE(words.ok()) << words.status().message();
  EXPECT_EQ(first_word_difference(*words, golden), "");
}

TEST(TosaSpirvGolden, ParsingTheGoldensGivesTheirGraphs) {
  for (bool with_constant : {false, true}) {
    std::vector<uint32_t> golden = read_words(with_constant ? "sin_mul_const.spv" : "sin_mul.spv");
    Result<TosaGraph> g = parse_tosa_module(golden.data(), golden.size());
    ASSERT_TRUE(g.ok()) << g.status().message();
    EXPECT_EQ(tosa_graph_difference(*g, sin_mul_graph(with_constant)), "");
    // Spelled out, for the reader: what the parse found.
    ASSERT_EQ(g->operators.size(), 2u);
    EXPECT_EQ(g->operators[0].op, TosaOp::kSin);
    EXPECT_EQ(g->operators[1].op, TosaOp::kMul);
    ASSERT_EQ(g->operators[1].attributes.size(), 1u);
    EXPECT_EQ(g->operators[1].attributes[0], TosaAttribute::int_tensor(E::kI8, {0}));
    EXPECT_EQ(g->entry_point, "main");
    ASSERT_EQ(g->inputs.size(), 1u);
    EXPECT_EQ(g->inputs[0].binding, 0u);
    EXPECT_EQ(g->inputs[0].name, "x");
    ASSERT_EQ(g->outputs.size(), 1u);
    EXPECT_EQ(g->outputs[0].binding, 1u);
    EXPECT_EQ(g->outputs[0].name, "y");
    EXPECT_EQ(g->constants.size(), with_constant ? 1u : 0u);
  }
}

TEST(TosaSpirvGolden, ParsedGoldensReEmitIdentically) {
  for (const char* name : {"sin_mul.spv", "sin_mul_const.spv"}) {
    std::vector<uint32_t> golden = read_words(name);
    Result<TosaGraph> g = parse_tosa_module(golden.data(), golden.size());
    ASSERT_TRUE(g.ok()) << g.status().message();
    Result<std::vector<uint32_t>> words = emit_tosa_module(*g);
    ASSERT_TRUE(words.ok()) << words.status().message();
    EXPECT_EQ(first_word_difference(*words, golden), "") << name;
  }
}

// ---- round trips of every operator ---------------------------------------------

// A plausible attribute for `slot` of operator `op` whose tensor operands are
// `operand_tensors` (by grammar operand index) and whose result is `result`.
TosaAttribute attribute_for(const TosaGraph& g, const TosaOperandInfo& slot, const std::vector<TosaTensorId>& operand_tensors,
                            const TosaTensor& result, int salt) {
  auto type_of = [&]() -> E {
    switch (slot.type_rule) {
      case TosaTypeRule::kFixed: return slot.fixed_type;
      case TosaTypeRule::kOfOperand: return g.tensor(operand_tensors[static_cast<size_t>(slot.ref)]).type;
      case TosaTypeRule::kOfResult: return result.type;
      case TosaTypeRule::kI16OrI32: return E::kI32;
      case TosaTypeRule::kNone: break;
    }
    return E::kI32;
  };
  auto length = [&]() -> size_t {
    switch (slot.length_rule) {
      case TosaLengthRule::kFixed: return static_cast<size_t>(slot.length);
      case TosaLengthRule::kRankOf: return g.tensor(operand_tensors[static_cast<size_t>(slot.ref)]).shape.size();
      case TosaLengthRule::kTwiceRankOf: return 2 * g.tensor(operand_tensors[static_cast<size_t>(slot.ref)]).shape.size();
      case TosaLengthRule::kRankOfResult: return result.shape.size();
      default: return 3;
    }
  };
  switch (slot.role) {
    case TosaOperandRole::kAttrU32: return TosaAttribute::u32(static_cast<uint32_t>(salt % 3));
    case TosaOperandRole::kAttrEnum: return TosaAttribute::u32(1 + salt % 2);
    case TosaOperandRole::kAttrBool: return TosaAttribute::boolean(salt % 2 == 1);
    case TosaOperandRole::kAttrShape: {
      std::vector<int64_t> v;
      for (size_t i = 0; i < length(); ++i) v.push_back(static_cast<int64_t>(i + 1 + salt));
      return TosaAttribute::shape(v);
    }
    case TosaOperandRole::kAttrTensor: {
      E t = type_of();
      size_t n = length();
      if (tosa_is_float(t)) return TosaAttribute::float_tensor(t, std::vector<double>(n, 0.5 * salt));
      if (t == E::kBool) return TosaAttribute::int_tensor(t, std::vector<int64_t>(n, salt % 2));
      return TosaAttribute::int_tensor(t, std::vector<int64_t>(n, -salt));
    }
    case TosaOperandRole::kAttrScalar: {
      E t = type_of();
      if (tosa_is_float(t)) return TosaAttribute::float_scalar(t, -1.25 * salt);
      return TosaAttribute::int_scalar(t, salt);
    }
    default: break;
  }
  return TosaAttribute();
}

// One-operator graph for `op`: f32 (or `type`) rank-`rank` tensors everywhere,
// which satisfies the grammar-level rules the IR checks.
TosaGraph one_op_graph(TosaOp op, E type, size_t rank) {
  const TosaOpInfo& info = tosa_op_info(op);
  TosaGraph g;
  std::vector<int64_t> shape;
  for (size_t i = 0; i < rank; ++i) shape.push_back(static_cast<int64_t>(i + 2));
  TosaTensor result{type, shape};
  std::vector<TosaTensorId> operand_tensors(info.operand_count, -1);
  std::vector<TosaTensorId> inputs;
  uint32_t binding = 0;
  for (uint32_t k = 0; k < info.operand_count; ++k) {
    TosaOperandRole r = info.operands[k].role;
    if (r != TosaOperandRole::kInput && r != TosaOperandRole::kInputList) continue;
    size_t count = r == TosaOperandRole::kInputList ? 3 : 1;
    for (size_t c = 0; c < count; ++c) {
      TosaTensorId t = g.add_input(type, shape, 0, binding, "in" + std::to_string(binding));
      ++binding;
      inputs.push_back(t);
      operand_tensors[k] = t;
    }
  }
  std::vector<TosaAttribute> attrs;
  int salt = 1;
  for (uint32_t k = 0; k < info.operand_count; ++k) {
    TosaOperandRole r = info.operands[k].role;
    if (r == TosaOperandRole::kInput || r == TosaOperandRole::kInputList) continue;
    attrs.push_back(attribute_for(g, info.operands[k], operand_tensors, result, salt++));
  }
  std::vector<TosaTensor> results(info.result_count, result);
  if (info.result_count == 2) results[1].shape.back() += 1;  // two distinct member types
  g.add_operator(op, attrs, inputs, results);
  for (size_t i = 0; i < g.operators[0].outputs.size(); ++i) {
    g.add_output(g.operators[0].outputs[i], 1, static_cast<uint32_t>(i), "out" + std::to_string(i));
  }
  return canonicalize_tosa_graph(g);
}

TEST(TosaSpirvRoundTrip, EveryOperatorOfTheInstructionSet) {
  for (uint32_t code = 0; code < kTosaOpCount; ++code) {
    TosaOp op = static_cast<TosaOp>(code);
    for (E type : {E::kF32, E::kI8, E::kF16}) {
      TosaGraph g = one_op_graph(op, type, type == E::kI8 ? 2 : 4);
      SCOPED_TRACE(std::string(tosa_op_name(op)) + " " + tosa_element_type_name(type));
      ASSERT_TRUE(validate_tosa_graph(g).ok()) << validate_tosa_graph(g).message();
      Result<std::vector<uint32_t>> words = emit_tosa_module(g);
      ASSERT_TRUE(words.ok()) << words.status().message();
      Result<TosaGraph> back = parse_tosa_module(words->data(), words->size());
      ASSERT_TRUE(back.ok()) << back.status().message();
      EXPECT_EQ(tosa_graph_difference(*back, g), "");
    }
  }
}

TEST(TosaSpirvRoundTrip, EveryElementTypeAndInlineConstants) {
  for (E type : {E::kBool, E::kI8, E::kI16, E::kI32, E::kI48, E::kF16, E::kF32}) {
    SCOPED_TRACE(tosa_element_type_name(type));
    TosaGraph g;
    std::vector<int64_t> shape = {2, 3, 2};
    TosaTensorId a = g.add_input(type, shape, 0, 0, "a");
    std::vector<uint8_t> bytes(static_cast<size_t>(tosa_numel(shape)) * tosa_element_size(type));
    for (int64_t i = 0; i < tosa_numel(shape); ++i) {
      double v = type == E::kBool ? (i % 3 == 0) : tosa_is_float(type) ? -2.5 + 0.75 * i : (i % 2 ? -i : i) * 3;
      tosa_store_element(type, v, bytes.data(), i);
    }
    TosaTensorId c = g.add_inline_constant(type, shape, Blob::take(bytes), "c");
    TosaTensorId w = g.add_graph_constant(type, shape, 7, Blob(), "w");
    TosaTensorId cat = g.add_operator(TosaOp::kConcat, {TosaAttribute::u32(1)}, {a, c, w}, {{type, {2, 9, 2}}});
    g.add_output(cat, 0, 1, "y");
    g.add_output(c, 0, 2, "c_out");  // a constant as a graph output
    g.add_output(a, 0, 3, "a_out");  // an input as a graph output
    Result<std::vector<uint32_t>> words = emit_tosa_module(g);
    ASSERT_TRUE(words.ok()) << words.status().message();
    Result<TosaGraph> back = parse_tosa_module(words->data(), words->size());
    ASSERT_TRUE(back.ok()) << back.status().message();
    EXPECT_EQ(tosa_graph_difference(*back, g), "");
  }
}

TEST(TosaSpirvEmit, IsDeterministic) {
  TosaGraph g = one_op_graph(TosaOp::kConv2d, E::kF32, 4);
  Result<std::vector<uint32_t>> a = emit_tosa_module(g);
  Result<std::vector<uint32_t>> b = emit_tosa_module(g);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, *b);
}

TEST(TosaSpirvEmit, RefusesAnInvalidGraphNamingTheOperator) {
  TosaGraph g = sin_mul_graph(false);
  g.operators[1].attributes[0] = TosaAttribute::int_tensor(E::kI32, {0});  // MUL's shift must be i8
  Result<std::vector<uint32_t>> words = emit_tosa_module(g);
  ASSERT_FALSE(words.ok());
  EXPECT_NE(words.status().message().find("operator 1 (MUL): attribute 'shift'"), std::string::npos)
      << words.status().message();
}

// ---- parser robustness --------------------------------------------------------

// A module with many kinds of instructions: every operator graph emitted into one list.
std::vector<std::vector<uint32_t>> sample_modules() {
  std::vector<std::vector<uint32_t>> modules = {read_words("sin_mul.spv"), read_words("sin_mul_const.spv")};
  for (TosaOp op : {TosaOp::kConv2d, TosaOp::kConcat, TosaOp::kFft2d, TosaOp::kClamp, TosaOp::kRescale}) {
    Result<std::vector<uint32_t>> words = emit_tosa_module(one_op_graph(op, E::kF32, 4));
    if (words.ok()) modules.push_back(*words);
  }
  return modules;
}

TEST(TosaSpirvParse, EveryTruncationFailsCleanly) {
  for (const std::vector<uint32_t>& module : sample_modules()) {
    for (size_t n = 0; n < module.size(); ++n) {
      Result<TosaGraph> g = parse_tosa_module(module.data(), n);
      EXPECT_FALSE(g.ok()) << "a module cut to " << n << " of " << module.size() << " words parsed";
      if (!g.ok()) {
        EXPECT_TRUE(g.status().code() == StatusCode::kInvalidFormat || g.status().code() == StatusCode::kUnsupported);
        EXPECT_NE(g.status().message().find("word "), std::string::npos) << g.status().message();
      }
    }
  }
}

TEST(TosaSpirvParse, RandomWordFlipsNeverCrash) {
  std::mt19937 rng(12345);
  int parsed = 0, refused = 0;
  for (const std::vector<uint32_t>& module : sample_modules()) {
    for (int trial = 0; trial < 600; ++trial) {
      std::vector<uint32_t> bad = module;
      int flips = 1 + static_cast<int>(rng() % 3);
      for (int f = 0; f < flips; ++f) {
        size_t at = rng() % bad.size();
        switch (rng() % 4) {
          case 0: bad[at] ^= 1u << (rng() % 32); break;  // one bit
          case 1: bad[at] = rng(); break;                 // any word
          case 2: bad[at] = rng() % 64; break;            // a small number (ids, opcodes, counts)
          default: bad[at] = (bad[at] & 0xFFFF) | ((rng() % 12) << 16); break;  // word count
        }
      }
      Result<TosaGraph> g = parse_tosa_module(bad.data(), bad.size());
      if (!g.ok()) {
        ++refused;
        continue;
      }
      ++parsed;
      // Whatever parses is a valid graph, so it emits again.
      EXPECT_TRUE(validate_tosa_graph(*g).ok()) << validate_tosa_graph(*g).message();
      EXPECT_TRUE(emit_tosa_module(*g).ok());
    }
  }
  // Both outcomes happen: flips in names, bindings or constant values leave valid modules.
  EXPECT_GT(refused, 0);
  EXPECT_GT(parsed, 0);
}

TEST(TosaSpirvParse, ErrorsNameTheWordOffset) {
  std::vector<uint32_t> module = read_words("sin_mul.spv");
  // The MUL OpExtInst starts at word 164 (byte 0x290): make its TOSA instruction number 99.
  ASSERT_EQ(module[164], 0x0008000Cu);
  module[168] = 99;
  Result<TosaGraph> g = parse_tosa_module(module.data(), module.size());
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("word 164 (OpExtInst)"), std::string::npos) << g.status().message();
  EXPECT_NE(g.status().message().find("TOSA instruction 99"), std::string::npos) << g.status().message();
}

TEST(TosaSpirvParse, RefusesAWrongOperandCount) {
  std::vector<uint32_t> module = read_words("sin_mul.spv");
  // SIN (word 158) with MUL's instruction number: 1 operand where MUL takes 3.
  ASSERT_EQ(module[158], 0x0006000Cu);
  module[162] = 27;
  Result<TosaGraph> g = parse_tosa_module(module.data(), module.size());
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("MUL takes 3 operands, got 1"), std::string::npos) << g.status().message();
}

TEST(TosaSpirvParse, RefusesAnAttributeThatIsNotAConstant) {
  std::vector<uint32_t> module = read_words("sin_mul.spv");
  module[171] = module[170];  // MUL's shift operand -> the graph input x
  Result<TosaGraph> g = parse_tosa_module(module.data(), module.size());
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("must be a constant instruction"), std::string::npos) << g.status().message();
}

TEST(TosaSpirvParse, RefusesABadHeader) {
  std::vector<uint32_t> module = read_words("sin_mul.spv");
  std::vector<uint32_t> bad = module;
  bad[0] = 0x03022307;
  Result<TosaGraph> g = parse_tosa_module(bad.data(), bad.size());
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("byte-swapped"), std::string::npos) << g.status().message();
  bad = module;
  bad[3] = 10;  // bound below the ids in use
  g = parse_tosa_module(bad.data(), bad.size());
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("bound"), std::string::npos) << g.status().message();
  EXPECT_FALSE(parse_tosa_module(nullptr, 0).ok());
}

TEST(TosaSpirvParse, TakesNullAndReplicatedAttributeConstants) {
  // The forms Arm's tools write: zero shift as OpConstantNull. Rewrite the
  // golden's shift0 (OpConstantComposite %t_i8_1 %uchar_0) into OpConstantNull
  // %t_i8_1 plus an OpNop, keeping every offset.
  std::vector<uint32_t> module = read_words("sin_mul.spv");
  ASSERT_EQ(module[136], 0x0004002Cu);
  module[136] = 0x0003002Eu;  // OpConstantNull, 3 words
  module[139] = 0x00010000u;  // OpNop
  Result<TosaGraph> g = parse_tosa_module(module.data(), module.size());
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(tosa_graph_difference(*g, sin_mul_graph(false)), "");
}

}  // namespace
}  // namespace gpuu::vgf
