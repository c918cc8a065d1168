// Fuzzes the msprobe config.json parser and the filters it feeds: no input
// may crash them; whatever parses must be a valid config whose filters
// agree with it, and whatever fails must fail as Corruption (bad JSON) or
// InvalidArgument (bad value) with a message that names the file.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "lockstep/format/probe_config.h"

namespace {

std::string_view g_input;  // the input being tried, saved when a check fails

void Require(bool ok) {
  if (ok) return;
  if (FILE* f = std::fopen("probe_config_fuzz.failure", "wb")) {
    std::fwrite(g_input.data(), 1, g_input.size(), f);
    std::fclose(f);
  }
  std::abort();
}

bool SortedUnique(const std::vector<int64_t>& v) {
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] < 0 || (i > 0 && v[i] <= v[i - 1])) return false;
  }
  return true;
}

void CheckParsed(const lockstep::ProbeConfig& c) {
  Require(lockstep::ValidateProbeConfig(c).ok());
  Require(SortedUnique(c.steps) && SortedUnique(c.ranks));
  Require(c.forward || c.backward);
  Require(c.input || c.output);
  lockstep::ProbeFilter f(c);
  for (int64_t s : c.steps) Require(f.StepWanted(s));
  for (int64_t r : c.ranks) Require(f.RankWanted(r));
  if (c.steps.empty()) Require(f.StepWanted(0) && f.StepWanted(1 << 20));
  // Walking the scope's own names in order opens and closes the interval.
  if (c.scope.size() == 2 && c.list.empty()) {
    Require(f.ForwardWanted(c.scope[0]));
    if (c.scope[1] != c.scope[0]) Require(f.ForwardWanted(c.scope[1]));
    Require(!f.ForwardWanted(c.scope[0]));  // closed for the step
  }
  for (const std::string& item : c.list) {
    f.ResetStep();
    if (c.scope.empty()) Require(f.ForwardWanted(item));
  }
}

void CheckRange(std::string_view text) {
  if (text.size() > 24) return;
  auto r = lockstep::ParseIndexRange(text);
  if (!r.ok()) {
    Require(r.status().code() == lockstep::StatusCode::kInvalidArgument);
    return;
  }
  Require(!r->empty());
  for (size_t i = 1; i < r->size(); ++i) Require((*r)[i] == (*r)[i - 1] + 1);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  g_input = text;
  auto c = lockstep::ParseProbeConfig(text, "fuzz/config.json");
  if (c.ok()) {
    CheckParsed(*c);
  } else {
    lockstep::StatusCode code = c.status().code();
    Require(code == lockstep::StatusCode::kCorruption ||
            code == lockstep::StatusCode::kInvalidArgument);
    Require(c.status().message().rfind("fuzz/config.json", 0) == 0);
  }
  CheckRange(text);
  return 0;
}
