// The RFC model through the C API, and its host reference. The builder checks
// every status and stops at the first failure so a test can report it.
#include "support/rfc_model_capi.h"

#include <cmath>
#include <cstdio>
#include <string>

namespace {

const int64_t kChannelIndex[3] = {2, 0, 1};
const int64_t kRowIndex[4] = {3, 1, 2, 0};
const int64_t kColPattern[4] = {3, 1, 2, 0};

gpuu_attr ints_attr(const char* name, const int64_t* values, size_t count) {
  gpuu_attr a;
  gpuu_attr_init(&a);
  a.name = name;
  a.kind = GPUU_ATTR_INTS;
  a.ints = values;
  a.count = count;
  return a;
}

gpuu_attr int_attr(const char* name, int64_t value) {
  gpuu_attr a;
  gpuu_attr_init(&a);
  a.name = name;
  a.kind = GPUU_ATTR_INT;
  a.i = value;
  return a;
}

// Adds a one-output node; -1 on failure (gpuu_last_error() has the message).
int32_t node(gpuu_graph* g, const char* op, const char* name, const int32_t* inputs, size_t n_inputs,
             const gpuu_attr* attrs, size_t n_attrs) {
  int32_t out = -1;
  size_t n_out = 0;
  if (gpuu_graph_add_node(g, op, name, inputs, n_inputs, attrs, n_attrs, &out, 1, &n_out) != GPUU_OK || n_out != 1) {
    return -1;
  }
  return out;
}

}  // namespace

gpuu_graph* gpuu_test_build_rfc_model(void) {
  gpuu_graph* g = nullptr;
  if (gpuu_graph_create(&g) != GPUU_OK) return nullptr;
  auto failed = [&]() -> gpuu_graph* {
    gpuu_graph_destroy(g);
    return nullptr;
  };

  const int64_t x_shape[4] = {1, 3, 8, 8};
  int32_t x = -1;
  if (gpuu_graph_add_input(g, "x", GPUU_DTYPE_F32, x_shape, 4, &x) != GPUU_OK) return failed();

  const int64_t channel_shape[1] = {3};
  const int64_t row_shape[1] = {4};
  const int64_t col_shape[4] = {1, 3, 4, 4};
  int64_t col_index[1 * 3 * 4 * 4];
  for (int i = 0; i < 48; ++i) col_index[i] = kColPattern[i % 4];  // pattern.view(1,1,1,4).repeat(1,3,4,1)
  int32_t channel_index = -1, col_gather_index = -1, row_index = -1;
  if (gpuu_graph_add_constant(g, "channel_index", GPUU_DTYPE_I64, channel_shape, 1, kChannelIndex,
                              sizeof(kChannelIndex), &channel_index) != GPUU_OK ||
      gpuu_graph_add_constant(g, "col_gather_index", GPUU_DTYPE_I64, col_shape, 4, col_index, sizeof(col_index),
                              &col_gather_index) != GPUU_OK ||
      gpuu_graph_add_constant(g, "row_index", GPUU_DTYPE_I64, row_shape, 1, kRowIndex, sizeof(kRowIndex),
                              &row_index) != GPUU_OK) {
    return failed();
  }

  const int64_t swap_last[4] = {0, 1, 3, 2};
  const int64_t two_by_two[2] = {2, 2};
  const gpuu_attr transpose_attrs[] = {ints_attr("perm", swap_last, 4)};
  const gpuu_attr pool_attrs[] = {ints_attr("kernel", two_by_two, 2), ints_attr("stride", two_by_two, 2)};
  const gpuu_attr select_channels[] = {int_attr("axis", 1)};
  const gpuu_attr gather_cols[] = {int_attr("axis", 3)};
  const gpuu_attr select_rows[] = {int_attr("axis", 2)};

  int32_t t0 = node(g, "transpose", "transpose_0", &x, 1, transpose_attrs, 1);
  if (t0 < 0) return failed();
  int32_t pool = node(g, "avg_pool2d", "avg_pool2d_0", &t0, 1, pool_attrs, 2);
  if (pool < 0) return failed();
  const int32_t sel0_in[2] = {pool, channel_index};
  int32_t sel0 = node(g, "index_select", "index_select_0", sel0_in, 2, select_channels, 1);
  if (sel0 < 0) return failed();
  const int32_t gather_in[2] = {sel0, col_gather_index};
  int32_t gathered = node(g, "gather", "gather_0", gather_in, 2, gather_cols, 1);
  if (gathered < 0) return failed();
  const int32_t sel1_in[2] = {gathered, row_index};
  int32_t sel1 = node(g, "index_select", "index_select_1", sel1_in, 2, select_rows, 1);
  if (sel1 < 0) return failed();
  int32_t s = node(g, "sin", "sin_0", &sel1, 1, nullptr, 0);
  if (s < 0) return failed();
  int32_t c = node(g, "cos", "cos_0", &sel1, 1, nullptr, 0);
  if (c < 0) return failed();
  int32_t r = node(g, "reciprocal", "reciprocal_0", &c, 1, nullptr, 0);
  if (r < 0) return failed();
  const int32_t mul_in[2] = {s, r};
  int32_t m = node(g, "mul", "mul_0", mul_in, 2, nullptr, 0);
  if (m < 0) return failed();
  int32_t y = node(g, "transpose", "transpose_1", &m, 1, transpose_attrs, 1);
  if (y < 0) return failed();
  if (gpuu_graph_mark_output(g, y) != GPUU_OK) return failed();
  return g;
}

void gpuu_test_rfc_model_reference(const float* x, float* y) {
  // Index helpers for [1,3,H,W] row-major tensors.
  auto at8 = [](int c, int h, int w) { return (c * 8 + h) * 8 + w; };
  double pooled[3][4][4];
  for (int c = 0; c < 3; ++c) {
    for (int i = 0; i < 4; ++i) {
      for (int j = 0; j < 4; ++j) {
        // transpose(-1,-2) then 2x2 average: t[c][h][w] = x[c][w][h].
        double sum = 0.0;
        for (int a = 0; a < 2; ++a) {
          for (int b = 0; b < 2; ++b) sum += x[at8(c, 2 * j + b, 2 * i + a)];
        }
        pooled[c][i][j] = sum / 4.0;
      }
    }
  }
  double u[3][4][4];
  for (int c = 0; c < 3; ++c) {
    for (int i = 0; i < 4; ++i) {
      for (int k = 0; k < 4; ++k) {
        // index_select(1, channel) -> gather(3, cols) -> index_select(2, rows).
        double v = pooled[kChannelIndex[c]][kRowIndex[i]][kColPattern[k]];
        u[c][i][k] = std::sin(v) * (1.0 / std::cos(v));
      }
    }
  }
  for (int c = 0; c < 3; ++c) {
    for (int i = 0; i < 4; ++i) {
      for (int j = 0; j < 4; ++j) y[(c * 4 + i) * 4 + j] = static_cast<float>(u[c][j][i]);
    }
  }
}
