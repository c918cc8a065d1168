#include "lockstep/format/pyvalue.h"

#include <charconv>
#include <cmath>

#include "lockstep/core/check.h"
#include "lockstep/numerics/pyfloat.h"

namespace lockstep {

namespace {

const std::string& EmptyString() {
  static const std::string* empty = new std::string();
  return *empty;
}

}  // namespace

static_assert(sizeof(PyValue) == 16, "dump trees hold millions of values");

PyValue::PyValue(const PyValue& o) { CopyFrom(o); }

PyValue::PyValue(PyValue&& o) noexcept
    : kind_(o.kind_), big_(o.big_), n_(o.n_) {
  o.kind_ = Kind::kNone;
  o.big_ = false;
}

PyValue& PyValue::operator=(const PyValue& o) {
  if (this != &o) {
    PyValue copy(o);
    *this = std::move(copy);
  }
  return *this;
}

PyValue& PyValue::operator=(PyValue&& o) noexcept {
  if (this != &o) {
    Release();
    kind_ = o.kind_;
    big_ = o.big_;
    n_ = o.n_;
    o.kind_ = Kind::kNone;
    o.big_ = false;
  }
  return *this;
}

PyValue::~PyValue() { Release(); }

void PyValue::Release() {
  void* h = heap();
  if (h != nullptr) {
    switch (kind_) {
      case Kind::kInt:
      case Kind::kStr:
        delete static_cast<std::string*>(h);
        break;
      case Kind::kList:
        delete static_cast<std::vector<PyValue>*>(h);
        break;
      case Kind::kDict:
        delete static_cast<Fields*>(h);
        break;
      default:
        break;
    }
  }
  kind_ = Kind::kNone;
  big_ = false;
  n_.heap = nullptr;
}

void PyValue::CopyFrom(const PyValue& o) {
  kind_ = o.kind_;
  big_ = o.big_;
  n_ = o.n_;
  const void* h = o.heap();
  if (h == nullptr) return;
  switch (o.kind_) {
    case Kind::kInt:
    case Kind::kStr:
      n_.heap = new std::string(*static_cast<const std::string*>(h));
      break;
    case Kind::kList:
      n_.heap = new std::vector<PyValue>(
          *static_cast<const std::vector<PyValue>*>(h));
      break;
    case Kind::kDict:
      n_.heap = new Fields(*static_cast<const Fields*>(h));
      break;
    default:
      break;
  }
}

PyValue PyValue::Bool(bool b) {
  PyValue v;
  v.kind_ = Kind::kBool;
  v.n_.b = b;
  return v;
}
PyValue PyValue::Int(int64_t i) {
  PyValue v;
  v.kind_ = Kind::kInt;
  v.n_.i = i;
  return v;
}
PyValue PyValue::BigInt(std::string digits) {
  PyValue v;
  v.kind_ = Kind::kInt;
  v.big_ = true;
  v.n_.heap = new std::string(std::move(digits));
  return v;
}
int64_t PyValue::BigIntBound() const {
  const std::string& digits = as_str();
  return !digits.empty() && digits[0] == '-' ? INT64_MIN : INT64_MAX;
}
PyValue PyValue::Float(double d) {
  PyValue v;
  v.kind_ = Kind::kFloat;
  v.n_.d = d;
  return v;
}
PyValue PyValue::Str(std::string s) {
  PyValue v;
  v.kind_ = Kind::kStr;
  if (!s.empty()) v.n_.heap = new std::string(std::move(s));
  return v;
}
PyValue PyValue::List(std::vector<PyValue> items) {
  PyValue v;
  v.kind_ = Kind::kList;
  if (!items.empty()) v.n_.heap = new std::vector<PyValue>(std::move(items));
  return v;
}
PyValue PyValue::Dict(std::vector<std::pair<std::string, PyValue>> fields) {
  PyValue v;
  v.kind_ = Kind::kDict;
  if (!fields.empty()) v.n_.heap = new Fields(std::move(fields));
  return v;
}

const std::string& PyValue::as_str() const {
  if ((kind_ == Kind::kStr || kind_ == Kind::kInt) && heap() != nullptr)
    return *static_cast<const std::string*>(heap());
  return EmptyString();
}

const std::vector<PyValue>& PyValue::items() const {
  static const std::vector<PyValue>* empty = new std::vector<PyValue>();
  if (kind_ == Kind::kList && heap() != nullptr)
    return *static_cast<const std::vector<PyValue>*>(heap());
  return *empty;
}

const std::vector<std::pair<std::string, PyValue>>& PyValue::fields() const {
  static const Fields* empty = new Fields();
  if (kind_ == Kind::kDict && heap() != nullptr)
    return *static_cast<const Fields*>(heap());
  return *empty;
}

double PyValue::as_double() const {
  if (kind_ == Kind::kInt) {
    if (big_)  // a big int: its digits
      return std::strtod(as_str().c_str(), nullptr);
    return static_cast<double>(n_.i);
  }
  if (kind_ == Kind::kFloat) return n_.d;
  if (kind_ == Kind::kBool) return n_.b ? 1.0 : 0.0;
  return std::nan("");
}

const PyValue* PyValue::Find(std::string_view key) const {
  if (kind_ != Kind::kDict) return nullptr;
  for (const auto& [k, v] : fields()) {
    if (k == key) return &v;
  }
  return nullptr;
}

std::vector<PyValue> PyValue::TakeItems() {
  LOCKSTEP_CHECK(kind_ == Kind::kList);
  std::vector<PyValue> out;
  if (heap() != nullptr) out.swap(*static_cast<std::vector<PyValue>*>(heap()));
  return out;
}

std::vector<std::pair<std::string, PyValue>> PyValue::TakeFields() {
  LOCKSTEP_CHECK(kind_ == Kind::kDict);
  std::vector<std::pair<std::string, PyValue>> out;
  if (heap() != nullptr) out.swap(*static_cast<Fields*>(heap()));
  return out;
}

void AppendPyStrRepr(std::string_view s, std::string* out) {
  bool has_single = s.find('\'') != std::string::npos;
  bool has_double = s.find('"') != std::string::npos;
  char q = (has_single && !has_double) ? '"' : '\'';
  out->push_back(q);
  for (unsigned char c : s) {
    if (c == '\\') {
      out->append("\\\\");
    } else if (c == static_cast<unsigned char>(q)) {
      out->push_back('\\');
      out->push_back(static_cast<char>(c));
    } else if (c == '\n') {
      out->append("\\n");
    } else if (c == '\r') {
      out->append("\\r");
    } else if (c == '\t') {
      out->append("\\t");
    } else if (c < 0x20 || c == 0x7f) {
      static const char kHex[] = "0123456789abcdef";
      const char esc[4] = {'\\', 'x', kHex[c >> 4], kHex[c & 15]};
      out->append(esc, 4);
    } else {
      out->push_back(static_cast<char>(c));
    }
  }
  out->push_back(q);
}

std::string PyStrRepr(const std::string& s) {
  std::string out;
  AppendPyStrRepr(s, &out);
  return out;
}

std::string_view PyValue::TypeName() const {
  switch (kind_) {
    case Kind::kNone:
      return "NoneType";
    case Kind::kBool:
      return "bool";
    case Kind::kInt:
      return "int";
    case Kind::kFloat:
      return "float";
    case Kind::kStr:
      return "str";
    case Kind::kList:
      return "list";
    case Kind::kDict:
      return "dict";
  }
  return "object";
}

std::string PyValue::PyStr() const {
  if (kind_ == Kind::kStr) return as_str();
  std::string out;
  AppendPyStr(&out);
  return out;
}

std::string PyValue::PyRepr() const {
  std::string out;
  AppendPyRepr(&out);
  return out;
}

void PyValue::AppendPyStr(std::string* out) const {
  switch (kind_) {
    case Kind::kNone:
      out->append("None");
      return;
    case Kind::kBool:
      out->append(n_.b ? "True" : "False");
      return;
    case Kind::kInt:
      if (!big_) {
        char buf[24];
        auto r = std::to_chars(buf, buf + sizeof(buf), n_.i);
        out->append(buf, static_cast<size_t>(r.ptr - buf));
      } else {
        out->append(as_str());
      }
      return;
    case Kind::kFloat: {
      char buf[kPyFloatReprMax];
      out->append(buf, static_cast<size_t>(PyFloatReprTo(n_.d, buf)));
      return;
    }
    case Kind::kStr:
      out->append(as_str());
      return;
    case Kind::kList: {
      const std::vector<PyValue>& items = this->items();
      out->push_back('[');
      for (size_t i = 0; i < items.size(); ++i) {
        if (i) out->append(", ");
        items[i].AppendPyRepr(out);
      }
      out->push_back(']');
      return;
    }
    case Kind::kDict: {
      const Fields& fields = this->fields();
      out->push_back('{');
      for (size_t i = 0; i < fields.size(); ++i) {
        if (i) out->append(", ");
        AppendPyStrRepr(fields[i].first, out);
        out->append(": ");
        fields[i].second.AppendPyRepr(out);
      }
      out->push_back('}');
      return;
    }
  }
  out->append("None");
}

void PyValue::AppendPyRepr(std::string* out) const {
  if (kind_ == Kind::kStr) return AppendPyStrRepr(as_str(), out);
  AppendPyStr(out);
}

bool PyValue::operator==(const PyValue& o) const {
  if (kind_ != o.kind_) return false;
  switch (kind_) {
    case Kind::kNone:
      return true;
    case Kind::kBool:
      return n_.b == o.n_.b;
    case Kind::kInt:
      return big_ == o.big_ && (big_ ? as_str() == o.as_str() : n_.i == o.n_.i);
    case Kind::kFloat:
      return n_.d == o.n_.d || (std::isnan(n_.d) && std::isnan(o.n_.d));
    case Kind::kStr:
      return as_str() == o.as_str();
    case Kind::kList:
      return items() == o.items();
    case Kind::kDict:
      return fields() == o.fields();
  }
  return false;
}

}  // namespace lockstep
