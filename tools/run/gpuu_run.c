/*
 * gpuu-run: runs a gpuu program on raw little-endian tensors, the counterpart
 * of ExecuTorch's executor_runner. Written against gpuu.h alone.
 *
 *   gpuu-run --model_path P --input_list a.bin[,b.bin] --output_path OUT
 *            [--num_executions N] [--device D] [--sync_mode M]
 *            [--token T --group_id G --mode M] [--vgf_path P]
 *            [--backend_option ID:KEY=VALUE]... [--profile TRACE.json]
 *            [--state_path PREFIX] [--pipeline_cache FILE] [--quiet]
 * (--help lists the names M and P take, as gpuu.h's gpuu_*_name give them.)
 *
 * --backend_option sets one load-time option of a backend (repeatable):
 * `VgfBackend:data_graph_path=native` is what --vgf_path native says.
 * `gpuu-inspect --backends` lists every backend's options.
 *
 * --profile profiles the executes (gpuu_session_options.profile: a GPU
 * timestamp after every dispatch, which serialises the GPU) and, after the
 * last one, writes its Chrome trace (chrome://tracing, Perfetto) to
 * TRACE.json and prints where its time went: the measured peaks, the plan's
 * steps, a table per op and the top dispatches (gpuu_session_profile_text).
 *
 * Output i goes to OUT when the program has one output, else OUT.<i>.
 * --state_path writes each program state (a tensor the program keeps across
 * executes, such as a KV cache) as it is after the last execute to
 * PREFIX.<state name>; the executes run on one session, so a state carries
 * from one to the next.
 * --pipeline_cache keeps the driver's compiled pipelines in FILE
 * (gpuu_session_options.pipeline_cache_path): a later run on the same device
 * and driver starts without compiling them again.
 * The run prints the session's create time and its first execute apart from
 * the others (the start-up a cache saves shows there).
 * Delegates log their init/execute/destroy lines as "[VGF] ...", "[Vulkan] ...".
 */
#define _POSIX_C_SOURCE 200809L
#include <gpuu.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
  const char* model_path;
  const char* input_list;
  const char* output_path;
  long num_executions;
  const char* device;
  const char* sync_mode;
  const char* token;
  const char* group_id;
  const char* mode;
  const char* vgf_path;
  gpuu_backend_option* backend_options; /* one per --backend_option, strings in backend_option_text */
  char** backend_option_text;
  size_t backend_option_count;
  const char* profile_path;
  const char* state_path;
  const char* pipeline_cache;
  int quiet;
} options;

/* Writes every name of a gpuu.h enum, "a|b|c", through its gpuu_*_name function. */
#define PRINT_NAMES(to, name_of, type)                                                       \
  for (int value_ = 0; name_of((type)value_) != NULL; ++value_) {                           \
    fprintf((to), "%s%s", value_ ? "|" : "", name_of((type)value_));                         \
  }

static void usage(FILE* to) {
  fprintf(to,
          "usage: gpuu-run --model_path P --input_list a.bin[,b.bin] --output_path OUT\n"
          "                [--num_executions N] [--device D] [--sync_mode ");
  PRINT_NAMES(to, gpuu_sync_mode_name, gpuu_sync_mode);
  fprintf(to, "]\n                [--token T] [--group_id G] [--mode ");
  PRINT_NAMES(to, gpuu_context_mode_name, gpuu_context_mode);
  fprintf(to, "]\n                [--vgf_path ");
  PRINT_NAMES(to, gpuu_vgf_path_name, gpuu_vgf_path);
  fprintf(to, "] [--backend_option ID:KEY=VALUE]... [--profile TRACE.json]\n"
              "                [--state_path PREFIX] [--pipeline_cache FILE] [--quiet]\n");
}

static void on_log(void* user, gpuu_log_level level, const char* component, const char* message) {
  const options* o = (const options*)user;
  int delegate_line = strcmp(component, "VGF") == 0 || strcmp(component, "Vulkan") == 0 || strcmp(component, "CPU") == 0;
  if (delegate_line && level == GPUU_LOG_INFO) {
    if (!o->quiet) printf("[%s] %s\n", component, message);
  } else if (level <= GPUU_LOG_WARN) {
    fprintf(stderr, "gpuu [%s] %s: %s\n", level == GPUU_LOG_ERROR ? "error" : "warn", component, message);
  }
}

/* Splits "ID:KEY=VALUE" (a copy of `text`, kept in o->backend_option_text)
 * into the next backend option. ID and KEY must not be empty. */
static int add_backend_option(const char* text, options* o) {
  char* copy = strdup(text);
  char* colon = copy ? strchr(copy, ':') : NULL;
  char* equals = colon ? strchr(colon + 1, '=') : NULL;
  if (!equals || colon == copy || equals == colon + 1) {
    fprintf(stderr, "gpuu-run: --backend_option takes ID:KEY=VALUE, got '%s'\n", text);
    free(copy);
    return 0;
  }
  *colon = '\0';
  *equals = '\0';
  gpuu_backend_option* b = &o->backend_options[o->backend_option_count];
  gpuu_backend_option_init(b);
  b->backend = copy;
  b->key = colon + 1;
  b->value = equals + 1;
  o->backend_option_text[o->backend_option_count++] = copy;
  return 1;
}

static void free_options(options* o) {
  for (size_t i = 0; i < o->backend_option_count; ++i) free(o->backend_option_text[i]);
  free(o->backend_option_text);
  free(o->backend_options);
}

static int parse_args(int argc, char** argv, options* o) {
  memset(o, 0, sizeof(*o));
  o->num_executions = 1;
  /* At most one option per argument. */
  o->backend_options = calloc((size_t)argc, sizeof(gpuu_backend_option));
  o->backend_option_text = calloc((size_t)argc, sizeof(char*));
  if (!o->backend_options || !o->backend_option_text) {
    fprintf(stderr, "gpuu-run: out of memory\n");
    return 0;
  }
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    const char** slot = NULL;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage(stdout);
      exit(0);
    }
    if (strcmp(a, "--quiet") == 0) {
      o->quiet = 1;
      continue;
    }
    if (strcmp(a, "--model_path") == 0) slot = &o->model_path;
    else if (strcmp(a, "--input_list") == 0) slot = &o->input_list;
    else if (strcmp(a, "--output_path") == 0) slot = &o->output_path;
    else if (strcmp(a, "--device") == 0) slot = &o->device;
    else if (strcmp(a, "--sync_mode") == 0) slot = &o->sync_mode;
    else if (strcmp(a, "--token") == 0) slot = &o->token;
    else if (strcmp(a, "--group_id") == 0) slot = &o->group_id;
    else if (strcmp(a, "--mode") == 0) slot = &o->mode;
    else if (strcmp(a, "--vgf_path") == 0) slot = &o->vgf_path;
    else if (strcmp(a, "--profile") == 0) slot = &o->profile_path;
    else if (strcmp(a, "--state_path") == 0) slot = &o->state_path;
    else if (strcmp(a, "--pipeline_cache") == 0) slot = &o->pipeline_cache;
    else if (strcmp(a, "--backend_option") == 0) {
      if (i + 1 >= argc) {
        fprintf(stderr, "gpuu-run: %s needs a value\n", a);
        return 0;
      }
      if (!add_backend_option(argv[++i], o)) return 0;
      continue;
    } else if (strcmp(a, "--num_executions") == 0) {
      if (i + 1 >= argc) break;
      char* end = NULL;
      o->num_executions = strtol(argv[++i], &end, 10);
      if (*end || o->num_executions < 1) {
        fprintf(stderr, "gpuu-run: --num_executions takes a positive integer, got '%s'\n", argv[i]);
        return 0;
      }
      continue;
    } else {
      fprintf(stderr, "gpuu-run: unknown option '%s'\n", a);
      usage(stderr);
      return 0;
    }
    if (i + 1 >= argc) {
      fprintf(stderr, "gpuu-run: %s needs a value\n", a);
      return 0;
    }
    *slot = argv[++i];
  }
  if (!o->model_path) {
    fprintf(stderr, "gpuu-run: --model_path is required\n");
    usage(stderr);
    return 0;
  }
  return 1;
}

/* 1 when a gpuu_*_from_name call parsed `text`, else says so and gives 0. */
static int parsed(gpuu_status status, const char* what, const char* text) {
  if (status == GPUU_OK) return 1;
  fprintf(stderr, "gpuu-run: unknown %s '%s'\n", what, text);
  return 0;
}

/* Reads exactly `size` bytes from `path` into a new buffer. */
static void* read_exact(const char* path, size_t size) {
  FILE* f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "gpuu-run: cannot open input '%s'\n", path);
    return NULL;
  }
  fseek(f, 0, SEEK_END);
  long have = ftell(f);
  fseek(f, 0, SEEK_SET);
  if (have < 0 || (size_t)have != size) {
    fprintf(stderr, "gpuu-run: input '%s' has %ld bytes, the program expects %zu\n", path, have, size);
    fclose(f);
    return NULL;
  }
  void* data = malloc(size ? size : 1);
  if (size && fread(data, 1, size, f) != size) {
    fprintf(stderr, "gpuu-run: reading '%s' failed\n", path);
    free(data);
    data = NULL;
  }
  fclose(f);
  return data;
}

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int compare_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static int fail(const char* what, gpuu_status status) {
  fprintf(stderr, "gpuu-run: %s failed (%s): %s\n", what, gpuu_status_string(status), gpuu_last_error());
  return 1;
}

/* The last execute's Chrome trace to `path`, and its table to stdout. */
static int write_profile(const gpuu_session* session, const char* path) {
  const char* trace = NULL;
  const char* text = NULL;
  gpuu_status s = gpuu_session_profile_trace(session, &trace);
  if (s != GPUU_OK) return fail("reading the profile", s);
  FILE* f = fopen(path, "wb");
  size_t size = strlen(trace);
  if (!f || fwrite(trace, 1, size, f) != size) {
    fprintf(stderr, "gpuu-run: cannot write the profile '%s'\n", path);
    if (f) fclose(f);
    return 1;
  }
  fclose(f);
  s = gpuu_session_profile_text(session, 10, &text);
  if (s != GPUU_OK) return fail("reading the profile", s);
  printf("\n%s\nChrome trace (chrome://tracing, Perfetto) -> %s\n", text, path);
  return 0;
}

/* Everything after the arguments parsed; `opts` keeps its backend options. */
/* Reads each of the session's outputs (or states) through `info` and `read`
 * and, where `prefix` is set, writes it to a file and says so: `what` is
 * "output" (to PREFIX, or PREFIX.<i> where there are several) or "state"
 * (to PREFIX.<state name>). Returns 0, or 1 after saying what failed. */
typedef gpuu_status (*info_fn)(const gpuu_session*, size_t, gpuu_tensor_info*);
typedef gpuu_status (*read_fn)(const gpuu_session*, size_t, void*, size_t);
static int save_tensors(const gpuu_session* session, const char* what, size_t count, info_fn info_of, read_fn read,
                        const char* prefix) {
  int by_name = strcmp(what, "state") == 0;
  for (size_t i = 0; i < count; ++i) {
    gpuu_tensor_info info;
    info.struct_size = sizeof(info);
    info_of(session, i, &info);
    void* data = malloc(info.byte_size ? info.byte_size : 1);
    gpuu_status s = read(session, i, data, info.byte_size);
    int rc = s != GPUU_OK ? fail(by_name ? "reading a state" : "reading an output", s) : 0;
    if (rc == 0 && prefix) {
      char path[4096];
      if (by_name) {
        snprintf(path, sizeof(path), "%s.%s", prefix, info.name);
      } else if (count == 1) {
        snprintf(path, sizeof(path), "%s", prefix);
      } else {
        snprintf(path, sizeof(path), "%s.%zu", prefix, i);
      }
      FILE* f = fopen(path, "wb");
      rc = !f || fwrite(data, 1, info.byte_size, f) != info.byte_size;
      if (f && fclose(f) != 0) rc = 1;
      if (rc) {
        fprintf(stderr, "gpuu-run: cannot write %s '%s'\n", what, path);
      } else {
        printf("%s %zu '%s' (%zu bytes) -> %s\n", what, i, info.name, info.byte_size, path);
      }
    }
    free(data);
    if (rc) return 1;
  }
  return 0;
}

static int run(const options* opts) {
  options o = *opts; /* the log callback's copy: execution makes it quiet */
  gpuu_set_log_callback(on_log, &o, GPUU_LOG_INFO);

  gpuu_context_overrides overrides;
  gpuu_context_overrides_init(&overrides);
  gpuu_device_options device;
  gpuu_device_options_init(&device);
  device.device = o.device;
  gpuu_session_options so;
  gpuu_session_options_init(&so);
  so.overrides = &overrides;
  so.device = &device;
  so.backend_options = o.backend_options;
  so.backend_option_count = o.backend_option_count;
  so.profile = o.profile_path != NULL;
  so.pipeline_cache_path = o.pipeline_cache;
  if (o.sync_mode) {
    if (!parsed(gpuu_sync_mode_from_name(o.sync_mode, &overrides.sync_mode), "sync mode", o.sync_mode)) return 2;
    overrides.has_sync_mode = 1;
  }
  if (o.vgf_path && !parsed(gpuu_vgf_path_from_name(o.vgf_path, &so.vgf_path), "VGF path", o.vgf_path)) return 2;
  if (o.mode) {
    if (!parsed(gpuu_context_mode_from_name(o.mode, &overrides.mode), "context mode", o.mode)) return 2;
    overrides.has_mode = 1;
  }
  overrides.token = o.token;
  if (o.group_id) {
    char* end = NULL;
    overrides.group_id = strtoll(o.group_id, &end, 10);
    if (*end) {
      fprintf(stderr, "gpuu-run: --group_id takes an integer, got '%s'\n", o.group_id);
      return 2;
    }
    overrides.has_group_id = 1;
  }

  gpuu_program* program = NULL;
  gpuu_status s = gpuu_program_load_file(o.model_path, &program);
  if (s != GPUU_OK) return fail("loading the program", s);
  gpuu_session* session = NULL;
  double create_start = now_us();
  s = gpuu_session_create(program, &so, &session);
  double create_us = now_us() - create_start;
  gpuu_program_release(program); /* the session keeps its own reference */
  if (s != GPUU_OK) return fail("creating the session", s);

  int rc = 0;
  size_t n_inputs = gpuu_session_input_count(session);
  char* list = o.input_list ? strdup(o.input_list) : NULL;
  char* cursor = list;
  for (size_t i = 0; i < n_inputs && rc == 0; ++i) {
    gpuu_tensor_info info;
    info.struct_size = sizeof(info);
    gpuu_session_input_info(session, i, &info);
    char* path = cursor;
    if (cursor) {
      char* comma = strchr(cursor, ',');
      if (comma) *comma = '\0';
      cursor = comma ? comma + 1 : NULL;
    }
    if (!path || !*path) {
      fprintf(stderr, "gpuu-run: the program has %zu inputs; --input_list names fewer\n", n_inputs);
      rc = 2;
      break;
    }
    void* data = read_exact(path, info.byte_size);
    if (!data) {
      rc = 1;
      break;
    }
    s = gpuu_session_set_input(session, i, data, info.byte_size);
    free(data);
    if (s != GPUU_OK) rc = fail("setting an input", s);
  }
  if (rc == 0 && cursor && *cursor) {
    fprintf(stderr, "gpuu-run: --input_list names more files than the program's %zu inputs\n", n_inputs);
    rc = 2;
  }
  free(list);

  double* times = rc == 0 ? calloc((size_t)o.num_executions, sizeof(double)) : NULL;
  for (long e = 0; rc == 0 && e < o.num_executions; ++e) {
    double t0 = now_us();
    s = gpuu_session_execute(session);
    times[e] = now_us() - t0;
    if (s != GPUU_OK) rc = fail("execute", s);
    o.quiet = o.quiet || e == 0; /* log the delegates' lines once */
  }

  if (rc == 0) {
    rc = save_tensors(session, "output", gpuu_session_output_count(session), gpuu_session_output_info,
                      gpuu_session_get_output, o.output_path);
  }
  /* States come to the host only when asked for. */
  if (rc == 0 && o.state_path) {
    rc = save_tensors(session, "state", gpuu_session_state_count(session), gpuu_session_state_info,
                      gpuu_session_get_state, o.state_path);
  }

  if (rc == 0) {
    /* Start-up apart from the steady state: pipelines, caches and first-touch costs show here. */
    printf("session create %.1f ms, first execute %.1f us\n", create_us / 1e3, times[0]);
    qsort(times, (size_t)o.num_executions, sizeof(double), compare_double);
    long n = o.num_executions;
    double median = n % 2 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
    long p99_index = (long)((double)(n - 1) * 0.99 + 0.5);
    gpuu_execute_stats stats;
    stats.struct_size = sizeof(stats);
    gpuu_session_last_execute_stats(session, &stats);
    printf("executions: %ld, median %.1f us, p99 %.1f us, min %.1f us (host wall time per execute; "
           "%u submits, %u host waits, sync %s)\n",
           n, median, times[p99_index], times[0], stats.delegate_submits, stats.host_waits,
           gpuu_sync_mode_name(gpuu_session_sync_mode(session)));
  }
  free(times);
  if (rc == 0 && o.profile_path) rc = write_profile(session, o.profile_path);
  o.quiet = 0; /* show the destroy lines */
  gpuu_session_destroy(session);
  return rc;
}

int main(int argc, char** argv) {
  options o;
  int rc = parse_args(argc, argv, &o) ? run(&o) : 2;
  free_options(&o);
  return rc;
}
