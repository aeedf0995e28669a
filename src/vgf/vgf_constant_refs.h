// A VGF file whose constants live elsewhere: in a program file, a VGF
// delegate's blob may leave constant records empty and name, in a compile
// spec, the program constant that holds each one's bytes, so that a weight is
// stored once in the file (the program's segments), not once more inside the
// delegate's VGF. Filling the records back gives the complete VGF file, as
// Arm's tools read it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/blob.h"
#include "base/status.h"
#include "graph/graph.h"
#include "vgf/vgf_file.h"

namespace gpuu::vgf {

// The compile spec of a VGF delegate naming its constants' program tensors:
// one name per constant record, in record order, separated by commas (text,
// so gpuu-inspect prints it as is; a name with a comma is never written); an
// empty name leaves the record's own bytes in the blob.
inline constexpr const char* kConstantRefsKey = "vgf_constant_refs";

std::vector<uint8_t> encode_constant_refs(const std::vector<std::string>& names);
std::vector<std::string> decode_constant_refs(const std::vector<uint8_t>& value);

// Bytes of the program constant `name`, which must be of `dtype` and `shape`
// (program::ConstantLookup has this form).
using ConstantSource =
    std::function<Result<Blob>(const std::string& name, graph::DType dtype, const graph::Shape& shape)>;

// The bytes a CONSTANT resource needs: its elements times the format's size.
Result<uint64_t> constant_byte_size(const Resource& resource);

// Fills each empty constant record of `file` that `refs` names from
// `source` (views, no copy), typed and shaped by its CONSTANT resource. A
// record that holds bytes keeps them, and a file whose records all hold
// bytes needs no names (a blob made at run time for a program with dims is
// complete, whatever the delegate's compile specs say). Errors (kInvalidFormat) name the record, the
// resource and the program constant: more names than records, an empty
// record no name fills, a name the source lacks, bytes of the wrong size.
Status fill_constant_refs(VgfFile* file, const std::vector<std::string>& refs, const ConstantSource& source);

}  // namespace gpuu::vgf
