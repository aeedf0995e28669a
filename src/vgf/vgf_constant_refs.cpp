// Constant records filled from a program's constants (see vgf_constant_refs.h).
#include "vgf/vgf_constant_refs.h"

#include "vgf/vgf_graph.h"

namespace gpuu::vgf {

std::vector<uint8_t> encode_constant_refs(const std::vector<std::string>& names) {
  std::string text;
  for (size_t i = 0; i < names.size(); ++i) text += (i ? "," : "") + names[i];
  return std::vector<uint8_t>(text.begin(), text.end());
}

std::vector<std::string> decode_constant_refs(const std::vector<uint8_t>& value) {
  std::vector<std::string> names(1);
  for (uint8_t c : value) {
    if (c == ',') {
      names.emplace_back();
    } else {
      names.back().push_back(static_cast<char>(c));
    }
  }
  return names;
}

Result<uint64_t> constant_byte_size(const Resource& resource) {
  GPUU_ASSIGN_OR_RETURN(graph::DType dtype, dtype_of_vk_format(resource.vk_format));
  uint64_t count = 1;
  for (int64_t d : resource.shape) {
    if (d < 0) return err(StatusCode::kInvalidFormat, "a CONSTANT resource of dynamic shape");
    count *= static_cast<uint64_t>(d);
  }
  return count * graph::dtype_size(dtype);
}

Status fill_constant_refs(VgfFile* file, const std::vector<std::string>& refs, const ConstantSource& source) {
  // A complete file (made at run time for a program with dims, under the
  // compile specs of the file's own blob) needs none of them.
  bool complete = true;
  for (const Constant& c : file->constants) complete = complete && !c.data.empty();
  if (complete) return Status::Ok();
  if (refs.size() != file->constants.size()) {
    return err(StatusCode::kInvalidFormat, kConstantRefsKey, " names ", refs.size(), " constants, the VGF file has ",
               file->constants.size(), " constant records");
  }
  for (size_t i = 0; i < refs.size(); ++i) {
    Constant& c = file->constants[i];
    if (!c.data.empty()) continue;
    if (c.mrt_index >= file->resources.size()) {
      return err(StatusCode::kInvalidFormat, "constant record ", i, " refers to resource ", c.mrt_index, " of ",
                 file->resources.size());
    }
    const Resource& r = file->resources[c.mrt_index];
    auto fail = [&](const auto&... parts) {
      return err(StatusCode::kInvalidFormat, "constant record ", i, " (CONSTANT resource ", c.mrt_index, ") ",
                 parts...);
    };
    if (refs[i].empty()) return fail("holds no bytes and ", kConstantRefsKey, " names no program constant for it");
    if (!source) return fail("reads program constant '", refs[i], "', but no program constants were given");
    Result<graph::DType> dtype = dtype_of_vk_format(r.vk_format);
    if (!dtype.ok()) return fail("reads program constant '", refs[i], "': ", dtype.status().message());
    Result<uint64_t> bytes = constant_byte_size(r);
    if (!bytes.ok()) return fail("reads program constant '", refs[i], "': ", bytes.status().message());
    Result<Blob> data = source(refs[i], dtype.value(), r.shape);
    if (!data.ok()) return fail("reads program constant '", refs[i], "': ", data.status().message());
    if (data->size() != bytes.value()) {
      return fail("reads program constant '", refs[i], "' of ", data->size(), " bytes, its ",
                  graph::dtype_name(dtype.value()), " ", graph::shape_to_string(r.shape), " needs ", bytes.value());
    }
    c.data = std::move(data).value();
  }
  return Status::Ok();
}

}  // namespace gpuu::vgf
