// A reference decoder of the HTML report's compact table (TABLE in
// src/report/html_internal.h), written from that schema independently of
// the page's script, for the tests; and the pieces of a page and its table
// file that hold the data.
#ifndef LOCKSTEP_TESTS_REPORT_HTML_TABLE_DECODE_H_
#define LOCKSTEP_TESTS_REPORT_HTML_TABLE_DECODE_H_

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <charconv>
#include <cmath>
#include <string>
#include <vector>

#include "lockstep/numerics/pyfloat.h"

namespace lockstep::testing {

// Stands for a derived cell (`true`) until DecodeTable fills it.
inline const std::string kDerivedCell = "\x7f(derived)";

struct DecodedTable {
  size_t n = 0;
  size_t width = 0;
  std::vector<size_t> index;                    // empty: rows 0..n-1
  std::vector<std::vector<std::string>> cells;  // [column][row]
  std::vector<std::string> verdict, rank, step, notes;
};

// One COLUMN of n cells. Fails the test on a malformed column (a count other
// than n, a null without a left column, a shared prefix that is not ASCII
// or longer than the cell above, a dict index out of range).
inline std::vector<std::string> DecodeColumn(
    const rapidjson::Value& tokens, size_t n, const rapidjson::Value& dict,
    const std::vector<std::string>* left) {
  std::vector<std::string> out;
  bool from_left = false;
  for (const rapidjson::Value& t : tokens.GetArray()) {
    size_t i = out.size();
    if (t.IsBool()) {
      EXPECT_TRUE(t.GetBool()) << "false at " << i;
      out.push_back(kDerivedCell);
      from_left = false;
    } else if (t.IsArray()) {
      // [k, "x y"]: dict[k] with its U+0001 blanks filled by x, y.
      EXPECT_TRUE(t.Size() == 2 && t[0].IsUint() &&
                  t[0].GetUint() < dict.Size() && t[1].IsString())
          << "template at " << i;
      if (t.Size() != 2 || !t[0].IsUint() || t[0].GetUint() >= dict.Size() ||
          !t[1].IsString())
        return out;
      std::string form = dict[t[0].GetUint()].GetString();
      std::string nums = t[1].GetString(), cell;
      size_t from = 0;
      for (char ch : form) {
        if (ch != '\x01') {
          cell += ch;
          continue;
        }
        size_t to = nums.find(' ', from);
        EXPECT_NE(from, std::string::npos) << "too few numbers at " << i;
        if (from == std::string::npos) return out;
        cell += nums.substr(from, to == std::string::npos ? to : to - from);
        from = to == std::string::npos ? to : to + 1;
      }
      EXPECT_EQ(from, std::string::npos) << "numbers left over at " << i;
      out.push_back(cell);
      from_left = false;
    } else if (t.IsNull()) {
      EXPECT_TRUE(left != nullptr && i < left->size()) << "null at " << i;
      if (!left || i >= left->size()) return out;
      out.push_back((*left)[i]);
      from_left = true;
    } else if (t.IsString()) {
      std::string s(t.GetString(), t.GetStringLength());
      EXPECT_FALSE(s.empty()) << "empty literal at " << i;
      if (s.empty()) return out;
      size_t keep = static_cast<unsigned char>(s[0]) - 35;
      std::string above = i > 0 ? out[i - 1] : "";
      EXPECT_LE(keep, above.size()) << "prefix at " << i;
      if (keep > above.size()) return out;
      for (size_t k = 0; k < keep; ++k)
        EXPECT_LT(static_cast<unsigned char>(above[k]), 0x80) << i;
      out.push_back(above.substr(0, keep) + s.substr(1));
      from_left = false;
    } else if (t.IsInt64() && t.GetInt64() < 0) {
      for (int64_t k = 0; k < -t.GetInt64(); ++k) {
        size_t j = out.size();
        EXPECT_TRUE(j > 0 && (!from_left || j < left->size())) << j;
        if (j == 0 || (from_left && j >= left->size())) return out;
        out.push_back(from_left ? (*left)[j] : out[j - 1]);
      }
    } else {
      EXPECT_TRUE(t.IsUint() && t.GetUint() < dict.Size()) << i;
      if (!t.IsUint() || t.GetUint() >= dict.Size()) return out;
      out.emplace_back(dict[t.GetUint()].GetString(),
                       dict[t.GetUint()].GetStringLength());
      from_left = false;
    }
  }
  EXPECT_EQ(out.size(), n);
  return out;
}

inline DecodedTable DecodeTable(const rapidjson::Value& t) {
  DecodedTable d;
  d.n = t["n"].GetUint64();
  d.width = t["width"].GetUint64();
  if (t.HasMember("index")) {
    for (const rapidjson::Value& i : t["index"].GetArray())
      d.index.push_back(i.GetUint64());
  }
  const rapidjson::Value& dict = t["dict"];
  EXPECT_EQ(t["cells"].Size(), d.width);
  for (size_t c = 0; c < d.width; ++c) {
    d.cells.push_back(DecodeColumn(t["cells"][static_cast<unsigned>(c)], d.n,
                                   dict, c > 0 ? &d.cells[c - 1] : nullptr));
  }
  if (t.HasMember("derive")) {
    // [column, a, b, relative]: a - b as Python's repr, or |a - b| / |b| *
    // 100 as its repr + "%"; "0" when the two texts are equal.
    for (const rapidjson::Value& v : t["derive"].GetArray()) {
      size_t c = v[0].GetUint(), a = v[1].GetUint(), b = v[2].GetUint();
      bool relative = v[3].GetBool();
      for (size_t i = 0; i < d.n; ++i) {
        std::string& cell = d.cells[c][i];
        if (cell != kDerivedCell) continue;
        const std::string &x = d.cells[a][i], &y = d.cells[b][i];
        if (x == y) {
          cell = "0";
          continue;
        }
        double p = 0, q = 0;
        std::from_chars(x.data(), x.data() + x.size(), p);
        std::from_chars(y.data(), y.data() + y.size(), q);
        cell = !relative ? PyFloatRepr(p - q)
               : q == 0  ? "inf"
                         : PyFloatRepr(std::fabs((p - q) / q * 100)) + "%";
      }
    }
  }
  for (size_t c = 0; c < d.width; ++c) {
    for (const std::string& cell : d.cells[c])
      EXPECT_NE(cell, kDerivedCell) << "column " << c << " derives nothing";
  }
  d.verdict = DecodeColumn(t["verdict"], d.n, dict, nullptr);
  d.rank = DecodeColumn(t["rank"], d.n, dict, nullptr);
  d.step = DecodeColumn(t["step"], d.n, dict, nullptr);
  d.notes = DecodeColumn(t["notes"], d.n, dict, nullptr);
  return d;
}

// The JSON inside the page's <script id="report-data">, parsed; fails the
// test when it is missing or invalid.
inline void ParsePageData(const std::string& html, rapidjson::Document* doc) {
  static const std::string kOpen =
      "<script type=\"application/json\" id=\"report-data\">";
  size_t at = html.find(kOpen);
  ASSERT_NE(at, std::string::npos);
  at += kOpen.size();
  size_t end = html.find("</script>", at);
  ASSERT_NE(end, std::string::npos);
  std::string json = html.substr(at, end - at);
  doc->Parse<rapidjson::kParseValidateEncodingFlag>(json.c_str(), json.size());
  ASSERT_FALSE(doc->HasParseError()) << "offset " << doc->GetErrorOffset();
}

// The table file's id and TABLE, parsed: the file must be exactly
//   window.lockstepTable = {id: "<id>", table: JSON.parse('<body>')};\n
// with <body> a single-quoted JavaScript string body.
inline void ParseTableFile(const std::string& js, std::string* id,
                           rapidjson::Document* doc) {
  static const std::string kHead = "window.lockstepTable = {id: \"";
  static const std::string kMid = "\", table: JSON.parse('";
  static const std::string kTail = "')};\n";
  ASSERT_EQ(js.rfind(kHead, 0), 0u);
  size_t mid = js.find(kMid);
  ASSERT_NE(mid, std::string::npos);
  *id = js.substr(kHead.size(), mid - kHead.size());
  ASSERT_GE(js.size(), mid + kMid.size() + kTail.size());
  ASSERT_EQ(js.compare(js.size() - kTail.size(), kTail.size(), kTail), 0);
  std::string body = js.substr(mid + kMid.size(),
                               js.size() - kTail.size() - mid - kMid.size());
  std::string json;
  for (size_t i = 0; i < body.size(); ++i) {
    ASSERT_NE(body[i], '\'') << "unescaped quote at " << i;
    ASSERT_NE(body[i], '\n') << "raw line break at " << i;
    if (body[i] != '\\') {
      json += body[i];
      continue;
    }
    ASSERT_LT(i + 1, body.size());
    char e = body[++i];
    if (e == '\\' || e == '\'') {
      json += e;
    } else if (e == 'n') {
      json += '\n';
    } else if (e == 'r') {
      json += '\r';
    } else if (e == 'u' && body.compare(i + 1, 4, "2028") == 0) {
      json += "\xE2\x80\xA8";
      i += 4;
    } else if (e == 'u' && body.compare(i + 1, 4, "2029") == 0) {
      json += "\xE2\x80\xA9";
      i += 4;
    } else {
      FAIL() << "unexpected escape \\" << e << " at " << i;
    }
  }
  doc->Parse<rapidjson::kParseValidateEncodingFlag>(json.c_str(), json.size());
  ASSERT_FALSE(doc->HasParseError()) << "offset " << doc->GetErrorOffset();
}

}  // namespace lockstep::testing

#endif  // LOCKSTEP_TESTS_REPORT_HTML_TABLE_DECODE_H_
