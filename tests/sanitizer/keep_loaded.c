/* Preloaded into every test process of a sanitizer build (see CMakeLists.txt
 * here): in a process that carries AddressSanitizer it opens the libraries
 * named in GPUU_SANITIZER_KEEP_LOADED (':'-separated) with RTLD_NODELETE, so
 * the Vulkan loader's dlclose of the driver and the validation layer leaves
 * them mapped until exit. Unloaded, their globals stop being roots (all they
 * still hold reads as leaked) and LeakSanitizer cannot name their frames, which
 * the suppressions need. RTLD_LOCAL: nothing of theirs enters the global scope.
 * Elsewhere (shells, cmake, an unsanitized compiler) it does nothing. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

__attribute__((constructor)) static void keep_loaded(void) {
  if (!dlsym(RTLD_DEFAULT, "__asan_init")) return;
  const char* list = getenv("GPUU_SANITIZER_KEEP_LOADED");
  if (!list) return;
  char name[4096];
  while (*list) {
    size_t n = strcspn(list, ":");
    if (n > 0 && n < sizeof(name)) {
      memcpy(name, list, n);
      name[n] = '\0';
      /* A library this machine lacks is no error: its tests fail on their own. */
      dlopen(name, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    }
    list += n;
    if (*list == ':') ++list;
  }
}
