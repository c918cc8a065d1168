// Fuzzes the JSON reader, the dump/stack/construct readers and the JSON
// writer: no input may crash them, and whatever parses must survive a write
// and a re-read unchanged.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/format/dump_reader.h"
#include "lockstep/format/dump_writer.h"
#include "lockstep/format/json_reader.h"
#include "lockstep/format/json_writer.h"
#include "lockstep/format/module_parents.h"

namespace {

std::string_view g_input;  // the input being tried, saved when a check fails

void Require(bool ok) {
  if (ok) return;
  // An invariant broke: keep the input, then crash so the fuzzer reports it.
  if (FILE* f = std::fopen("dump_json_fuzz.failure", "wb")) {
    std::fwrite(g_input.data(), 1, g_input.size(), f);
    std::fclose(f);
  }
  std::abort();
}

void CheckTreeRoundTrip(std::string_view text) {
  auto v = lockstep::ParsePyJson(text, "fuzz.json");
  if (!v.ok()) return;
  for (int indent : {-1, 1}) {
    std::string out = lockstep::ToPyJson(*v, indent);
    auto back = lockstep::ParsePyJson(out, "rewritten.json");
    Require(back.ok() && *back == *v);
    Require(lockstep::ToPyJson(*back, indent) == out);
  }
}

// The streaming reader (compare's) agrees with the tree reader: the same
// entries in the same order, or the same error; a repeated entry name makes
// it ask for the tree (NotSupported).
void CheckStreamAgrees(std::string_view text,
                       const lockstep::StatusOr<lockstep::DumpFile>& d) {
  std::vector<lockstep::DumpEntry> seen;
  auto s = lockstep::ReadDumpJsonStreamingFromString(
      text, "rank0/dump.json", [&seen](lockstep::DumpEntry e, size_t i) {
        Require(i == seen.size());
        seen.push_back(std::move(e));
        return lockstep::Status::Ok();
      });
  if (!s.ok() && s.status().code() == lockstep::StatusCode::kNotSupported)
    return;
  Require(s.ok() == d.ok());
  if (!d.ok()) {
    Require(s.status().message() == d.status().message() ||
            s.status().message().find(": entry ") != std::string::npos);
    return;
  }
  Require(seen.size() == d->entries.size() && s->entries.empty());
  for (size_t i = 0; i < seen.size(); ++i) {
    Require(seen[i].name == d->entries[i].name);
    Require(seen[i].value == d->entries[i].value);
  }
}

// The fast reader (compare's first try) agrees with the tree reader wherever
// it decides: the same entries, values and top-level fields. Where it does
// not decide, the general reader runs instead, so nothing is required.
void CheckFastAgrees(std::string_view text,
                     const lockstep::StatusOr<lockstep::DumpFile>& d) {
  std::vector<lockstep::DumpEntry> seen;
  auto f = lockstep::ParseJsonMembersFast(
      text, "data",
      [&seen](std::string_view key, lockstep::JsonNode v, size_t parsed) {
        Require(v.kind() == lockstep::PyValue::Kind::kDict);
        seen.push_back({std::string(key), v.ToPyValue()});
        (void)parsed;
        return lockstep::Status::Ok();
      });
  Require(f.ok());  // the sink never fails here
  if (!f->decided) return;
  auto whole = lockstep::ParsePyJson(text, "fuzz.json");
  Require(whole.ok() && whole->kind() == lockstep::PyValue::Kind::kDict);
  const auto& top = whole->fields();
  Require(top.size() == f->top.size());
  for (size_t i = 0; i < top.size(); ++i) {
    Require(top[i].first == f->top[i].first);
    if (top[i].first == "data" &&
        top[i].second.kind() == lockstep::PyValue::Kind::kDict) {
      Require(f->top[i].second == lockstep::PyValue::Dict({}));
      const auto& entries = top[i].second.fields();
      Require(entries.size() == seen.size());
      for (size_t k = 0; k < seen.size(); ++k) {
        Require(entries[k].first == seen[k].name);
        Require(entries[k].second == seen[k].value);
      }
    } else {
      Require(top[i].second == f->top[i].second);
    }
  }
  (void)d;
}

// Small limits (read_budget.h) refuse with NotSupported and otherwise agree
// with the default ones: a limit never changes what is read.
void CheckLimitsAgree(std::string_view text) {
  lockstep::ReadLimits small;
  small.string_bytes = 8;
  small.objects = 16;
  auto limited = lockstep::ParsePyJson(text, "fuzz.json", small);
  auto whole = lockstep::ParsePyJson(text, "fuzz.json");
  if (limited.ok()) {
    Require(whole.ok() && *whole == *limited);
  } else if (limited.status().code() != lockstep::StatusCode::kNotSupported) {
    Require(!whole.ok());
  }
}

void CheckDumpRoundTrip(std::string_view text) {
  auto d = lockstep::ReadDumpJsonFromString(text, "rank0/dump.json");
  CheckStreamAgrees(text, d);
  CheckFastAgrees(text, d);
  if (!d.ok()) return;
  std::string out = lockstep::EncodeDumpJson(*d);
  auto back = lockstep::ReadDumpJsonFromString(out, "rank0/dump.json");
  Require(back.ok() && back->entries.size() == d->entries.size());
  for (size_t i = 0; i < d->entries.size(); ++i) {
    Require(back->entries[i].name == d->entries[i].name);
    Require(back->entries[i].value == d->entries[i].value);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  g_input = text;
  CheckTreeRoundTrip(text);
  CheckLimitsAgree(text);
  CheckDumpRoundTrip(text);
  (void)lockstep::ReadStackJsonFromString(text, "stack.json");
  auto construct =
      lockstep::ReadConstructJsonFromString(text, "construct.json");
  if (construct.ok()) {
    lockstep::ModuleParents p =
        lockstep::ModuleParentsFrom(*construct, "construct.json");
    for (const auto& [name, parent] : p.parent) {
      (void)lockstep::ModuleOfEntry(name);
      (void)lockstep::ModuleOfEntry(parent);
    }
  }
  return 0;
}
