// Custom shader attributes, GLSL compilation at export, the SPIR-V form.
#include "kernels/custom_shader.h"

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <fstream>
#include <iterator>

#include "base/base64.h"
#include "base/json.h"
#include "base/json_writer.h"

namespace gpuu::kernels {
namespace {

std::string attr_string(const graph::Node& n, const char* name) {
  auto it = n.attrs.find(name);
  if (it == n.attrs.end()) return "";
  const std::string* s = std::get_if<std::string>(&it->second);
  return s ? *s : "";
}

Result<std::array<uint32_t, 3>> triple(const JsonValue& v, const std::string& what) {
  std::array<uint32_t, 3> out{1, 1, 1};
  if (!v.is_array() || v.as_array().empty() || v.as_array().size() > 3) {
    return err(StatusCode::kInvalidArgument, what, " must be 1 to 3 positive integers");
  }
  for (size_t i = 0; i < v.as_array().size(); ++i) {
    const JsonValue& e = v.as_array()[i];
    if (!e.is_integer() || e.as_integer() < 1 || e.as_integer() > 65535) {
      return err(StatusCode::kInvalidArgument, what, " entry ", i, " must be an integer in [1, 65535]");
    }
    out[i] = static_cast<uint32_t>(e.as_integer());
  }
  return out;
}

void write_json(JsonWriter& w, const JsonValue& v) {
  switch (v.kind()) {
    case JsonValue::Kind::kNull: w.null(); break;
    case JsonValue::Kind::kBool: w.value(v.as_bool()); break;
    case JsonValue::Kind::kNumber:
      if (v.is_integer()) {
        w.value(v.as_integer());
      } else {
        w.value(v.as_number());
      }
      break;
    case JsonValue::Kind::kString: w.value(v.as_string()); break;
    case JsonValue::Kind::kArray:
      w.begin_array();
      for (const JsonValue& e : v.as_array()) write_json(w, e);
      w.end_array();
      break;
    case JsonValue::Kind::kObject:
      w.begin_object();
      for (const auto& m : v.as_object()) {
        w.key(m.first);
        write_json(w, m.second);
      }
      w.end_object();
      break;
  }
}

}  // namespace

Result<CustomShader> parse_custom_shader(const graph::Node& node) {
  auto fail = [&](const std::string& why) {
    return err(StatusCode::kInvalidArgument, "custom shader '", node.name, "': ", why);
  };
  CustomShader s;
  s.operator_name = attr_string(node, "operator_name");
  Result<JsonValue> doc = parse_json(attr_string(node, "implementation_attrs"));
  if (!doc.ok() || !doc->is_object()) return fail("implementation_attrs is not a JSON object");
  const JsonValue& j = doc.value();
  const JsonValue* entry = j.find("entry_point");
  s.entry_point = entry && entry->is_string() ? entry->as_string() : "main";
  const JsonValue* language = j.find("shader_language");
  s.language = language && language->is_string() ? language->as_string() : "GLSL";
  const JsonValue* code = j.find("shader_code");
  if (!code || !code->is_string() || code->as_string().empty()) return fail("needs a non-empty \"shader_code\"");
  if (s.language == "SPIR-V") {
    Result<std::vector<uint8_t>> bytes = base64_decode(code->as_string());
    if (!bytes.ok()) return fail("\"shader_code\" is not base64 SPIR-V: " + bytes.status().message());
    if (bytes->size() < 20 || bytes->size() % 4 != 0) return fail("\"shader_code\" is too short for SPIR-V");
    s.spirv.resize(bytes->size() / 4);
    std::memcpy(s.spirv.data(), bytes->data(), bytes->size());
    if (s.spirv[0] != 0x07230203u) return fail("\"shader_code\" does not start with the SPIR-V magic number");
  } else if (s.language == "GLSL") {
    s.glsl = code->as_string();
  } else {
    return fail("shader_language '" + s.language + "' is neither GLSL nor SPIR-V");
  }
  if (const JsonValue* ws = j.find("workgroup_sizes")) {
    Result<std::array<uint32_t, 3>> t = triple(*ws, "\"workgroup_sizes\"");
    if (!t.ok()) return fail(t.status().message());
    s.workgroup_sizes = t.value();
  }
  if (const JsonValue* d = j.find("dispatch")) {
    Result<std::array<uint32_t, 3>> t = triple(*d, "\"dispatch\"");
    if (!t.ok()) return fail(t.status().message());
    s.dispatch = t.value();
  }
  // Bindings: set 0, storage buffers, together a permutation of 0..n-1.
  size_t n_in = 0, n_out = node.outputs.size();
  for (graph::ValueId v : node.inputs) n_in += v >= 0 ? 1 : 0;
  std::vector<int> seen(n_in + n_out, 0);
  for (int pass = 0; pass < 2; ++pass) {
    size_t count = pass == 0 ? n_in : n_out;
    for (size_t i = 0; i < count; ++i) {
      std::string prefix = std::string(pass == 0 ? "input_" : "output_") + std::to_string(i) + "_";
      const JsonValue* b = j.find(prefix + "binding");
      uint32_t binding = static_cast<uint32_t>(pass == 0 ? i : n_in + i);  // default: inputs, then outputs
      if (b) {
        if (!b->is_integer() || b->as_integer() < 0) return fail(prefix + "binding must be a non-negative integer");
        binding = static_cast<uint32_t>(b->as_integer());
      }
      const JsonValue* set = j.find(prefix + "descriptorset");
      if (set && (!set->is_integer() || set->as_integer() != 0)) {
        return fail(prefix + "descriptorset must be 0 (one descriptor set)");
      }
      const JsonValue* type = j.find(prefix + "vkdescriptortype");
      if (type && (!type->is_string() || type->as_string() != "VK_DESCRIPTOR_TYPE_STORAGE_BUFFER")) {
        return fail(prefix + "vkdescriptortype must be VK_DESCRIPTOR_TYPE_STORAGE_BUFFER");
      }
      if (binding >= seen.size() || seen[binding]++) {
        return fail("bindings must be 0.." + std::to_string(seen.size() - 1) + ", each used once (" + prefix +
                    "binding is " + std::to_string(binding) + ")");
      }
      (pass == 0 ? s.input_bindings : s.output_bindings).push_back(binding);
    }
  }
  return s;
}

Result<std::vector<uint32_t>> compile_glsl_compute(const std::string& source, const std::string& what) {
  char dir_template[] = "/tmp/gpuu-glslc-XXXXXX";
  const char* dir = mkdtemp(dir_template);
  if (!dir) return err(StatusCode::kIo, "compiling ", what, ": cannot make a temporary directory");
  std::string src = std::string(dir) + "/shader.comp", spv = std::string(dir) + "/shader.spv",
              log = std::string(dir) + "/glslc.log";
  std::ofstream(src) << source;
  std::string cmd = "glslc -fshader-stage=compute --target-env=vulkan1.2 -O -o '" + spv + "' '" + src + "' > '" +
                    log + "' 2>&1";
  int rc = std::system(cmd.c_str());
  std::ifstream log_in(log);
  std::string messages((std::istreambuf_iterator<char>(log_in)), std::istreambuf_iterator<char>());
  std::ifstream spv_in(spv, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(spv_in)), std::istreambuf_iterator<char>());
  std::remove(src.c_str());
  std::remove(spv.c_str());
  std::remove(log.c_str());
  rmdir(dir);
  if (rc != 0 || bytes.empty() || bytes.size() % 4 != 0) {
    return err(StatusCode::kUnsupported, "compiling ", what, " with glslc failed",
               messages.empty() ? std::string(" (is glslc installed?)") : ": " + messages);
  }
  std::vector<uint32_t> words(bytes.size() / 4);
  std::memcpy(words.data(), bytes.data(), bytes.size());
  return words;
}

Result<graph::AttrMap> attrs_with_spirv(const graph::Node& node) {
  GPUU_ASSIGN_OR_RETURN(CustomShader shader, parse_custom_shader(node));
  graph::AttrMap attrs = node.attrs;
  if (shader.language == "SPIR-V") return attrs;
  GPUU_ASSIGN_OR_RETURN(std::vector<uint32_t> words,
                        compile_glsl_compute(shader.glsl, "custom shader '" + node.name + "'"));
  Result<JsonValue> doc = parse_json(std::get<std::string>(node.attrs.at("implementation_attrs")));
  JsonWriter w;
  w.begin_object();
  for (const auto& m : doc->as_object()) {
    if (m.first == "shader_language" || m.first == "shader_code") continue;
    w.key(m.first);
    write_json(w, m.second);
  }
  w.key("shader_language").value("SPIR-V");
  w.key("shader_code").value(base64_encode(reinterpret_cast<const uint8_t*>(words.data()), words.size() * 4));
  w.end_object();
  attrs["implementation_attrs"] = w.str();
  return attrs;
}

std::array<uint32_t, 3> custom_dispatch(const CustomShader& shader, int64_t elements) {
  if (shader.dispatch) return *shader.dispatch;
  uint64_t per_group = uint64_t{shader.workgroup_sizes[0]} * shader.workgroup_sizes[1] * shader.workgroup_sizes[2];
  uint64_t groups = (static_cast<uint64_t>(elements) + per_group - 1) / per_group;
  return {static_cast<uint32_t>(groups == 0 ? 1 : groups), 1, 1};
}

}  // namespace gpuu::kernels
