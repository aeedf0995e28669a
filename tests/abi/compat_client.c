/* A client of gpuu 0.2, built against the frozen 0.2 header
 * (tests/abi/frozen/gpuu-0.2.h, found here as "gpuu.h") and run on the current
 * libgpuu.so: it writes, loads and runs the RFC program with its smaller
 * structs, checks the output against the host reference, and checks that a
 * struct_size below the 0.2 size is refused by name while a larger one from a
 * "newer" client is read up to what the library knows. Exit status 0: all held. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuu.h"
#include "support/rfc_model_capi.h"

_Static_assert(GPUU_VERSION_MAJOR == 0 && GPUU_VERSION_MINOR == 2, "built against the frozen 0.2 header");

static int failures = 0;

#define CHECK(cond, ...)                                  \
  do {                                                    \
    if (!(cond)) {                                        \
      fprintf(stderr, "FAILED %s:%d: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                       \
      fprintf(stderr, " [last error: %s]\n", gpuu_last_error()); \
      ++failures;                                         \
    }                                                     \
  } while (0)

#define CANARY 0x5AFEC0DE5AFEC0DEull

int main(void) {
  CHECK(gpuu_version() >= GPUU_VERSION, "library %u is older than the header", gpuu_version());

  /* *_init writes this header's size, not the library's (a canary follows). */
  struct {
    gpuu_program_write_options o;
    unsigned long long canary;
  } write = {.canary = CANARY};
  gpuu_program_write_options_init(&write.o);
  CHECK(write.canary == CANARY, "gpuu_program_write_options_init wrote past the 0.2 struct");
  CHECK(write.o.struct_size == sizeof(write.o), "struct_size %u, want %zu", write.o.struct_size, sizeof(write.o));
  write.o.token = "compat_0_2";

  gpuu_graph* graph = gpuu_test_build_rfc_model();
  CHECK(graph != NULL, "building the RFC model");
  gpuu_partition* partition = NULL;
  CHECK(gpuu_graph_partition(graph, NULL, &partition) == GPUU_OK, "partitioning");
  void* bytes = NULL;
  size_t size = 0;
  CHECK(gpuu_program_write_to_memory(graph, partition, &write.o, &bytes, &size) == GPUU_OK,
        "writing with 0.2-sized options");
  gpuu_program* program = NULL;
  CHECK(gpuu_program_load_memory(bytes, size, &program) == GPUU_OK, "loading");
  gpuu_program_bytes_free(bytes);
  if (failures) return 1;

  gpuu_context_overrides overrides;
  gpuu_context_overrides_init(&overrides);
  overrides.has_sync_mode = 1;
  overrides.sync_mode = GPUU_SYNC_QUEUE_WAIT_IDLE;
  struct {
    gpuu_session_options o;
    unsigned long long canary;
  } session_options = {.canary = CANARY};
  gpuu_session_options_init(&session_options.o);
  CHECK(session_options.canary == CANARY, "gpuu_session_options_init wrote past the 0.2 struct");
  session_options.o.overrides = &overrides;

  /* Below the 0.2 size: refused, naming the field. */
  gpuu_session_options small = session_options.o;
  small.struct_size = 8;
  gpuu_session* session = NULL;
  CHECK(gpuu_session_create(program, &small, &session) == GPUU_ERROR_INVALID_ARGUMENT, "struct_size 8 accepted");
  CHECK(strstr(gpuu_last_error(), "options->struct_size 8") != NULL, "the refusal does not name struct_size");

  /* A newer client's larger struct, made as a newer client makes it: init
   * with its whole size gives every field this library knows its default
   * (and zeros past them), the client sets the fields it knows, and bytes past
   * what this library knows are ignored. This client cannot know where the
   * library's fields end (0.4 and 0.6 added some right after the 0.2 ones), so
   * its unknown tail starts well after: `later` stays as init wrote it. */
  struct {
    gpuu_session_options o;
    unsigned char later[192];
    unsigned char tail[48];
  } newer;
  gpuu_session_options_init_sized(&newer.o, sizeof(newer));
  CHECK(newer.o.struct_size == sizeof(newer), "init did not take the newer client's size");
  newer.o.overrides = session_options.o.overrides;
  newer.o.device = session_options.o.device;
  newer.o.vgf_path = session_options.o.vgf_path;
  memset(newer.tail, 0xA5, sizeof(newer.tail));
  CHECK(gpuu_session_create(program, &newer.o, &session) == GPUU_OK, "creating the session with an oversized struct");
  gpuu_program_release(program);
  if (failures) return 1;
  CHECK(gpuu_session_sync_mode(session) == GPUU_SYNC_QUEUE_WAIT_IDLE, "the override through the pointer was lost");

  struct {
    gpuu_tensor_info info;
    unsigned char tail[16];
  } out_info;
  memset(&out_info, 0xA5, sizeof(out_info));
  out_info.info.struct_size = sizeof(out_info);
  CHECK(gpuu_session_output_info(session, 0, &out_info.info) == GPUU_OK, "output info");
  CHECK(out_info.info.struct_size == sizeof(out_info), "the caller's struct_size was not kept");
  CHECK(out_info.tail[0] == 0xA5 && out_info.tail[15] == 0xA5, "bytes past the library's struct were written");
  CHECK(out_info.info.byte_size == 48 * sizeof(float), "output byte size %zu", out_info.info.byte_size);
  gpuu_tensor_info tiny;
  tiny.struct_size = 4;
  CHECK(gpuu_session_input_info(session, 0, &tiny) == GPUU_ERROR_INVALID_ARGUMENT, "struct_size 4 accepted");
  CHECK(strstr(gpuu_last_error(), "struct_size 4") != NULL, "the refusal does not name struct_size");

  float x[192], y[48], want[48];
  for (int i = 0; i < 192; ++i) x[i] = (float)(-0.8 + 1.6 * i / 191.0);
  CHECK(gpuu_session_set_input(session, 0, x, sizeof(x)) == GPUU_OK, "set input");
  CHECK(gpuu_session_execute(session) == GPUU_OK, "execute");
  CHECK(gpuu_session_get_output(session, 0, y, sizeof(y)) == GPUU_OK, "get output");
  gpuu_test_rfc_model_reference(x, want);
  double worst = 0;
  for (int i = 0; i < 48; ++i) {
    double e = fabs(y[i] - want[i]) / (1 + fabs(want[i]));
    if (e > worst) worst = e;
  }
  CHECK(worst < 2e-5, "max relative error %g", worst);
  gpuu_execute_stats stats;
  memset(&stats, 0, sizeof(stats));
  stats.struct_size = sizeof(stats);
  CHECK(gpuu_session_last_execute_stats(session, &stats) == GPUU_OK, "execute stats");
  CHECK(stats.delegate_submits >= 1, "no delegate was submitted");
  gpuu_session_destroy(session);
  gpuu_partition_destroy(partition);
  gpuu_graph_destroy(graph);
  if (failures) return 1;
  printf("OK: a 0.2 client ran the RFC program on libgpuu %s (max relative error %.2g, %u submits)\n",
         gpuu_version_string(), worst, stats.delegate_submits);
  return 0;
}
