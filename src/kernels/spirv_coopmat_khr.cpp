// Build-time tool: rewrites a SPIR-V module that uses SPV_NV_cooperative_matrix
// into the SPV_KHR_cooperative_matrix encoding. The build's glslang knows only
// GL_NV_cooperative_matrix; drivers (and the Vulkan API gpuu queries shapes
// through) speak VK_KHR_cooperative_matrix. The two encodings differ in:
//   - capability CooperativeMatrixNV (5357) -> CooperativeMatrixKHR (6022), and
//     the extension name;
//   - OpTypeCooperativeMatrixNV (5358: type, scope, rows, cols) ->
//     OpTypeCooperativeMatrixKHR (4456) with a fifth operand, the use (0 A,
//     1 B, 2 accumulator), which the NV type lacks. The use is recovered from
//     the matrix's dimensions: they must be the specialization constants whose
//     SpecIds are given (M, N, K): rows M, cols K is A; K x N is B; M x N the
//     accumulator. Anything else is an error;
//   - OpCooperativeMatrixLoadNV (5359: pointer, stride, column-major bool) ->
//     LoadKHR (4457: pointer, layout id (0 row-major, 1 column-major), stride),
//     the same for StoreNV (5360) -> StoreKHR (4458); memory operands follow
//     unchanged in both;
//   - MulAddNV (5361) -> MulAddKHR (4459), LengthNV (5362) -> LengthKHR (4460).
//     NV takes an integer matrix's signedness from its component type; KHR
//     from MulAdd's Cooperative Matrix Operands (A 0x1, B 0x2, C 0x4, result
//     0x8), which the rewrite adds where a use's component type is a signed
//     integer (all matrices of one use must agree).
// Opcode and enum values are those of the SPIR-V registry's unified headers.
//
// Usage: spirv_coopmat_khr IN OUT SPEC_ID_M SPEC_ID_N SPEC_ID_K
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

namespace {

constexpr uint32_t kMagic = 0x07230203;
constexpr uint16_t kOpExtension = 10, kOpTypeInt = 21, kOpConstantTrue = 41, kOpConstantFalse = 42;
constexpr uint16_t kOpConstant = 43, kOpCapability = 17, kOpDecorate = 71;
constexpr uint32_t kDecorationSpecId = 1;
constexpr uint32_t kCapabilityCooperativeMatrixNV = 5357, kCapabilityCooperativeMatrixKHR = 6022;
constexpr uint16_t kOpTypeCooperativeMatrixNV = 5358, kOpCooperativeMatrixLoadNV = 5359,
                   kOpCooperativeMatrixStoreNV = 5360, kOpCooperativeMatrixMulAddNV = 5361,
                   kOpCooperativeMatrixLengthNV = 5362;
constexpr uint16_t kOpTypeCooperativeMatrixKHR = 4456, kOpCooperativeMatrixLoadKHR = 4457,
                   kOpCooperativeMatrixStoreKHR = 4458, kOpCooperativeMatrixMulAddKHR = 4459,
                   kOpCooperativeMatrixLengthKHR = 4460;

int fail(const std::string& what) {
  std::fprintf(stderr, "spirv_coopmat_khr: %s\n", what.c_str());
  return 1;
}

std::string literal_string(const std::vector<uint32_t>& words, size_t first) {
  std::string s;
  for (size_t i = first; i < words.size(); ++i) {
    for (int b = 0; b < 4; ++b) {
      char c = static_cast<char>((words[i] >> (8 * b)) & 0xff);
      if (c == 0) return s;
      s += c;
    }
  }
  return s;
}

std::vector<uint32_t> instruction(uint16_t op, std::vector<uint32_t> operands) {
  operands.insert(operands.begin(), (static_cast<uint32_t>(operands.size() + 1) << 16) | op);
  return operands;
}

std::vector<uint32_t> extension(const std::string& name) {
  std::vector<uint32_t> words((name.size() + 4) / 4, 0);
  std::memcpy(words.data(), name.data(), name.size());
  return instruction(kOpExtension, words);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6) return fail("usage: spirv_coopmat_khr IN OUT SPEC_ID_M SPEC_ID_N SPEC_ID_K");
  std::ifstream in(argv[1], std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() < 20 || bytes.size() % 4) return fail(std::string("not a SPIR-V module: ") + argv[1]);
  std::vector<uint32_t> words(bytes.size() / 4);
  std::memcpy(words.data(), bytes.data(), bytes.size());
  if (words[0] != kMagic) return fail(std::string("bad magic (or foreign endianness) in ") + argv[1]);
  const uint32_t spec_m = std::strtoul(argv[3], nullptr, 10), spec_n = std::strtoul(argv[4], nullptr, 10),
                 spec_k = std::strtoul(argv[5], nullptr, 10);

  // Split into instructions.
  std::vector<std::vector<uint32_t>> insts;
  for (size_t i = 5; i < words.size();) {
    uint32_t count = words[i] >> 16;
    if (count == 0 || i + count > words.size()) return fail("truncated instruction");
    insts.emplace_back(words.begin() + i, words.begin() + i + count);
    i += count;
  }

  // What the rewrite needs to know: the dimension constants, a 32-bit
  // unsigned int type, the bool constants.
  std::map<uint32_t, uint32_t> spec_ids;  // SpecId -> result id
  std::map<uint32_t, uint32_t> bools;     // id -> 0 / 1
  std::map<uint32_t, bool> signed_ints;   // integer type id -> signed
  uint32_t uint_type = 0;
  for (const auto& w : insts) {
    uint16_t op = w[0] & 0xffff;
    if (op == kOpTypeInt) signed_ints[w[1]] = w[3] != 0;
    if (op == kOpDecorate && w.size() == 4 && w[2] == kDecorationSpecId) spec_ids[w[3]] = w[1];
    if (op == kOpTypeInt && w[2] == 32 && w[3] == 0) uint_type = w[1];
    if (op == kOpConstantTrue) bools[w[2]] = 1;
    if (op == kOpConstantFalse) bools[w[2]] = 0;
  }
  if (!uint_type) return fail("no 32-bit unsigned int type");
  if (!spec_ids.count(spec_m) || !spec_ids.count(spec_n) || !spec_ids.count(spec_k)) {
    return fail("the cooperative-matrix dimensions are not the given specialization constants");
  }
  const uint32_t dim_m = spec_ids[spec_m], dim_n = spec_ids[spec_n], dim_k = spec_ids[spec_k];
  // New ids: constants 0, 1, 2 (uses and layouts).
  uint32_t bound = words[3];
  const uint32_t c[3] = {bound, bound + 1, bound + 2};
  words[3] = bound + 3;

  std::vector<uint32_t> out(words.begin(), words.begin() + 5);
  auto emit = [&](const std::vector<uint32_t>& w) { out.insert(out.end(), w.begin(), w.end()); };
  auto layout = [&](uint32_t bool_id, uint32_t* id) {
    auto found = bools.find(bool_id);
    if (found == bools.end()) return false;  // not a constant: no KHR equivalent
    *id = c[found->second];
    return true;
  };
  bool any = false;
  int signed_use[3] = {-1, -1, -1};  // per use: unknown, 0 or 1
  for (const auto& w : insts) {
    uint16_t op = w[0] & 0xffff;
    if (op == kOpCapability && w[1] == kCapabilityCooperativeMatrixNV) {
      emit(instruction(kOpCapability, {kCapabilityCooperativeMatrixKHR}));
      any = true;
    } else if (op == kOpExtension && literal_string(w, 1) == "SPV_NV_cooperative_matrix") {
      emit(extension("SPV_KHR_cooperative_matrix"));
    } else if (op == kOpTypeInt && w[1] == uint_type) {
      emit(w);
      for (uint32_t v = 0; v < 3; ++v) emit(instruction(kOpConstant, {uint_type, c[v], v}));
    } else if (op == kOpTypeCooperativeMatrixNV) {
      // result, component type, scope, rows, cols
      uint32_t rows = w[4], cols = w[5], use;
      if (rows == dim_m && cols == dim_k) {
        use = 0;
      } else if (rows == dim_k && cols == dim_n) {
        use = 1;
      } else if (rows == dim_m && cols == dim_n) {
        use = 2;
      } else {
        return fail("a cooperative matrix type whose dimensions are not (M,K), (K,N) or (M,N)");
      }
      auto component = signed_ints.find(w[2]);
      const int is_signed = component != signed_ints.end() && component->second ? 1 : 0;
      if (signed_use[use] >= 0 && signed_use[use] != is_signed) {
        return fail("cooperative matrices of one use with signed and unsigned components");
      }
      signed_use[use] = is_signed;
      emit(instruction(kOpTypeCooperativeMatrixKHR, {w[1], w[2], w[3], rows, cols, c[use]}));
    } else if (op == kOpCooperativeMatrixLoadNV) {
      // result type, result, pointer, stride, column-major, memory operands...
      uint32_t lay;
      if (w.size() < 6 || !layout(w[5], &lay)) return fail("OpCooperativeMatrixLoadNV with a non-constant layout");
      std::vector<uint32_t> ops = {w[1], w[2], w[3], lay, w[4]};
      ops.insert(ops.end(), w.begin() + 6, w.end());
      emit(instruction(kOpCooperativeMatrixLoadKHR, ops));
    } else if (op == kOpCooperativeMatrixStoreNV) {
      // pointer, object, stride, column-major, memory operands...
      uint32_t lay;
      if (w.size() < 5 || !layout(w[4], &lay)) return fail("OpCooperativeMatrixStoreNV with a non-constant layout");
      std::vector<uint32_t> ops = {w[1], w[2], lay, w[3]};
      ops.insert(ops.end(), w.begin() + 5, w.end());
      emit(instruction(kOpCooperativeMatrixStoreKHR, ops));
    } else if (op == kOpCooperativeMatrixMulAddNV) {
      // result type, result, A, B, C; the types came first, so each use's signedness is known.
      const uint32_t operands = (signed_use[0] == 1 ? 0x1u : 0u) | (signed_use[1] == 1 ? 0x2u : 0u) |
                                (signed_use[2] == 1 ? 0x4u | 0x8u : 0u);
      std::vector<uint32_t> ops(w.begin() + 1, w.end());
      if (operands) ops.push_back(operands);
      emit(instruction(kOpCooperativeMatrixMulAddKHR, ops));
    } else if (op == kOpCooperativeMatrixLengthNV) {
      std::vector<uint32_t> copy = w;
      copy[0] = (copy[0] & 0xffff0000u) | kOpCooperativeMatrixLengthKHR;
      emit(copy);
    } else {
      emit(w);
    }
  }
  if (!any) return fail(std::string("no CooperativeMatrixNV capability in ") + argv[1]);
  std::ofstream o(argv[2], std::ios::binary);
  o.write(reinterpret_cast<const char*>(out.data()), static_cast<std::streamsize>(out.size() * 4));
  return o ? 0 : fail(std::string("cannot write ") + argv[2]);
}
