// Shared helpers of the extern "C" layer: turning Status into gpuu_status plus
// the per-thread message, and argument checks that name the argument.
#pragma once

#include <cstring>
#include <exception>
#include <memory>
#include <new>

#include "base/status.h"
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
