// The HTML report's compact table (TABLE in html_internal.h). Rows of one
// comparison repeat a lot down a column (dtypes, shapes, "True", the
// Result), agree across a row (NPU and Bench columns), and neighbouring
// names share their beginning: runs, left references, one dictionary of
// repeated short strings and prefixes shared with the cell above make the
// table several times smaller than its text. Two more kinds of cell are
// written as rules: a statistics diff the script derives from the two
// statistics beside it ("Max diff" = NPU max - Bench max), and a note
// whose numbers fill the blanks of a dictionary template.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>

#include "html_internal.h"
#include "lockstep/numerics/pyfloat.h"

namespace lockstep::internal {
namespace {

constexpr char kPrefixBase = 35;       // '#': the shared prefix's length 0
constexpr size_t kMaxPrefix = 91;      // up to '~'
constexpr size_t kMaxDictLength = 40;  // longer strings rarely repeat

constexpr size_t kMaxTemplateLength = 200;  // a note's text without numbers
constexpr char kBlank = '\x01';             // a template's number

// A statistics-mode diff column and the two columns it is derived from:
// `a - b` (diff) or |a - b| / |b| * 100 % (relative).
struct Derivation {
  size_t column, a, b;
  bool relative;
};

// msprobe's statistics diff columns, each with its sources, for the
// header `columns` (none outside statistics mode).
std::vector<Derivation> Derivations(const std::vector<std::string>& columns) {
  auto at = [&](std::string_view name) {
    auto it = std::find(columns.begin(), columns.end(), name);
    return it == columns.end() ? columns.size() : it - columns.begin();
  };
  static constexpr std::string_view kStats[][4] = {
      {"Max diff", "MaxRelativeErr", "NPU max", "Bench max"},
      {"Min diff", "MinRelativeErr", "NPU min", "Bench min"},
      {"Mean diff", "MeanRelativeErr", "NPU mean", "Bench mean"},
      {"L2norm diff", "NormRelativeErr", "NPU l2norm", "Bench l2norm"}};
  std::vector<Derivation> out;
  size_t none = columns.size();
  for (const auto& names : kStats) {
    size_t diff = at(names[0]), rel = at(names[1]), a = at(names[2]),
           b = at(names[3]);
    if (a == none || b == none) continue;
    if (diff != none) out.push_back({diff, a, b, false});
    if (rel != none) out.push_back({rel, a, b, true});
  }
  return out;
}

// A plain decimal ("-0.5", "1e-05", "12"): what the script's PLAIN regular
// expression accepts, parsed correctly rounded as its Number() does.
std::optional<double> PlainNumber(std::string_view s) {
  size_t i = s.starts_with('-') ? 1 : 0;
  auto digits = [&] {
    size_t from = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i > from;
  };
  if (!digits()) return std::nullopt;
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (!digits()) return std::nullopt;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (!digits()) return std::nullopt;
  }
  if (i != s.size()) return std::nullopt;
  double d = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), d);
  if (r.ec != std::errc() || !std::isfinite(d)) return std::nullopt;
  return d;
}

// The script's deriveStat: the cell derived from statistics `a` and `b`,
// or "" when the script cannot derive one.
std::string DeriveStat(std::string_view a, std::string_view b, bool relative) {
  if (a == b) return "0";
  std::optional<double> x = PlainNumber(a), y = PlainNumber(b);
  if (!x || !y) return "";
  double diff = *x - *y;
  if (!relative) return PyFloatRepr(diff);
  if (*y == 0) return "inf";
  return PyFloatRepr(std::fabs(diff / *y * 100)) + "%";
}

// A note's template: its text with each number (a run of digits, '.', 'e',
// '-' and '+' that starts with a digit, or a '-' before one) replaced by
// kBlank, and the numbers, ' '-joined, in *numbers. "" when it has none.
std::string NoteTemplate(std::string_view note, std::string* numbers) {
  numbers->clear();
  std::string out;
  bool any = false;
  auto digit = [&](size_t k) {
    return k < note.size() && note[k] >= '0' && note[k] <= '9';
  };
  for (size_t i = 0; i < note.size();) {
    bool starts = digit(i) || (note[i] == '-' && digit(i + 1));
    bool after_word =
        i > 0 && (std::isalnum(static_cast<unsigned char>(note[i - 1])) ||
                  note[i - 1] == '_' || note[i - 1] == '.');
    if (!starts || after_word || note[i] == kBlank) {
      if (note[i] == kBlank) return "";
      out += note[i++];
      continue;
    }
    size_t j = i + 1;
    while (j < note.size() &&
           (digit(j) || note[j] == '.' || note[j] == 'e' ||
            ((note[j] == '-' || note[j] == '+') && note[j - 1] == 'e')))
      ++j;
    while (j > i + 1 && !digit(j - 1)) --j;  // "0.5." ends a sentence
    if (any) *numbers += ' ';
    numbers->append(note.substr(i, j - i));
    out += kBlank;
    any = true;
    i = j;
  }
  return any && out.size() <= kMaxTemplateLength ? out : "";
}

// The rows a table holds and their columns: W cell columns, then verdict,
// rank, step and notes. Every cell is a view that outlives the table.
class TableView {
 public:
  TableView(const CompareResult& r, const std::vector<size_t>* rows)
      : r_(r), rows_(rows), derivations_(Derivations(r.columns)) {
    width_ = r.columns.size();
    derived_column_.assign(width_ + 1, -1);
    for (size_t d = 0; d < derivations_.size(); ++d)
      derived_column_[derivations_[d].column] = static_cast<int>(d);
    derived_.resize(derivations_.empty() ? 0 : size());
    for (size_t k = 0; k < size(); ++k) {
      const CompareRow& row = Row(k);
      width_ = std::max(width_, row.cells.size());
      for (int n : {row.rank, row.step}) {
        auto [it, added] = numbers_.try_emplace(n);
        if (added) it->second = std::to_string(n);
      }
      if (row.messages.size() > 1) notes_.emplace(k, JoinedNotes(row));
      if (!derivations_.empty()) derived_[k] = DerivedCells(row);
    }
    derived_column_.resize(width_ + 1, -1);
  }

  size_t size() const { return rows_ ? rows_->size() : r_.rows.size(); }
  size_t width() const { return width_; }
  size_t columns() const { return width_ + 4; }
  size_t notes_column() const { return width_ + 3; }
  const std::vector<Derivation>& derivations() const { return derivations_; }
  // Whether a cell may refer to its left neighbour: not in a derived
  // column, nor right of one (the script fills derived cells last).
  bool HasLeft(size_t c) const {
    return c > 0 && c < width_ && derived_column_[c] < 0 &&
           derived_column_[c - 1] < 0;
  }
  // Whether row k's cell in column c equals what the script derives.
  bool Derived(size_t k, size_t c) const {
    int d = c < width_ ? derived_column_[c] : -1;
    return d >= 0 && (derived_[k] >> d & 1);
  }

  // Row k's cells, in the order of the columns. REQUIRES: out->size() ==
  // columns().
  void Cells(size_t k, std::vector<std::string_view>* out) const {
    static constexpr std::string_view kVerdicts[] = {"0", "1", "2", "3"};
    const CompareRow& row = Row(k);
    std::string_view* cell = out->data();
    size_t have = std::min(row.cells.size(), width_);
    for (size_t c = 0; c < have; ++c) cell[c] = row.cells[c];
    for (size_t c = have; c < width_; ++c) cell[c] = "";
    cell += width_;
    cell[0] = kVerdicts[static_cast<int>(row.verdict)];
    cell[1] = numbers_.at(row.rank);
    cell[2] = numbers_.at(row.step);
    cell[3] = row.messages.empty()       ? std::string_view()
              : row.messages.size() == 1 ? std::string_view(row.messages[0])
                                         : std::string_view(notes_.at(k));
  }

 private:
  const CompareRow& Row(size_t k) const {
    return r_.rows[rows_ ? (*rows_)[k] : k];
  }
  // Bit d: the cell of derivations_[d] equals its derivation.
  uint32_t DerivedCells(const CompareRow& row) const {
    uint32_t mask = 0;
    for (size_t d = 0; d < derivations_.size() && d < 32; ++d) {
      const Derivation& v = derivations_[d];
      if (std::max({v.column, v.a, v.b}) >= row.cells.size()) continue;
      std::string_view cell = row.cells[v.column];
      if (!cell.empty() &&
          DeriveStat(row.cells[v.a], row.cells[v.b], v.relative) == cell)
        mask |= 1u << d;
    }
    return mask;
  }
  static std::string JoinedNotes(const CompareRow& row) {
    std::string joined;
    for (const std::string& m : row.messages) {
      if (!joined.empty()) joined += '\n';
      joined += m;
    }
    return joined;
  }

  const CompareResult& r_;
  const std::vector<size_t>* rows_;
  size_t width_ = 0;
  std::map<int, std::string> numbers_;   // rank and step values as text
  std::map<size_t, std::string> notes_;  // rows with several messages
  std::vector<Derivation> derivations_;
  std::vector<int> derived_column_;  // per column: its derivation, or -1
  std::vector<uint32_t> derived_;    // per row: DerivedCells
};

// The encoder's state in one column.
struct ColumnState {
  enum { kNone, kLeft, kValue, kDerived } last = kNone;
  size_t pending = 0;      // cells of the current run not yet given
  std::string_view above;  // the cell above the next one
};

// Walks the table row by row (each row's cells lie together in memory) as
// it is encoded: for each column c, in the column's order, sink.Run(c, k)
// for k more cells made as the one above, sink.Derived(c) for a cell the
// script derives, sink.Left(c) for a cell equal to its left neighbour and
// sink.Value(c, cell, above) for every other cell.
template <typename Sink>
void WalkTable(const TableView& t, Sink& sink) {
  std::vector<ColumnState> state(t.columns());
  std::vector<std::string_view> cells(t.columns());
  for (size_t k = 0; k < t.size(); ++k) {
    t.Cells(k, &cells);
    for (size_t c = 0; c < cells.size(); ++c) {
      std::string_view cell = cells[c];
      bool derived = t.Derived(k, c);
      bool left = !derived && t.HasLeft(c) && cell == cells[c - 1];
      ColumnState& s = state[c];
      if ((s.last == ColumnState::kDerived && derived) ||
          (s.last == ColumnState::kLeft && left) ||
          (s.last == ColumnState::kValue && !derived && cell == s.above)) {
        ++s.pending;
      } else {
        if (s.pending > 0) sink.Run(c, s.pending);
        s.pending = 0;
        if (derived) {
          sink.Derived(c);
          s.last = ColumnState::kDerived;
        } else if (left) {
          sink.Left(c);
          s.last = ColumnState::kLeft;
        } else {
          sink.Value(c, cell, s.above);
          s.last = ColumnState::kValue;
        }
      }
      // The script fills a derived cell last: no prefix can come from it.
      s.above = derived ? std::string_view() : cell;
    }
  }
  for (size_t c = 0; c < state.size(); ++c) {
    if (state[c].pending > 0) sink.Run(c, state[c].pending);
  }
}

// Counts strings in one flat table (open addressing, linear probing): a
// node-based map costs another cache miss or two per cell once it holds
// 100k+ distinct names.
class StringCounter {
 public:
  StringCounter() : slots_(1024) {}
  // Counts `text`; true if it was not counted before.
  bool Add(std::string_view text) {
    if (2 * (used_ + 1) > slots_.size()) Grow();
    return Insert(std::hash<std::string_view>()(text), text, 1);
  }
  // Calls f(text, count) for each string counted.
  template <typename F>
  void ForEach(F f) const {
    for (const Slot& s : slots_) {
      if (s.count > 0) f(s.text, s.count);
    }
  }

 private:
  struct Slot {
    size_t hash = 0;
    std::string_view text;
    size_t count = 0;  // 0: empty
  };
  bool Insert(size_t hash, std::string_view text, size_t count) {
    size_t mask = slots_.size() - 1;
    for (size_t i = hash & mask;; i = (i + 1) & mask) {
      Slot& s = slots_[i];
      if (s.count == 0) {
        s = {hash, text, count};
        ++used_;
        return true;
      }
      if (s.hash == hash && s.text == text) {
        s.count += count;
        return false;
      }
    }
  }
  void Grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    used_ = 0;
    for (const Slot& s : old) {
      if (s.count > 0) Insert(s.hash, s.text, s.count);
    }
  }
  std::vector<Slot> slots_;  // a power of two, at most half used
  size_t used_ = 0;
};

// Whether a cell is a long number ("-0.0002842017274814964",
// "99.99823221346227%"): such cells of a comparison where every row
// differs are nearly all distinct, so counting them all costs a hash insert
// each (millions, in a table far beyond the caches) and gains nothing.
bool LongNumber(std::string_view cell) {
  if (cell.size() < 12) return false;
  char c = cell[0];
  return (c >= '0' && c <= '9') || c == '-' || c == '.';
}

// Counts the cells the encoder writes as values (dictionary candidates).
// Long numbers are counted while they repeat: the first kSample of them
// always, the rest only if at least a tenth of those sampled repeated one
// before them (two runs of one model that agree repeat their statistics
// row after row; runs that differ everywhere almost never do).
// A note with numbers counts its template instead (the template texts are
// kept in `templates`, whose strings do not move).
struct CountSink {
  static constexpr size_t kSample = 100000;
  CountSink(StringCounter* c, size_t notes,
            std::unordered_map<std::string, size_t>* t)
      : counts(c), notes_column(notes), templates(t) {}
  StringCounter* counts;
  size_t notes_column;
  std::unordered_map<std::string, size_t>* templates;
  size_t long_seen = 0, long_distinct = 0;
  bool count_long = true;
  std::string numbers;
  void Run(size_t, size_t) {}
  void Left(size_t) {}
  void Derived(size_t) {}
  void Value(size_t c, std::string_view cell, std::string_view) {
    if (c == notes_column) {
      std::string t = NoteTemplate(cell, &numbers);
      if (!t.empty()) {
        auto it = templates->try_emplace(std::move(t), 0).first;
        counts->Add(it->first);
        return;
      }
    }
    if (cell.size() > kMaxDictLength) return;
    bool long_number = LongNumber(cell);
    if (long_number && !count_long) return;
    bool added = counts->Add(cell);
    // Only this path adds long numbers, so `added` says whether the sample
    // met this one before.
    if (long_number && long_seen < kSample) {
      long_distinct += added;
      if (++long_seen == kSample)
        count_long = long_distinct * 10 <= kSample * 9;
    }
  }
};

using Index = std::unordered_map<std::string_view, size_t>;

size_t Digits(size_t k) { return k < 10 ? 1 : 1 + Digits(k / 10); }

// The strings worth a dictionary entry, most frequent first; `*index` maps
// each to its position.
std::vector<std::string_view> Dictionary(
    const TableView& t, std::unordered_map<std::string, size_t>* templates,
    Index* index) {
  StringCounter counts;
  CountSink counter{&counts, t.notes_column(), templates};
  WalkTable(t, counter);
  std::vector<std::pair<size_t, std::string_view>> counted;
  counts.ForEach([&](std::string_view text, size_t n) {
    if (n > 1) counted.emplace_back(n, text);
  });
  std::sort(counted.begin(), counted.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  std::vector<std::string_view> dict;
  for (const auto& [n, text] : counted) {
    // A literal costs its length + 3 (quotes, prefix mark) each time; an
    // entry its index's digits each time plus the entry itself once.
    size_t literal = n * (text.size() + 3);
    size_t entry = n * Digits(dict.size()) + text.size() + 3;
    if (entry >= literal) continue;
    (*index)[text] = dict.size();
    dict.push_back(text);
  }
  return dict;
}

// How many leading characters `a` and `b` share, counting ASCII only (so
// that the count means the same in UTF-8 and in the script's UTF-16).
size_t SharedAsciiPrefix(std::string_view a, std::string_view b) {
  size_t n = 0, end = std::min({a.size(), b.size(), kMaxPrefix});
  while (n < end && a[n] == b[n] && static_cast<unsigned char>(a[n]) < 0x80)
    ++n;
  return n;
}

// Writes each column's tokens into a JSON array of its own.
class WriteSink {
 public:
  WriteSink(size_t columns, size_t notes_column, const Index& index)
      : index_(index), notes_column_(notes_column) {
    for (size_t c = 0; c < columns; ++c) {
      buffers_.push_back(std::make_unique<rapidjson::StringBuffer>());
      writers_.push_back(std::make_unique<JsonWriter>(*buffers_.back()));
      writers_.back()->StartArray();
    }
  }
  void Run(size_t c, size_t k) { writers_[c]->Int64(-static_cast<int64_t>(k)); }
  void Left(size_t c) { writers_[c]->Null(); }
  void Derived(size_t c) { writers_[c]->Bool(true); }
  void Value(size_t c, std::string_view cell, std::string_view above) {
    if (c == notes_column_) {
      std::string t = NoteTemplate(cell, &numbers_);
      if (auto it = index_.find(t); !t.empty() && it != index_.end()) {
        writers_[c]->StartArray();
        writers_[c]->Uint64(it->second);
        JsonString(writers_[c].get(), numbers_);
        writers_[c]->EndArray();
        return;
      }
    }
    if (auto it = index_.find(cell); it != index_.end()) {
      writers_[c]->Uint64(it->second);
      return;
    }
    size_t shared = SharedAsciiPrefix(cell, above);
    literal_.assign(1, static_cast<char>(kPrefixBase + shared));
    literal_.append(cell.substr(shared));
    JsonString(writers_[c].get(), literal_);
  }
  // Column c's array; frees it.
  void Emit(size_t c, JsonWriter* w) {
    writers_[c]->EndArray();
    w->RawValue(buffers_[c]->GetString(), buffers_[c]->GetSize(),
                rapidjson::kArrayType);
    writers_[c].reset();
    buffers_[c].reset();
  }

 private:
  const Index& index_;
  size_t notes_column_;
  std::string numbers_;
  std::vector<std::unique_ptr<rapidjson::StringBuffer>> buffers_;
  std::vector<std::unique_ptr<JsonWriter>> writers_;
  std::string literal_;
};

}  // namespace

void WriteTable(const CompareResult& r, const std::vector<size_t>* rows,
                JsonWriter* w) {
  TableView t(r, rows);
  Index index;
  std::unordered_map<std::string, size_t> templates;
  std::vector<std::string_view> dict = Dictionary(t, &templates, &index);
  WriteSink columns(t.columns(), t.notes_column(), index);
  WalkTable(t, columns);
  w->StartObject();
  w->Key("n");
  w->Uint64(t.size());
  w->Key("width");
  w->Uint64(t.width());
  if (rows) {
    w->Key("index");
    w->StartArray();
    for (size_t i : *rows) w->Uint64(i);
    w->EndArray();
  }
  w->Key("dict");
  w->StartArray();
  for (std::string_view text : dict) JsonString(w, text);
  w->EndArray();
  if (!t.derivations().empty()) {
    w->Key("derive");
    w->StartArray();
    for (const Derivation& d : t.derivations()) {
      w->StartArray();
      for (size_t c : {d.column, d.a, d.b}) w->Uint64(c);
      w->Bool(d.relative);
      w->EndArray();
    }
    w->EndArray();
  }
  w->Key("cells");
  w->StartArray();
  for (size_t c = 0; c < t.width(); ++c) columns.Emit(c, w);
  w->EndArray();
  const char* extras[] = {"verdict", "rank", "step", "notes"};
  for (size_t e = 0; e < 4; ++e) {
    w->Key(extras[e]);
    columns.Emit(t.width() + e, w);
  }
  w->EndObject();
}

}  // namespace lockstep::internal
