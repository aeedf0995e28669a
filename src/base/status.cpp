// Names of status codes, shared by logs and the C ABI's gpuu_status_string().
#include "base/status.h"

namespace gpuu {

const char* status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "ok";
    case StatusCode::kInvalidArgument: return "invalid argument";
    case StatusCode::kNotFound: return "not found";
    case StatusCode::kAlreadyExists: return "already exists";
    case StatusCode::kUnsupported: return "unsupported";
    case StatusCode::kInvalidFormat: return "invalid format";
    case StatusCode::kIo: return "i/o error";
    case StatusCode::kOutOfMemory: return "out of memory";
    case StatusCode::kVulkan: return "vulkan error";
    case StatusCode::kDeviceLost: return "device lost";
    case StatusCode::kFailedPrecondition: return "failed precondition";
    case StatusCode::kInternal: return "internal error";
  }
  return "unknown status";
}

std::string Status::to_string() const {
  if (ok()) return "ok";
  return std::string(status_code_name(code_)) + ": " + message_;
}

}  // namespace gpuu
