/* gpuu through libffi and the ABI manifest alone, as a ctypes/JNA/Node/Ruby FFI
 * binding would see it: no gpuu.h. libgpuu.so is opened with dlopen, every
 * call's signature comes from gpuu_abi.json, and structs are byte buffers laid
 * out by the manifest's offsets and sizes. Runs a program end to end and
 * compares its first output with a reference.
 *
 *   gpuu_ffi_harness LIBGPUU ABI_JSON PROGRAM INPUT.bin REFERENCE.bin TOLERANCE
 *
 * INPUT.bin is input 0's bytes; REFERENCE.bin output 0's as f32. The output
 * passes when |y - ref| <= TOLERANCE * (1 + |ref|) everywhere. */
#include <dlfcn.h>
#include <ffi.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void die(const char* what, const char* detail) {
  fprintf(stderr, "gpuu_ffi_harness: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
  exit(1);
}

/* ---- a small JSON reader: the whole document as a tree ------------------ */

typedef enum { J_NULL, J_BOOL, J_NUMBER, J_STRING, J_ARRAY, J_OBJECT } json_kind;

typedef struct json {
  json_kind kind;
  double number;
  char* string;         /* J_STRING: the text */
  char* key;            /* set when this node is an object member */
  struct json* child;   /* first element or member */
  struct json* next;    /* next sibling */
} json;

typedef struct {
  const char* p;
} json_reader;

static void skip_space(json_reader* r) {
  while (*r->p == ' ' || *r->p == '\n' || *r->p == '\t' || *r->p == '\r') ++r->p;
}

static char* read_string(json_reader* r) {
  if (*r->p != '"') die("manifest", "expected a string");
  size_t cap = 16, n = 0;
  char* out = malloc(cap);
  for (++r->p; *r->p != '"'; ++r->p) {
    if (!*r->p) die("manifest", "unterminated string");
    char c = *r->p;
    if (c == '\\') {
      c = *++r->p;
      if (c == 'n') c = '\n';
      else if (c == 't') c = '\t';
      else if (c == 'u') { /* the manifest is ASCII: keep code points below 128 only */
        char hex[5] = {0};
        memcpy(hex, r->p + 1, 4);
        c = (char)strtol(hex, NULL, 16);
        r->p += 4;
      }
    }
    if (n + 2 > cap) out = realloc(out, cap *= 2);
    out[n++] = c;
  }
  ++r->p;
  out[n] = 0;
  return out;
}

static json* read_value(json_reader* r) {
  skip_space(r);
  json* v = calloc(1, sizeof(json));
  if (*r->p == '{' || *r->p == '[') {
    const char close = *r->p == '{' ? '}' : ']';
    v->kind = close == '}' ? J_OBJECT : J_ARRAY;
    ++r->p;
    json** tail = &v->child;
    skip_space(r);
    while (*r->p != close) {
      char* key = NULL;
      if (v->kind == J_OBJECT) {
        key = read_string(r);
        skip_space(r);
        if (*r->p++ != ':') die("manifest", "expected ':'");
      }
      json* item = read_value(r);
      item->key = key;
      *tail = item;
      tail = &item->next;
      skip_space(r);
      if (*r->p == ',') ++r->p, skip_space(r);
      else if (*r->p != close) die("manifest", "expected ',' or a closing bracket");
    }
    ++r->p;
  } else if (*r->p == '"') {
    v->kind = J_STRING;
    v->string = read_string(r);
  } else if (!strncmp(r->p, "true", 4) || !strncmp(r->p, "false", 5)) {
    v->kind = J_BOOL;
    v->number = *r->p == 't';
    r->p += *r->p == 't' ? 4 : 5;
  } else if (!strncmp(r->p, "null", 4)) {
    v->kind = J_NULL;
    r->p += 4;
  } else {
    char* end = NULL;
    v->kind = J_NUMBER;
    v->number = strtod(r->p, &end);
    if (end == r->p) die("manifest", "unexpected character");
    r->p = end;
  }
  return v;
}

static json* member(const json* object, const char* key) {
  for (json* m = object ? object->child : NULL; m; m = m->next) {
    if (m->key && !strcmp(m->key, key)) return m;
  }
  return NULL;
}

/* The element of `array` whose "name" member is `name`. */
static json* named(const json* array, const char* name) {
  for (json* e = array ? array->child : NULL; e; e = e->next) {
    json* n = member(e, "name");
    if (n && n->kind == J_STRING && !strcmp(n->string, name)) return e;
  }
  return NULL;
}

static char* read_file(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (!f) die("cannot open", path);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* data = malloc((size_t)n + 1);
  if (fread(data, 1, (size_t)n, f) != (size_t)n) die("cannot read", path);
  fclose(f);
  data[n] = 0;
  if (size) *size = (size_t)n;
  return data;
}

/* ---- calls and structs by the manifest ----------------------------------- */

static json* g_manifest;
static void* g_library;

static ffi_type* ffi_kind(const char* kind) {
  static const struct {
    const char* name;
    ffi_type* type;
  } kinds[] = {{"void", &ffi_type_void},     {"sint8", &ffi_type_sint8},   {"uint8", &ffi_type_uint8},
               {"sint16", &ffi_type_sint16}, {"uint16", &ffi_type_uint16}, {"sint32", &ffi_type_sint32},
               {"uint32", &ffi_type_uint32}, {"sint64", &ffi_type_sint64}, {"uint64", &ffi_type_uint64},
               {"float", &ffi_type_float},   {"double", &ffi_type_double}, {"pointer", &ffi_type_pointer}};
  for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); ++i) {
    if (!strcmp(kinds[i].name, kind)) return kinds[i].type;
  }
  die("unknown ffi kind in the manifest", kind);
  return NULL;
}

/* Calls `name` with `args` (each points at its argument's value); the result,
 * widened as libffi returns it, goes to *result (may be NULL). */
static void call(const char* name, void** args, size_t n_args, ffi_arg* result) {
  json* fn = named(member(g_manifest, "functions"), name);
  if (!fn) die("the manifest has no function", name);
  ffi_type* params[16];
  size_t n = 0;
  for (json* p = member(fn, "params")->child; p; p = p->next) params[n++] = ffi_kind(member(p, "ffi")->string);
  if (n != n_args) die("wrong argument count for", name);
  void* symbol = dlsym(g_library, name);
  if (!symbol) die("libgpuu.so does not export", name);
  ffi_cif cif;
  if (ffi_prep_cif(&cif, FFI_DEFAULT_ABI, (unsigned)n, ffi_kind(member(fn, "ffi")->string), params) != FFI_OK) {
    die("ffi_prep_cif failed for", name);
  }
  ffi_arg ignored;
  ffi_call(&cif, FFI_FN(symbol), result ? result : &ignored, args);
}

/* Calls a function returning gpuu_status; anything but GPUU_OK (0) is fatal. */
static void call_ok(const char* name, void** args, size_t n_args) {
  ffi_arg status = 0;
  call(name, args, n_args, &status);
  if ((int32_t)status != 0) {
    ffi_arg message = 0;
    call("gpuu_last_error", NULL, 0, &message);
    fprintf(stderr, "gpuu_ffi_harness: %s returned %d: %s\n", name, (int32_t)status, (const char*)(uintptr_t)message);
    exit(1);
  }
}

static json* struct_of(const char* name) {
  json* s = member(member(g_manifest, "structs"), name);
  if (!s) die("the manifest has no struct", name);
  return s;
}

static size_t struct_size(const char* name) { return (size_t)member(struct_of(name), "size")->number; }

static json* field(const char* type, const char* name) {
  json* f = named(member(struct_of(type), "fields"), name);
  if (!f) die("the manifest's struct lacks field", name);
  return f;
}

/* A zeroed buffer for `type`, filled with its defaults by gpuu_<type>_init_sized
 * where the library has one, else with struct_size set. */
static unsigned char* new_struct(const char* type) {
  size_t size = struct_size(type);
  unsigned char* buf = calloc(1, size);
  char init[128];
  snprintf(init, sizeof(init), "%s_init_sized", type);
  if (named(member(g_manifest, "functions"), init)) {
    void* args[] = {&buf, &size};
    call(init, args, 2, NULL);
  } else {
    uint32_t s = (uint32_t)size;
    memcpy(buf + (size_t)member(field(type, "struct_size"), "offset")->number, &s, 4);
  }
  return buf;
}

static void set_field(unsigned char* buf, const char* type, const char* name, const void* value) {
  json* f = field(type, name);
  memcpy(buf + (size_t)member(f, "offset")->number, value, (size_t)member(f, "size")->number);
}

/* An integer or pointer field, widened to 64 bits by its ffi kind. */
static uint64_t get_field(const unsigned char* buf, const char* type, const char* name) {
  json* f = field(type, name);
  const unsigned char* at = buf + (size_t)member(f, "offset")->number;
  size_t size = (size_t)member(f, "size")->number;
  if (size == 8) {
    uint64_t v;
    memcpy(&v, at, 8);
    return v;
  }
  if (size == 4) {
    uint32_t v;
    memcpy(&v, at, 4);
    return member(f, "ffi")->string[0] == 's' ? (uint64_t)(int64_t)(int32_t)v : v;
  }
  die("unsupported field size for", name);
  return 0;
}

static int32_t enum_value(const char* enumeration, const char* name) {
  json* v = member(member(member(g_manifest, "enums"), enumeration), name);
  if (!v) die("the manifest has no enumerator", name);
  return (int32_t)v->number;
}

/* ---- the run -------------------------------------------------------------- */

int main(int argc, char** argv) {
  if (argc != 7) die("usage", "gpuu_ffi_harness LIBGPUU ABI_JSON PROGRAM INPUT.bin REFERENCE.bin TOLERANCE");
  char* manifest_text = read_file(argv[2], NULL);
  json_reader reader = {manifest_text};
  g_manifest = read_value(&reader);
  free(manifest_text); /* the tree holds copies of its strings */
  g_library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!g_library) die("dlopen", dlerror());

  ffi_arg version = 0;
  call("gpuu_version_string", NULL, 0, &version);
  if (strcmp((const char*)(uintptr_t)version, member(g_manifest, "version")->string) != 0) {
    die("the library's version differs from the manifest's", (const char*)(uintptr_t)version);
  }

  void* program = NULL;
  const char* path = argv[3];
  void* program_out = &program;
  call_ok("gpuu_program_load_file", (void*[]){&path, &program_out}, 2);

  /* Session options pointing at overrides: sync mode queue_wait_idle. */
  unsigned char* overrides = new_struct("gpuu_context_overrides");
  int32_t one = 1, sync = enum_value("gpuu_sync_mode", "GPUU_SYNC_QUEUE_WAIT_IDLE");
  set_field(overrides, "gpuu_context_overrides", "has_sync_mode", &one);
  set_field(overrides, "gpuu_context_overrides", "sync_mode", &sync);
  unsigned char* options = new_struct("gpuu_session_options");
  set_field(options, "gpuu_session_options", "overrides", &overrides);
  void* session = NULL;
  void* session_out = &session;
  call_ok("gpuu_session_create", (void*[]){&program, &options, &session_out}, 3);
  ffi_arg mode = 0;
  call("gpuu_session_sync_mode", (void*[]){&session}, 1, &mode);
  if ((int32_t)mode != sync) die("the sync-mode override did not arrive", NULL);

  /* Input 0 from the file, its size checked against the session's tensor info. */
  size_t index = 0, input_size = 0, reference_size = 0;
  unsigned char* info = new_struct("gpuu_tensor_info");
  call_ok("gpuu_session_input_info", (void*[]){&session, &index, &info}, 3);
  char* input = read_file(argv[4], &input_size);
  if (get_field(info, "gpuu_tensor_info", "byte_size") != input_size) die("input size differs from", argv[4]);
  void* input_data = input;
  call_ok("gpuu_session_set_input", (void*[]){&session, &index, &input_data, &input_size}, 4);
  call_ok("gpuu_session_execute", (void*[]){&session}, 1);

  call_ok("gpuu_session_output_info", (void*[]){&session, &index, &info}, 3);
  size_t output_size = (size_t)get_field(info, "gpuu_tensor_info", "byte_size");
  if (get_field(info, "gpuu_tensor_info", "dtype") != (uint64_t)enum_value("gpuu_dtype", "GPUU_DTYPE_F32")) {
    die("output 0 is not f32", NULL);
  }
  float* y = malloc(output_size);
  void* y_data = y;
  call_ok("gpuu_session_get_output", (void*[]){&session, &index, &y_data, &output_size}, 4);
  float* want = (float*)read_file(argv[5], &reference_size);
  if (reference_size != output_size) die("reference size differs from output 0's", argv[5]);
  double tolerance = atof(argv[6]), worst = 0;
  for (size_t i = 0; i < output_size / sizeof(float); ++i) {
    double e = fabs((double)y[i] - want[i]) / (1 + fabs(want[i]));
    worst = isnan(e) ? INFINITY : (e > worst ? e : worst);
  }

  unsigned char* stats = new_struct("gpuu_execute_stats");
  call_ok("gpuu_session_last_execute_stats", (void*[]){&session, &stats}, 2);
  const char* name = (const char*)(uintptr_t)get_field(info, "gpuu_tensor_info", "name");
  printf("gpuu %s via libffi: output '%s' (%zu floats), max relative error %.3g (bound %g), %llu delegate submits\n",
         (const char*)(uintptr_t)version, name, output_size / sizeof(float), worst, tolerance,
         (unsigned long long)get_field(stats, "gpuu_execute_stats", "delegate_submits"));
  call("gpuu_session_destroy", (void*[]){&session}, 1, NULL);
  call("gpuu_program_release", (void*[]){&program}, 1, NULL);
  free(stats);
  free(want);
  free(y);
  free(input);
  free(info);
  free(options);
  free(overrides);
  if (!(worst <= tolerance)) die("output 0 differs from the reference beyond the bound", NULL);
  return 0;
}
