// PickleObject's queries and its Python-like repr.
#include "lockstep/format/pickle.h"
#include "lockstep/format/pyvalue.h"
#include "lockstep/numerics/pyfloat.h"

namespace lockstep {
namespace {

using Kind = PickleObject::Kind;

void AppendRepr(const PickleObject& o, int depth, size_t max_chars,
                std::string* out);

// Python's repr() of bytes: b'...', printable ASCII kept, the rest escaped.
void AppendBytesRepr(std::string_view s, std::string* out) {
  static const char kHex[] = "0123456789abcdef";
  bool dq = s.find('\'') != std::string_view::npos &&
            s.find('"') == std::string_view::npos;
  char quote = dq ? '"' : '\'';
  *out += 'b';
  *out += quote;
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if (c == '\\' || c == quote) {
      *out += '\\';
      *out += ch;
    } else if (c == '\n' || c == '\r' || c == '\t') {
      *out += c == '\n' ? "\\n" : c == '\r' ? "\\r" : "\\t";
    } else if (c < 0x20 || c >= 0x7f) {
      *out += "\\x";
      *out += kHex[c >> 4];
      *out += kHex[c & 15];
    } else {
      *out += ch;
    }
  }
  *out += quote;
}

// Appends `items` as "a, b"; when `pairs`, as "k: v, ..." or, with
// `pair_tuples`, "(k, v), ...".
void AppendItems(const std::vector<const PickleObject*>& items, bool pairs,
                 bool pair_tuples, int depth, size_t max_chars,
                 std::string* out) {
  size_t step = pairs ? 2 : 1;
  for (size_t i = 0; i + step <= items.size(); i += step) {
    if (out->size() > max_chars) return;
    if (i > 0) *out += ", ";
    if (pair_tuples) *out += "(";
    AppendRepr(*items[i], depth - 1, max_chars, out);
    if (pairs) {
      *out += pair_tuples ? ", " : ": ";
      AppendRepr(*items[i + 1], depth - 1, max_chars, out);
    }
    if (pair_tuples) *out += ")";
  }
}

void AppendContainer(const PickleObject& o, int depth, size_t max_chars,
                     std::string* out) {
  const auto& items = o.items;
  switch (o.kind) {
    case Kind::kTuple:
      *out += "(";
      AppendItems(items, false, false, depth, max_chars, out);
      *out += items.size() == 1 ? ",)" : ")";
      return;
    case Kind::kList:
      *out += "[";
      AppendItems(items, false, false, depth, max_chars, out);
      *out += "]";
      return;
    case Kind::kDict:
      if (o.type == nullptr) {
        *out += "{";
        AppendItems(items, true, false, depth, max_chars, out);
        *out += "}";
        return;
      }
      *out += o.type->name + (items.empty() ? "(" : "([");
      AppendItems(items, true, true, depth, max_chars, out);
      *out += items.empty() ? ")" : "])";
      return;
    default:
      return;
  }
}

// Scalars and globals; false for other kinds. A str or bytes is quoted from
// its first `max_chars` + 1 bytes only (the repr is cut there anyway), so a
// string of megabytes costs nothing to describe.
bool AppendScalar(const PickleObject& o, size_t max_chars, std::string* out) {
  std::string_view head = std::string_view(o.str).substr(0, max_chars + 1);
  switch (o.kind) {
    case Kind::kNone:
      *out += "None";
      return true;
    case Kind::kBool:
      *out += o.int_value ? "True" : "False";
      return true;
    case Kind::kInt:
      *out += std::to_string(o.int_value);
      return true;
    case Kind::kFloat:
      *out += PyFloatRepr(o.float_value);
      return true;
    case Kind::kStr:
      AppendPyStrRepr(head, out);
      return true;
    case Kind::kBytes:
      AppendBytesRepr(head, out);
      return true;
    case Kind::kGlobal:
      *out += o.module + "." + o.name;
      return true;
    default:
      return false;
  }
}

// "f(a, b)" and, when BUILD gave it a state, ".__setstate__(state)".
void AppendCall(const PickleObject& o, int depth, size_t max_chars,
                std::string* out) {
  AppendRepr(*o.items[0], depth - 1, max_chars, out);
  *out += "(";
  AppendItems(o.items[1]->items, false, false, depth, max_chars, out);
  *out += ")";
  if (o.state != nullptr) {
    *out += ".__setstate__(";
    AppendRepr(*o.state, depth - 1, max_chars, out);
    *out += ")";
  }
}

void AppendRepr(const PickleObject& o, int depth, size_t max_chars,
                std::string* out) {
  if (out->size() > max_chars) return;
  if (depth <= 0) {
    *out += "...";
    return;
  }
  if (AppendScalar(o, max_chars, out)) return;
  if (o.kind == Kind::kPersistentId) {
    *out += "persistent_id(";
    AppendRepr(*o.items[0], depth - 1, max_chars, out);
    *out += ")";
  } else if (o.kind == Kind::kCall) {
    AppendCall(o, depth, max_chars, out);
  } else {
    AppendContainer(o, depth, max_chars, out);
  }
}

}  // namespace

std::string_view PickleKindName(PickleObject::Kind kind) {
  switch (kind) {
    case Kind::kNone:
      return "None";
    case Kind::kBool:
      return "bool";
    case Kind::kInt:
      return "int";
    case Kind::kFloat:
      return "float";
    case Kind::kStr:
      return "str";
    case Kind::kBytes:
      return "bytes";
    case Kind::kTuple:
      return "tuple";
    case Kind::kList:
      return "list";
    case Kind::kDict:
      return "dict";
    case Kind::kGlobal:
      return "global";
    case Kind::kCall:
      return "call";
    case Kind::kPersistentId:
      return "persistent id";
  }
  return "?";
}

bool PickleObject::IsGlobal(std::string_view module_name,
                            std::string_view attr) const {
  return kind == Kind::kGlobal && module == module_name && name == attr;
}

bool PickleObject::IsCallOf(std::string_view module_name,
                            std::string_view attr) const {
  return kind == Kind::kCall && items[0]->IsGlobal(module_name, attr);
}

const std::vector<const PickleObject*>& PickleObject::args() const {
  return items[1]->items;
}

std::string PickleObject::Describe() const {
  std::string kind_name(PickleKindName(kind));
  switch (kind) {
    case Kind::kBool:
    case Kind::kInt:
    case Kind::kFloat:
    case Kind::kStr:
    case Kind::kGlobal:
      return kind_name + " " + Repr(1, 80);
    case Kind::kTuple:
    case Kind::kList:
      return kind_name + " of " + std::to_string(items.size());
    case Kind::kCall:
      return "call of " + items[0]->Repr(1, 80);
    default:
      return kind_name;
  }
}

std::string PickleObject::Repr(int max_depth, size_t max_chars) const {
  std::string out;
  AppendRepr(*this, max_depth, max_chars, &out);
  if (out.size() > max_chars) {
    out.resize(max_chars);
    out += "...";
  }
  return out;
}

}  // namespace lockstep
