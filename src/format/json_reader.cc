// A rapidjson SAX handler that builds PyValue trees typed as Python's json
// module types them. Numbers arrive as raw text (kParseNumbersAsStringsFlag)
// so that ints and floats are told apart by their syntax, as Python does, and
// floats are converted with std::from_chars (correctly rounded) instead of
// rapidjson's own conversion.
#include "lockstep/format/json_reader.h"

#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <limits>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "format/json_bounded.h"
#include "format/str_cat.h"

namespace lockstep {
namespace {

namespace rj = rapidjson;

constexpr unsigned kParseFlags = rj::kParseNumbersAsStringsFlag |
                                 rj::kParseNanAndInfFlag |
                                 rj::kParseValidateEncodingFlag;
// For ASCII text, which is valid UTF-8 whatever it holds: the same parse
// without the per-character check (dump.json files are ASCII, as Python's
// json.dump writes them by default).
constexpr unsigned kParseAsciiFlags =
    kParseFlags & ~static_cast<unsigned>(rj::kParseValidateEncodingFlag);

bool IsAscii(std::string_view text) {
  const char* p = text.data();
  size_t n = text.size(), i = 0;
  uint64_t high = 0;
  for (; i + 32 <= n; i += 32) {  // four words a step: vectorised
    uint64_t w[4];
    std::memcpy(w, p + i, sizeof(w));
    high |= w[0] | w[1] | w[2] | w[3];
  }
  for (; i < n; ++i) high |= static_cast<unsigned char>(p[i]);
  return (high & 0x8080808080808080ull) == 0;
}

using Fields = std::vector<std::pair<std::string, PyValue>>;

}  // namespace

namespace {

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

// A JSON number's text as Python's json module reads it: int unless it has
// a fraction or an exponent.
PyValue NumberFromText(std::string_view t) {
  const char* b = t.data();
  const char* e = b + t.size();
  bool is_int = true;
  for (char c : t) is_int = is_int && c != '.' && c != 'e' && c != 'E';
  if (is_int) {
    int64_t i = 0;
    auto r = std::from_chars(b, e, i);
    if (r.ec == std::errc() && r.ptr == e) return PyValue::Int(i);
    return PyValue::BigInt(std::string(t));  // beyond int64
  }
  double d = 0;
  auto r = std::from_chars(b, e, d);
  if (r.ec == std::errc::result_out_of_range) {
    // Overflow to +-inf or underflow to +-0, as Python's float() gives.
    d = std::strtod(std::string(t).c_str(), nullptr);
  }
  return PyValue::Float(d);
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

// ---- The fast reader (ParseJsonMembersFast) ----------------------------

// Builds one member's values into a JsonTree that is emptied for the next
// member: no allocation per value once the tree's buffers have grown. The
// children of a container wait on `pending_` until it closes, then move
// side by side into the tree's nodes. It gives up (Bail) on anything the
// general reader must decide.
class FastBuilder : public rj::BaseReaderHandler<rj::UTF8<>, FastBuilder> {
 public:
  using Node = JsonTree::Node;

  FastBuilder(std::string_view key, const JsonNodeSink& sink,
              const rj::MemoryStream& stream, const ReadLimits& limits)
      : key_(key), sink_(sink), stream_(stream), limits_(limits) {}

  bool Null() { return PutScalar(Node()); }
  bool Bool(bool b) {
    Node n;
    n.kind = PyValue::Kind::kBool;
    n.num.b = b;
    return PutScalar(n);
  }
  bool RawNumber(const char* s, rj::SizeType len, bool /*copy*/);
  bool String(const char* s, rj::SizeType len, bool /*copy*/) {
    Node n;
    n.kind = PyValue::Kind::kStr;
    if (len > limits_.string_bytes || !Text(s, len, &n.str_off, &n.str_len))
      return Bail();  // the general reader says why
    return PutScalar(n);
  }
  bool Key(const char* s, rj::SizeType len, bool /*copy*/);
  bool StartObject() { return Open(true); }
  bool EndObject(rj::SizeType) { return Close(); }
  bool StartArray() { return Open(false); }
  bool EndArray(rj::SizeType) { return Close(); }

  bool bailed() const { return bailed_; }
  // Whether two streamed members' names have one hash: perhaps a repeated
  // name, which only the general reader reads as Python does.
  bool Repeats() {
    std::sort(seen_.begin(), seen_.end());
    return std::adjacent_find(seen_.begin(), seen_.end()) != seen_.end();
  }
  bool done() const { return done_; }
  const Status& sink_status() const { return sink_status_; }
  std::vector<std::pair<std::string, PyValue>> TakeTop() {
    return std::move(top_);
  }

 private:
  struct Frame {
    bool is_dict;
    uint32_t start;             // its first child in pending_
    uint32_t key_off, key_len;  // its own key, when a member
  };

  bool Bail() {
    bailed_ = true;
    return false;
  }
  // Copies a string into the tree's text.
  bool Text(const char* s, size_t n, uint32_t* off, uint32_t* len) {
    if (tree_.text.size() + n > UINT32_MAX) return false;
    *off = static_cast<uint32_t>(tree_.text.size());
    *len = static_cast<uint32_t>(n);
    tree_.text.append(s, n);
    return true;
  }
  bool PutScalar(Node n) {
    n.key_off = key_off_;
    n.key_len = key_len_;
    return Put(n);
  }
  bool Open(bool is_dict);
  bool Close();
  bool Put(const Node& n);
  // A finished value of a top-level member (depth 1) or of a streamed one.
  uint32_t Root(const Node& n) {
    tree_.nodes.push_back(n);
    return static_cast<uint32_t>(tree_.nodes.size() - 1);
  }
  void Clear() {
    tree_.nodes.clear();
    tree_.text.clear();
    pending_.clear();
  }

  std::string_view key_;
  const JsonNodeSink& sink_;
  const rj::MemoryStream& stream_;
  const ReadLimits& limits_;
  uint64_t values_ = 0;  // made so far, against limits_.objects
  JsonTree tree_;
  std::vector<Frame> stack_;
  std::vector<Node> pending_;
  uint32_t key_off_ = 0, key_len_ = 0;  // the key of the next member
  std::string top_key_, member_key_;    // keys at depth 1 and streamed
  bool streaming_ = false;              // frame 1 is the streamed dict
  bool streamed_ = false;               // the streamed key was met
  std::vector<size_t> seen_;            // streamed members' key hashes
  std::vector<std::pair<std::string, PyValue>> top_;
  Status sink_status_;
  bool bailed_ = false, done_ = false;
};

bool FastBuilder::RawNumber(const char* s, rj::SizeType len, bool) {
  if (len > limits_.string_bytes) return Bail();
  std::string_view t(s, len);
  char c = t.empty() ? 0 : t[t[0] == '-' && len > 1 ? 1 : 0];
  PyValue v;
  if (c == 'N' || c == 'I') {
    if (t == "NaN") {
      v = PyValue::Float(std::nan(""));
    } else if (t == "Infinity") {
      v = PyValue::Float(std::numeric_limits<double>::infinity());
    } else if (t == "-Infinity") {
      v = PyValue::Float(-std::numeric_limits<double>::infinity());
    } else {
      return Bail();  // the general reader says why
    }
  } else {
    v = NumberFromText(t);
  }
  Node n;
  n.kind = v.kind();
  if (v.kind() == PyValue::Kind::kFloat) {
    n.num.d = v.as_double();
  } else if (v.as_str().empty()) {
    n.num.i = v.as_int();
  } else {  // a big int: its digits
    n.big = true;
    if (!Text(t.data(), t.size(), &n.str_off, &n.str_len)) return Bail();
  }
  return PutScalar(n);
}

bool FastBuilder::Key(const char* s, rj::SizeType len, bool) {
  if (len > limits_.string_bytes) return Bail();
  if (stack_.size() == 1) {
    top_key_.assign(s, len);
    for (const auto& f : top_) {
      if (f.first == top_key_) return Bail();  // a repeated top-level key
    }
    return true;
  }
  if (stack_.size() == 2 && streaming_) {
    member_key_.assign(s, len);
    // Repeated names are looked for at the end (Repeats).
    seen_.push_back(std::hash<std::string>()(member_key_));
    return true;
  }
  return Text(s, len, &key_off_, &key_len_) || Bail();
}

bool FastBuilder::Open(bool is_dict) {
  if (stack_.size() >= static_cast<size_t>(kMaxJsonDepth)) return Bail();
  if (stack_.empty() && !is_dict) return Bail();  // not a dict at the top
  if (stack_.size() == 1 && top_key_ == key_) {
    if (!is_dict || streamed_) return Bail();
    streaming_ = streamed_ = true;
  }
  if (stack_.size() == 2 && streaming_ && !is_dict) return Bail();
  if (pending_.size() > UINT32_MAX) return Bail();
  stack_.push_back(Frame{is_dict, static_cast<uint32_t>(pending_.size()),
                         key_off_, key_len_});
  return true;
}

bool FastBuilder::Close() {
  Frame f = stack_.back();
  stack_.pop_back();
  if (stack_.empty()) {  // the top-level dict: its members are in top_
    done_ = true;
    return true;
  }
  if (stack_.size() == 1 && streaming_) {  // the streamed dict
    streaming_ = false;
    top_.emplace_back(top_key_, PyValue::Dict({}));
    return true;
  }
  size_t n = pending_.size() - f.start;
  if (f.is_dict) {
    // A repeated key: Python keeps its first place and last value.
    const char* text = tree_.text.data();
    for (size_t a = f.start + 1; a < pending_.size(); ++a) {
      for (size_t b = f.start; b < a; ++b) {
        const Node& x = pending_[a];
        const Node& y = pending_[b];
        if (x.key_len != y.key_len) continue;
        const char* kx = text + x.key_off;
        const char* ky = text + y.key_off;
        if (x.key_len > 0 &&
            (kx[0] != ky[0] || kx[x.key_len - 1] != ky[x.key_len - 1]))
          continue;  // told apart without a memcmp call ("Max"/"Min")
        if (std::memcmp(kx, ky, x.key_len) == 0) return Bail();
      }
    }
  }
  if (tree_.nodes.size() + n > UINT32_MAX) return Bail();
  Node c;
  c.kind = f.is_dict ? PyValue::Kind::kDict : PyValue::Kind::kList;
  c.n = static_cast<uint32_t>(n);
  c.first = static_cast<uint32_t>(tree_.nodes.size());
  c.key_off = f.key_off;
  c.key_len = f.key_len;
  tree_.nodes.insert(tree_.nodes.end(), pending_.begin() + f.start,
                     pending_.end());
  pending_.resize(f.start);
  return Put(c);
}

bool FastBuilder::Put(const Node& n) {
  if (++values_ > limits_.objects) return Bail();
  if (stack_.empty()) return Bail();  // a scalar document
  if (stack_.size() == 1) {           // a top-level member's value
    top_.emplace_back(top_key_, JsonNode(&tree_, Root(n)).ToPyValue());
    Clear();
    return true;
  }
  if (stack_.size() == 2 && streaming_) {               // a streamed member
    if (n.kind != PyValue::Kind::kDict) return Bail();  // says the reader
    sink_status_ =
        sink_(member_key_, JsonNode(&tree_, Root(n)), stream_.Tell());
    Clear();
    return sink_status_.ok();
  }
  pending_.push_back(n);
  return true;
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

bool JsonNode::as_bool() const {
  const JsonTree::Node& n = t_->nodes[i_];
  return n.kind == PyValue::Kind::kBool && n.num.b;
}

int64_t JsonNode::as_int() const {
  const JsonTree::Node& n = t_->nodes[i_];
  if (n.kind != PyValue::Kind::kInt) return 0;
  if (!n.big) return n.num.i;
  std::string_view digits = as_str();
  return !digits.empty() && digits[0] == '-' ? INT64_MIN : INT64_MAX;
}

double JsonNode::as_double() const {
  const JsonTree::Node& n = t_->nodes[i_];
  switch (n.kind) {
    case PyValue::Kind::kInt:
      return n.big ? std::strtod(std::string(as_str()).c_str(), nullptr)
                   : static_cast<double>(n.num.i);
    case PyValue::Kind::kFloat:
      return n.num.d;
    case PyValue::Kind::kBool:
      return n.num.b ? 1.0 : 0.0;
    default:
      return std::nan("");
  }
}

PyValue JsonNode::ToPyValue() const {
  const JsonTree::Node& n = t_->nodes[i_];
  switch (n.kind) {
    case PyValue::Kind::kNone:
      return PyValue();
    case PyValue::Kind::kBool:
      return PyValue::Bool(n.num.b);
    case PyValue::Kind::kInt:
      return n.big ? PyValue::BigInt(std::string(as_str()))
                   : PyValue::Int(n.num.i);
    case PyValue::Kind::kFloat:
      return PyValue::Float(n.num.d);
    case PyValue::Kind::kStr:
      return PyValue::Str(std::string(as_str()));
    case PyValue::Kind::kList: {
      std::vector<PyValue> items;
      items.reserve(size());
      for (size_t k = 0; k < size(); ++k) items.push_back(item(k).ToPyValue());
      return PyValue::List(std::move(items));
    }
    case PyValue::Kind::kDict: {
      Fields fields;
      fields.reserve(size());
      for (size_t k = 0; k < size(); ++k)
        fields.emplace_back(std::string(key(k)), item(k).ToPyValue());
      return PyValue::Dict(std::move(fields));
    }
  }
  return PyValue();
}

StatusOr<FastMembers> ParseJsonMembersFast(std::string_view text,
                                           std::string_view key,
                                           const JsonNodeSink& sink,
                                           const ReadLimits& limits) {
  rj::MemoryStream stream(text.data(), text.size());
  FastBuilder builder(key, sink, stream, limits);
  bool too_long = false;
  rj::ParseResult r = IsAscii(text)
                          ? json_internal::ParseBounded<kParseAsciiFlags>(
                                stream, builder, limits, &too_long)
                          : json_internal::ParseBounded<kParseFlags>(
                                stream, builder, limits, &too_long);
  if (!builder.sink_status().ok()) return builder.sink_status();
  FastMembers out;
  if (too_long || builder.bailed() || r.IsError() || !builder.done() ||
      stream.Tell() != text.size() || builder.Repeats()) {
    return out;  // undecided
  }
  out.decided = true;
  out.top = builder.TakeTop();
  return out;
}

}  // namespace lockstep
