// JSON helpers shared by the summary JSON and the data embedded in the HTML
// report, so that both describe a comparison the same way.
// Thread safety: pure functions.
#ifndef LOCKSTEP_SRC_REPORT_JSON_UTIL_H_
#define LOCKSTEP_SRC_REPORT_JSON_UTIL_H_

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <string>
#include <string_view>

#include "lockstep/compare/result.h"

namespace lockstep::internal {

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

// `s` with every byte that is not part of a well-formed UTF-8 sequence
// replaced by U+FFFD, so that the JSON written is always valid.
std::string SanitizeUtf8(std::string_view s);

// Writes a JSON string (sanitized UTF-8).
void JsonString(JsonWriter* w, std::string_view s);

// Writes a finite number; NaN and ±Inf are written as null.
void JsonNumberOrNull(JsonWriter* w, double x);

// Writes the summary object whose schema summary_json.h documents.
void WriteSummaryObject(const CompareResult& result, JsonWriter* w);

// Makes JSON text safe inside an HTML <script> element: '<', '>', '&' and
// U+2028/U+2029 become \uXXXX escapes (so "</script>" and "<!--" cannot end
// or confuse the element). REQUIRES: `json` is JSON text, so those characters
// occur only inside strings, where the escapes mean the same.
std::string ScriptSafeJson(std::string_view json);

}  // namespace lockstep::internal

#endif  // LOCKSTEP_SRC_REPORT_JSON_UTIL_H_
