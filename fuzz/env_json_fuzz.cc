// Fuzzes the env.json reader and the fingerprint diff: no input may crash
// them; whatever reads must survive a write and a re-read unchanged, and
// differ from itself in nothing.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "lockstep/compare/env_diff.h"
#include "lockstep/format/env_fingerprint.h"

namespace {

std::string_view g_input;  // the input being tried, saved when a check fails

void Require(bool ok) {
  if (ok) return;
  if (FILE* f = std::fopen("env_json_fuzz.failure", "wb")) {
    std::fwrite(g_input.data(), 1, g_input.size(), f);
    std::fclose(f);
  }
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  g_input = text;
  auto fp = lockstep::DecodeEnvFingerprint(text, "env.json");
  if (!fp.ok()) {
    Require(!fp.status().message().empty());
    return 0;
  }
  std::string out = lockstep::EncodeEnvFingerprint(*fp);
  auto back = lockstep::DecodeEnvFingerprint(out, "rewritten.json");
  Require(back.ok() && *back == *fp);
  Require(lockstep::EncodeEnvFingerprint(*back) == out);
  Require(lockstep::DiffEnvFingerprints(*fp, *back).differences.empty());
  lockstep::EnvDiff d = lockstep::DiffEnvFingerprints(*fp, {});
  for (const auto& x : d.differences) {
    Require(!lockstep::DescribeEnvDifference(x).empty());
  }
  return 0;
}
