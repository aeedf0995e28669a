// gpuu-inspect: prints what a program file holds (delegates, plan, compile
// specs, constants, deduplication) as text, JSON (--json) or Graphviz (--dot).
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "inspect/inspect.h"
#include "inspect/backends_list.h"
#include "inspect/memory_report.h"
#include "inspect/ops_table.h"
#include "runtime/builtin_backends.h"
#include "program/program_loader.h"
#include "standalone_vgf/standalone_vgf.h"
#include "vgf/vgf_file.h"

namespace {

const char kUsage[] =
    "usage: gpuu-inspect [--json | --dot] PROGRAM\n"
    "  (default)  delegates in plan order, nodes per partition, compile specs,\n"
    "             CPU-fallback steps, inputs/outputs, constants, deduplication\n"
    "  --json     the same, machine-readable\n"
    "  --dot      a Graphviz graph: nodes coloured by backend, edges via tensors\n"
    "usage: gpuu-inspect --memory [--json] PROGRAM\n"
    "             the device memory a session would allocate, planned from the\n"
    "             file (no device): per delegate and in total, weights (shared\n"
    "             ones once), intermediates, I/O tensors, states; a program with\n"
    "             dims at their upper bounds\n"
    "usage: gpuu-inspect --ops [--json]\n"
    "             every op gpuu has: inputs, attributes, dtypes, and which\n"
    "             backends (CPU, Vulkan, VGF with its TOSA form) run it\n"
    "usage: gpuu-inspect --backends [--plugins PATHS] [--json]\n"
    "             the registered backends: built-in ones, then plugins from\n"
    "             GPUU_BACKEND_PATH and PATHS (':'-separated); refusals on stderr\n"
    "usage: gpuu-inspect --extract-vgf DIR PROGRAM\n"
    "             writes each VGF delegate as DIR/<delegate index>.vgf with a\n"
    "             scenario JSON for Arm's scenario runner beside it\n"
    "usage: gpuu-inspect --dump-vgf FILE [--vgf-library 0.10|0.11]\n"
    "             a standalone .vgf file decoded by gpuu, printed as the JSON\n"
    "             Arm's vgf_dump of that VGF library version prints (default 0.11)\n";

// --dump-vgf: the file decoded by gpuu, in vgf_dump's JSON view.
int dump_vgf(const char* path, gpuu::vgf::DumpStyle style) {
  std::FILE* f = std::fopen(path, "rb");
  if (!f) {
    std::fprintf(stderr, "gpuu-inspect: cannot open '%s': %s\n", path, std::strerror(errno));
    return 1;
  }
  std::vector<uint8_t> bytes;
  uint8_t chunk[65536];
  size_t n = 0;
  while ((n = std::fread(chunk, 1, sizeof(chunk), f)) > 0) bytes.insert(bytes.end(), chunk, chunk + n);
  const bool read_error = std::ferror(f) != 0;
  std::fclose(f);
  if (read_error) {
    std::fprintf(stderr, "gpuu-inspect: cannot read '%s'\n", path);
    return 1;
  }
  auto file = gpuu::vgf::decode_vgf(bytes.data(), bytes.size());
  if (!file.ok()) {
    std::fprintf(stderr, "gpuu-inspect: '%s': %s\n", path, file.status().message().c_str());
    return 1;
  }
  std::string out = gpuu::vgf::dump_vgf_json(file.value(), style);
  out.push_back('\n');
  return std::fwrite(out.data(), 1, out.size(), stdout) == out.size() && std::fflush(stdout) == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  enum class Format { kText, kJson, kDot } format = Format::kText;
  const char* path = nullptr;
  const char* extract_dir = nullptr;
  const char* dump_path = nullptr;
  const char* vgf_library = nullptr;
  bool ops = false;
  bool list_backends = false;
  bool memory = false;
  const char* plugin_paths = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--extract-vgf") == 0) {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "gpuu-inspect: --extract-vgf needs a directory\n%s", kUsage);
        return 1;
      }
      extract_dir = argv[++i];
    } else if (std::strcmp(argv[i], "--dump-vgf") == 0 || std::strcmp(argv[i], "--vgf-library") == 0) {
      const bool dump = argv[i][2] == 'd';
      if (i + 1 >= argc) {
        std::fprintf(stderr, "gpuu-inspect: %s needs a value\n%s", argv[i], kUsage);
        return 1;
      }
      (dump ? dump_path : vgf_library) = argv[++i];
    } else if (std::strcmp(argv[i], "--ops") == 0) {
      ops = true;
    } else if (std::strcmp(argv[i], "--memory") == 0) {
      memory = true;
    } else if (std::strcmp(argv[i], "--backends") == 0) {
      list_backends = true;
    } else if (std::strcmp(argv[i], "--plugins") == 0) {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "gpuu-inspect: --plugins needs a path list\n%s", kUsage);
        return 1;
      }
      plugin_paths = argv[++i];
    } else if (std::strcmp(argv[i], "--json") == 0) {
      format = Format::kJson;
    } else if (std::strcmp(argv[i], "--dot") == 0) {
      format = Format::kDot;
    } else if (std::strcmp(argv[i], "-h") == 0 || std::strcmp(argv[i], "--help") == 0) {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
      std::fprintf(stderr, "gpuu-inspect: unknown option '%s'\n%s", argv[i], kUsage);
      return 1;
    } else if (path) {
      std::fprintf(stderr, "gpuu-inspect: more than one program given ('%s', '%s')\n%s", path, argv[i], kUsage);
      return 1;
    } else {
      path = argv[i];
    }
  }
  if (dump_path || vgf_library) {
    if (!dump_path || path || extract_dir || ops || format != Format::kText) {
      std::fprintf(stderr, "gpuu-inspect: --dump-vgf takes one VGF file and only --vgf-library\n%s", kUsage);
      return 1;
    }
    gpuu::vgf::DumpStyle style = gpuu::vgf::DumpStyle::kVgfLibrary0_11;
    if (vgf_library && std::strcmp(vgf_library, "0.10") == 0) {
      style = gpuu::vgf::DumpStyle::kVgfLibrary0_10;
    } else if (vgf_library && std::strcmp(vgf_library, "0.11") != 0) {
      std::fprintf(stderr, "gpuu-inspect: --vgf-library '%s' is not 0.10 or 0.11\n%s", vgf_library, kUsage);
      return 1;
    }
    return dump_vgf(dump_path, style);
  }
  if (list_backends || plugin_paths) {
    if (!list_backends || path || extract_dir || ops || format == Format::kDot) {
      std::fprintf(stderr, "gpuu-inspect: --backends takes only --plugins and --json\n%s", kUsage);
      return 1;
    }
    size_t refused = 0;
    if (plugin_paths) {
      for (const std::string& line : gpuu::runtime::plugin_loader().load(plugin_paths).refused) {
        std::fprintf(stderr, "gpuu-inspect: refused plugin %s\n", line.c_str());
        ++refused;
      }
    }
    std::string list = gpuu::inspect::render_backends(format == Format::kJson);
    std::fwrite(list.data(), 1, list.size(), stdout);
    return std::fflush(stdout) == 0 && refused == 0 ? 0 : 1;
  }
  if (ops) {
    if (path || extract_dir || format == Format::kDot) {
      std::fprintf(stderr, "gpuu-inspect: --ops takes no program and no --dot/--extract-vgf\n%s", kUsage);
      return 1;
    }
    std::string table = format == Format::kJson ? gpuu::inspect::render_ops_json() : gpuu::inspect::render_ops_markdown();
    std::fwrite(table.data(), 1, table.size(), stdout);
    return std::fflush(stdout) == 0 ? 0 : 1;
  }
  if (!path) {
    std::fputs(kUsage, stderr);
    return 1;
  }
  auto program = gpuu::program::load_program_file(path);
  if (!program.ok()) {
    std::fprintf(stderr, "gpuu-inspect: %s\n", program.status().message().c_str());
    return 1;
  }
  if (memory) {
    if (extract_dir || format == Format::kDot) {
      std::fprintf(stderr, "gpuu-inspect: --memory takes one program and only --json\n%s", kUsage);
      return 1;
    }
    auto plan = gpuu::runtime::plan_memory_at_upper_bounds(program.value());
    if (!plan.ok()) {
      std::fprintf(stderr, "gpuu-inspect: %s\n", plan.status().message().c_str());
      return 1;
    }
    std::string out = format == Format::kJson ? gpuu::inspect::render_memory_json(*program.value(), *plan, path)
                                              : gpuu::inspect::render_memory_text(*program.value(), *plan, path);
    return std::fwrite(out.data(), 1, out.size(), stdout) == out.size() && std::fflush(stdout) == 0 ? 0 : 1;
  }
  if (extract_dir) {
    std::vector<std::string> written;
    gpuu::Status s = gpuu::vgf::extract_vgf_delegates(*program.value(), extract_dir, &written);
    if (!s.ok()) {
      std::fprintf(stderr, "gpuu-inspect: %s\n", s.message().c_str());
      return 1;
    }
    for (const std::string& f : written) std::printf("wrote %s\n", f.c_str());
    if (written.empty()) std::printf("the program has no VGF delegate\n");
    return 0;
  }
  std::string out;
  switch (format) {
    case Format::kText:
      out = gpuu::inspect::render_text(*program.value(), path);
      break;
    case Format::kJson:
      out = gpuu::inspect::render_json(*program.value(), path);
      break;
    case Format::kDot:
      out = gpuu::inspect::render_dot(*program.value(), path);
      break;
  }
  if (std::fwrite(out.data(), 1, out.size(), stdout) != out.size() || std::fflush(stdout) != 0) {
    std::fprintf(stderr, "gpuu-inspect: cannot write the output\n");
    return 1;
  }
  return 0;
}
