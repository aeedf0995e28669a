// Where grid_sample reads from, as PyTorch's grid_sampler_2d computes it on
// the CPU (f32 arithmetic, the formulas of its vectorized kernel): the modes,
// the source coordinate along one axis (unnormalize, then border clipping or
// reflection) and the cubic weights. The registry parses the modes here, the
// CPU kernel samples with these; shaders/grid_sample.comp mirrors them in GLSL.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

namespace gpuu::graph {

// torch's interpolation_mode and padding_mode codes.
enum class GridSampleMode : uint8_t { kBilinear = 0, kNearest = 1, kBicubic = 2 };
enum class GridSamplePadding : uint8_t { kZeros = 0, kBorder = 1, kReflection = 2 };

constexpr const char* kGridSampleModeNames = "\"bilinear\", \"nearest\" or \"bicubic\"";
constexpr const char* kGridSamplePaddingNames = "\"zeros\", \"border\" or \"reflection\"";

// false when `name` is not a mode.
inline bool parse_grid_sample_mode(const std::string& name, GridSampleMode* mode) {
  if (name == "bilinear") *mode = GridSampleMode::kBilinear;
  else if (name == "nearest") *mode = GridSampleMode::kNearest;
  else if (name == "bicubic") *mode = GridSampleMode::kBicubic;
  else return false;
  return true;
}

inline bool parse_grid_sample_padding(const std::string& name, GridSamplePadding* padding) {
  if (name == "zeros") *padding = GridSamplePadding::kZeros;
  else if (name == "border") *padding = GridSamplePadding::kBorder;
  else if (name == "reflection") *padding = GridSamplePadding::kReflection;
  else return false;
  return true;
}

// One axis of the input (`size` pixels): grid values in [-1, 1] map onto it.
class GridSampleAxis {
 public:
  GridSampleAxis(int64_t size, bool align_corners, GridSamplePadding padding)
      : size_(size),
        padding_(padding),
        max_(static_cast<float>(size - 1)),
        // align_corners: -1 and 1 are the centres of the end pixels; else their outer edges.
        scale_(align_corners ? static_cast<float>(size - 1) / 2 : static_cast<float>(size) / 2),
        shift_(align_corners ? 0.0f : 0.5f),
        low_(align_corners ? 0.0f : -0.5f),
        twice_span_(align_corners ? static_cast<float>(size - 1) * 2 : static_cast<float>(size) * 2) {}

  // The grid value in pixels, before padding.
  float unnormalize(float g) const { return (g + 1.0f) * scale_ - shift_; }

  // A pixel coordinate after the padding rule (zeros: as it is; border:
  // clipped to the input, NaN to 0; reflection: mirrored at the edges
  // (align_corners: the end pixels' centres, else their outer edges), then clipped).
  float pad(float v) const {
    if (padding_ == GridSamplePadding::kZeros) return v;
    if (padding_ == GridSamplePadding::kReflection) {
      if (twice_span_ <= 0.0f) return 0.0f;
      float in = std::fabs(v - low_);
      float extra = in - std::trunc(in / twice_span_) * twice_span_;
      v = std::min(extra, twice_span_ - extra) + low_;
    }
    return std::min(max_, v > 0.0f ? v : 0.0f);
  }

  float source(float g) const { return pad(unnormalize(g)); }

  // The pixel index of an integral coordinate `v` (a floor, round or tap), or
  // -1 outside the input: far coordinates never reach an integer conversion.
  int64_t index(float v) const { return v >= 0.0f && v < static_cast<float>(size_) ? static_cast<int64_t>(v) : -1; }

 private:
  int64_t size_;
  GridSamplePadding padding_;
  float max_, scale_, shift_, low_, twice_span_;
};

// Bicubic weights of the taps at -1, 0, 1, 2 from a point `t` in [0, 1) past
// tap 0 (cubic convolution with A = -0.75, as torch's upsampling).
inline void grid_sample_cubic_weights(float t, float w[4]) {
  const float a = -0.75f;
  auto outer = [a](float x) { return ((a * x - 5.0f * a) * x + 8.0f * a) * x - 4.0f * a; };  // 1 < x < 2
  auto inner = [a](float x) { return ((a + 2.0f) * x - (a + 3.0f)) * x * x + 1.0f; };        // x <= 1
  w[0] = outer(t + 1.0f);
  w[1] = inner(t);
  w[2] = inner(1.0f - t);
  w[3] = outer(2.0f - t);
}

}  // namespace gpuu::graph
