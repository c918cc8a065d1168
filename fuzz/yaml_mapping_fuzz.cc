// Fuzzes the YAML readers of format/yaml_mapping.h: the flat data mapping
// (-dm), the two-level layer mapping (-lm) and PlainYamlType. No input may
// crash them, and a mapping either reads, written back with every scalar
// double-quoted, reads the same (as strings).
#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "lockstep/format/yaml_mapping.h"

using lockstep::fuzz::Require;
using lockstep::fuzz::YamlQuoted;

namespace {

// The two-level mapping `doc` written back with its scalars quoted; a
// section's null scalar stays empty (`key:`), other scalars are quoted.
std::string TwoLevelQuoted(const lockstep::YamlTwoLevel& doc) {
  if (doc.sections.empty()) return doc.null_document ? "" : "{}\n";
  std::string out;
  for (const lockstep::YamlSection& s : doc.sections) {
    out += YamlQuoted(s.key.text) + ":";
    if (s.is_mapping && s.entries.empty()) out += " {}";
    if (!s.is_mapping && s.scalar.type != lockstep::YamlType::kNull)
      out += " " + YamlQuoted(s.scalar.text);
    out += "\n";
    for (const auto& [k, v] : s.entries) {
      out += "  " + YamlQuoted(k.text) + ":";
      if (v.type != lockstep::YamlType::kNull) out += " " + YamlQuoted(v.text);
      out += "\n";
    }
  }
  return out;
}

// A scalar as its rewrite reads back: null stays null, the rest are texts.
std::string Text(const lockstep::YamlScalar& s) {
  return s.type == lockstep::YamlType::kNull ? "null" : YamlQuoted(s.text);
}

// The texts of `doc`, for comparing a document with its rewrite; "" when
// two keys of one mapping have the same text (an int 1 and a str '1'),
// which quoted would be one key given twice.
std::string Texts(const lockstep::YamlTwoLevel& doc) {
  std::string out = doc.null_document ? "null;" : "";
  std::set<std::string> top;
  for (const lockstep::YamlSection& s : doc.sections) {
    if (!top.insert(s.key.text).second) return "";
    out += YamlQuoted(s.key.text) + (s.is_mapping ? "{" : "=" + Text(s.scalar));
    std::set<std::string> keys;
    for (const auto& [k, v] : s.entries) {
      if (!keys.insert(k.text).second) return "";
      out += YamlQuoted(k.text) + "=" + Text(v) + ",";
    }
    out += "}";
  }
  return out;
}

void FuzzTwoLevel(const std::string& text) {
  for (size_t n = 0; n < text.size() && n < 64; ++n)
    (void)lockstep::YamlTypeName(lockstep::PlainYamlType(text.substr(0, n)));
  auto doc = lockstep::ParseYamlTwoLevel(text, "fuzz.yaml");
  if (!doc.ok()) {
    Require(!doc.status().message().empty());
    return;
  }
  for (const lockstep::YamlSection& s : doc->sections) {
    Require(s.key.line > 0 && (s.is_mapping || s.entries.empty()));
    for (const auto& [k, v] : s.entries) {
      Require(k.line == v.line && k.line >= s.key.line);
      Require(k.type != lockstep::YamlType::kNull ||
              lockstep::PlainYamlType(k.text) == lockstep::YamlType::kNull);
    }
  }
  // Quoted, a null value stays null; every other scalar is a str.
  std::string texts = Texts(*doc);
  if (texts.empty()) return;
  auto back = lockstep::ParseYamlTwoLevel(TwoLevelQuoted(*doc), "again.yaml");
  Require(back.ok() && Texts(*back) == texts);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  FuzzTwoLevel(text);
  auto pairs = lockstep::ParseYamlMapping(text, "fuzz.yaml");
  if (!pairs.ok()) {
    Require(!pairs.status().message().empty());
    return 0;
  }
  std::string again;
  for (const auto& [k, v] : *pairs) {
    Require(!k.empty());
    again += YamlQuoted(k) + ": " + YamlQuoted(v) + "\n";
  }
  auto back = lockstep::ParseYamlMapping(again, "again.yaml");
  Require(back.ok() && *back == *pairs);
  return 0;
}
