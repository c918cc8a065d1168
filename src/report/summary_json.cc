#include "lockstep/report/summary_json.h"

#include "json_util.h"
#include "lockstep/core/file.h"

namespace lockstep {

std::string RenderSummaryJson(const CompareResult& result) {
  rapidjson::StringBuffer buffer;
  internal::JsonWriter writer(buffer);
  internal::WriteSummaryObject(result, &writer);
  std::string out(buffer.GetString(), buffer.GetSize());
  out += '\n';
  return out;
}

Status WriteSummaryJson(const CompareResult& result, const std::string& path) {
  return WriteFileAtomic(path, RenderSummaryJson(result));
}

}  // namespace lockstep
