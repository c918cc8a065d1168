// The fast JSON reader (ParseJsonMembersFast), for the streamed dict of a
// dump.json: a rapidjson SAX handler that builds each member into a JsonTree
// reused for the next one and hands it to the sink as a JsonNode, giving up
// on anything the general reader (json_reader.cc) must decide; and JsonNode,
// the view of a JsonTree's values.
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "format/json_bounded.h"
#include "format/json_reader_internal.h"
#include "lockstep/format/json_reader.h"

namespace lockstep {
namespace {

namespace rj = rapidjson;
using json_internal::Fields;
using json_internal::IsAscii;
using json_internal::kParseAsciiFlags;
using json_internal::kParseFlags;
using json_internal::NumberFromText;

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
