#include "lockstep/compare/result_rules.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <set>
#include <string>

namespace lockstep {
namespace {

enum class Ignore { kNone, kInputs, kAll };

struct Group {
  std::vector<MsprobeRow*> inputs;
  std::vector<MsprobeRow*> outputs;
};

void Raise(MsprobeRow* r, MsprobeResult level, const char* msg) {
  if (static_cast<int>(level) > static_cast<int>(r->result)) r->result = level;
  r->err_messages.emplace_back(msg);
}

std::string LowerTrim(std::string s) {
  size_t b = s.find_first_not_of(" \t\n\r");
  size_t e = s.find_last_not_of(" \t\n\r");
  s = b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
  for (char& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool IsInfOrNan(const Cell& c) {
  if (c.is_num || c.text == Cell::Text::kRepr)
    return std::isnan(c.num) || std::isinf(c.num);
  std::string s = LowerTrim(c.ToCsv());
  return s == "inf" || s == "-inf" || s == "nan";
}

// ApiData.get_min_or_max_value over one side's cells.
double MinOrMax(const std::vector<MsprobeRow*>& rows,
                const Cell& (*get)(const MsprobeRow&), bool is_min) {
  double v = is_min ? 1.0 : 0.0;
  for (const MsprobeRow* r : rows) {
    const Cell& c = get(*r);
    double x;
    if (c.is_num) {
      x = c.num;
    } else if (!c.PercentValue(&x)) {
      continue;
    }
    // Python's min/max with NaN keep the running value unless it compares.
    v = is_min ? (x < v ? x : v) : (x > v ? x : v);
  }
  return v;
}

const Cell& CosineOf(const MsprobeRow& r) { return r.metrics[0]; }
const Cell& OneKOf(const MsprobeRow& r) { return r.metrics[4]; }
const Cell& NormRelOf(const MsprobeRow& r) { return r.stat_diffs[7]; }

Ignore IgnoreFor(const std::string& entry) {
  static const std::set<std::string> kAll = {"empty",
                                             "empty_like",
                                             "numpy",
                                             "to",
                                             "__setitem__",
                                             "empty_with_format",
                                             "new_empty_strided",
                                             "new_empty",
                                             "empty_strided"};
  static const std::set<std::string> kInputs = {
      "_reduce_scatter_base", "_all_gather_base", "all_to_all_single",
      "batch_isend_irecv"};
  size_t a = entry.find('.');
  if (a == std::string::npos) return Ignore::kNone;
  size_t b = entry.find('.', a + 1);
  std::string api = entry.substr(
      a + 1, b == std::string::npos ? std::string::npos : b - a - 1);
  if (kAll.count(api)) return Ignore::kAll;
  if (kInputs.count(api)) return Ignore::kInputs;
  return Ignore::kNone;
}

std::vector<MsprobeRow*> Checked(const Group& g, Ignore ig) {
  if (ig == Ignore::kAll) return {};
  if (ig == Ignore::kInputs) return g.outputs;
  std::vector<MsprobeRow*> all = g.inputs;
  all.insert(all.end(), g.outputs.begin(), g.outputs.end());
  return all;
}

bool Matched(const MsprobeRow& r) { return r.bench != nullptr; }

void InfNanCheck(const Group& g, Ignore ig) {
  for (MsprobeRow* r : Checked(g, ig)) {
    Cell bmax = r->bench ? StatCell(r->bench->stats[0]) : Cell::Str(kNA);
    Cell bmin = r->bench ? StatCell(r->bench->stats[1]) : Cell::Str(kNA);
    if (IsInfOrNan(bmax) || IsInfOrNan(bmin)) continue;
    if (IsInfOrNan(StatCell(r->npu->stats[0])) ||
        IsInfOrNan(StatCell(r->npu->stats[1]))) {
      Raise(r, MsprobeResult::kError,
            "error: There is nan/inf/-inf in the maximum or minimum value of "
            "NPU.");
    }
  }
}

void RequiresGradCheck(const Group& g, Ignore ig) {
  for (MsprobeRow* r : Checked(g, ig)) {
    if (!Matched(*r)) continue;
    if (r->npu->requires_grad != r->bench->requires_grad) {
      Raise(r, MsprobeResult::kError,
            "error: The Required_Grad of NPU and Bench are inconsistent");
    }
  }
}

void ParametersCheck(const Group& g, Ignore ig) {
  if (ig != Ignore::kNone) return;
  for (MsprobeRow* r : g.inputs) {
    if (!Matched(*r)) continue;
    if (r->npu->dtype.find("class") == std::string::npos ||
        r->bench->dtype.find("class") == std::string::npos ||
        r->npu->shape != "[]") {
      continue;
    }
    if (!PyEquals(r->npu->stats[0], r->bench->stats[0])) {
      Raise(r, MsprobeResult::kError,
            "error: The scalar parameters of NPU and Bench are inconsistent.");
    }
  }
}

void DTypeShapeCheck(const Group& g, Ignore ig, bool dtype) {
  for (MsprobeRow* r : Checked(g, ig)) {
    if (!Matched(*r)) continue;
    if (dtype && r->npu->dtype != r->bench->dtype) {
      Raise(r, MsprobeResult::kError,
            "error: The dtype of NPU and Bench are inconsistent.");
    }
    if (!dtype && r->npu->shape != r->bench->shape) {
      Raise(r, MsprobeResult::kError,
            "error: The shape of NPU and Bench are inconsistent.");
    }
  }
}

void OneThousandthCheck(const Group& g, Ignore ig) {
  if (ig != Ignore::kNone || g.outputs.empty()) return;
  if (MinOrMax(g.inputs, OneKOf, true) > 0.9 &&
      MinOrMax(g.outputs, OneKOf, true) < 0.1) {
    Raise(g.outputs[0], MsprobeResult::kError,
          "error: The input/parameters of One Thousandth Err Ratio > 0.9 while "
          "the output < 0.6.");
  }
}

void CosineWarnCheck(const Group& g, Ignore ig) {
  if (ig != Ignore::kNone || g.outputs.empty()) return;
  double in = MinOrMax(g.inputs, CosineOf, true);
  double out = MinOrMax(g.outputs, CosineOf, true);
  if (in > 0.9 && in - out > 0.1) {
    Raise(g.outputs[0], MsprobeResult::kWarning,
          "warning: The input/parameters of Cosine > 0.9, and input/parameters "
          "- output > 0.1");
  }
}

void RelativeErrCheck(const Group& g, Ignore ig) {
  if (ig != Ignore::kNone) return;
  if (std::fabs(MinOrMax(g.inputs, NormRelOf, false)) >= 0.1) return;
  for (MsprobeRow* r : g.outputs) {
    const Cell& c = NormRelOf(*r);
    double v = 0;
    if (c.is_num) {
      v = c.num;
    } else if (!c.PercentValue(&v)) {
      v = Str2Float(c.ToCsv());
    }
    if (std::fabs(v) > 0.5) {
      Raise(r, MsprobeResult::kError,
            "error: The NormRelativeErr of output is greater than 0.5.");
    }
  }
}

void RelativeWarnCheck(const Group& g, Ignore ig) {
  if (ig != Ignore::kNone || g.outputs.empty()) return;
  double in = std::fabs(MinOrMax(g.inputs, NormRelOf, false));
  double out = std::fabs(MinOrMax(g.outputs, NormRelOf, false));
  bool set = in == 0 ? out > 0.1 : out / in > 10;
  if (set) {
    Raise(g.outputs[0], MsprobeResult::kWarning,
          "warning: The norm relative error of output is 10 times that of "
          "input.");
  }
}

void Crc32Check(const Group& g, Ignore ig) {
  for (MsprobeRow* r : Checked(g, ig)) {
    const std::string& a = r->metrics[0].str;
    const std::string& b = r->metrics[1].str;
    if (a == b) continue;
    if (a == kNA || a == kNanStr || b == kNA || b == kNanStr) {
      Raise(r, MsprobeResult::kWarning,
            "warning: The parameter of NPU does not match the bench.");
    } else {
      Raise(r, MsprobeResult::kError,
            "error: The CRC-32 value of NPU differs from that of the bench.");
    }
  }
}

void RunCheckers(CompareMode mode, const Group& g, Ignore ig) {
  switch (mode) {
    case CompareMode::kTensor:
      InfNanCheck(g, ig);
      OneThousandthCheck(g, ig);
      RequiresGradCheck(g, ig);
      ParametersCheck(g, ig);
      DTypeShapeCheck(g, ig, true);
      DTypeShapeCheck(g, ig, false);
      CosineWarnCheck(g, ig);
      break;
    case CompareMode::kStatistics:
      InfNanCheck(g, ig);
      RelativeErrCheck(g, ig);
      RequiresGradCheck(g, ig);
      ParametersCheck(g, ig);
      DTypeShapeCheck(g, ig, true);
      DTypeShapeCheck(g, ig, false);
      RelativeWarnCheck(g, ig);
      break;
    case CompareMode::kMd5:
      Crc32Check(g, ig);
      break;
  }
}

}  // namespace

void ApplyMsprobeRules(CompareMode mode, std::vector<MsprobeRow>* rows) {
  size_t i = 0;
  while (i < rows->size()) {
    const std::string& entry = (*rows)[i].npu->entry;
    Group g;
    size_t j = i;
    for (; j < rows->size() && (*rows)[j].npu->entry == entry; ++j) {
      MsprobeRow& r = (*rows)[j];
      r.result = MsprobeResult::kPass;
      r.err_messages.clear();
      (IsOutputRow(*r.npu) ? g.outputs : g.inputs).push_back(&r);
    }
    RunCheckers(mode, g, IgnoreFor(entry));
    i = j;
  }
}

std::string PyJsonList(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += ", ";
    out += '"';
    for (unsigned char c : items[i]) {
      switch (c) {
        case '"':
          out += "\\\"";
          break;
        case '\\':
          out += "\\\\";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\t':
          out += "\\t";
          break;
        case '\r':
          out += "\\r";
          break;
        default:
          if (c < 0x20 || c == 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof(buf), "\\u%04x", c);
            out += buf;
          } else {
            out += static_cast<char>(c);
          }
      }
    }
    out += '"';
  }
  return out + "]";
}

}  // namespace lockstep
