// Fuzzes the data-mapping YAML reader: no input may crash it, and a mapping
// it reads, written back with every scalar double-quoted, reads the same.
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "lockstep/format/yaml_mapping.h"

using lockstep::fuzz::Require;

namespace {

std::string Quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto pairs = lockstep::ParseYamlMapping(text, "fuzz.yaml");
  if (!pairs.ok()) {
    Require(!pairs.status().message().empty());
    return 0;
  }
  std::string again;
  for (const auto& [k, v] : *pairs) {
    Require(!k.empty());
    again += Quoted(k) + ": " + Quoted(v) + "\n";
  }
  auto back = lockstep::ParseYamlMapping(again, "again.yaml");
  Require(back.ok() && *back == *pairs);
  return 0;
}
