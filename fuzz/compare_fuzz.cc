// Fuzzes the whole compare: the input bytes become a pair of small but
// structurally plausible msprobe dumps (entries like
// Functional.linear.3.forward with input/output tensors, statistics, data
// names that do or do not start with the entry name, md5 fields, odd values
// and now and then plain garbage), written to a temporary directory and
// compared with CompareDumpPaths in statistics mode under every matching
// mode (by name, --align, --no-align, --fuzzy-match) and once in auto mode;
// every result is rendered as CSV, summary.json and HTML in memory.
//
// No input may crash; a result must count its rows consistently, point its
// first divergence at a real row, and render a summary.json that reads back.
//
// Seeds: fuzz/corpus/compare_fuzz/ (raw bytes; any bytes make some dumps).
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/compare/compare_dumps.h"
#include "lockstep/format/json_reader.h"
#include "lockstep/report/csv_report.h"
#include "lockstep/report/html_report.h"
#include "lockstep/report/outcome.h"
#include "lockstep/report/summary_json.h"

namespace {

namespace fs = std::filesystem;

std::string_view g_input;  // the input being tried, saved when a check fails

void Require(bool ok) {
  if (ok) return;
  if (FILE* f = std::fopen("compare_fuzz.failure", "wb")) {
    std::fwrite(g_input.data(), 1, g_input.size(), f);
    std::fclose(f);
  }
  std::abort();
}

// Reads choices from the fuzz input; past its end every choice is 0.
class Bytes {
 public:
  explicit Bytes(std::string_view s) : s_(s) {}
  bool done() const { return pos_ >= s_.size(); }
  uint8_t U8() { return done() ? 0 : static_cast<uint8_t>(s_[pos_++]); }
  size_t Pick(size_t n) { return U8() % n; }
  bool OneIn(int n) { return U8() % n == 0; }
  double F64() {
    uint64_t bits = 0;
    for (int i = 0; i < 8; ++i) bits = bits << 8 | U8();
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
  }
  std::string Raw(size_t max) {
    size_t want = Pick(max + 1);  // first: it moves pos_
    size_t n = std::min(want, s_.size() - pos_);
    std::string r(s_.substr(pos_, n));
    pos_ += n;
    return r;
  }

 private:
  std::string_view s_;
  size_t pos_ = 0;
};

// One tensor (or other argument) of an entry, and how the baseline's differs.
struct Leaf {
  int kind = 0;  // 0-3 tensor, 4 None, 5 int, 6 float, 7 bool, 8 str, 9 list
  int dtype = 0;
  std::vector<int64_t> shape;
  double stats[4] = {0, 0, 0, 0};
  int stat_form[4] = {0, 0, 0, 0};  // 0 number, 1 null, 2 string, 3 absent
  int name_form = 0;  // data_name: absent, entry's, another's, odd
  std::string odd_name;
  bool md5 = false;
  uint8_t diff = 0;  // baseline: 1 stats, 2 dtype, 4 shape, 8 gone, 16 name
};

struct Entry {
  std::string name;
  std::vector<Leaf> inputs, outputs;
  int sides = 3;  // 1 target only, 2 baseline only, 3 both
};

constexpr const char* kApis[] = {
    "Functional.linear", "Functional.relu",    "Torch.matmul",
    "Tensor.__add__",    "Functional.conv2d",  "Distributed.all_reduce",
    "Aten.add",          "Functional.dropout", "Torch.softmax"};
constexpr const char* kModules[] = {"Module.fc.Linear", "Module.layer.0.Block",
                                    "Cell.dense.Dense"};
constexpr const char* kDtypes[] = {
    "torch.float32", "torch.float16", "torch.bfloat16", "torch.int64",
    "torch.bool",    "torch.float64", "weird"};
constexpr double kValues[] = {
    0,          -0.0,     1,         -1,     0.5,
    1e-8,       65504,    1e38,      5e-324, 1.7976931348623157e308,
    NAN,        INFINITY, -INFINITY, 3.4e38, 1e-45,
    123456789.0};

std::string EntryName(Bytes& in) {
  std::string n =
      std::to_string(in.OneIn(16) ? 18446744073709551615ull : in.Pick(4));
  switch (in.Pick(8)) {
    case 0:
      return std::string(kModules[in.Pick(3)]) + ".forward." + n;
    case 1:
      return std::string(kModules[in.Pick(3)]) + ".parameters_grad";
    case 2:
      return in.Raw(12);  // garbage
    case 3:
      return std::string(kApis[in.Pick(9)]) + "." + n + ".backward";
    default:
      return std::string(kApis[in.Pick(9)]) + "." + n + ".forward";
  }
}

Leaf MakeLeaf(Bytes& in) {
  Leaf l;
  l.kind = static_cast<int>(in.Pick(10));
  l.dtype = static_cast<int>(in.Pick(7));
  for (size_t d = in.Pick(4); d > 0; --d)
    l.shape.push_back(in.OneIn(8) ? -1 : static_cast<int64_t>(in.Pick(9)));
  for (int i = 0; i < 4; ++i) {
    l.stats[i] = in.OneIn(4) ? in.F64() : kValues[in.Pick(16)];
    l.stat_form[i] = in.OneIn(6) ? static_cast<int>(in.Pick(4)) : 0;
  }
  l.name_form = static_cast<int>(in.Pick(4));
  if (l.name_form == 3) l.odd_name = in.Raw(10);
  l.md5 = in.OneIn(3);
  l.diff = in.OneIn(2) ? in.U8() : 0;
  return l;
}

std::vector<Entry> MakeEntries(Bytes& in) {
  std::vector<Entry> entries;
  while (!in.done() && entries.size() < 24) {
    Entry e;
    e.name = EntryName(in);
    for (size_t k = in.Pick(4); k > 0; --k) e.inputs.push_back(MakeLeaf(in));
    for (size_t k = in.Pick(3); k > 0; --k) e.outputs.push_back(MakeLeaf(in));
    e.sides = in.OneIn(5) ? 1 + static_cast<int>(in.Pick(2)) : 3;
    entries.push_back(std::move(e));
  }
  return entries;
}

// JSON text of a string, control bytes escaped; other bytes kept as they are
// (so names that are not UTF-8 reach the reader).
std::string Quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// A number as Python's json writes it (NaN, Infinity, -Infinity).
std::string Number(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", d);
  return buf;
}

class DumpText {
 public:
  DumpText(bool baseline, Bytes& garbage)
      : baseline_(baseline), garbage_(garbage) {}
  std::string Render(const std::vector<Entry>& entries, std::string_view task);

 private:
  void AddLeaf(const Leaf& l, const std::string& entry, const char* io,
               size_t i);
  void AddTensor(const Leaf& l, const std::string& data_name);
  bool baseline_;
  Bytes& garbage_;
  std::string out_;
};

void DumpText::AddTensor(const Leaf& l, const std::string& data_name) {
  bool d = baseline_;
  int dtype = d && (l.diff & 2) ? (l.dtype + 1) % 7 : l.dtype;
  out_ += "{\"type\": \"torch.Tensor\", \"dtype\": " + Quote(kDtypes[dtype]);
  out_ += ", \"shape\": [";
  std::vector<int64_t> shape = l.shape;
  if (d && (l.diff & 4)) shape.push_back(2);
  for (size_t i = 0; i < shape.size(); ++i)
    out_ += (i ? ", " : "") + std::to_string(shape[i]);
  out_ += "]";
  static const char* kKeys[] = {"Max", "Min", "Mean", "Norm"};
  for (int i = 0; i < 4; ++i) {
    double v = d && (l.diff & 1) ? l.stats[i] * 1.0001 + 1e-3 : l.stats[i];
    const char* value_forms[] = {"", "null", "\"1.5\""};
    if (l.stat_form[i] == 3) continue;
    out_ += std::string(", \"") + kKeys[i] + "\": " +
            (l.stat_form[i] == 0 ? Number(v) : value_forms[l.stat_form[i]]);
  }
  out_ += ", \"requires_grad\": " + std::string(l.dtype & 1 ? "true" : "false");
  if (l.md5)
    out_ += std::string(", \"md5\": ") +
            (d && (l.diff & 1) ? "\"deadbeef\"" : "\"0badf00d\"");
  if (!data_name.empty() || l.name_form != 0)
    out_ += ", \"data_name\": " + Quote(data_name);
  out_ += "}";
}

void DumpText::AddLeaf(const Leaf& l, const std::string& entry, const char* io,
                       size_t i) {
  std::string tail = std::string(".") + io + "." + std::to_string(i) + ".pt";
  std::string dn[] = {"", entry + tail, "Functional.other.0.forward" + tail,
                      l.odd_name};
  std::string data_name = dn[baseline_ && (l.diff & 16) ? 2 : l.name_form];
  switch (l.kind) {
    case 4:
      out_ += "null";
      return;
    case 5:
      out_ += "{\"type\": \"int\", \"value\": " + std::to_string(l.dtype) + "}";
      return;
    case 6:
      out_ += "{\"type\": \"float\", \"value\": " + Number(l.stats[0]) + "}";
      return;
    case 7:
      out_ += "{\"type\": \"bool\", \"value\": true}";
      return;
    case 8:
      out_ += "{\"type\": \"str\", \"value\": " + Quote(l.odd_name) + "}";
      return;
    case 9:
      out_ += "[";
      AddTensor(l, data_name);
      out_ += ", null]";
      return;
    default:
      AddTensor(l, data_name);
  }
}

std::string DumpText::Render(const std::vector<Entry>& entries,
                             std::string_view task) {
  out_ = "{\"task\": " + Quote(task) +
         ", \"level\": \"L1\", \"framework\": \"pytorch\", "
         "\"dump_data_dir\": null, \"data\": {";
  bool first = true;
  for (const Entry& e : entries) {
    if (!(e.sides & (baseline_ ? 2 : 1))) continue;
    out_ += (first ? "\n" : ",\n") + Quote(e.name) + ": {";
    first = false;
    const char* io[] = {"input_args", "output"};
    const char* short_io[] = {"input", "output"};
    const std::vector<Leaf>* lists[] = {&e.inputs, &e.outputs};
    for (int k = 0; k < 2; ++k) {
      out_ += std::string(k ? ", " : "") + "\"" + io[k] + "\": [";
      bool first_leaf = true;
      for (size_t i = 0; i < lists[k]->size(); ++i) {
        const Leaf& l = (*lists[k])[i];
        if (baseline_ && (l.diff & 8)) continue;
        out_ += first_leaf ? "" : ", ";
        first_leaf = false;
        AddLeaf(l, e.name, short_io[k], i);
      }
      out_ += "]";
    }
    out_ += ", \"input_kwargs\": {}}";
  }
  out_ += "}}";
  // Now and then a few bytes of garbage in the middle: the error paths.
  if (garbage_.OneIn(32) && !out_.empty())
    out_.insert(garbage_.Pick(out_.size()), garbage_.Raw(4));
  return out_;
}

// A scratch directory for this process, emptied per input and removed at
// exit (not after a crash: then it holds the crashing dumps).
class ScratchDir {
 public:
  ScratchDir() {
    fs::path base = fs::exists("/dev/shm") ? fs::path("/dev/shm")
                                           : fs::temp_directory_path();
    path_ = base / ("lockstep_compare_fuzz." + std::to_string(::getpid()));
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

const fs::path& Scratch() {
  static const ScratchDir dir;
  return dir.path();
}

void WriteFile(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

// The target's and baseline's dump.json: flat, or in step/rank dirs with a
// second rank on one or both sides.
void WriteDumps(const std::string& t, const std::string& b, int layout) {
  std::error_code ec;
  fs::remove_all(Scratch(), ec);
  if (layout == 0) {
    WriteFile(Scratch() / "t" / "dump.json", t);
    WriteFile(Scratch() / "b" / "dump.json", b);
    return;
  }
  WriteFile(Scratch() / "t" / "step0" / "rank0" / "dump.json", t);
  WriteFile(Scratch() / "b" / "step0" / "rank0" / "dump.json", b);
  if (layout & 1)
    WriteFile(Scratch() / "t" / "step0" / "rank1" / "dump.json", b);
  if (layout & 2)
    WriteFile(Scratch() / "b" / "step0" / "rank1" / "dump.json", t);
}

void CheckResult(const lockstep::CompareResult& r) {
  const lockstep::CompareSummary& s = r.summary;
  Require(s.rows == static_cast<int64_t>(r.rows.size()));
  Require(s.pass + s.warning + s.error + s.unmatched == s.rows);
  Require(!r.first_divergence.found ||
          r.first_divergence.row_index < r.rows.size());
  for (const lockstep::CompareRow& row : r.rows)
    Require(row.cells.size() <= r.columns.size());
  std::string summary = lockstep::RenderSummaryJson(r);
  Require(lockstep::ParsePyJson(summary, "summary.json").ok());
  Require(!lockstep::VerdictLine(r).empty());
  (void)lockstep::RenderCompareCsv(r, 0, r.rows.size());
  (void)lockstep::RenderHtmlReport(r);
  lockstep::HtmlExtras split;  // and with the table in a table file
  split.embed_limit_bytes = 0;
  Require(!lockstep::RenderHtmlReportFiles(r, split, "t.js").table.empty());
}

void Compare(const lockstep::CompareOptions& options) {
  auto r = lockstep::CompareDumpPaths((Scratch() / "t").string(),
                                      (Scratch() / "b").string(), options);
  if (!r.ok()) {
    Require(!r.status().message().empty());
    return;
  }
  CheckResult(*r);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  g_input = text;
  Bytes in(text);
  int layout = static_cast<int>(in.Pick(8)) - 4;  // mostly flat
  static const char* kTasks[] = {"statistics", "statistics", "tensor", "md5"};
  std::string_view task = kTasks[in.Pick(4)];
  std::vector<Entry> entries = MakeEntries(in);
  Bytes garbage(text.substr(size / 2));
  std::string t = DumpText(false, garbage).Render(entries, task);
  std::string b = DumpText(true, garbage).Render(entries, task);
  WriteDumps(t, b, layout < 0 ? 0 : layout);

  using lockstep::AlignMode;
  lockstep::CompareOptions options;
  options.load_tensor = [](const std::string& path) {
    return lockstep::StatusOr<lockstep::Tensor>(
        lockstep::Status::NotFound(path, "no tensors in this fuzz target"));
  };
  Compare(options);  // auto mode (md5 or tensor as the task says)
  options.mode = lockstep::CompareMode::kStatistics;
  for (AlignMode align : {AlignMode::kAuto, AlignMode::kOn, AlignMode::kOff}) {
    options.align = align;
    Compare(options);
  }
  options.align = AlignMode::kAuto;
  options.fuzzy_match = true;
  Compare(options);
  return 0;
}
