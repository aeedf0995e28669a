/* Writes the RFC program (built with the C graph API, partitioned AUTO, so VGF
 * and Vulkan delegates) and its test data into DIR: rfc.gpuu, rfc_input.bin
 * (input 0, f32) and rfc_reference.bin (output 0 by the host reference in
 * double precision, as f32): the fixture of the FFI harness test. */
#include <stdio.h>

#include "gpuu.h"
#include "support/rfc_model_capi.h"

static int write_bytes(const char* dir, const char* name, const void* data, size_t size) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  FILE* f = fopen(path, "wb");
  if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0) {
    fprintf(stderr, "write_rfc_fixture: cannot write %s\n", path);
    return 1;
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: write_rfc_fixture DIR\n");
    return 2;
  }
  gpuu_graph* graph = gpuu_test_build_rfc_model();
  gpuu_partition* partition = NULL;
  char path[4096];
  snprintf(path, sizeof(path), "%s/rfc.gpuu", argv[1]);
  if (!graph || gpuu_graph_partition(graph, NULL, &partition) != GPUU_OK ||
      gpuu_program_write(graph, partition, NULL, path) != GPUU_OK) {
    fprintf(stderr, "write_rfc_fixture: %s\n", gpuu_last_error());
    return 1;
  }
  gpuu_partition_destroy(partition);
  gpuu_graph_destroy(graph);
  float x[192], y[48];
  for (int i = 0; i < 192; ++i) x[i] = (float)(-0.8 + 1.6 * i / 191.0);
  gpuu_test_rfc_model_reference(x, y);
  return write_bytes(argv[1], "rfc_input.bin", x, sizeof(x)) || write_bytes(argv[1], "rfc_reference.bin", y, sizeof(y));
}
