// A program with dims (graph/symbolic.h) made static at given sizes: its
// shapes and attributes evaluated there and each delegate's source region
// preprocessed again for its backend, constants and states shared with the
// program it comes from (Blob views, no copies).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "base/status.h"
#include "program/program.h"
#include "program/program_writer.h"

namespace gpuu::program {

// `dims` holds one size per dim of `program`, within its bounds (the error
// names the dim and its bounds otherwise). A backend without a preprocess
// callback gets serialize_region(), as at export. A blob may read constants
// from the program as at export (PreprocessedRegion::constants_read,
// added_constants, the backend's own compile specs replacing the stored
// blob's): one the file holds is read from it (the same bytes, else an
// error), one it lacks (made only at these sizes) is held by the result.
// The result has no dims.
Result<std::shared_ptr<const Program>> specialize(const std::shared_ptr<const Program>& program,
                                                  const std::vector<int64_t>& dims,
                                                  const Preprocessors& preprocessors);

}  // namespace gpuu::program
