// Parsing the .npy header: magic, version, length and the Python dict
// literal that numpy reads with ast.literal_eval. Only the literal forms
// numpy writes (and Python 2 numpy wrote) are accepted: quoted strings,
// True/False, tuples of ints with an optional 'L' suffix.
#include <bit>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <vector>

#include "format/str_cat.h"
#include "lockstep/format/npy.h"

namespace lockstep {
namespace {

static_assert(std::endian::native == std::endian::little,
              "lockstep assumes a little-endian host");

constexpr int kMaxNpyDims = 64;  // numpy 2's NPY_MAXDIMS

// Reads the little Python-literal language of an npy header.
class HeaderScanner {
 public:
  explicit HeaderScanner(std::string_view s) : s_(s) {}

  void SkipSpace() {
    while (pos_ < s_.size() && std::strchr(" \t\r\n", s_[pos_]) && s_[pos_])
      ++pos_;
  }
  bool Eat(char c) {
    SkipSpace();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool Peek(char c) {
    SkipSpace();
    return pos_ < s_.size() && s_[pos_] == c;
  }
  bool Word(std::string_view w) {
    SkipSpace();
    if (s_.substr(pos_, w.size()) != w) return false;
    pos_ += w.size();
    return true;
  }
  bool AtEnd() {
    SkipSpace();
    return pos_ == s_.size();
  }
  // A '...' or "..." string without escapes.
  bool String(std::string* out) {
    SkipSpace();
    if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"'))
      return false;
    size_t end = s_.find(s_[pos_], pos_ + 1);
    if (end == std::string_view::npos) return false;
    std::string_view body = s_.substr(pos_ + 1, end - pos_ - 1);
    if (body.find('\\') != std::string_view::npos) return false;
    out->assign(body);
    pos_ = end + 1;
    return true;
  }
  // A decimal int, maybe negative, maybe with Python 2's 'L'.
  bool Int(int64_t* out) {
    SkipSpace();
    const char* b = s_.data() + pos_;
    auto r = std::from_chars(b, s_.data() + s_.size(), *out);
    if (r.ec != std::errc() || r.ptr == b) return false;
    pos_ += static_cast<size_t>(r.ptr - b);
    if (pos_ < s_.size() && (s_[pos_] == 'L' || s_[pos_] == 'l')) ++pos_;
    return true;
  }
  size_t pos() const { return pos_; }

 private:
  std::string_view s_;
  size_t pos_ = 0;
};

// The header text for messages: printable, at most 200 characters.
std::string Printable(std::string_view s) {
  std::string out;
  for (unsigned char c : s.substr(0, 200)) {
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    }
  }
  return s.size() > 200 ? out + "..." : out;
}

Status BadHeader(std::string_view subject, std::string_view what,
                 HeaderScanner& sc, std::string_view text) {
  return Status::Corruption(subject, StrCat("npy header: ", what, " at char ",
                                            std::to_string(sc.pos()), " of \"",
                                            Printable(text), "\""));
}

// "(3, 4)", "(3,)", "()": a tuple; "(3)" is an int to Python, so not a shape.
bool ParseShape(HeaderScanner& sc, std::vector<int64_t>* shape) {
  shape->clear();
  if (!sc.Eat('(')) return false;
  bool trailing_comma = false;
  while (!sc.Eat(')')) {
    int64_t d = 0;
    if (shape->size() >= kMaxNpyDims || !sc.Int(&d)) return false;
    shape->push_back(d);
    trailing_comma = sc.Eat(',');
    if (!trailing_comma && !sc.Peek(')')) return false;
  }
  return shape->size() != 1 || trailing_comma;
}

Status ParseValue(std::string_view subject, std::string_view text,
                  const std::string& key, HeaderScanner& sc, NpyHeader* h) {
  if (key == "descr") {
    if (sc.Peek('[')) {
      return Status::NotSupported(
          subject, "npy: structured (record) dtypes are not supported");
    }
    if (!sc.String(&h->descr))
      return BadHeader(subject, "'descr' is not a string", sc, text);
  } else if (key == "fortran_order") {
    if (sc.Word("True")) {
      h->fortran_order = true;
    } else if (sc.Word("False")) {
      h->fortran_order = false;
    } else {
      return BadHeader(subject, "'fortran_order' is not True or False", sc,
                       text);
    }
  } else if (key == "shape") {
    if (!ParseShape(sc, &h->shape)) {
      return BadHeader(subject, "'shape' is not a tuple of ints", sc, text);
    }
  } else {
    return BadHeader(
        subject,
        StrCat("unexpected key '", key,
               "' (numpy requires exactly descr, fortran_order, shape)"),
        sc, text);
  }
  return Status::Ok();
}

Status ParseDict(std::string_view subject, std::string_view text,
                 NpyHeader* h) {
  HeaderScanner sc(text);
  if (!sc.Eat('{')) return BadHeader(subject, "expected '{'", sc, text);
  int seen = 0;  // bit per key
  while (!sc.Eat('}')) {
    std::string key;
    if (!sc.String(&key))
      return BadHeader(subject, "expected a quoted key", sc, text);
    if (!sc.Eat(':')) return BadHeader(subject, "expected ':'", sc, text);
    LOCKSTEP_RETURN_IF_ERROR(ParseValue(subject, text, key, sc, h));
    seen |= key == "descr" ? 1 : key == "fortran_order" ? 2 : 4;
    if (!sc.Eat(',') && !sc.Peek('}'))
      return BadHeader(subject, "expected ',' or '}'", sc, text);
  }
  if (!sc.AtEnd())
    return BadHeader(subject, "unexpected text after the dict", sc, text);
  if (seen != 7) {
    return BadHeader(subject,
                     "missing key (numpy requires descr, fortran_order, shape)",
                     sc, text);
  }
  return Status::Ok();
}

// descr -> dtype; sets big_endian. Assumes a little-endian host ('=' and
// '|' mean native).
Status DTypeFromDescr(std::string_view subject, NpyHeader* h) {
  std::string_view d = h->descr;
  h->big_endian = false;
  if (d == "bfloat16" || d == "<bfloat16" || d == "=bfloat16") {
    h->dtype = DType::kBFloat16;
    return Status::Ok();
  }
  struct Code {
    char kind;
    int size;
    DType dtype;
  };
  static constexpr Code kCodes[] = {
      {'f', 2, DType::kFloat16}, {'f', 4, DType::kFloat32},
      {'f', 8, DType::kFloat64}, {'i', 1, DType::kInt8},
      {'i', 2, DType::kInt16},   {'i', 4, DType::kInt32},
      {'i', 8, DType::kInt64},   {'u', 1, DType::kUInt8},
      {'u', 2, DType::kUInt16},  {'u', 4, DType::kUInt32},
      {'u', 8, DType::kUInt64},  {'b', 1, DType::kBool},
  };
  if (d.size() == 3 && std::strchr("<>|=", d[0]) && d[0] != 0) {
    for (const Code& c : kCodes) {
      if (d[1] == c.kind && d[2] == '0' + c.size) {
        h->dtype = c.dtype;
        h->big_endian = d[0] == '>' && c.size > 1;
        return Status::Ok();
      }
    }
  }
  std::string note =
      d.size() == 3 && d[1] == 'V' && d[2] == '2'
          ? " (a raw 2-byte void: ml_dtypes' bfloat16 is saved this way, but "
            "lockstep "
            "cannot tell it from other 2-byte types. Note: save it as float32)"
          : " (supported: f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 b1, either byte "
            "order, and "
            "'bfloat16')";
  return Status::NotSupported(subject,
                              StrCat("npy dtype '", Printable(d), "'", note));
}

uint32_t LoadLE(std::string_view b, size_t at, size_t n) {
  uint32_t v = 0;
  for (size_t i = 0; i < n; ++i)
    v |= static_cast<uint32_t>(static_cast<uint8_t>(b[at + i])) << (8 * i);
  return v;
}

// Magic, version and header length; returns the header text's place.
Status ParsePreamble(std::string_view bytes, std::string_view subject,
                     NpyHeader* h, size_t* text_at, size_t* text_len) {
  if (bytes.size() < 8 || bytes.substr(0, 6) != kNpyMagic) {
    return Status::Corruption(subject, "not a .npy file (no \\x93NUMPY magic)");
  }
  h->major = static_cast<uint8_t>(bytes[6]);
  h->minor = static_cast<uint8_t>(bytes[7]);
  if (h->major < 1 || h->major > 3 || h->minor != 0) {
    return Status::NotSupported(
        subject,
        StrCat("npy format version ", std::to_string(h->major), ".",
               std::to_string(h->minor), " (supported: 1.0, 2.0, 3.0)"));
  }
  size_t len_bytes = h->major == 1 ? 2 : 4;
  if (bytes.size() < 8 + len_bytes) {
    return Status::Corruption(subject, "truncated in the npy header length");
  }
  *text_len = LoadLE(bytes, 8, len_bytes);
  *text_at = 8 + len_bytes;
  if (*text_len > bytes.size() - *text_at) {
    return Status::Corruption(
        subject,
        StrCat("truncated: the npy header says it is ",
               std::to_string(*text_len), " bytes but the file has ",
               std::to_string(bytes.size() - *text_at), " after the magic"));
  }
  return Status::Ok();
}

// numel * itemsize, and that it fits in the bytes after the header.
Status CheckDataSize(std::string_view bytes, std::string_view subject,
                     NpyHeader* h) {
  for (int64_t d : h->shape) {
    if (d < 0) {
      return Status::Corruption(
          subject,
          StrCat("npy shape ", ShapeToString(h->shape), " has a negative dim"));
    }
  }
  int64_t numel = NumElements(h->shape);
  size_t es = DTypeSize(h->dtype);
  size_t have = bytes.size() - h->data_offset;
  // numpy refuses a shape whose dims other than 0 overflow with the item
  // size, even when a dim of 0 leaves it empty: (0, 2^63-1, 2^63-1).
  std::vector<int64_t> nonzero;
  bool empty = false;
  for (int64_t d : h->shape) {
    nonzero.push_back(d == 0 ? 1 : d);
    empty = empty || d == 0;
  }
  int64_t span = NumElements(nonzero);
  if (empty && (span < 0 || static_cast<uint64_t>(span) > INT64_MAX / es)) {
    return Status::Corruption(
        subject,
        StrCat("npy shape ", ShapeToString(h->shape), " of '", h->descr,
               "' is too big: its dims overflow 2^63 bytes, as "
               "numpy refuses"));
  }
  if (numel < 0 || static_cast<uint64_t>(numel) > SIZE_MAX / es ||
      static_cast<size_t>(numel) * es > have) {
    std::string need = numel < 0 ? "more than 2^63 elements"
                                 : StrCat(std::to_string(numel), " elements");
    return Status::Corruption(
        subject, StrCat("truncated: npy shape ", ShapeToString(h->shape),
                        " of '", h->descr, "' needs ", need, " of ",
                        std::to_string(es), " bytes, but the file has ",
                        std::to_string(have), " bytes after its ",
                        std::to_string(h->data_offset), "-byte header"));
  }
  h->data_bytes = static_cast<size_t>(numel) * es;
  return Status::Ok();
}

}  // namespace

StatusOr<NpyHeader> ParseNpyHeader(std::string_view bytes,
                                   std::string_view subject) {
  NpyHeader h;
  size_t text_at = 0, text_len = 0;
  LOCKSTEP_RETURN_IF_ERROR(
      ParsePreamble(bytes, subject, &h, &text_at, &text_len));
  std::string_view text = bytes.substr(text_at, text_len);
  LOCKSTEP_RETURN_IF_ERROR(ParseDict(subject, text, &h));
  LOCKSTEP_RETURN_IF_ERROR(DTypeFromDescr(subject, &h));
  h.data_offset = text_at + text_len;
  LOCKSTEP_RETURN_IF_ERROR(CheckDataSize(bytes, subject, &h));
  return h;
}

}  // namespace lockstep
