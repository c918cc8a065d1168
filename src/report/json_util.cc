#include "json_util.h"

#include <cmath>

#include "lockstep/report/outcome.h"

namespace lockstep::internal {
namespace {

// Length of the well-formed UTF-8 sequence at s[i], or 0 if it is not one
// (overlong forms, surrogates and code points above U+10FFFF are rejected).
size_t Utf8SequenceLength(std::string_view s, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = byte(i);
  if (c < 0x80) return 1;
  size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
  if (n == 0 || c > 0xF4 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  }
  unsigned char c1 = byte(i + 1);
  if (c == 0xE0 && c1 < 0xA0) return 0;   // overlong
  if (c == 0xED && c1 >= 0xA0) return 0;  // surrogate
  if (c == 0xF0 && c1 < 0x90) return 0;   // overlong
  if (c == 0xF4 && c1 >= 0x90) return 0;  // above U+10FFFF
  return n;
}

void WriteGaps(const CompareResult& r, JsonWriter* w) {
  w->StartArray();
  for (const AlignmentGap& g : r.gaps) {
    w->StartObject();
    w->Key("entry");
    JsonString(w, g.entry);
    w->Key("kind");
    w->String(g.in_target ? "inserted" : "missing");
    w->Key("rank");
    w->Int(g.rank);
    if (g.step >= 0) {
      w->Key("step");
      w->Int(g.step);
    }
    w->Key("position");
    w->Uint64(g.position);
    w->EndObject();
  }
  w->EndArray();
}

// "largest_errors": [{"row_index", "name", "verdict", "error", "cosine",
// "max_abs_err", "messages"}], worst first.
void WriteLargestErrors(const CompareResult& r, JsonWriter* w) {
  w->Key("largest_errors");
  w->StartArray();
  for (size_t i : r.largest_errors) {
    const CompareRow& row = r.rows[i];
    w->StartObject();
    w->Key("row_index");
    w->Uint64(i);
    w->Key("name");
    JsonString(w, row.npu_name());
    w->Key("verdict");
    w->String(VerdictName(row.verdict));
    w->Key("error");
    JsonNumberOrNull(w, row.error);
    w->Key("cosine");
    JsonNumberOrNull(w, row.cosine);
    w->Key("max_abs_err");
    JsonNumberOrNull(w, row.max_abs_err);
    w->Key("messages");
    w->StartArray();
    for (const std::string& m : row.messages) JsonString(w, m);
    w->EndArray();
    w->EndObject();
  }
  w->EndArray();
}

void WriteFirstDivergence(const CompareResult& r, JsonWriter* w) {
  const FirstDivergence& fd = r.first_divergence;
  if (!fd.found) {
    w->Null();
    return;
  }
  const CompareRow* row =
      fd.row_index < r.rows.size() ? &r.rows[fd.row_index] : nullptr;
  w->StartObject();
  w->Key("entry");
  JsonString(w, fd.entry);
  w->Key("rank");
  w->Int(fd.rank);
  w->Key("step");
  w->Int(fd.step);
  w->Key("reason");
  w->String(DivergenceReasonName(fd.reason));
  w->Key("detail");
  JsonString(w, fd.detail);
  w->Key("drift");
  w->Bool(fd.drift);
  w->Key("row");
  JsonString(w, fd.row);
  w->Key("row_index");
  if (row) {
    w->Uint64(fd.row_index);
  } else {
    w->Null();
  }
  w->Key("cosine");
  JsonNumberOrNull(w, row ? row->cosine : NAN);
  w->Key("max_abs_err");
  JsonNumberOrNull(w, row ? row->max_abs_err : NAN);
  w->Key("max_rel_err");
  JsonNumberOrNull(w, row ? row->max_rel_err : NAN);
  w->EndObject();
}

void WriteHop(const OriginHop& h, bool with_from, JsonWriter* w) {
  w->StartObject();
  w->Key("rank");
  w->Int(h.rank);
  w->Key("step");
  w->Int(h.step);
  w->Key("entry");
  JsonString(w, h.entry);
  if (with_from) {
    w->Key("from");
    w->Int(h.from);
  }
  w->EndObject();
}

// "origin": null | {"rank", "step", "entry", "reason", "detail",
// "row_index", "line", "path": [{"rank", "step", "entry", "from"}],
// "others": [{"rank", "step", "entry"}]}.
void WriteOrigin(const CompareResult& r, JsonWriter* w) {
  const RankOrigin& o = r.origin;
  w->Key("origin");
  if (!o.found) {
    w->Null();
    return;
  }
  w->StartObject();
  w->Key("rank");
  w->Int(o.rank);
  w->Key("step");
  w->Int(o.step);
  w->Key("entry");
  JsonString(w, o.entry);
  w->Key("reason");
  w->String(DivergenceReasonName(o.reason));
  w->Key("detail");
  JsonString(w, o.detail);
  w->Key("row_index");
  if (o.row_index < r.rows.size()) {
    w->Uint64(o.row_index);
  } else {
    w->Null();
  }
  w->Key("line");
  JsonString(w, OriginLine(o));
  w->Key("path");
  w->StartArray();
  for (const OriginHop& h : o.path) WriteHop(h, true, w);
  w->EndArray();
  w->Key("others");
  w->StartArray();
  for (const OriginHop& h : o.others) WriteHop(h, false, w);
  w->EndArray();
  w->EndObject();
}

void WriteCounts(const CompareSummary& s, JsonWriter* w) {
  const std::pair<const char*, int64_t> counts[] = {{"rows", s.rows},
                                                    {"pass", s.pass},
                                                    {"warning", s.warning},
                                                    {"error", s.error},
                                                    {"unmatched", s.unmatched}};
  for (const auto& [key, n] : counts) {
    w->Key(key);
    w->Int64(n);
  }
  w->Key("msprobe");
  w->StartObject();
  w->Key("pass");
  w->Int64(s.msprobe_pass);
  w->Key("warning");
  w->Int64(s.msprobe_warning);
  w->Key("error");
  w->Int64(s.msprobe_error);
  w->EndObject();
}

}  // namespace

std::string SanitizeUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    size_t n = Utf8SequenceLength(s, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(s, i, n);
      i += n;
    }
  }
  return out;
}

void JsonString(JsonWriter* w, std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    size_t n = Utf8SequenceLength(s, i);
    if (n == 0) break;
    i += n;
  }
  if (i == s.size()) {  // the common case: already valid, no copy
    w->String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
    return;
  }
  std::string clean = SanitizeUtf8(s);
  w->String(clean.data(), static_cast<rapidjson::SizeType>(clean.size()));
}

void JsonNumberOrNull(JsonWriter* w, double x) {
  if (std::isfinite(x)) {
    w->Double(x);
  } else {
    w->Null();
  }
}

void WriteSummaryObject(const CompareResult& r, JsonWriter* w) {
  w->StartObject();
  w->Key("version");
  w->Int(1);
  w->Key("mode");
  w->String(CompareModeName(r.mode));
  w->Key("target");
  JsonString(w, r.target_path);
  w->Key("baseline");
  JsonString(w, r.baseline_path);
  w->Key("outcome");
  w->String(OutcomeName(OverallOutcome(r)));
  w->Key("verdict_line");
  JsonString(w, VerdictLine(r));
  WriteCounts(r.summary, w);
  w->Key("subject");
  w->String(r.subject == CompareSubject::kCheckpoints ? "checkpoints"
                                                      : "dumps");
  w->Key("first_divergence");
  WriteFirstDivergence(r, w);
  if (r.origin.analyzed) WriteOrigin(r, w);
  if (r.subject == CompareSubject::kCheckpoints) WriteLargestErrors(r, w);
  w->Key("gaps");
  WriteGaps(r, w);
  w->Key("missing_steps");
  w->StartArray();
  for (int64_t step : r.missing_steps) w->Int64(step);
  w->EndArray();
  w->Key("missing_ranks");
  w->StartArray();
  for (const auto& m : r.missing_ranks) {
    w->StartObject();
    w->Key("step");
    w->Int64(m.step);
    w->Key("rank");
    w->Int64(m.rank);
    w->Key("why");
    w->String(m.why.data(), static_cast<rapidjson::SizeType>(m.why.size()));
    w->EndObject();
  }
  w->EndArray();
  w->Key("warnings");
  w->StartArray();
  for (const std::string& s : r.warnings) JsonString(w, s);
  w->EndArray();
  w->EndObject();
}

std::string ScriptSafeJson(std::string_view json) {
  std::string out;
  out.reserve(json.size() + json.size() / 64);
  for (size_t i = 0; i < json.size(); ++i) {
    char c = json[i];
    if (c == '<') {
      out += "\\u003c";
    } else if (c == '>') {
      out += "\\u003e";
    } else if (c == '&') {
      out += "\\u0026";
    } else if (c == '\xE2' && i + 2 < json.size() && json[i + 1] == '\x80' &&
               (json[i + 2] == '\xA8' || json[i + 2] == '\xA9')) {
      out += json[i + 2] == '\xA8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace lockstep::internal
