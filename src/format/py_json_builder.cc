#include "lockstep/format/py_json_builder.h"

#include <cstring>

#include "lockstep/core/check.h"
#include "lockstep/format/json_writer.h"

namespace lockstep {

namespace {

// ",\n" and the spaces of the usual depths, appended in one piece.
constexpr char kCommaBreak[] =
    ",\n                                                                ";
constexpr size_t kMaxSpaces = sizeof kCommaBreak - 3;

}  // namespace

void PyJsonBuilder::NewLine(size_t level, bool comma) {
  size_t spaces = level * static_cast<size_t>(indent_);
  if (spaces <= kMaxSpaces) {
    out_.append(kCommaBreak + (comma ? 0 : 1), spaces + (comma ? 2 : 1));
  } else {
    if (comma) out_ += ',';
    out_ += '\n';
    out_.append(spaces, ' ');
  }
}

void PyJsonBuilder::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (open_.empty()) return;
  Open& o = open_.back();
  LOCKSTEP_DCHECK(!o.dict);
  NewLine(static_cast<size_t>(level_) + open_.size(), o.items++ > 0);
}

PyJsonBuilder& PyJsonBuilder::BeginList() {
  BeforeValue();
  out_ += '[';
  open_.push_back(Open{false, 0});
  return *this;
}

PyJsonBuilder& PyJsonBuilder::BeginDict() {
  BeforeValue();
  out_ += '{';
  open_.push_back(Open{true, 0});
  return *this;
}

PyJsonBuilder& PyJsonBuilder::End(bool dict, char close) {
  LOCKSTEP_DCHECK(!open_.empty() && open_.back().dict == dict && !after_key_);
  (void)dict;
  bool empty = open_.back().items == 0;
  open_.pop_back();
  if (!empty) NewLine(static_cast<size_t>(level_) + open_.size(), false);
  out_ += close;
  return *this;
}

PyJsonBuilder& PyJsonBuilder::EndList() { return End(false, ']'); }
PyJsonBuilder& PyJsonBuilder::EndDict() { return End(true, '}'); }

PyJsonBuilder& PyJsonBuilder::Key(std::string_view key) {
  LOCKSTEP_DCHECK(!open_.empty() && open_.back().dict && !after_key_);
  Open& o = open_.back();
  NewLine(static_cast<size_t>(level_) + open_.size(), o.items++ > 0);
  AppendPyJsonString(key, &out_);
  out_ += ": ";
  after_key_ = true;
  return *this;
}

PyJsonBuilder& PyJsonBuilder::Null() { return Raw("null"); }

PyJsonBuilder& PyJsonBuilder::Bool(bool b) { return Raw(b ? "true" : "false"); }

PyJsonBuilder& PyJsonBuilder::Int(int64_t i) {
  BeforeValue();
  char buf[24];
  char* p = buf + sizeof buf;
  uint64_t u = i < 0 ? 0 - static_cast<uint64_t>(i) : static_cast<uint64_t>(i);
  do {
    *--p = static_cast<char>('0' + u % 10);
    u /= 10;
  } while (u != 0);
  if (i < 0) *--p = '-';
  out_.append(p, static_cast<size_t>(buf + sizeof buf - p));
  return *this;
}

PyJsonBuilder& PyJsonBuilder::Float(double d) {
  BeforeValue();
  AppendPyJsonFloat(d, &out_);
  return *this;
}

PyJsonBuilder& PyJsonBuilder::LateFloat(double d) {
  BeforeValue();
  AppendLateFloat(d, &out_);
  return *this;
}

PyJsonBuilder& PyJsonBuilder::Str(std::string_view s) {
  BeforeValue();
  AppendPyJsonString(s, &out_);
  return *this;
}

PyJsonBuilder& PyJsonBuilder::Raw(std::string_view bytes) {
  BeforeValue();
  out_ += bytes;
  return *this;
}

PyJsonBuilder& PyJsonBuilder::Fragment(std::string_view text) {
  BeforeValue();
  size_t pad = (static_cast<size_t>(level_) + open_.size()) *
               static_cast<size_t>(indent_);
  // JSON text has no raw line breaks inside strings: every '\n' starts a
  // line of the fragment, which moves right by `pad`.
  while (true) {
    const char* nl =
        static_cast<const char*>(std::memchr(text.data(), '\n', text.size()));
    if (nl == nullptr) break;
    size_t n = static_cast<size_t>(nl - text.data()) + 1;
    out_.append(text.data(), n);
    out_.append(pad, ' ');
    text.remove_prefix(n);
  }
  out_ += text;
  return *this;
}

std::string PyJsonBuilder::Take() {
  LOCKSTEP_DCHECK(open_.empty() && !after_key_);
  std::string text;
  text.swap(out_);
  open_.clear();
  after_key_ = false;
  return text;
}

}  // namespace lockstep
