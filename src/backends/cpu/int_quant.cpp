// The integer ops of TOSA's INT profile: rescale (fixed-point requantisation),
// conv2d_int and matmul_int (i8 with zero points into i32 accumulators),
// avg_pool2d_int and table. Written from the TOSA 1.0 pseudocode:
//  - apply_scale_32/16: (value * multiplier + round) >> shift with round =
//    2^(shift-1) (0 for shift 0), double rounding adding +-2^30 for shift > 31
//    by the sign of value; 64-bit arithmetic that wraps, an arithmetic shift,
//    the result truncated to 32 bits. TOSA requires 2 <= shift <= 62 and the
//    result within int32; gpuu defines shifts 0..63 by the same formula and
//    wraps where TOSA leaves the result unspecified. inexact_round rounds as
//    single_round (the exact choice TOSA allows it).
//  - accumulators are int32 and wrap on overflow (TOSA requires none); an
//    i16 input's conv2d_int sums in i64 (TOSA's i48).
#include <cstring>

#include "backends/cpu/kernel_support.h"
#include "graph/op_registry.h"

namespace gpuu::cpu {

namespace {

int32_t apply_scale(int64_t value, int64_t multiplier, int64_t shift, bool double_round) {
  uint64_t round = shift > 0 ? uint64_t{1} << (shift - 1) : 0;
  if (double_round && shift > 31) round += value >= 0 ? (uint64_t{1} << 30) : ~(uint64_t{1} << 30) + 1;
  uint64_t product = static_cast<uint64_t>(value) * static_cast<uint64_t>(multiplier) + round;
  // Arithmetic shift of the two's complement bits.
  uint64_t shifted = product >> shift;
  if (shift > 0 && (product >> 63)) shifted |= ~uint64_t{0} << (64 - shift);
  return static_cast<int32_t>(static_cast<uint32_t>(shifted));
}

int32_t wrap32(int64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v))); }

Status kernel_rescale(const KernelArgs& a, std::vector<HostTensor>* outputs) {
  const HostTensor& x = a.x(0);
  const graph::Value& out = a.out[0];
  std::vector<int64_t> multiplier = read_ints(a.x(1));
  std::vector<int64_t> shift = read_ints(a.x(2));
  const bool scale32 = graph::attr_int(a.attrs, "scale32", 1) != 0;
  const bool double_round = scale32 && graph::attr_string(a.attrs, "rounding") == "double_round";
  const bool in_unsigned = graph::attr_int(a.attrs, "input_unsigned") != 0;
  const bool out_unsigned = graph::attr_int(a.attrs, "output_unsigned") != 0;
  const int64_t input_zp = graph::attr_int(a.attrs, "input_zp");
  const int64_t output_zp = graph::attr_int(a.attrs, "output_zp");
  int64_t lo, hi;
  if (out.dtype == graph::DType::kI8) {
    lo = out_unsigned ? 0 : -128;
    hi = out_unsigned ? 255 : 127;
  } else if (out.dtype == graph::DType::kI16) {
    lo = -32768;
    hi = 32767;
  } else {
    lo = -2147483648LL;
    hi = 2147483647LL;
  }
  // Per-channel: the channel is the index along 'axis'.
  int64_t inner = 1, channels = 1;
  if (multiplier.size() > 1) {
    size_t axis = static_cast<size_t>(graph::normalize_axis(graph::attr_int(a.attrs, "axis", -1), x.shape.size()));
    channels = x.shape[axis];
    for (size_t d = axis + 1; d < x.shape.size(); ++d) inner *= x.shape[d];
  }
  std::vector<int64_t> in = read_ints(x);
  std::vector<int64_t> r(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    int64_t value = in_unsigned ? (in[i] & 0xFF) : in[i];
    value -= input_zp;
    size_t c = multiplier.size() > 1 ? static_cast<size_t>((static_cast<int64_t>(i) / inner) % channels) : 0;
    int64_t v = int64_t{apply_scale(value, multiplier[c], shift[c], double_round)} + output_zp;
    r[i] = v < lo ? lo : v > hi ? hi : v;  // make_ints stores 128..255 as the i8 bits of an unsigned output
  }
  return a.emit_ints(outputs, r);
}

Status kernel_conv2d_int(const KernelArgs& a, std::vector<HostTensor>* outputs) {
  const HostTensor& x = a.x(0);
  const HostTensor& w = a.x(1);
  const graph::Value& out = a.out[0];
  std::vector<int64_t> stride = graph::attr_ints(a.attrs, "stride");
  std::vector<int64_t> pad = graph::attr_ints(a.attrs, "padding");  // top, bottom, left, right
  std::vector<int64_t> dilation = graph::attr_ints(a.attrs, "dilation");
  const int64_t groups = graph::attr_int(a.attrs, "groups", 1);
  const int64_t izp = graph::attr_int(a.attrs, "input_zp"), wzp = graph::attr_int(a.attrs, "weight_zp");
  std::vector<int64_t> xv = read_ints(x), wv = read_ints(w);
  const int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
  const int64_t O = w.shape[0], CG = w.shape[1], KH = w.shape[2], KW = w.shape[3];
  const int64_t OH = out.shape[2], OW = out.shape[3];
  const int64_t out_per_group = O / groups;
  const bool wide = out.dtype == graph::DType::kI64;
  std::vector<int64_t> bv = a.input_ints_or(2, O, 0);
  std::vector<int64_t> r(static_cast<size_t>(N * O * OH * OW));
  size_t i = 0;
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t o = 0; o < O; ++o) {
      const int64_t c0 = (o / out_per_group) * CG;
      for (int64_t oy = 0; oy < OH; ++oy) {
        for (int64_t ox = 0; ox < OW; ++ox) {
          // i8 inputs: int32, wrapping. i16 inputs: TOSA's i48, which K
          // below 2^25 cannot overflow (|product| < 2^22).
          uint64_t acc = 0;
          for (int64_t ci = 0; ci < CG; ++ci) {
            for (int64_t ky = 0; ky < KH; ++ky) {
              int64_t iy = oy * stride[0] - pad[0] + ky * dilation[0];
              if (iy < 0 || iy >= H) continue;  // padding contributes nothing
              for (int64_t kx = 0; kx < KW; ++kx) {
                int64_t ix = ox * stride[1] - pad[2] + kx * dilation[1];
                if (ix < 0 || ix >= W) continue;
                int64_t xe = xv[static_cast<size_t>(((n * C + c0 + ci) * H + iy) * W + ix)] - izp;
                int64_t we = wv[static_cast<size_t>(((o * CG + ci) * KH + ky) * KW + kx)] - wzp;
                acc += static_cast<uint64_t>(xe * we);
              }
            }
          }
          acc += static_cast<uint64_t>(bv[static_cast<size_t>(o)]);
          r[i++] = wide ? static_cast<int64_t>(acc) : wrap32(static_cast<int64_t>(acc));
        }
      }
    }
  }
  return a.emit_ints(outputs, r);
}

Status kernel_matmul_int(const KernelArgs& a, std::vector<HostTensor>* outputs) {
  const HostTensor& A = a.x(0);
  const HostTensor& B = a.x(1);
  const int64_t azp = graph::attr_int(a.attrs, "a_zp"), bzp = graph::attr_int(a.attrs, "b_zp");
  std::vector<int64_t> av = read_ints(A), bv = read_ints(B);
  const int64_t batch = A.shape[0], M = A.shape[1], K = A.shape[2], N = B.shape[2];
  std::vector<int64_t> r(static_cast<size_t>(batch * M * N));
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t m = 0; m < M; ++m) {
      for (int64_t n = 0; n < N; ++n) {
        uint32_t acc = 0;
        for (int64_t k = 0; k < K; ++k) {
          int64_t ae = av[static_cast<size_t>((b * M + m) * K + k)] - azp;
          int64_t be = bv[static_cast<size_t>((b * K + k) * N + n)] - bzp;
          acc += static_cast<uint32_t>(ae * be);
        }
        r[static_cast<size_t>((b * M + m) * N + n)] = wrap32(static_cast<int64_t>(acc));
      }
    }
  }
  return a.emit_ints(outputs, r);
}

Status kernel_avg_pool2d_int(const KernelArgs& a, std::vector<HostTensor>* outputs) {
  const HostTensor& x = a.x(0);
  const graph::Value& out = a.out[0];
  std::vector<int64_t> kernel = graph::attr_ints(a.attrs, "kernel");
  std::vector<int64_t> stride = graph::attr_ints(a.attrs, "stride");
  std::vector<int64_t> pad = graph::attr_ints(a.attrs, "padding");
  const int64_t izp = graph::attr_int(a.attrs, "input_zp"), ozp = graph::attr_int(a.attrs, "output_zp");
  std::vector<int64_t> xv = read_ints(x);
  const int64_t planes = x.shape[0] * x.shape[1], H = x.shape[2], W = x.shape[3];
  const int64_t OH = out.shape[2], OW = out.shape[3];
  std::vector<int64_t> r(static_cast<size_t>(planes * OH * OW));
  size_t i = 0;
  for (int64_t p = 0; p < planes; ++p) {
    for (int64_t oy = 0; oy < OH; ++oy) {
      for (int64_t ox = 0; ox < OW; ++ox) {
        int64_t acc = 0, count = 0;
        for (int64_t ky = 0; ky < kernel[0]; ++ky) {
          int64_t iy = oy * stride[0] - pad[0] + ky;
          if (iy < 0 || iy >= H) continue;
          for (int64_t kx = 0; kx < kernel[1]; ++kx) {
            int64_t ix = ox * stride[1] - pad[2] + kx;
            if (ix < 0 || ix >= W) continue;
            acc += xv[static_cast<size_t>((p * H + iy) * W + ix)] - izp;
            ++count;
          }
        }
        // The registry keeps every pad below the kernel, so count >= 1.
        // reciprocal_scale(count): k = ceil(log2(count)); multiplier =
        // ((2^30 + 1) << k) / count; shift = 30 + k.
        int64_t k = 0;
        while ((int64_t{1} << k) < count) ++k;
        int64_t multiplier = ((int64_t{1} << 30) + 1) * (int64_t{1} << k) / count;
        int64_t v = int64_t{apply_scale(acc, multiplier, 30 + k, false)} + ozp;
        r[i++] = v < -128 ? -128 : v > 127 ? 127 : v;
      }
    }
  }
  return a.emit_ints(outputs, r);
}

// mul_shift and arithmetic_right_shift (TOSA MUL with a shift, and
// ARITHMETIC_RIGHT_SHIFT): i32 operands broadcast; a shift amount outside
// TOSA's [0, 31] is clamped into it (TOSA leaves such values unspecified).
Status kernel_int_shift(const KernelArgs& a, std::vector<HostTensor>* outputs) {
  std::vector<int64_t> av = read_ints(a.x(0)), bv = read_ints(a.x(1));
  std::vector<int64_t> ia = a.broadcast_input(0), ib = a.broadcast_input(1);
  const bool is_mul = a.node.op == "mul_shift";
  const int64_t shift = graph::attr_int(a.attrs, "shift");
  const bool round = graph::attr_int(a.attrs, "round") != 0;
  std::vector<int64_t> r(ia.size());
  for (size_t i = 0; i < r.size(); ++i) {
    int64_t x = av[static_cast<size_t>(ia[i])], y = bv[static_cast<size_t>(ib[i])];
    if (is_mul) {
      r[i] = apply_scale(x, y, shift, false);  // (x * y + round) >> shift, 64-bit, wrapped to 32
    } else {
      int64_t s = y < 0 ? 0 : y > 31 ? 31 : y;
      int64_t v = x >> s;  // x is an i32 value: the shift is exact in int64 (arithmetic)
      if (round && s > 0 && ((x >> (s - 1)) & 1)) v += 1;
      r[i] = v;
    }
  }
  return a.emit_ints(outputs, r);
}

Status kernel_table_lookup(const KernelArgs& a, std::vector<HostTensor>* outputs) {
  std::vector<int64_t> xv = read_ints(a.x(0));
  std::vector<int64_t> table = read_ints(a.x(1));
  for (int64_t& v : xv) v = table[static_cast<size_t>(v + 128)];
  return a.emit_ints(outputs, xv);
}

}  // namespace

void add_int_quant_kernels(std::vector<CpuOpKernel>& table) {
  table.insert(table.end(), {{"rescale", kernel_rescale}, {"conv2d_int", kernel_conv2d_int},
                             {"matmul_int", kernel_matmul_int}, {"avg_pool2d_int", kernel_avg_pool2d_int},
                             {"table", kernel_table_lookup}, {"mul_shift", kernel_int_shift},
                             {"arithmetic_right_shift", kernel_int_shift}});
}

}  // namespace gpuu::cpu
