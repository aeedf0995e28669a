// Shared helpers of the extern "C" layer: turning Status into gpuu_status plus
// the per-thread message, and argument checks that name the argument.
#pragma once

#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "base/status.h"
#include "capi/first_release.h"
#include "compile_spec/shared_gpu_compile_spec.h"
#include "gpuu.h"

namespace gpuu {
class SharedGpuContext;
}

namespace gpuu::capi {

// A new gpuu_context reference to `ctx` (capi_context.cpp owns the struct).
gpuu_context* wrap_context(std::shared_ptr<SharedGpuContext> ctx);

// Records `status` as the calling thread's last error and returns its code.
gpuu_status fail(const Status& status);

inline gpuu_status to_c(const Status& status) { return status.ok() ? GPUU_OK : fail(status); }

template <typename... Parts>
gpuu_status fail_invalid(const Parts&... parts) {
  return fail(err(StatusCode::kInvalidArgument, parts...));
}

// Checks a struct's leading struct_size against the smallest size this library
// accepts (the size of the first release of that struct).
template <typename T>
bool struct_size_ok(const T* s, size_t min_size) {
  return s && s->struct_size >= min_size;
}

// ABI growth, *_init_sized: `fill` sets the defaults on a zeroed T of this
// library's size; the caller gets exactly `size` bytes of that (its header's
// sizeof: an older caller's struct is smaller, a newer one's tail is zeroed),
// and struct_size says `size`.
template <typename T, typename Fill>
void init_sized(T* out, size_t size, Fill fill) {
  if (!out || size < sizeof(uint32_t)) return;
  T defaults{};
  defaults.struct_size = sizeof(T);
  fill(&defaults);
  std::memset(static_cast<void*>(out), 0, size);
  std::memcpy(static_cast<void*>(out), static_cast<const void*>(&defaults), size < sizeof(T) ? size : sizeof(T));
  out->struct_size = static_cast<uint32_t>(size);
}

// The shared-context defaults (compile_spec/shared_gpu_compile_spec.h) that every
// options struct naming a context starts from: token, group_id and mode.
template <typename Options>
void set_context_defaults(Options* options) {
  options->token = kDefaultToken;
  options->group_id = kDefaultGroupId;
  options->mode = static_cast<gpuu_context_mode>(kDefaultContextMode);
}

// ABI growth, inputs: `*out` is first filled by `init` (the struct's defaults),
// then the caller's first min(struct_size, sizeof(T)) bytes are copied over it,
// so a caller built against an older header (smaller struct_size) gets the
// defaults for every field it does not know, and a newer caller's extra bytes
// are ignored. False (nothing copied) when `in` is NULL or its struct_size is
// below `first_release_size`, the size of the struct's first release.
template <typename T>
bool read_sized(const T* in, size_t first_release_size, void (*init)(T*, size_t), T* out) {
  init(out, sizeof(T));
  if (!in || in->struct_size < first_release_size) return false;
  const size_t n = in->struct_size < sizeof(T) ? in->struct_size : sizeof(T);
  std::memcpy(static_cast<void*>(out), static_cast<const void*>(in), n);
  out->struct_size = static_cast<uint32_t>(sizeof(T));
  return true;
}

// ABI growth, outputs: writes `value` into the caller's struct up to the
// caller's struct_size (fields it does not know are not written). False when
// `out` is NULL or its struct_size is below `first_release_size`.
template <typename T>
bool write_sized(const T& value, size_t first_release_size, T* out) {
  if (!out || out->struct_size < first_release_size) return false;
  const uint32_t caller_size = out->struct_size;
  const size_t n = caller_size < sizeof(T) ? caller_size : sizeof(T);
  std::memcpy(static_cast<void*>(out), static_cast<const void*>(&value), n);
  out->struct_size = caller_size;
  return true;
}

// ABI growth, arrays of structs: every element begins with struct_size, and
// all elements of one array share elements[0].struct_size, which is also the
// array's stride in bytes. Each element is read as read_sized() reads one.
// `error` receives why the array was refused (empty on success).
template <typename T>
bool read_sized_array(const T* elements, size_t count, size_t first_release_size, void (*init)(T*, size_t),
                      std::vector<T>* out, std::string* error) {
  out->clear();
  error->clear();
  if (count == 0) return true;
  if (!elements) {
    *error = "NULL array with a nonzero count";
    return false;
  }
  const uint32_t stride = elements[0].struct_size;
  if (stride < first_release_size) {
    *error = "element 0 has struct_size " + std::to_string(stride) + ", below the smallest known size " +
             std::to_string(first_release_size) + " (set it with the element's *_init function)";
    return false;
  }
  const auto* bytes = reinterpret_cast<const unsigned char*>(elements);
  out->resize(count);
  for (size_t i = 0; i < count; ++i) {
    const T* element = reinterpret_cast<const T*>(bytes + i * stride);
    if (element->struct_size != stride) {
      *error = "element " + std::to_string(i) + " has struct_size " + std::to_string(element->struct_size) +
               ", element 0 has " + std::to_string(stride) + " (all elements of an array must share one size)";
      out->clear();
      return false;
    }
    read_sized(element, first_release_size, init, &(*out)[i]);
  }
  return true;
}

// The same three, with the struct's first-release size from first_release.h.
template <typename T>
bool read_sized(const T* in, void (*init)(T*, size_t), T* out) {
  return read_sized(in, FirstRelease<T>::size, init, out);
}
template <typename T>
bool write_sized(const T& value, T* out) {
  return write_sized(value, FirstRelease<T>::size, out);
}
template <typename T>
bool read_sized_array(const T* elements, size_t count, void (*init)(T*, size_t), std::vector<T>* out,
                      std::string* error) {
  return read_sized_array(elements, count, FirstRelease<T>::size, init, out, error);
}

// Checks the application's context overrides and turns them into the
// runtime's (capi_base.cpp): the one reader of gpuu_context_overrides.
gpuu_status to_overrides(const char* function, const gpuu_context_overrides& o, ContextOverrides* out);

// Reads a caller's array of compile specs (a sized array) into entries;
// `what` names the array in refusals ("specs", "options->...").
gpuu_status read_compile_specs(const char* function, const std::string& what, const gpuu_compile_spec* specs,
                               size_t count, std::vector<CompileSpecEntry>* out);

// Reads and checks program write options (NULL: the defaults) into *out, for
// gpuu_program_write* and gpuu_program_from_vgf* (capi_program.cpp).
gpuu_status read_program_write_options(const char* function, const gpuu_program_write_options* options,
                                       gpuu_program_write_options* out);

// The refusal of a growable struct whose struct_size is below its first release.
template <typename T>
gpuu_status fail_struct_size(const char* function, const char* what, const T* s) {
  return fail_invalid(function, ": ", what, "->struct_size ", s ? s->struct_size : 0u,
                      " is below the smallest size gpuu accepts, ", FirstRelease<T>::size,
                      " (set it with the struct's *_init function)");
}

// Runs `body`, turning any escaping C++ exception into a status: nothing may
// unwind across the C boundary.
template <typename Body>
gpuu_status guarded(const char* function, Body&& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return fail(err(StatusCode::kOutOfMemory, function, ": out of host memory"));
  } catch (const std::exception& e) {
    return fail(err(StatusCode::kInternal, function, ": unexpected exception: ", e.what()));
  } catch (...) {
    return fail(err(StatusCode::kInternal, function, ": unexpected exception"));
  }
}

// Copies `text` into a fixed buffer, refusing what does not fit.
inline bool copy_string(char* dst, size_t dst_size, const std::string& text) {
  if (text.size() + 1 > dst_size) return false;
  std::memcpy(dst, text.c_str(), text.size() + 1);
  return true;
}

}  // namespace gpuu::capi
