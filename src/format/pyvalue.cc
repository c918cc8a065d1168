#include "lockstep/format/pyvalue.h"

#include <cmath>
#include <cstdio>

#include "lockstep/core/check.h"
#include "lockstep/numerics/pyfloat.h"

namespace lockstep {

PyValue PyValue::Bool(bool b) {
  PyValue v;
  v.kind_ = Kind::kBool;
  v.b_ = b;
  return v;
}
PyValue PyValue::Int(int64_t i) {
  PyValue v;
  v.kind_ = Kind::kInt;
  v.i_ = i;
  v.d_ = static_cast<double>(i);
  return v;
}
PyValue PyValue::BigInt(std::string digits) {
  PyValue v;
  v.kind_ = Kind::kInt;
  v.d_ = std::strtod(digits.c_str(), nullptr);
  v.i_ = v.d_ < 0 ? INT64_MIN : INT64_MAX;
  v.s_ = std::move(digits);
  return v;
}
PyValue PyValue::Float(double d) {
  PyValue v;
  v.kind_ = Kind::kFloat;
  v.d_ = d;
  return v;
}
PyValue PyValue::Str(std::string s) {
  PyValue v;
  v.kind_ = Kind::kStr;
  v.s_ = std::move(s);
  return v;
}
PyValue PyValue::List(std::vector<PyValue> items) {
  PyValue v;
  v.kind_ = Kind::kList;
  v.items_ = std::move(items);
  return v;
}
PyValue PyValue::Dict(std::vector<std::pair<std::string, PyValue>> fields) {
  PyValue v;
  v.kind_ = Kind::kDict;
  v.fields_ = std::move(fields);
  return v;
}

double PyValue::as_double() const {
  if (kind_ == Kind::kInt || kind_ == Kind::kFloat) return d_;
  if (kind_ == Kind::kBool) return b_ ? 1.0 : 0.0;
  return std::nan("");
}

const PyValue* PyValue::Find(std::string_view key) const {
  if (kind_ != Kind::kDict) return nullptr;
  for (const auto& [k, v] : fields_) {
    if (k == key) return &v;
  }
  return nullptr;
}

std::vector<PyValue> PyValue::TakeItems() {
  LOCKSTEP_CHECK(kind_ == Kind::kList);
  std::vector<PyValue> out;
  out.swap(items_);
  return out;
}

std::vector<std::pair<std::string, PyValue>> PyValue::TakeFields() {
  LOCKSTEP_CHECK(kind_ == Kind::kDict);
  std::vector<std::pair<std::string, PyValue>> out;
  out.swap(fields_);
  return out;
}

std::string PyStrRepr(const std::string& s) {
  bool has_single = s.find('\'') != std::string::npos;
  bool has_double = s.find('"') != std::string::npos;
  char q = (has_single && !has_double) ? '"' : '\'';
  std::string out(1, q);
  for (unsigned char c : s) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == static_cast<unsigned char>(q)) {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += q;
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
  switch (kind_) {
    case Kind::kNone:
      return "None";
    case Kind::kBool:
      return b_ ? "True" : "False";
    case Kind::kInt:
      return s_.empty() ? std::to_string(i_) : s_;
    case Kind::kFloat:
      return PyFloatRepr(d_);
    case Kind::kStr:
      return s_;
    case Kind::kList: {
      std::string out = "[";
      for (size_t i = 0; i < items_.size(); ++i) {
        if (i) out += ", ";
        out += items_[i].PyRepr();
      }
      return out + "]";
    }
    case Kind::kDict: {
      std::string out = "{";
      for (size_t i = 0; i < fields_.size(); ++i) {
        if (i) out += ", ";
        out += PyStrRepr(fields_[i].first) + ": " + fields_[i].second.PyRepr();
      }
      return out + "}";
    }
  }
  return "None";
}

std::string PyValue::PyRepr() const {
  if (kind_ == Kind::kStr) return PyStrRepr(s_);
  return PyStr();
}

bool PyValue::operator==(const PyValue& o) const {
  if (kind_ != o.kind_) return false;
  switch (kind_) {
    case Kind::kNone:
      return true;
    case Kind::kBool:
      return b_ == o.b_;
    case Kind::kInt:
      return i_ == o.i_ && s_ == o.s_;
    case Kind::kFloat:
      return d_ == o.d_ || (std::isnan(d_) && std::isnan(o.d_));
    case Kind::kStr:
      return s_ == o.s_;
    case Kind::kList:
      return items_ == o.items_;
    case Kind::kDict:
      return fields_ == o.fields_;
  }
  return false;
}

}  // namespace lockstep
