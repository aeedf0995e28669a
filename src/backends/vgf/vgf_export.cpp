// Writing a program's VGF delegates as standalone files.
#include "backends/vgf/vgf_export.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "backends/vgf/vgf_region.h"
#include "program/program_writer.h"
#include "vgf/vgf_file.h"

namespace gpuu::vgf {

Status extract_vgf_delegates(const program::Program& program, const std::string& dir,
                             std::vector<std::string>* written) {
  if (dir.empty()) return err(StatusCode::kInvalidArgument, "extract VGF: the directory is empty");
  if (::mkdir(dir.c_str(), 0777) != 0 && errno != EEXIST) {
    return err(StatusCode::kIo, "extract VGF: cannot create directory '", dir, "': ", std::strerror(errno));
  }
  for (size_t i = 0; i < program.delegates().size(); ++i) {
    if (program.delegates()[i].backend_id != "VgfBackend") continue;
    Blob blob = program.processed_blob(static_cast<int32_t>(i));
    GPUU_ASSIGN_OR_RETURN(VgfFile file, decode_vgf(blob));
    std::string base = std::to_string(i);
    std::string vgf_path = dir + "/" + base + ".vgf";
    std::string json_path = dir + "/" + base + ".json";
    GPUU_RETURN_IF_ERROR(
        program::write_file_atomically(vgf_path, std::vector<uint8_t>(blob.data(), blob.data() + blob.size())));
    std::string scenario = scenario_json(file, base + ".vgf");
    GPUU_RETURN_IF_ERROR(
        program::write_file_atomically(json_path, std::vector<uint8_t>(scenario.begin(), scenario.end())));
    if (written) {
      written->push_back(vgf_path);
      written->push_back(json_path);
    }
  }
  return Status::Ok();
}

}  // namespace gpuu::vgf
