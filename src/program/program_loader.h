// Loading a program file: map or copy it, verify the flatbuffer, then check
// every index, size, offset and the plan's data flow before anything uses it.
// Any byte string gets either a Program or an error naming field and offset.
#pragma once

#include <memory>
#include <string>

#include "base/blob.h"
#include "base/status.h"
#include "program/program.h"

namespace gpuu::program {

// Maps `path` read-only. The mapping lives as long as the Program or any Blob
// taken from it. Errors: kIo (open/stat/map), kInvalidFormat (any
// inconsistency), kUnsupported (another format major version).
Result<std::shared_ptr<const Program>> load_program_file(const std::string& path);

// Copies [data, data + size) into 64-byte aligned storage the Program owns.
Result<std::shared_ptr<const Program>> load_program_bytes(const void* data, size_t size);

// Uses `file` in place when its data is 64-byte aligned in memory, else copies
// it, so that constants of a loaded program are always 64-byte aligned.
Result<std::shared_ptr<const Program>> load_program_blob(Blob file);

// Runs every check of load_program_* on [data, data + size) without keeping
// anything; copies only when `data` is not 8-byte aligned. The writer uses it
// to refuse what a loader would refuse.
Status validate_program_bytes(const uint8_t* data, size_t size);

}  // namespace gpuu::program
