// TOSA INT profile graphs, built here as TOSA, written as VGF files and run
// through the VGF backend's executor (graph_from_vgf -> the Vulkan kernels)
// on the test device; matched exactly with the CPU reference run of the
// raised graph and with straightforward NHWC loops written from the TOSA 1.0
// formulas in this file. Also gpuu graphs of the new ops lowered to TOSA and
// back.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "backends/vgf/vgf_backend.h"
#include "backends/vgf/vgf_region.h"
#include "context/shared_gpu_context_registry.h"
#include "kernels/vulkan_test_util.h"
#include "partition/partitioner.h"
#include "program/program_loader.h"
#include "program/program_writer.h"
#include "runtime/builtin_backends.h"
#include "runtime/session.h"
#include "vgf/tosa_graph.h"
#include "vgf/tosa_lowering.h"
#include "vgf/tosa_spirv.h"
#include "vgf/vgf_file.h"

namespace gpuu {
namespace {

using cpu::HostTensor;
using graph::DType;
using vgf::TosaAttribute;
using vgf::TosaOp;
using E = vgf::TosaElementType;
using Ints = std::vector<int64_t>;

// ---- the independent reference: plain loops over NHWC int64 vectors ----

int64_t scale(int64_t value, int64_t multiplier, int64_t shift, bool double_round) {
  // TOSA apply_scale_32; the tests' values keep every sum inside int64.
  int64_t round = shift > 0 ? (int64_t{1} << (shift - 1)) : 0;
  if (double_round && shift > 31) round += value >= 0 ? (1 << 30) : -(1 << 30);
  int64_t v = value * multiplier + round;
  return v >= 0 ? v >> shift : -((-v + (int64_t{1} << shift) - 1) >> shift);  // floor division by 2^shift
}

int64_t clip(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

// x [N,H,W,C], w [O,KH,KW,C] (or depthwise [KH,KW,C,M]), i32 out [N,OH,OW,O].
std::vector<int64_t> ref_conv(const std::vector<int64_t>& x, const Ints& xs, const std::vector<int64_t>& w, const Ints& ws,
                              const std::vector<int64_t>& bias, const Ints& pad, int64_t izp, int64_t wzp, bool depthwise,
                              Ints* out_shape) {
  int64_t N = xs[0], H = xs[1], W = xs[2], C = xs[3];
  int64_t KH = depthwise ? ws[0] : ws[1], KW = depthwise ? ws[1] : ws[2];
  int64_t M = depthwise ? ws[3] : 1, O = depthwise ? C * M : ws[0];
  int64_t OH = H + pad[0] + pad[1] - KH + 1, OW = W + pad[2] + pad[3] - KW + 1;
  *out_shape = {N, OH, OW, O};
  std::vector<int64_t> y;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t oy = 0; oy < OH; ++oy)
      for (int64_t ox = 0; ox < OW; ++ox)
        for (int64_t o = 0; o < O; ++o) {
          int64_t acc = 0;
          for (int64_t ky = 0; ky < KH; ++ky)
            for (int64_t kx = 0; kx < KW; ++kx) {
              int64_t iy = oy - pad[0] + ky, ix = ox - pad[2] + kx;
              if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
              if (depthwise) {
                int64_t c = o / M, m = o % M;
                acc += (x[((n * H + iy) * W + ix) * C + c] - izp) * (w[((ky * KW + kx) * C + c) * M + m] - wzp);
              } else {
                for (int64_t c = 0; c < C; ++c) {
                  acc += (x[((n * H + iy) * W + ix) * C + c] - izp) * (w[((o * KH + ky) * KW + kx) * C + c] - wzp);
                }
              }
            }
          y.push_back(acc + bias[bias.size() == 1 ? 0 : static_cast<size_t>(o)]);
        }
  return y;
}

// RESCALE along the last dim (per channel when multiplier has several entries).
std::vector<int64_t> ref_rescale(const std::vector<int64_t>& x, int64_t channels, const Ints& mult, const Ints& shift,
                                 int64_t izp, int64_t ozp, bool double_round, int64_t lo, int64_t hi) {
  std::vector<int64_t> y;
  for (size_t i = 0; i < x.size(); ++i) {
    size_t c = mult.size() == 1 ? 0 : i % static_cast<size_t>(channels);
    y.push_back(clip(scale(x[i] - izp, mult[c], shift[c], double_round) + ozp, lo, hi));
  }
  return y;
}

// 2-D pool over NHWC with pads (top, bottom, left, right); kernel == stride given.
std::vector<int64_t> ref_pool(const std::vector<int64_t>& x, const Ints& xs, const Ints& k, const Ints& s, const Ints& pad,
                              bool is_max, int64_t izp, int64_t ozp, Ints* out_shape) {
  int64_t N = xs[0], H = xs[1], W = xs[2], C = xs[3];
  int64_t OH = (H + pad[0] + pad[1] - k[0]) / s[0] + 1, OW = (W + pad[2] + pad[3] - k[1]) / s[1] + 1;
  *out_shape = {N, OH, OW, C};
  std::vector<int64_t> y;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t oy = 0; oy < OH; ++oy)
      for (int64_t ox = 0; ox < OW; ++ox)
        for (int64_t c = 0; c < C; ++c) {
          int64_t best = -128, sum = 0, count = 0;
          for (int64_t ky = 0; ky < k[0]; ++ky)
            for (int64_t kx = 0; kx < k[1]; ++kx) {
              int64_t iy = oy * s[0] - pad[0] + ky, ix = ox * s[1] - pad[2] + kx;
              if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
              int64_t v = x[((n * H + iy) * W + ix) * C + c];
              best = std::max(best, v);
              sum += v - izp;
              ++count;
            }
          if (is_max) {
            y.push_back(best);
          } else {
            int64_t kk = 0;
            while ((int64_t{1} << kk) < count) ++kk;
            int64_t multiplier = (((int64_t{1} << 30) + 1) << kk) / count;
            y.push_back(clip(scale(sum, multiplier, 30 + kk, false) + ozp, -128, 127));
          }
        }
  return y;
}

// ---- helpers ----

Blob bytes_of(E type, const std::vector<int64_t>& v) {
  std::vector<uint8_t> b(v.size() * vgf::tosa_element_size(type));
  for (size_t i = 0; i < v.size(); ++i) {
    if (type == E::kI8) {
      b[i] = static_cast<uint8_t>(static_cast<int8_t>(v[i]));
    } else {
      int32_t e = static_cast<int32_t>(v[i]);
      std::memcpy(b.data() + 4 * i, &e, 4);
    }
  }
  return Blob::take(std::move(b));
}

std::vector<int64_t> pseudo_random(size_t n, uint32_t seed, int64_t lo, int64_t hi) {
  std::vector<int64_t> v(n);
  uint32_t s = seed * 2654435761u + 12345u;
  for (int64_t& e : v) {
    s = s * 1664525u + 1013904223u;
    e = lo + static_cast<int64_t>((s >> 8) % static_cast<uint32_t>(hi - lo + 1));
  }
  return v;
}

HostTensor host(DType d, const Ints& shape, const std::vector<int64_t>& v) {
  std::vector<double> dv(v.begin(), v.end());
  return HostTensor::from_doubles(d, shape, dv).value();
}

std::vector<int64_t> ints_of(const HostTensor& t) {
  std::vector<double> d = t.to_doubles();
  return std::vector<int64_t>(d.begin(), d.end());
}

TosaAttribute zp(E t, int64_t v) { return TosaAttribute::int_tensor(t, {v}); }
TosaAttribute acc_int32() { return TosaAttribute::u32(static_cast<uint32_t>(vgf::TosaAccType::kInt32)); }
TosaAttribute propagate() { return TosaAttribute::u32(static_cast<uint32_t>(vgf::TosaNanPropagationMode::kPropagate)); }
std::vector<TosaAttribute> rescale_attrs(bool double_round, bool per_channel, const Ints& mult, const Ints& shift, E in,
                                         int64_t izp, E out, int64_t ozp) {
  auto mode = double_round ? vgf::TosaRoundingMode::kDoubleRound : vgf::TosaRoundingMode::kSingleRound;
  return {TosaAttribute::boolean(true),   TosaAttribute::u32(static_cast<uint32_t>(mode)),
          TosaAttribute::boolean(per_channel), TosaAttribute::boolean(false),
          TosaAttribute::boolean(false),  TosaAttribute::int_tensor(E::kI32, mult),
          TosaAttribute::int_tensor(E::kI8, shift), zp(in, izp), zp(out, ozp)};
}

// Distinct values (the references should not be flat or saturated everywhere).
size_t distinct(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  return static_cast<size_t>(std::unique(v.begin(), v.end()) - v.begin());
}

bool has_op(const graph::Graph& g, const std::string& op) {
  for (const graph::Node& n : g.nodes()) {
    if (n.op == op) return true;
  }
  return false;
}

// Writes the TOSA graph as a VGF file, reads it back, raises it, runs it on the
// executor and on the CPU reference; returns the executor's outputs.
std::vector<HostTensor> run_vgf(const vgf::TosaGraph& tosa, const std::vector<HostTensor>& inputs, graph::Graph* raised) {
  Status valid = vgf::validate_tosa_graph(tosa);
  EXPECT_TRUE(valid.ok()) << valid.message();
  Result<vgf::VgfFile> file = vgf::vgf_from_tosa(tosa);
  EXPECT_TRUE(file.ok()) << file.status().message();
  if (!file.ok()) return {};
  Result<std::vector<uint8_t>> bytes = vgf::encode_vgf(file.value());
  EXPECT_TRUE(bytes.ok()) << bytes.status().message();
  Result<vgf::VgfFile> decoded = vgf::decode_vgf(bytes->data(), bytes->size());
  EXPECT_TRUE(decoded.ok()) << decoded.status().message();
  if (!decoded.ok()) return {};
  Result<graph::Graph> g = vgf::graph_from_vgf(decoded.value());
  EXPECT_TRUE(g.ok()) << g.status().message();
  if (!g.ok()) return {};
  *raised = g.value();
  Result<std::vector<HostTensor>> got = vulkan_test::run_on_vulkan(g.value(), inputs);
  EXPECT_TRUE(got.ok()) << got.status().message();
  Result<std::vector<HostTensor>> want = cpu::run_graph(g.value(), inputs);
  EXPECT_TRUE(want.ok()) << want.status().message();
  if (!got.ok() || !want.ok()) return {};
  for (size_t i = 0; i < want->size(); ++i) {
    EXPECT_TRUE(vulkan_test::all_close(got.value()[i], want.value()[i], 0, 0)) << "output " << i << " vs the CPU reference";
  }
  return std::move(got).value();
}

TEST(VgfInt8, Conv2dRescaleClampMaxPoolRescaleMatchesLoops) {
  vgf::TosaGraph t;
  Ints xs = {1, 6, 6, 3}, ws = {4, 3, 3, 3};
  std::vector<int64_t> xv = pseudo_random(108, 1, -128, 127), wv = pseudo_random(108, 2, -128, 127);
  std::vector<int64_t> bv = {1000, -2000, 30000, -7};
  Ints pad = {1, 0, 0, 1};
  int64_t izp = -3, wzp = 2;
  Ints mult = {1518500250, 1073741824, 2000000000, 1234567890}, shift = {40, 39, 41, 38};
  auto x = t.add_input(E::kI8, xs, 0, 0, "x");
  auto w = t.add_graph_constant(E::kI8, ws, 0, bytes_of(E::kI8, wv), "w");
  auto b = t.add_graph_constant(E::kI32, {4}, 1, bytes_of(E::kI32, bv), "b");
  auto conv = t.add_operator(TosaOp::kConv2d,
                             {TosaAttribute::shape(pad), TosaAttribute::shape({1, 1}), TosaAttribute::shape({1, 1}),
                              acc_int32(), TosaAttribute::boolean(false), zp(E::kI8, izp), zp(E::kI8, wzp)},
                             {x, w, b}, {{E::kI32, {1, 5, 5, 4}}});
  auto r1 = t.add_operator(TosaOp::kRescale, rescale_attrs(true, true, mult, shift, E::kI32, 0, E::kI8, -5), {conv},
                           {{E::kI8, {1, 5, 5, 4}}});
  auto cl = t.add_operator(TosaOp::kClamp,
                           {TosaAttribute::int_scalar(E::kI8, -100), TosaAttribute::int_scalar(E::kI8, 90), propagate()},
                           {r1}, {{E::kI8, {1, 5, 5, 4}}});
  auto mp = t.add_operator(TosaOp::kMaxPool2d,
                           {TosaAttribute::shape({2, 2}), TosaAttribute::shape({2, 2}), TosaAttribute::shape({0, 1, 0, 1}),
                            propagate()},
                           {cl}, {{E::kI8, {1, 3, 3, 4}}});
  auto r2 = t.add_operator(TosaOp::kRescale, rescale_attrs(false, false, {1431655765}, {31}, E::kI8, 7, E::kI8, -2), {mp},
                           {{E::kI8, {1, 3, 3, 4}}});
  t.add_output(r2, 0, 1, "y");

  graph::Graph raised;
  std::vector<HostTensor> got = run_vgf(t, {host(DType::kI8, xs, xv)}, &raised);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(has_op(raised, "conv2d_int") && has_op(raised, "rescale") && has_op(raised, "max_pool2d"));

  Ints cs, ps;
  std::vector<int64_t> ref = ref_conv(xv, xs, wv, ws, bv, pad, izp, wzp, false, &cs);
  ASSERT_EQ(cs, (Ints{1, 5, 5, 4}));
  ref = ref_rescale(ref, 4, mult, shift, 0, -5, true, -128, 127);
  for (int64_t& v : ref) v = clip(v, -100, 90);
  ref = ref_pool(ref, cs, {2, 2}, {2, 2}, {0, 1, 0, 1}, true, 0, 0, &ps);
  ref = ref_rescale(ref, 4, {1431655765}, {31}, 7, -2, false, -128, 127);
  EXPECT_EQ(ints_of(got[0]), ref);
  EXPECT_GE(distinct(ref), 12u);
  EXPECT_EQ(got[0].shape, (Ints{1, 3, 3, 4}));
}

TEST(VgfInt8, MatmulRescaleMatchesLoops) {
  vgf::TosaGraph t;
  std::vector<int64_t> av = pseudo_random(30, 3, -128, 127), bv = pseudo_random(40, 4, -128, 127);
  Ints mult = {1073741824, 1500000000, 1900000000, 1100000000}, shift = {36, 37, 38, 35};
  auto a = t.add_input(E::kI8, {2, 3, 5}, 0, 0, "a");
  auto b = t.add_graph_constant(E::kI8, {2, 5, 4}, 0, bytes_of(E::kI8, bv), "b");
  auto mm = t.add_operator(TosaOp::kMatmul, {zp(E::kI8, 4), zp(E::kI8, -1)}, {a, b}, {{E::kI32, {2, 3, 4}}});
  auto r = t.add_operator(TosaOp::kRescale, rescale_attrs(false, true, mult, shift, E::kI32, 0, E::kI8, 3), {mm},
                          {{E::kI8, {2, 3, 4}}});
  t.add_output(r, 0, 1, "y");
  t.add_output(mm, 0, 2, "acc");

  graph::Graph raised;
  std::vector<HostTensor> got = run_vgf(t, {host(DType::kI8, {2, 3, 5}, av)}, &raised);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_TRUE(has_op(raised, "matmul_int"));
  std::vector<int64_t> acc;
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 4; ++j) {
        int64_t s = 0;
        for (int64_t k = 0; k < 5; ++k) s += (av[static_cast<size_t>((n * 3 + i) * 5 + k)] - 4) * (bv[static_cast<size_t>((n * 5 + k) * 4 + j)] + 1);
        acc.push_back(s);
      }
  EXPECT_EQ(ints_of(got[1]), acc);
  std::vector<int64_t> ref = ref_rescale(acc, 4, mult, shift, 0, 3, false, -128, 127);
  EXPECT_EQ(ints_of(got[0]), ref);
  EXPECT_GE(distinct(ref), 12u);
}

TEST(VgfInt8, TableDepthwiseRescaleAvgPoolMatchesLoops) {
  vgf::TosaGraph t;
  Ints xs = {1, 4, 4, 2}, ws = {2, 2, 2, 1};
  std::vector<int64_t> xv = pseudo_random(32, 5, -128, 127), wv = pseudo_random(8, 6, -128, 127);
  std::vector<int64_t> table(256);
  for (size_t i = 0; i < 256; ++i) table[i] = static_cast<int64_t>((i * 37 + 11) % 256) - 128;
  auto x = t.add_input(E::kI8, xs, 0, 0, "x");
  auto tb = t.add_operator(TosaOp::kTable, {TosaAttribute::int_tensor(E::kI8, table)}, {x}, {{E::kI8, xs}});
  auto w = t.add_graph_constant(E::kI8, ws, 0, bytes_of(E::kI8, wv), "w");
  auto b = t.add_inline_constant(E::kI32, {1}, bytes_of(E::kI32, {-77}), "b");
  auto dw = t.add_operator(TosaOp::kDepthwiseConv2d,
                           {TosaAttribute::shape({0, 1, 1, 0}), TosaAttribute::shape({1, 1}), TosaAttribute::shape({1, 1}),
                            acc_int32(), TosaAttribute::boolean(false), zp(E::kI8, 9), zp(E::kI8, -4)},
                           {tb, w, b}, {{E::kI32, {1, 4, 4, 2}}});
  auto r = t.add_operator(TosaOp::kRescale, rescale_attrs(true, false, {1717986918}, {40}, E::kI32, 0, E::kI8, 1), {dw},
                          {{E::kI8, {1, 4, 4, 2}}});
  auto ap = t.add_operator(TosaOp::kAvgPool2d,
                           {TosaAttribute::shape({2, 2}), TosaAttribute::shape({1, 1}), TosaAttribute::shape({0, 1, 1, 0}),
                            acc_int32(), zp(E::kI8, -6), zp(E::kI8, 5)},
                           {r}, {{E::kI8, {1, 4, 4, 2}}});
  t.add_output(ap, 0, 1, "y");
  t.add_output(tb, 0, 2, "looked_up");

  graph::Graph raised;
  std::vector<HostTensor> got = run_vgf(t, {host(DType::kI8, xs, xv)}, &raised);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_TRUE(has_op(raised, "table") && has_op(raised, "avg_pool2d_int") && has_op(raised, "conv2d_int"));
  std::vector<int64_t> looked;
  for (int64_t v : xv) looked.push_back(table[static_cast<size_t>(v + 128)]);
  EXPECT_EQ(ints_of(got[1]), looked);
  Ints cs, ps;
  std::vector<int64_t> ref = ref_conv(looked, xs, wv, ws, {-77}, {0, 1, 1, 0}, 9, -4, true, &cs);
  ASSERT_EQ(cs, (Ints{1, 4, 4, 2}));
  ref = ref_rescale(ref, 2, {1717986918}, {40}, 0, 1, true, -128, 127);
  ref = ref_pool(ref, cs, {2, 2}, {1, 1}, {0, 1, 1, 0}, false, -6, 5, &ps);
  EXPECT_EQ(ints_of(got[0]), ref);
  EXPECT_GE(distinct(ref), 12u);
}

// gpuu graphs of the new ops: the VGF backend takes them (their TOSA form
// raises to kernels it runs), and the VGF file computes what the CPU does.
TEST(VgfInt8, GpuuIntOpsLowerToTosaAndRunBack) {
  graph::Graph g;
  auto x = graph::add_graph_input(g, "x", DType::kI8, {1, 3, 5, 6}).value();
  auto w = graph::add_graph_constant(g, "w", DType::kI8, {4, 3, 3, 3}, bytes_of(E::kI8, pseudo_random(108, 7, -128, 127))).value();
  auto bias = graph::add_graph_constant(g, "bias", DType::kI32, {4}, bytes_of(E::kI32, {5, -5, 500, -500})).value();
  auto m = graph::add_graph_constant(g, "m", DType::kI32, {4}, bytes_of(E::kI32, {1073741824, 1300000000, 1600000000, 2100000000})).value();
  auto s = graph::add_graph_constant(g, "s", DType::kI32, {4}, bytes_of(E::kI32, {38, 39, 40, 37})).value();
  std::vector<int64_t> table(256);
  for (size_t i = 0; i < 256; ++i) table[i] = 127 - static_cast<int64_t>(i);
  auto tb = graph::add_graph_constant(g, "tbl", DType::kI8, {256}, bytes_of(E::kI8, table)).value();
  auto conv = graph::add_op(g, "conv2d_int", "conv", {x, w, bias},
                            {{"padding", Ints{1, 0, 2, 1}}, {"stride", Ints{1, 2}}, {"input_zp", int64_t{-1}},
                             {"weight_zp", int64_t{3}}})
                  .value()[0];
  auto rq = graph::add_op(g, "rescale", "rq", {conv, m, s},
                          {{"dtype", std::string("i8")}, {"axis", int64_t{1}}, {"rounding", std::string("double_round")},
                           {"output_zp", int64_t{4}}})
                .value()[0];
  auto lut = graph::add_op(g, "table", "lut", {rq, tb}, {}).value()[0];
  auto pool = graph::add_op(g, "avg_pool2d_int", "pool", {lut},
                            {{"kernel", Ints{2, 2}}, {"stride", Ints{1, 1}}, {"padding", Ints{0, 1, 1, 0}},
                             {"input_zp", int64_t{2}}, {"output_zp", int64_t{-3}}})
                  .value()[0];
  auto a = graph::add_graph_input(g, "a", DType::kI8, {2, 3, 4}).value();
  auto bm = graph::add_graph_input(g, "bm", DType::kI8, {2, 4, 5}).value();
  auto mm = graph::add_op(g, "matmul_int", "mm", {a, bm}, {{"a_zp", int64_t{-2}}, {"b_zp", int64_t{1}}}).value()[0];
  g.mark_output(pool);
  g.mark_output(mm);
  for (const graph::Node& n : g.nodes()) EXPECT_EQ(vgf::VgfBackend().check(g, n), "") << n.name;

  std::vector<HostTensor> inputs = {vulkan_test::random_tensor(DType::kI8, {1, 3, 5, 6}, 50, -128, 128),
                                    vulkan_test::random_tensor(DType::kI8, {2, 3, 4}, 51, -128, 128),
                                    vulkan_test::random_tensor(DType::kI8, {2, 4, 5}, 52, -128, 128)};
  Result<vgf::VgfFile> file = vgf::vgf_from_region(g);
  ASSERT_TRUE(file.ok()) << file.status().message();
  Result<graph::Graph> back = vgf::graph_from_vgf(file.value());
  ASSERT_TRUE(back.ok()) << back.status().message();
  auto got = vulkan_test::run_on_vulkan(back.value(), inputs);
  ASSERT_TRUE(got.ok()) << got.status().message();
  auto want = cpu::run_graph(g, inputs);
  ASSERT_TRUE(want.ok()) << want.status().message();
  for (size_t i = 0; i < 2; ++i) EXPECT_TRUE(vulkan_test::all_close(got.value()[i], want.value()[i], 0, 0)) << i;
}

TEST(VgfInt8, Int32ArithmeticMulShiftShiftsAndCastsMatchLoops) {
  // ADD/SUB on i32, MUL with shift 10, ARITHMETIC_RIGHT_SHIFT with rounding
  // (i32 and i8), CAST i32 -> i8 (truncating) and i8 -> i32.
  vgf::TosaGraph t;
  std::vector<int64_t> av = pseudo_random(24, 8, -2000000, 2000000), bv = pseudo_random(24, 9, -40000, 40000);
  std::vector<int64_t> sv = pseudo_random(24, 10, 0, 20), qv = pseudo_random(24, 11, -128, 127);
  std::vector<int64_t> q_shift = pseudo_random(24, 12, 0, 7);
  Ints s3 = {2, 3, 4};
  auto a = t.add_input(E::kI32, s3, 0, 0, "a");
  auto b = t.add_input(E::kI32, s3, 0, 1, "b");
  auto sh = t.add_input(E::kI32, s3, 0, 2, "s");
  auto q = t.add_input(E::kI8, s3, 0, 3, "q");
  auto qs = t.add_graph_constant(E::kI8, s3, 0, bytes_of(E::kI8, q_shift), "qs");
  auto sum = t.add_operator(TosaOp::kAdd, {}, {a, b}, {{E::kI32, s3}});
  auto diff = t.add_operator(TosaOp::kSub, {}, {sum, b}, {{E::kI32, s3}});
  auto prod = t.add_operator(TosaOp::kMul, {TosaAttribute::int_tensor(E::kI8, {10})}, {diff, b}, {{E::kI32, s3}});
  auto ars = t.add_operator(TosaOp::kArithmeticRightShift, {TosaAttribute::boolean(true)}, {prod, sh}, {{E::kI32, s3}});
  auto narrow = t.add_operator(TosaOp::kCast, {}, {ars}, {{E::kI8, s3}});
  auto qr = t.add_operator(TosaOp::kArithmeticRightShift, {TosaAttribute::boolean(true)}, {q, qs}, {{E::kI8, s3}});
  auto wide = t.add_operator(TosaOp::kCast, {}, {qr}, {{E::kI32, s3}});
  t.add_output(ars, 0, 4, "ars");
  t.add_output(narrow, 0, 5, "narrow");
  t.add_output(wide, 0, 6, "wide");

  graph::Graph raised;
  std::vector<HostTensor> got = run_vgf(t, {host(DType::kI32, s3, av), host(DType::kI32, s3, bv), host(DType::kI32, s3, sv),
                                            host(DType::kI8, s3, qv)},
                                 &raised);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_TRUE(has_op(raised, "mul_shift") && has_op(raised, "arithmetic_right_shift"));
  auto shift_round = [](int64_t x, int64_t s) {
    int64_t r = x >> s;
    if (s > 0 && ((x >> (s - 1)) & 1)) r += 1;
    return r;
  };
  std::vector<int64_t> ref_ars, ref_narrow, ref_wide;
  for (size_t i = 0; i < 24; ++i) {
    int64_t p = av[i] * bv[i];  // a + b - b = a; |a * b| < 2^37
    int64_t m = (p + (1 << 9)) >> 10;
    int64_t r = shift_round(m, sv[i]);
    ref_ars.push_back(r);
    ref_narrow.push_back(static_cast<int8_t>(static_cast<uint8_t>(static_cast<uint64_t>(r) & 0xFF)));
    ref_wide.push_back(shift_round(qv[i], q_shift[i]));
  }
  EXPECT_EQ(ints_of(got[0]), ref_ars);
  EXPECT_EQ(ints_of(got[1]), ref_narrow);
  EXPECT_EQ(ints_of(got[2]), ref_wide);
  EXPECT_GE(distinct(ref_ars), 12u);
}

TEST(VgfInt8, TransposeConv2dMatchesLoops) {
  // TOSA's definition: out[oy, ox] += (x[iy, ix] - izp) * (w[ky, kx] - wzp)
  // where oy = iy * stride + out_pad_top + ky (outside the output: dropped).
  struct Case {
    Ints xs, ws, stride, out_pad;
  };
  const Case cases[] = {{{1, 3, 4, 2}, {3, 3, 2, 2}, {2, 2}, {0, 0, 0, 0}},
                        {{2, 2, 3, 3}, {2, 2, 3, 3}, {1, 3}, {-1, 1, 0, -2}},
                        {{1, 4, 4, 1}, {1, 3, 3, 1}, {3, 1}, {1, 0, -2, 0}}};
  uint32_t seed = 60;
  for (const Case& c : cases) {
    int64_t N = c.xs[0], H = c.xs[1], W = c.xs[2], IC = c.xs[3], OC = c.ws[0], KH = c.ws[1], KW = c.ws[2];
    int64_t OH = (H - 1) * c.stride[0] + c.out_pad[0] + c.out_pad[1] + KH;
    int64_t OW = (W - 1) * c.stride[1] + c.out_pad[2] + c.out_pad[3] + KW;
    std::vector<int64_t> xv = pseudo_random(static_cast<size_t>(N * H * W * IC), seed++, -128, 127);
    std::vector<int64_t> wv = pseudo_random(static_cast<size_t>(OC * KH * KW * IC), seed++, -128, 127);
    std::vector<int64_t> bv = pseudo_random(static_cast<size_t>(OC), seed++, -1000, 1000);
    int64_t izp = 5, wzp = -7;
    vgf::TosaGraph t;
    auto x = t.add_input(E::kI8, c.xs, 0, 0, "x");
    auto w = t.add_graph_constant(E::kI8, c.ws, 0, bytes_of(E::kI8, wv), "w");
    auto b = t.add_graph_constant(E::kI32, {OC}, 1, bytes_of(E::kI32, bv), "b");
    auto y = t.add_operator(TosaOp::kTransposeConv2d,
                            {TosaAttribute::shape(c.out_pad), TosaAttribute::shape(c.stride), acc_int32(),
                             TosaAttribute::boolean(false), zp(E::kI8, izp), zp(E::kI8, wzp)},
                            {x, w, b}, {{E::kI32, {N, OH, OW, OC}}});
    t.add_output(y, 0, 1, "y");
    graph::Graph raised;
    std::vector<HostTensor> got = run_vgf(t, {host(DType::kI8, c.xs, xv)}, &raised);
    ASSERT_EQ(got.size(), 1u);
    std::vector<int64_t> ref(static_cast<size_t>(N * OH * OW * OC), 0);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t oy = 0; oy < OH; ++oy)
        for (int64_t ox = 0; ox < OW; ++ox)
          for (int64_t oc = 0; oc < OC; ++oc) ref[static_cast<size_t>(((n * OH + oy) * OW + ox) * OC + oc)] = bv[static_cast<size_t>(oc)];
    for (int64_t n = 0; n < N; ++n)
      for (int64_t iy = 0; iy < H; ++iy)
        for (int64_t ix = 0; ix < W; ++ix)
          for (int64_t oc = 0; oc < OC; ++oc)
            for (int64_t ky = 0; ky < KH; ++ky)
              for (int64_t kx = 0; kx < KW; ++kx) {
                int64_t oy = iy * c.stride[0] + c.out_pad[0] + ky, ox = ix * c.stride[1] + c.out_pad[2] + kx;
                if (oy < 0 || oy >= OH || ox < 0 || ox >= OW) continue;
                for (int64_t ic = 0; ic < IC; ++ic) {
                  ref[static_cast<size_t>(((n * OH + oy) * OW + ox) * OC + oc)] +=
                      (xv[static_cast<size_t>(((n * H + iy) * W + ix) * IC + ic)] - izp) *
                      (wv[static_cast<size_t>(((oc * KH + ky) * KW + kx) * IC + ic)] - wzp);
                }
              }
    EXPECT_EQ(ints_of(got[0]), ref);
    EXPECT_TRUE(has_op(raised, "conv2d_int"));
  }
}

// A quantized block as a program: partitioned VGF-first and Vulkan-first,
// every node lands on the preferred GPU backend and the session's output
// matches the CPU reference exactly.
class VgfInt8Session : public testing::Test {
 protected:
  void TearDown() override { SharedGpuContextRegistry::get().clear_for_testing(); }
};

TEST_F(VgfInt8Session, QuantizedBlockRunsOnEitherGpuBackend) {
  graph::Graph g;
  auto x = graph::add_graph_input(g, "x", DType::kI8, {1, 2, 6, 6}).value();
  auto w = graph::add_graph_constant(g, "w", DType::kI8, {3, 2, 3, 3}, bytes_of(E::kI8, pseudo_random(54, 70, -128, 127))).value();
  auto bias = graph::add_graph_constant(g, "bias", DType::kI32, {3}, bytes_of(E::kI32, {100, -100, 7})).value();
  auto m = graph::add_graph_constant(g, "m", DType::kI32, {3}, bytes_of(E::kI32, {1300000000, 1500000000, 1700000000})).value();
  auto s = graph::add_graph_constant(g, "s", DType::kI32, {3}, bytes_of(E::kI32, {38, 38, 39})).value();
  std::vector<int64_t> table(256);
  for (size_t i = 0; i < 256; ++i) table[i] = static_cast<int64_t>((i * 91 + 3) % 256) - 128;
  auto tb = graph::add_graph_constant(g, "tbl", DType::kI8, {256}, bytes_of(E::kI8, table)).value();
  auto conv = graph::add_op(g, "conv2d_int", "conv", {x, w, bias}, {{"padding", Ints{1, 1, 1, 1}}, {"input_zp", int64_t{-4}}})
                  .value()[0];
  auto rq = graph::add_op(g, "rescale", "rq", {conv, m, s}, {{"dtype", std::string("i8")}, {"axis", int64_t{1}}}).value()[0];
  auto lut = graph::add_op(g, "table", "lut", {rq, tb}, {}).value()[0];
  auto pool = graph::add_op(g, "max_pool2d", "pool", {lut}, {{"kernel", Ints{2, 2}}}).value()[0];
  g.mark_output(pool);
  HostTensor in = vulkan_test::random_tensor(DType::kI8, {1, 2, 6, 6}, 71, -128, 128);
  auto want = cpu::run_graph(g, {in});
  ASSERT_TRUE(want.ok()) << want.status().message();
  for (Prefer prefer : {Prefer::kVgfFirst, Prefer::kVulkanFirst}) {
    SCOPED_TRACE(prefer == Prefer::kVgfFirst ? "vgf_first" : "vulkan_first");
    partition::PartitionOptions options;
    options.prefer = prefer;
    options.min_partition_size = 1;
    options.capabilities = runtime::registered_capabilities();
    auto parts = partition::partition(g, options);
    ASSERT_TRUE(parts.ok()) << parts.status().message();
    std::string expected = prefer == Prefer::kVgfFirst ? partition::kVgfId : partition::kVulkanId;
    for (size_t n = 0; n < g.nodes().size(); ++n) {
      EXPECT_EQ(parts->regions[static_cast<size_t>(parts->region_of_node[n])].backend, expected) << g.node(static_cast<graph::NodeId>(n)).name;
    }
    SharedGpuCompileSpec spec;
    spec.token = "int8_block";
    spec.present = true;
    auto bytes = program::build_program(g, parts.value(), spec, runtime::builtin_preprocessors());
    ASSERT_TRUE(bytes.ok()) << bytes.status().message();
    auto program = program::load_program_bytes(bytes->data(), bytes->size());
    ASSERT_TRUE(program.ok()) << program.status().message();
    auto session = runtime::Session::create(program.value(), {});
    ASSERT_TRUE(session.ok()) << session.status().message();
    ASSERT_TRUE(session.value()->set_input(0, in.bytes.data(), in.bytes.size()).ok());
    Status ran = session.value()->execute();
    ASSERT_TRUE(ran.ok()) << ran.message();
    std::vector<uint8_t> y(want.value()[0].bytes.size());
    ASSERT_TRUE(session.value()->get_output(0, y.data(), y.size()).ok());
    EXPECT_EQ(y, want.value()[0].bytes);
    SharedGpuContextRegistry::get().clear_for_testing();
  }
}

TEST(VgfInt8, UnsupportedIntFormsAreRefusedByName) {
  // An i16 TABLE (gpuu has no i16 tensors) and a TABLE whose table is too short.
  vgf::TosaGraph t;
  auto x = t.add_input(E::kI8, {4}, 0, 0, "x");
  auto tb = t.add_operator(TosaOp::kTable, {TosaAttribute::int_tensor(E::kI8, Ints(10, 0))}, {x}, {{E::kI8, {4}}});
  t.add_output(tb, 0, 1, "y");
  Result<graph::Graph> g = vgf::tosa_to_gpuu(t);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("TABLE"), std::string::npos) << g.status().message();
  EXPECT_NE(g.status().message().find("256"), std::string::npos) << g.status().message();
}

}  // namespace
}  // namespace gpuu
