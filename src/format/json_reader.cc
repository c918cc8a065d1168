// The general JSON reader (ParsePyJson, ParsePyJsonStreaming): a rapidjson
// SAX handler that builds PyValue trees typed as Python's json module types
// them, and its error messages (the place, the containers open around it).
// Numbers arrive as raw text (kParseNumbersAsStringsFlag) so that ints and
// floats are told apart by their syntax, as Python does, and floats are
// converted with std::from_chars (correctly rounded) instead of rapidjson's
// own conversion. The fast reader, ParseJsonMembersFast, is in
// json_fast_reader.cc.
#include "lockstep/format/json_reader.h"

#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <limits>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "format/json_bounded.h"
#include "format/json_reader_internal.h"
#include "format/str_cat.h"

namespace lockstep {
namespace {

namespace rj = rapidjson;
using json_internal::Fields;
using json_internal::IsAscii;
using json_internal::kParseAsciiFlags;
using json_internal::kParseFlags;
using json_internal::NumberFromText;

// Whether two keys are equal, telling most different keys apart by their
// size and last character before comparing all of them ("Max"/"Min").
bool SameKey(const std::string& a, const std::string& b) {
  return a.size() == b.size() && (a.empty() || a.back() == b.back()) && a == b;
}

// Whether a dict has a repeated key. Dump dicts are small: a quadratic scan
// without allocation beats hashing up to a few dozen keys.
bool HasRepeatedKey(const Fields& fields) {
  size_t n = fields.size();
  if (n <= 32) {
    for (size_t i = 1; i < n; ++i) {
      for (size_t j = 0; j < i; ++j) {
        if (SameKey(fields[i].first, fields[j].first)) return true;
      }
    }
    return false;
  }
  std::unordered_set<std::string_view> seen;
  seen.reserve(n);
  for (const auto& f : fields) {
    if (!seen.insert(f.first).second) return true;
  }
  return false;
}

// Python dict semantics for repeated keys: the first position, the last value.
void DedupeKeys(Fields* fields) {
  if (fields->size() < 2 || !HasRepeatedKey(*fields)) return;
  size_t n = fields->size();
  std::vector<bool> drop(n, false);
  std::unordered_map<std::string_view, size_t> first;
  for (size_t j = 0; j < n; ++j) {
    auto [it, inserted] = first.emplace((*fields)[j].first, j);
    if (inserted) continue;
    (*fields)[it->second].second = std::move((*fields)[j].second);
    drop[j] = true;
  }
  size_t out = 0;
  for (size_t j = 0; j < n; ++j) {
    if (drop[j]) continue;
    if (out != j) (*fields)[out] = std::move((*fields)[j]);
    ++out;
  }
  fields->resize(out);
}

// Builds the tree bottom-up. The elements of all open containers wait on two
// shared stacks (list items, dict members); closing a container moves its
// range into one exactly sized vector, so each list or dict costs one
// allocation however it grows.
class TreeBuilder : public rj::BaseReaderHandler<rj::UTF8<>, TreeBuilder> {
 public:
  explicit TreeBuilder(const ReadLimits& limits) : limits_(limits) {}

  bool Null() { return Put(PyValue()); }
  bool Bool(bool b) { return Put(PyValue::Bool(b)); }
  bool RawNumber(const char* s, rj::SizeType n, bool /*copy*/);
  bool String(const char* s, rj::SizeType n, bool /*copy*/) {
    return Fits(n) && Put(PyValue::Str(std::string(s, n)));
  }
  bool Key(const char* s, rj::SizeType n, bool /*copy*/) {
    if (!Fits(n)) return false;
    members_.emplace_back(std::string(s, n), PyValue());
    stack_.back().has_key = true;
    return true;
  }
  bool StartObject() { return Open(true); }
  bool EndObject(rj::SizeType) { return Close(); }
  bool StartArray() { return Open(false); }
  bool EndArray(rj::SizeType) { return Close(); }

  // Members of the top-level dict's member `key` go to `sink` as they
  // complete instead of into the tree (that dict is left empty).
  // `stream` is the text being parsed (its position goes to the sink).
  void StreamMembersOf(std::string_view key, const JsonMemberSink* sink,
                       const rj::MemoryStream* stream) {
    stream_key_ = key;
    sink_ = sink;
    stream_ = stream;
  }
  PyValue TakeRoot() { return std::move(root_); }
  // Why the sink stopped the parse (ok when it did not).
  const Status& sink_status() const { return sink_status_; }
  // True when the streamed dict repeats a key or the top level repeats the
  // streamed key: only a whole tree gives Python's answer then.
  bool needs_tree() const { return needs_tree_; }
  // Why the handler stopped the parse (kParseErrorTermination).
  const std::string& problem() const { return problem_; }
  // True when it stopped at a limit of ReadLimits (problem() says which).
  bool over_limit() const { return over_limit_; }
  // ", inside ['data']['x'], after the element [2]" for the containers open
  // now; "" at top level.
  std::string Where() const;
  // "; ['data'] has 12 complete members before it" or "".
  std::string Progress() const;

 private:
  struct Frame {
    bool is_dict = false;
    bool has_key = false;  // dict: its last member has a key but no value yet
    size_t start = 0;      // its first element in items_ or members_
  };

  bool Open(bool is_dict);
  bool Close();
  bool Put(PyValue v);
  // False (and the problem said) for a string beyond the limit.
  bool Fits(size_t n) {
    if (n <= limits_.string_bytes) return true;
    return OverLimit(StrCat("a string of ", ByteSize(n), ", longer than ",
                            ByteSize(limits_.string_bytes)));
  }
  bool OverLimit(std::string problem) {
    problem_ = std::move(problem);
    over_limit_ = true;
    return false;
  }
  // Complete elements of open container `i`.
  size_t Complete(size_t i) const;
  // The subscript of the element being parsed in container `i`: "[3]",
  // "['key']", or "" for a dict between members.
  std::string Subscript(size_t i) const;
  std::string PathTo(size_t depth) const;
  // The key of member `k` of dict frame `i` (complete or being parsed).
  std::string_view MemberKey(size_t i, size_t k) const;
  bool Streaming(size_t i) const { return i == 1 && streaming_; }
  bool PutStreamed(PyValue v);

  ReadLimits limits_;
  uint64_t values_ = 0;  // made so far, against limits_.objects
  bool over_limit_ = false;
  std::vector<Frame> stack_;
  std::vector<PyValue> items_;
  Fields members_;
  PyValue root_;
  std::string problem_;
  // Streaming (StreamMembersOf): frame 1 is the streamed dict while
  // `streaming_`; `streamed_` members have gone to the sink, the last of
  // them named `last_streamed_`; `seen_` holds their keys' hashes.
  std::string_view stream_key_;
  const JsonMemberSink* sink_ = nullptr;
  const rj::MemoryStream* stream_ = nullptr;
  bool streaming_ = false;
  bool stream_started_ = false;
  size_t streamed_ = 0;
  std::string last_streamed_;
  std::unordered_set<size_t> seen_;
  Status sink_status_;
  bool needs_tree_ = false;
};

bool TreeBuilder::RawNumber(const char* s, rj::SizeType n, bool) {
  if (!Fits(n)) return false;
  std::string_view t(s, n);
  char c = t.empty() ? 0 : t[t[0] == '-' && n > 1 ? 1 : 0];
  if (c == 'N' || c == 'I') {  // rapidjson also takes "Inf", "-NaN", "NaN.5"
    if (t == "NaN") return Put(PyValue::Float(std::nan("")));
    if (t == "Infinity") {
      return Put(PyValue::Float(std::numeric_limits<double>::infinity()));
    }
    if (t == "-Infinity") {
      return Put(PyValue::Float(-std::numeric_limits<double>::infinity()));
    }
    problem_ = StrCat(
        "'", t, "' is not a number (only NaN, Infinity and -Infinity are)");
    return false;
  }
  return Put(NumberFromText(t));
}

bool TreeBuilder::Open(bool is_dict) {
  if (stack_.size() >= static_cast<size_t>(kMaxJsonDepth)) {
    problem_ = StrCat("nested deeper than ", std::to_string(kMaxJsonDepth),
                      " lists and dicts");
    return false;
  }
  if (sink_ != nullptr && stack_.size() == 1 && stack_[0].is_dict &&
      stack_[0].has_key && members_.back().first == stream_key_) {
    if (stream_started_) {  // a repeated key: its last value wins
      needs_tree_ = true;
      return false;
    }
    streaming_ = is_dict;
    stream_started_ = true;
  }
  stack_.push_back(
      Frame{is_dict, false, is_dict ? members_.size() : items_.size()});
  return true;
}

bool TreeBuilder::Close() {
  Frame f = stack_.back();
  if (Streaming(stack_.size() - 1)) streaming_ = false;
  stack_.pop_back();
  if (!f.is_dict) {
    auto first = items_.begin() + static_cast<std::ptrdiff_t>(f.start);
    std::vector<PyValue> items(std::make_move_iterator(first),
                               std::make_move_iterator(items_.end()));
    items_.erase(first, items_.end());
    return Put(PyValue::List(std::move(items)));
  }
  auto first = members_.begin() + static_cast<std::ptrdiff_t>(f.start);
  Fields fields(std::make_move_iterator(first),
                std::make_move_iterator(members_.end()));
  members_.erase(first, members_.end());
  DedupeKeys(&fields);
  return Put(PyValue::Dict(std::move(fields)));
}

bool TreeBuilder::Put(PyValue v) {
  if (++values_ > limits_.objects) {
    return OverLimit(StrCat("more than ", std::to_string(limits_.objects),
                            " values in one file"));
  }
  if (stack_.empty()) {
    root_ = std::move(v);
    return true;
  }
  Frame& f = stack_.back();
  if (Streaming(stack_.size() - 1)) return PutStreamed(std::move(v));
  if (f.is_dict) {
    members_.back().second = std::move(v);
    f.has_key = false;
  } else {
    items_.push_back(std::move(v));
  }
  return true;
}

bool TreeBuilder::PutStreamed(PyValue v) {
  std::string key = std::move(members_.back().first);
  members_.pop_back();
  stack_.back().has_key = false;
  if (!seen_.insert(std::hash<std::string>()(key)).second) {
    needs_tree_ = true;  // perhaps a repeated key (or a hash collision)
    return false;
  }
  ++streamed_;
  last_streamed_ = key;
  sink_status_ = (*sink_)(std::move(key), std::move(v), stream_->Tell());
  return sink_status_.ok();
}

std::string_view TreeBuilder::MemberKey(size_t i, size_t k) const {
  if (!Streaming(i)) return members_[stack_[i].start + k].first;
  if (k < streamed_) {
    return k + 1 == streamed_ ? std::string_view(last_streamed_)
                              : std::string_view();
  }
  return members_[stack_[i].start + k - streamed_].first;
}

size_t TreeBuilder::Complete(size_t i) const {
  const Frame& f = stack_[i];
  size_t end = f.is_dict ? members_.size() : items_.size();
  for (size_t j = i + 1; j < stack_.size(); ++j) {
    if (stack_[j].is_dict == f.is_dict) {
      end = stack_[j].start;
      break;
    }
  }
  return end - f.start - (f.has_key ? 1 : 0) + (Streaming(i) ? streamed_ : 0);
}

std::string TreeBuilder::Subscript(size_t i) const {
  const Frame& f = stack_[i];
  size_t n = Complete(i);
  if (!f.is_dict) return StrCat("[", std::to_string(n), "]");
  if (!f.has_key) return "";
  return StrCat("[", PyStrRepr(std::string(MemberKey(i, n))), "]");
}

std::string TreeBuilder::PathTo(size_t depth) const {
  std::string path;
  for (size_t i = 0; i < depth && i < stack_.size(); ++i) path += Subscript(i);
  return path;
}

std::string TreeBuilder::Where() const {
  if (stack_.empty()) return "";
  // The innermost container is named by the element or member before the
  // error: whether the error is inside the next one or between the two
  // cannot be told from here.
  size_t last = stack_.size() - 1;
  const Frame& f = stack_[last];
  std::string path = PathTo(last);
  if (f.is_dict) path += Subscript(last);
  std::string out = path.empty() ? "" : StrCat(", inside ", path);
  size_t n = Complete(last);
  if (f.is_dict && !f.has_key && n > 0) {
    out += StrCat(", after the member ",
                  PyStrRepr(std::string(MemberKey(last, n - 1))));
  } else if (!f.is_dict && n > 0) {
    out += StrCat(", after the element [", std::to_string(n - 1), "]");
  }
  return out;
}

std::string TreeBuilder::Progress() const {
  if (stack_.size() < 2) return "";
  return StrCat("; ", PathTo(1), " has ", std::to_string(Complete(1)),
                " complete members before it");
}

std::string ProblemText(std::string_view text, size_t offset,
                        rj::ParseErrorCode code) {
  unsigned char c = offset < text.size() ? text[offset] : 0;
  if (offset < text.size() && c == 0) return "unexpected NUL byte";
  if (code == rj::kParseErrorStringEscapeInvalid && c < 0x20) {
    char buf[64];
    std::snprintf(buf, sizeof(buf),
                  "invalid control character 0x%02x in a string", c);
    return buf;
  }
  std::string msg = rj::GetParseError_En(code);
  if (!msg.empty() && msg.back() == '.') msg.pop_back();
  return msg;
}

constexpr std::string_view kLimitNote =
    ". Note: files this large are refused as untrusted input (ReadLimits, "
    "format/read_budget.h)";

// A string or number that outgrew rapidjson's bounded stack.
Status TooLong(std::string_view text, std::string_view subject, size_t offset,
               const ReadLimits& limits) {
  return Status::NotSupported(
      subject,
      StrCat(JsonTextPosition(text, offset),
             ": a string or number of more than ",
             ByteSize(json_internal::StackLimit(limits)), ", longer than ",
             ByteSize(limits.string_bytes), kLimitNote));
}

Status ParseError(std::string_view text, std::string_view subject,
                  const rj::ParseResult& r, const TreeBuilder& b) {
  size_t offset = std::min(r.Offset(), text.size());
  std::string pos = JsonTextPosition(text, offset);
  if (b.over_limit()) {
    return Status::NotSupported(
        subject, StrCat(pos, ": ", b.problem(), b.Where(), kLimitNote));
  }
  if (r.Code() == rj::kParseErrorTermination) {
    return Status::Corruption(subject,
                              StrCat(pos, ": ", b.problem(), b.Where()));
  }
  if (offset >= text.size()) {
    if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
      return Status::Corruption(subject, "empty: no JSON value in it");
    }
    return Status::Corruption(
        subject, StrCat("truncated at ", pos, ": the text ends", b.Where(),
                        b.Progress(), " (was its writer killed mid-write?)"));
  }
  return Status::Corruption(
      subject,
      StrCat(pos, ": ", ProblemText(text, offset, r.Code()), b.Where()));
}

}  // namespace

std::string JsonTextPosition(std::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  std::string_view before = text.substr(0, offset);
  size_t line =
      1 + static_cast<size_t>(std::count(before.begin(), before.end(), '\n'));
  size_t nl = before.rfind('\n');
  size_t col = nl == std::string_view::npos ? offset + 1 : offset - nl;
  return StrCat("line ", std::to_string(line), " column ", std::to_string(col),
                " (char ", std::to_string(offset), ")");
}

StatusOr<PyValue> ParsePyJson(std::string_view text, std::string_view subject,
                              const ReadLimits& limits) {
  return ParsePyJsonStreaming(text, subject, "", nullptr, nullptr, limits);
}

StatusOr<PyValue> ParsePyJsonStreaming(
    std::string_view text, std::string_view subject, std::string_view key,
    const JsonMemberSink* sink, bool* needs_tree, const ReadLimits& limits) {
  rj::MemoryStream stream(text.data(), text.size());
  TreeBuilder builder(limits);
  if (sink != nullptr) builder.StreamMembersOf(key, sink, &stream);
  bool too_long = false;
  rj::ParseResult r = IsAscii(text)
                          ? json_internal::ParseBounded<kParseAsciiFlags>(
                                stream, builder, limits, &too_long)
                          : json_internal::ParseBounded<kParseFlags>(
                                stream, builder, limits, &too_long);
  if (too_long) return TooLong(text, subject, stream.Tell(), limits);
  if (needs_tree != nullptr) *needs_tree = builder.needs_tree();
  if (builder.needs_tree()) {
    return Status::InvalidArgument(subject, "repeated keys: parse as a tree");
  }
  if (!builder.sink_status().ok()) return builder.sink_status();
  if (r.IsError()) return ParseError(text, subject, r, builder);
  if (stream.Tell() != text.size()) {
    // rapidjson takes a NUL byte for the end of the text.
    rj::ParseResult nul(rj::kParseErrorDocumentRootNotSingular, stream.Tell());
    return ParseError(text, subject, nul, builder);
  }
  return builder.TakeRoot();
}

}  // namespace lockstep
