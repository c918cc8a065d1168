// The HTML report's compact table (TABLE in html_internal.h). Rows of one
// comparison repeat a lot down a column (dtypes, shapes, "True", the
// Result), agree across a row (NPU and Bench columns), and neighbouring
// names share their beginning: runs, left references, one dictionary of
// repeated short strings and prefixes shared with the cell above make the
// table several times smaller than its text.
#include <algorithm>
#include <map>
#include <memory>
#include <unordered_map>

#include "html_internal.h"

namespace lockstep::internal {
namespace {

constexpr char kPrefixBase = 35;       // '#': the shared prefix's length 0
constexpr size_t kMaxPrefix = 91;      // up to '~'
constexpr size_t kMaxDictLength = 40;  // longer strings rarely repeat

// The rows a table holds and their columns: W cell columns, then verdict,
// rank, step and notes. Every cell is a view that outlives the table.
class TableView {
 public:
  TableView(const CompareResult& r, const std::vector<size_t>* rows)
      : r_(r), rows_(rows) {
    width_ = r.columns.size();
    for (size_t k = 0; k < size(); ++k) {
      const CompareRow& row = Row(k);
      width_ = std::max(width_, row.cells.size());
      for (int n : {row.rank, row.step}) {
        auto [it, added] = numbers_.try_emplace(n);
        if (added) it->second = std::to_string(n);
      }
      if (row.messages.size() > 1) notes_.emplace(k, JoinedNotes(row));
    }
  }

  size_t size() const { return rows_ ? rows_->size() : r_.rows.size(); }
  size_t width() const { return width_; }
  size_t columns() const { return width_ + 4; }
  bool HasLeft(size_t c) const { return c > 0 && c < width_; }

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
};

// The encoder's state in one column.
struct ColumnState {
  enum { kNone, kLeft, kValue } last = kNone;
  size_t pending = 0;      // cells of the current run not yet given
  std::string_view above;  // the cell above the next one
};

// Walks the table row by row (each row's cells lie together in memory) as
// it is encoded: for each column c, in the column's order, sink.Run(c, k)
// for k more cells made as the one above, sink.Left(c) for a cell equal to
// its left neighbour and sink.Value(c, cell, above) for every other cell.
template <typename Sink>
void WalkTable(const TableView& t, Sink& sink) {
  std::vector<ColumnState> state(t.columns());
  std::vector<std::string_view> cells(t.columns());
  for (size_t k = 0; k < t.size(); ++k) {
    t.Cells(k, &cells);
    for (size_t c = 0; c < cells.size(); ++c) {
      std::string_view cell = cells[c];
      bool left = t.HasLeft(c) && cell == cells[c - 1];
      ColumnState& s = state[c];
      if ((s.last == ColumnState::kLeft && left) ||
          (s.last == ColumnState::kValue && cell == s.above)) {
        ++s.pending;
      } else {
        if (s.pending > 0) sink.Run(c, s.pending);
        s.pending = 0;
        if (left) {
          sink.Left(c);
          s.last = ColumnState::kLeft;
        } else {
          sink.Value(c, cell, s.above);
          s.last = ColumnState::kValue;
        }
      }
      s.above = cell;
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
struct CountSink {
  static constexpr size_t kSample = 100000;
  StringCounter* counts;
  size_t long_seen = 0, long_distinct = 0;
  bool count_long = true;
  void Run(size_t, size_t) {}
  void Left(size_t) {}
  void Value(size_t, std::string_view cell, std::string_view) {
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
std::vector<std::string_view> Dictionary(const TableView& t, Index* index) {
  StringCounter counts;
  CountSink counter{&counts};
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
  WriteSink(size_t columns, const Index& index) : index_(index) {
    for (size_t c = 0; c < columns; ++c) {
      buffers_.push_back(std::make_unique<rapidjson::StringBuffer>());
      writers_.push_back(std::make_unique<JsonWriter>(*buffers_.back()));
      writers_.back()->StartArray();
    }
  }
  void Run(size_t c, size_t k) { writers_[c]->Int64(-static_cast<int64_t>(k)); }
  void Left(size_t c) { writers_[c]->Null(); }
  void Value(size_t c, std::string_view cell, std::string_view above) {
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
  std::vector<std::unique_ptr<rapidjson::StringBuffer>> buffers_;
  std::vector<std::unique_ptr<JsonWriter>> writers_;
  std::string literal_;
};

}  // namespace

void WriteTable(const CompareResult& r, const std::vector<size_t>* rows,
                JsonWriter* w) {
  TableView t(r, rows);
  Index index;
  std::vector<std::string_view> dict = Dictionary(t, &index);
  WriteSink columns(t.columns(), index);
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
