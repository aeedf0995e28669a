// Program accessors: segment views into the file and the deduplication tally.
#include "program/program.h"

namespace gpuu::program {

Result<uint64_t> tensor_byte_size(graph::DType dtype, const graph::Shape& shape, const std::string& where) {
  uint64_t n = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0) return err(StatusCode::kInvalidFormat, where, "[", i, "] = ", shape[i], " is negative");
    if (__builtin_mul_overflow(n, static_cast<uint64_t>(shape[i]), &n) || n > static_cast<uint64_t>(INT64_MAX)) {
      return err(StatusCode::kInvalidFormat, where, " ", graph::shape_to_string(shape),
                 ": the element count overflows 64 bits");
    }
  }
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(n, static_cast<uint64_t>(graph::dtype_size(dtype)), &bytes) ||
      bytes > static_cast<uint64_t>(INT64_MAX)) {
    return err(StatusCode::kInvalidFormat, where, " ", graph::shape_to_string(shape),
               ": the byte size overflows 64 bits");
  }
  return bytes;
}

int32_t Program::find_tensor(std::string_view name) const {
  auto it = tensor_index_.find(std::string(name));
  return it == tensor_index_.end() ? -1 : it->second;
}

Blob Program::segment_data(int32_t segment) const {
  if (segment < 0 || static_cast<size_t>(segment) >= segments_.size()) return Blob();
  const SegmentInfo& s = segments_[static_cast<size_t>(segment)];
  if (!s.owned.empty() || s.size == 0) return s.owned;
  return file_.sub_view(static_cast<size_t>(s.offset), static_cast<size_t>(s.size));
}

Blob Program::constant_data(int32_t tensor) const {
  if (tensor < 0 || static_cast<size_t>(tensor) >= tensors_.size()) return Blob();
  return segment_data(tensors_[static_cast<size_t>(tensor)].segment);
}

Blob Program::processed_blob(int32_t delegate) const {
  if (delegate < 0 || static_cast<size_t>(delegate) >= delegates_.size()) return Blob();
  return segment_data(delegates_[static_cast<size_t>(delegate)].processed_segment);
}

Blob Program::state_initial_data(int32_t state) const {
  if (state < 0 || static_cast<size_t>(state) >= states_.size()) return Blob();
  return segment_data(states_[static_cast<size_t>(state)].initial_segment);
}

uint64_t Program::dedup_saved_bytes() const {
  std::vector<uint32_t> uses(segments_.size(), 0);
  for (const TensorInfo& t : tensors_) {
    if (t.is_constant()) ++uses[static_cast<size_t>(t.segment)];
  }
  for (const DelegateInfo& d : delegates_) ++uses[static_cast<size_t>(d.processed_segment)];
  for (const StateInfo& s : states_) ++uses[static_cast<size_t>(s.initial_segment)];
  uint64_t saved = 0;
  for (size_t i = 0; i < segments_.size(); ++i) {
    if (uses[i] > 1) saved += (uses[i] - 1) * segments_[i].size;
  }
  return saved;
}

}  // namespace gpuu::program
