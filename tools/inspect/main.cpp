// gpuu-inspect: prints what a program file holds (delegates, plan, compile
// specs, constants, deduplication) as text, JSON (--json) or Graphviz (--dot).
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "backends/vgf/vgf_export.h"
#include "inspect/inspect.h"
#include "inspect/ops_table.h"
#include "program/program_loader.h"

namespace {

const char kUsage[] =
    "usage: gpuu-inspect [--json | --dot] PROGRAM\n"
    "  (default)  delegates in plan order, nodes per partition, compile specs,\n"
    "             CPU-fallback steps, inputs/outputs, constants, deduplication\n"
    "  --json     the same, machine-readable\n"
    "  --dot      a Graphviz graph: nodes coloured by backend, edges via tensors\n"
    "usage: gpuu-inspect --ops [--json]\n"
    "             every op gpuu has: inputs, attributes, dtypes, and which\n"
    "             backends (CPU, Vulkan, VGF with its TOSA form) run it\n"
    "usage: gpuu-inspect --extract-vgf DIR PROGRAM\n"
    "             writes each VGF delegate as DIR/<delegate index>.vgf with a\n"
    "             scenario JSON for Arm's scenario runner beside it\n";

}  // namespace

int main(int argc, char** argv) {
  enum class Format { kText, kJson, kDot } format = Format::kText;
  const char* path = nullptr;
  const char* extract_dir = nullptr;
  bool ops = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--extract-vgf") == 0) {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "gpuu-inspect: --extract-vgf needs a directory\n%s", kUsage);
        return 1;
      }
      extract_dir = argv[++i];
    } else if (std::strcmp(argv[i], "--ops") == 0) {
      ops = true;
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
