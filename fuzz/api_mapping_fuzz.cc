// Fuzzes the API mapping file reader (-am FILE): no input may crash it, an
// error says something, and the entries it reads, written back as a list
// with every scalar double-quoted, read the same.
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "lockstep/format/api_mapping_file.h"

using lockstep::fuzz::Require;
using lockstep::fuzz::YamlQuoted;

namespace {

bool Same(const lockstep::ApiMappingEntry& a,
          const lockstep::ApiMappingEntry& b) {
  return a.ms_api == b.ms_api && a.pt_api == b.pt_api && a.ms == b.ms &&
         a.pt == b.pt;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto entries = lockstep::ParseApiMappingFile(text, "fuzz.yaml");
  if (!entries.ok()) {
    Require(!entries.status().message().empty());
    return 0;
  }
  static constexpr const char* kTerms[] = {"args", "output", "parameters",
                                           "parameters_grad"};
  std::string again;
  for (const auto& e : *entries) {
    Require(!e.ms_api.empty() && !e.pt_api.empty());
    again += "- ms_api: " + YamlQuoted(e.ms_api) +
             "\n  pt_api: " + YamlQuoted(e.pt_api) + "\n";
    for (int t = 0; t < lockstep::kApiMappingTerms; ++t) {
      for (const char* side : {"ms_", "pt_"}) {
        const auto& items = side[0] == 'm' ? e.ms[t] : e.pt[t];
        again += std::string("  ") + side + kTerms[t] + ": [";
        for (size_t i = 0; i < items.size(); ++i)
          again += (i ? ", " : "") + YamlQuoted(items[i]);
        again += "]\n";
      }
    }
  }
  auto back = lockstep::ParseApiMappingFile(again, "again.yaml");
  Require(back.ok() && back->size() == entries->size());
  for (size_t i = 0; i < back->size(); ++i)
    Require(Same((*back)[i], (*entries)[i]));
  return 0;
}
