// C ABI: standalone VGF files: a program's VGF delegates written as files Arm's
// tools run, and a standalone VGF file (an Arm-made one, say) as a program of
// one VGF delegate.
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "capi/capi_common.h"
#include "capi/handles.h"
#include "program/program_loader.h"
#include "standalone_vgf/standalone_vgf.h"

using namespace gpuu;
using namespace gpuu::capi;

namespace gpuu::capi {
namespace {

// Wraps the VGF file `data` as a program of one VGF delegate (see gpuu_program_from_vgf).
gpuu_status program_from_vgf_bytes(const char* what, const uint8_t* data, size_t size,
                                   const gpuu_program_write_options* options, gpuu_program** out) {
  gpuu_program_write_options o;
  if (gpuu_status s = read_program_write_options(what, options, &o)) return s;
  if (o.extra_shared_compile_spec_count || o.backend_compile_specs_count) {
    return fail_invalid(what, ": extra or per-backend compile specs are not taken here (a VGF file carries its own)");
  }
  SharedGpuCompileSpec spec;
  spec.token = o.token;
  spec.group_id = o.group_id;
  spec.context_mode = static_cast<ContextMode>(o.mode);
  spec.sync_mode = static_cast<SyncMode>(o.sync_mode);
  spec.min_partition_size = 1;
  spec.prefer = Prefer::kVgfFirst;
  spec.present = true;
  Result<std::vector<uint8_t>> bytes = vgf::program_from_vgf(data, size, spec);
  if (!bytes.ok()) return fail(Status(bytes.status().code(), str_cat(what, ": ", bytes.status().message())));
  Result<std::shared_ptr<const program::Program>> loaded =
      program::load_program_bytes(bytes.value().data(), bytes.value().size());
  if (!loaded.ok()) return fail(loaded.status());
  *out = new gpuu_program{std::move(loaded).value()};
  return GPUU_OK;
}

}  // namespace
}  // namespace gpuu::capi

extern "C" {

GPUU_API gpuu_status gpuu_program_extract_vgf(const gpuu_program* program, const char* dir, size_t* vgf_count) {
  return guarded(__func__, [&]() -> gpuu_status {
    if (vgf_count) *vgf_count = 0;
    if (!program) return fail_invalid("gpuu_program_extract_vgf: program is NULL");
    if (!dir || !*dir) return fail_invalid("gpuu_program_extract_vgf: dir is NULL or empty");
    std::vector<std::string> written;
    if (gpuu_status s = to_c(vgf::extract_vgf_delegates(*program->program, dir, &written))) return s;
    if (vgf_count) {
      for (const std::string& path : written) {
        if (path.size() > 4 && path.compare(path.size() - 4, 4, ".vgf") == 0) ++*vgf_count;
      }
    }
    return GPUU_OK;
  });
}

GPUU_API gpuu_status gpuu_program_from_vgf(const void* data, size_t size, const gpuu_program_write_options* options,
                                           gpuu_program** out) {
  return guarded(__func__, [&]() -> gpuu_status {
    if (!out) return fail_invalid("gpuu_program_from_vgf: `out` is NULL");
    *out = nullptr;
    if (!data || size == 0) return fail_invalid("gpuu_program_from_vgf: data is NULL or empty");
    return program_from_vgf_bytes("gpuu_program_from_vgf", static_cast<const uint8_t*>(data), size, options, out);
  });
}

GPUU_API gpuu_status gpuu_program_from_vgf_file(const char* path, const gpuu_program_write_options* options,
                                                gpuu_program** out) {
  return guarded(__func__, [&]() -> gpuu_status {
    if (!out) return fail_invalid("gpuu_program_from_vgf_file: `out` is NULL");
    *out = nullptr;
    if (!path || !*path) return fail_invalid("gpuu_program_from_vgf_file: path is NULL or empty");
    std::ifstream in(path, std::ios::binary);
    std::vector<char> bytes;
    if (in) bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (!in && !in.eof()) {
      return fail(err(StatusCode::kIo, "gpuu_program_from_vgf_file: cannot read '", path, "': ", std::strerror(errno)));
    }
    if (bytes.empty()) return fail(err(StatusCode::kInvalidFormat, "gpuu_program_from_vgf_file: '", path, "' is empty"));
    std::string what = str_cat("gpuu_program_from_vgf_file: '", path, "'");
    return program_from_vgf_bytes(what.c_str(), reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), options,
                                  out);
  });
}

}  // extern "C"
