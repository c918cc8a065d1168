// PyValue: a value from a dump file typed the way Python's json module types
// it (None, bool, int, float, str, list, dict with key order kept), so that
// lockstep can print it exactly as msprobe (Python) does.
// Thread safety: a value type; no shared state.
#ifndef LOCKSTEP_FORMAT_PYVALUE_H_
#define LOCKSTEP_FORMAT_PYVALUE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lockstep {

class PyValue {
 public:
  enum class Kind { kNone, kBool, kInt, kFloat, kStr, kList, kDict };

  PyValue() = default;  // None
  PyValue(const PyValue& o);
  PyValue(PyValue&& o) noexcept;
  PyValue& operator=(const PyValue& o);
  PyValue& operator=(PyValue&& o) noexcept;
  ~PyValue();
  static PyValue Bool(bool b);
  static PyValue Int(int64_t i);
  // An integer too large for int64, kept as its decimal digits.
  static PyValue BigInt(std::string digits);
  static PyValue Float(double d);
  static PyValue Str(std::string s);
  static PyValue List(std::vector<PyValue> items);
  static PyValue Dict(std::vector<std::pair<std::string, PyValue>> fields);

  Kind kind() const { return kind_; }
  bool is_none() const { return kind_ == Kind::kNone; }
  bool is_number() const {
    return kind_ == Kind::kInt || kind_ == Kind::kFloat;
  }
  bool as_bool() const { return kind_ == Kind::kBool && n_.b; }
  // An int's value; a big int's is INT64_MIN or INT64_MAX by its sign.
  int64_t as_int() const {
    return kind_ != Kind::kInt ? 0 : big_ ? BigIntBound() : n_.i;
  }
  // Int or float as double; NaN for other kinds.
  double as_double() const;
  // A str's text, or a big int's digits; "" for other kinds.
  const std::string& as_str() const;
  // A list's items; empty for other kinds.
  const std::vector<PyValue>& items() const;
  // A dict's fields in order; empty for other kinds.
  const std::vector<std::pair<std::string, PyValue>>& fields() const;
  // Dict lookup; nullptr when absent or not a dict.
  const PyValue* Find(std::string_view key) const;

  // Move the items (fields) out, leaving an empty list (dict). Lets a reader
  // hand a parsed tree's parts to their owners without copying them.
  // REQUIRES: kind() == kList (kDict).
  std::vector<PyValue> TakeItems();
  std::vector<std::pair<std::string, PyValue>> TakeFields();

  // Python's name of the value's type: "NoneType", "bool", "int", "float",
  // "str", "list", "dict".
  std::string_view TypeName() const;

  // Python str(value): "None", "True", "2", "0.5", "abc", "[1, 'a']", "{'k':
  // 1}".
  std::string PyStr() const;
  // Python repr(value): like PyStr but strings are quoted: "'abc'".
  std::string PyRepr() const;
  // PyStr() / PyRepr() appended to *out (no string made per element).
  void AppendPyStr(std::string* out) const;
  void AppendPyRepr(std::string* out) const;

  bool operator==(const PyValue& o) const;

 private:
  using Fields = std::vector<std::pair<std::string, PyValue>>;
  void Release();
  void CopyFrom(const PyValue& o);

  // The heap part when there is one: a str's or big int's text, a list's
  // items, a dict's fields (nullptr for an empty str, list or dict).
  void* heap() const {
    return (kind_ >= Kind::kStr || big_) ? n_.heap : nullptr;
  }
  int64_t BigIntBound() const;

  // 16 bytes a value (dump.json trees hold millions): the kind, and one word
  // that is either the number or a pointer to what lives on the heap (a
  // str's or big int's text, a list's items, a dict's fields), owned.
  Kind kind_ = Kind::kNone;
  bool big_ = false;  // a kInt beyond int64: its digits are on the heap
  // The pointer comes first: `n_{}` zero-initializes the union's first
  // member, and clang leaves the bytes beyond a first member of 1 byte
  // (bool) as they were, so an empty str, list or dict (no heap part) read
  // a garbage pointer and freed it (found by the libFuzzer targets).
  union Word {
    void* heap;  // std::string*, std::vector<PyValue>*, Fields*
    bool b;
    int64_t i;
    double d;
  } n_{};
};

// Python repr() of a str: single quotes unless the string contains a single
// quote and no double quote; escapes \\, \n, \r, \t and non-printables.
std::string PyStrRepr(const std::string& s);
void AppendPyStrRepr(std::string_view s, std::string* out);

}  // namespace lockstep

#endif  // LOCKSTEP_FORMAT_PYVALUE_H_
