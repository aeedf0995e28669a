/* Small plugins for the loader tests, in C99 (which also proves that
 * gpuu_backend.h compiles as C). One source, one defect per build:
 * BAD_NO_ENTRY, BAD_MAJOR, BAD_MINOR, BAD_NO_EXECUTE, BAD_OPTION,
 * PLUGIN_ID="...". */
#include "gpuu_backend.h"

#ifndef PLUGIN_ID
#define PLUGIN_ID "AcmeGood"
#endif

static int available(void) { return 1; }
static const char* check(const gpuu_plugin_graph* g, const gpuu_plugin_node* n) {
  (void)g;
  (void)n;
  return "the test plugin takes nothing";
}
static int preprocess(const gpuu_plugin_graph* g, const gpuu_plugin_compile_spec* s, size_t c, gpuu_plugin_bytes* out,
                      char* e, size_t ec) {
  (void)g, (void)s, (void)c, (void)e, (void)ec;
  out->data = 0;
  out->size = 0;
  return 0;
}
static void free_bytes(gpuu_plugin_bytes* b) { (void)b; }
static int init(const gpuu_plugin_init_args* a, void** h, char* e, size_t ec) {
  (void)a, (void)e, (void)ec;
  *h = 0;
  return 0;
}
#ifndef BAD_NO_EXECUTE
static int execute(void* h, char* e, size_t ec) {
  (void)h, (void)e, (void)ec;
  return 0;
}
#endif
static void destroy(void* h) { (void)h; }

#ifdef BAD_OPTION
static const char* const modes[] = {"fast", "exact"};
static const gpuu_plugin_option_decl options[] = {
    {sizeof(gpuu_plugin_option_decl), "mode", modes, 2, "fastest", "a default outside its own values"}};
#define OPTIONS options, 1
#else
#define OPTIONS 0, 0
#endif

static const gpuu_backend_plugin plugin = {
    sizeof(gpuu_backend_plugin),
#ifdef BAD_MAJOR
    GPUU_BACKEND_API_VERSION_MAJOR + 1,
#else
    GPUU_BACKEND_API_VERSION_MAJOR,
#endif
#ifdef BAD_MINOR
    GPUU_BACKEND_API_VERSION_MINOR + 1,
#else
    GPUU_BACKEND_API_VERSION_MINOR,
#endif
    PLUGIN_ID, 3, GPUU_BACKEND_PLUGIN_RUNS_ON_HOST, 1.0, 0, 0, 1u,
    available, check, preprocess, free_bytes, init,
#ifdef BAD_NO_EXECUTE
    0,
#else
    execute,
#endif
    destroy, OPTIONS};

#ifndef BAD_NO_ENTRY
GPUU_BACKEND_EXPORT const gpuu_backend_plugin* gpuu_backend_plugin_get(void) { return &plugin; }
#else
GPUU_BACKEND_EXPORT const gpuu_backend_plugin* some_other_name(void) { return &plugin; }
#endif
