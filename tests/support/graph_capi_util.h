// Building a graph and writing its program through the C ABI, for tests of
// the C ABI: one spelling of the calls many tests make in the same order.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "gpuu.h"

namespace gpuu_test {

inline gpuu_attr int_attr(const char* name, int64_t value) {
  gpuu_attr a;
  gpuu_attr_init(&a);
  a.name = name;
  a.kind = GPUU_ATTR_INT;
  a.i = value;
  return a;
}

// Adds a one-output node and returns its output (-1 on failure, reported).
inline int32_t add_node(gpuu_graph* g, const char* op, const char* name, std::vector<int32_t> inputs,
                        std::vector<gpuu_attr> attrs = {}) {
  int32_t out = -1;
  size_t count = 0;
  EXPECT_EQ(gpuu_graph_add_node(g, op, name, inputs.data(), inputs.size(), attrs.data(), attrs.size(), &out, 1, &count),
            GPUU_OK)
      << gpuu_last_error();
  return out;
}

// `g` partitioned as `options` say and written to memory; destroys `g`.
inline std::vector<uint8_t> program_bytes(gpuu_graph* g, const gpuu_partition_options& options) {
  gpuu_partition* partition = nullptr;
  EXPECT_EQ(gpuu_graph_partition(g, &options, &partition), GPUU_OK) << gpuu_last_error();
  void* data = nullptr;
  size_t size = 0;
  EXPECT_EQ(gpuu_program_write_to_memory(g, partition, nullptr, &data, &size), GPUU_OK) << gpuu_last_error();
  std::vector<uint8_t> bytes(static_cast<uint8_t*>(data), static_cast<uint8_t*>(data) + size);
  gpuu_program_bytes_free(data);
  gpuu_partition_destroy(partition);
  gpuu_graph_destroy(g);
  return bytes;
}

}  // namespace gpuu_test
