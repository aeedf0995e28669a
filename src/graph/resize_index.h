// Where resize reads from, as PyTorch's upsample_nearest2d /
// _upsample_nearest_exact2d / upsample_bilinear2d compute it (float
// arithmetic, their identity and 2x shortcuts included). The CPU kernel and
// the TOSA lowering both use these; shaders/resize.comp mirrors them in GLSL.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

namespace gpuu::graph {

enum class ResizeMode : uint8_t { kNearest = 0, kNearestExact = 1, kBilinear = 2 };

// false when `name` is not a resize mode.
inline bool parse_resize_mode(const std::string& name, ResizeMode* mode) {
  if (name == "nearest") *mode = ResizeMode::kNearest;
  else if (name == "nearest_exact") *mode = ResizeMode::kNearestExact;
  else if (name == "bilinear") *mode = ResizeMode::kBilinear;
  else return false;
  return true;
}

// The source-coordinate step along one axis (torch's area_pixel_compute_scale);
// `user_scale` <= 0 means none was given.
inline float resize_scale(int64_t in, int64_t out, bool align_corners, double user_scale) {
  if (align_corners) return out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1) : 0.0f;
  if (user_scale > 0.0) return static_cast<float>(1.0 / user_scale);
  return static_cast<float>(in) / static_cast<float>(out);
}

// Output position `dst` reads i0 (nearest modes) or blends i0 and i1 with
// weight `frac` on i1 (bilinear).
struct ResizeTap {
  int64_t i0 = 0, i1 = 0;
  float frac = 0.0f;
};

inline ResizeTap resize_tap(ResizeMode mode, bool align_corners, int64_t in, int64_t out, float scale, int64_t dst) {
  ResizeTap t;
  if (mode == ResizeMode::kNearest) {
    if (out == in) {
      t.i0 = dst;
    } else if (out == 2 * in) {
      t.i0 = dst >> 1;
    } else {
      t.i0 = std::min(static_cast<int64_t>(std::floor(static_cast<float>(dst) * scale)), in - 1);
    }
  } else if (mode == ResizeMode::kNearestExact) {
    float pos = static_cast<float>(static_cast<double>(dst) + 0.5) * scale;
    t.i0 = std::min(static_cast<int64_t>(std::floor(pos)), in - 1);
  } else {
    if (out == in) {
      t.i0 = t.i1 = dst;
    } else {
      float src;
      if (align_corners) {
        src = scale * static_cast<float>(dst);
      } else {
        // volatile keeps the product rounded on its own (no fused multiply-subtract), as in torch.
        volatile float scaled = scale * (static_cast<float>(dst) + 0.5f);
        src = std::max(scaled - 0.5f, 0.0f);
      }
      t.i0 = std::min(static_cast<int64_t>(std::floor(src)), in - 1);
      t.frac = std::min(std::max(src - static_cast<float>(t.i0), 0.0f), 1.0f);
      t.i1 = t.i0 + (t.i0 < in - 1 ? 1 : 0);
    }
    return t;
  }
  t.i1 = t.i0;
  return t;
}

}  // namespace gpuu::graph
