// The round trip the VGF tests check lowerings with: a region and its input
// tensors, lowered to TOSA, emitted as SPIR-V, parsed, raised back to gpuu ops
// and run on the CPU kernels against the original region.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "backends/cpu/cpu_kernels.h"
#include "backends/cpu/host_tensor.h"
#include "graph/builder.h"
#include "graph/verifier.h"
#include "vgf/tosa_lowering.h"
#include "vgf/tosa_spirv.h"

namespace gpuu::vgf {

// Tolerance |got - want| <= atol + rtol * |want|. f32 ops run as a handful of
// f32-rounded gpuu ops after lowering (decompositions add roundings the
// single fused CPU kernel does not have), f16 ones in f16.
struct Tol {
  double atol, rtol;
};
constexpr Tol kExact = {0.0, 0.0};
constexpr Tol kF32 = {1e-5, 1e-5};
constexpr Tol kF16 = {2e-3, 4e-3};

// A region under construction, with the input tensors it will run on.
class Region {
 public:
  // An input with deterministic values: floats in [lo, hi], ints in [lo, hi], bools alternating-ish.
  graph::ValueId input(graph::DType dtype, graph::Shape shape, double lo = -2.0, double hi = 2.0, bool integral = false) {
    int64_t n = graph::shape_numel(shape);
    std::vector<double> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      seed_ = seed_ * 6364136223846793005ull + 1442695040888963407ull;
      double u = static_cast<double>(seed_ >> 11) / 9007199254740992.0;  // [0, 1)
      double x = lo + (hi - lo) * u;
      if (dtype == graph::DType::kBool) x = u < 0.5 ? 0 : 1;
      if (integral || (dtype != graph::DType::kF32 && dtype != graph::DType::kF16)) x = std::round(x);
      v[static_cast<size_t>(i)] = x;
    }
    return input_values(dtype, std::move(shape), v);
  }
  graph::ValueId input_values(graph::DType dtype, graph::Shape shape, const std::vector<double>& values) {
    Result<cpu::HostTensor> t = cpu::HostTensor::from_doubles(dtype, shape, values);
    EXPECT_TRUE(t.ok()) << t.status().message();
    Result<graph::ValueId> id = graph::add_graph_input(g, "in" + std::to_string(inputs.size()), dtype, shape);
    EXPECT_TRUE(id.ok()) << id.status().message();
    inputs.push_back(t.ok() ? *t : cpu::HostTensor::zeros(dtype, shape));
    return id.ok() ? *id : graph::kNone;
  }
  graph::ValueId constant(graph::DType dtype, graph::Shape shape, double lo = -1.0, double hi = 1.0) {
    Region scratch;
    scratch.seed_ = seed_ + 77;
    seed_ += 1;
    scratch.input(dtype, shape, lo, hi);
    Result<graph::ValueId> id = graph::add_graph_constant(g, "c" + std::to_string(g.values().size()), dtype, shape,
                                                   scratch.inputs[0].to_blob());
    EXPECT_TRUE(id.ok()) << id.status().message();
    return id.ok() ? *id : graph::kNone;
  }
  graph::ValueId op(const char* name, std::vector<graph::ValueId> in, graph::AttrMap attrs = {}) {
    Result<std::vector<graph::ValueId>> outs =
        graph::add_op(g, name, std::string(name) + "_" + std::to_string(g.nodes().size()), std::move(in), std::move(attrs));
    EXPECT_TRUE(outs.ok()) << outs.status().message();
    return outs.ok() ? outs->front() : graph::kNone;
  }
  void output(graph::ValueId v) { EXPECT_TRUE(graph::add_graph_output(g, v).ok()); }

  graph::Graph g;
  std::vector<cpu::HostTensor> inputs;
  uint64_t seed_ = 0x9E3779B97F4A7C15ull;
};

inline testing::AssertionResult Close(const cpu::HostTensor& got, const cpu::HostTensor& want, Tol tol) {
  if (got.dtype != want.dtype || got.shape != want.shape) {
    return testing::AssertionFailure() << "got " << got.type_string() << ", expected " << want.type_string();
  }
  for (int64_t i = 0; i < got.numel(); ++i) {
    double a = got.element(i), b = want.element(i);
    bool same = (std::isnan(a) && std::isnan(b)) || a == b || std::fabs(a - b) <= tol.atol + tol.rtol * std::fabs(b);
    if (!same) {
      return testing::AssertionFailure() << "element " << i << ": got " << a << ", expected " << b;
    }
  }
  return testing::AssertionSuccess();
}

// The whole trip, returning the lowered TOSA graph for further checks.
inline TosaGraph round_trip(const Region& r, Tol tol) {
  Result<std::vector<cpu::HostTensor>> want = cpu::run_graph(r.g, r.inputs);
  EXPECT_TRUE(want.ok()) << want.status().message();
  Result<TosaGraph> lowered = lower_to_tosa(r.g);
  EXPECT_TRUE(lowered.ok()) << lowered.status().message();
  if (!want.ok() || !lowered.ok()) return TosaGraph();
  Result<std::vector<uint32_t>> words = emit_tosa_module(*lowered);
  EXPECT_TRUE(words.ok()) << words.status().message();
  if (!words.ok()) return *lowered;
  Result<TosaGraph> parsed = parse_tosa_module(words->data(), words->size());
  EXPECT_TRUE(parsed.ok()) << parsed.status().message();
  if (!parsed.ok()) return *lowered;
  EXPECT_EQ(tosa_graph_difference(*parsed, *lowered, false), "");
  // What the VGF constants section would supply.
  for (const TosaConstant& c : lowered->constants) {
    if (c.storage == TosaConstantStorage::kGraphConstant) {
      EXPECT_TRUE(set_graph_constant_data(*parsed, c.graph_constant_id, c.data).ok());
    }
  }
  Result<graph::Graph> raised = tosa_to_gpuu(*parsed);
  EXPECT_TRUE(raised.ok()) << raised.status().message();
  if (!raised.ok()) return *lowered;
  EXPECT_TRUE(graph::verify(*raised).ok()) << graph::verify(*raised).message();
  Result<std::vector<cpu::HostTensor>> got = cpu::run_graph(*raised, r.inputs);
  EXPECT_TRUE(got.ok()) << got.status().message();
  if (!got.ok()) return *lowered;
  EXPECT_EQ(got->size(), want->size());
  for (size_t i = 0; i < std::min(got->size(), want->size()); ++i) {
    EXPECT_TRUE(Close((*got)[i], (*want)[i], tol)) << "output " << i;
  }
  return *lowered;
}

}  // namespace gpuu::vgf
