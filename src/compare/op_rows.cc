#include "lockstep/compare/op_rows.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <optional>

#include "lockstep/format/dump_reader.h"
#include "lockstep/numerics/dtype.h"

namespace lockstep {
namespace {

constexpr int kMaxDepth = 50;  // msprobe's Const.MAX_DEPTH guards recursion too
const char* const kStatKeys[4] = {"Max", "Min", "Mean", "Norm"};

std::string Crc32Hex(const std::string& s) {
  uint32_t crc =
      static_cast<uint32_t>(crc32(0L, reinterpret_cast<const Bytef*>(s.data()),
                                  static_cast<uInt>(s.size())));
  static const char kHex[] = "0123456789abcdef";
  std::string out(8, '0');
  for (int i = 7; i >= 0; --i, crc >>= 4)
    out[static_cast<size_t>(i)] = kHex[crc & 15];
  return out;
}

int64_t TensorBytes(const PyValue& dtype, const PyValue* shape) {
  std::optional<DType> t = ParseDTypeName(
      dtype.kind() == PyValue::Kind::kStr ? dtype.as_str() : dtype.PyStr());
  if (!t || shape == nullptr || shape->kind() != PyValue::Kind::kList) return 0;
  int64_t n = static_cast<int64_t>(DTypeSize(*t));
  for (const PyValue& d : shape->items()) {
    if (d.kind() != PyValue::Kind::kInt || d.as_int() < 0) return 0;
    if (d.as_int() != 0 && n > INT64_MAX / d.as_int()) return 0;
    n *= d.as_int();
  }
  return n;
}

// Python truthiness of a JSON value (msprobe tests `if not op_item.get(...)`).
bool Truthy(const PyValue* v) {
  if (v == nullptr) return false;
  switch (v->kind()) {
    case PyValue::Kind::kNone:
      return false;
    case PyValue::Kind::kBool:
      return v->as_bool();
    case PyValue::Kind::kInt:
    case PyValue::Kind::kFloat:
      return v->as_double() != 0;
    case PyValue::Kind::kStr:
      return !v->as_str().empty();
    case PyValue::Kind::kList:
      return !v->items().empty();
    case PyValue::Kind::kDict:
      return !v->fields().empty();
  }
  return false;
}

struct Ctx {
  const std::string* entry;
  size_t entry_index;
  RowState state;
  bool params_grad;  // list indices are not appended under parameters_grad
  std::vector<OpRow>* out;
};

// The keys of a dict that flattening reads, found in one pass over its
// fields (keys are unique: the reader keeps a repeated key's last value).
struct Keys {
  const PyValue* type = nullptr;  // a str "type" makes the dict a leaf
  const PyValue* class_type = nullptr;
  const PyValue* tensor = nullptr;
  const PyValue* data_name = nullptr;
  const PyValue* stats[4] = {nullptr, nullptr, nullptr, nullptr};
  const PyValue* requires_grad = nullptr;
  const PyValue* dtype = nullptr;
  const PyValue* shape = nullptr;
  const PyValue* md5 = nullptr;
  const PyValue* value = nullptr;
  const PyValue* group_ranks = nullptr;
};

// Whether `key` is the literal `lit` (its size known here: an inlined
// compare, no strlen).
template <size_t N>
bool Is(const std::string& key, const char (&lit)[N]) {
  return key.size() == N - 1 && std::memcmp(key.data(), lit, N - 1) == 0;
}

Keys ScanKeys(const PyValue& dict) {
  Keys k;
  for (const auto& [key, v] : dict.fields()) {
    const PyValue* p = &v;
    switch (key.size()) {
      case 3:
        if (Is(key, "Max")) k.stats[0] = p;
        if (Is(key, "Min")) k.stats[1] = p;
        if (Is(key, "md5")) k.md5 = p;
        break;
      case 4:
        if (Is(key, "type")) k.type = p;
        if (Is(key, "Mean")) k.stats[2] = p;
        if (Is(key, "Norm")) k.stats[3] = p;
        break;
      case 5:
        if (Is(key, "dtype")) k.dtype = p;
        if (Is(key, "shape")) k.shape = p;
        if (Is(key, "value")) k.value = p;
        break;
      case 6:
        if (Is(key, "tensor")) k.tensor = p;
        break;
      case 9:
        if (Is(key, "data_name")) k.data_name = p;
        break;
      case 10:
        if (Is(key, "class_type")) k.class_type = p;
        break;
      case 11:
        if (Is(key, "group_ranks")) k.group_ranks = p;
        break;
      case 13:
        if (Is(key, "requires_grad")) k.requires_grad = p;
        break;
      default:
        break;
    }
  }
  return k;
}

bool IsLeaf(const Keys& k) {
  return k.type != nullptr && k.type->kind() == PyValue::Kind::kStr;
}

// A new row at the end of c.out, filled in place (rows are large to move).
OpRow& NewRow(const Ctx& c, const std::string& name) {
  OpRow& r = c.out->emplace_back();
  r.name = name;  // a copy: sized to the name (a moved name keeps the
                  // room its concatenation grew, up to twice the memory)
  r.entry = *c.entry;
  r.entry_index = c.entry_index;
  r.state = c.state;
  return r;
}

void SetAllStats(OpRow* r, const PyValue& v) {
  for (auto& s : r->stats) s = v;
}

// The special cases of msprobe's gen_op_item for leaves without a dtype.
void FillValueLeaf(const Keys& k, std::string_view name, OpRow* r) {
  static const std::string* const kNoType = new std::string();
  // A P2POp's "tensor" may lack a "type": no special case then.
  const std::string& type = k.type ? k.type->as_str() : *kNoType;
  const PyValue none;
  const PyValue* value = k.value != nullptr ? k.value : &none;
  std::string_view last = name.substr(name.rfind('.') + 1);
  if (type == "torch.Size") {
    r->dtype = type;
    r->shape = value->PyStr();
  } else if (type == "slice") {
    r->dtype = type;
    size_t n =
        value->kind() == PyValue::Kind::kList ? value->items().size() : 0;
    r->shape = value->kind() == PyValue::Kind::kList
                   ? "(" + std::to_string(n) + ",)"
                   : "()";
  } else if (type == "ellipsis") {
    r->dtype = type;
    r->shape = "[]";
    SetAllStats(r, *value);
  } else if (last == "src" || last == "dst" || last == "group_src" ||
             last == "group_dst") {
    r->dtype = type;
    r->shape = "[]";
    SetAllStats(r, PyValue::Str(value->PyStr()));
    r->md5 = value->PyStr();
  } else if (type == "torch.ProcessGroup") {
    std::string s = k.group_ranks ? k.group_ranks->PyStr() : "None";
    r->dtype = type;
    r->shape = "[]";
    SetAllStats(r, PyValue::Str(s));
    r->md5 = s;
  } else {
    r->dtype = PyTypeName(*value);
    r->shape = "[]";
    SetAllStats(r, *value);
  }
}

void AddLeaf(const Ctx& c, const Keys& k, std::string name) {
  const PyValue* data_name = k.data_name;
  bool named = Truthy(data_name) && data_name->kind() == PyValue::Kind::kStr &&
               data_name->as_str() != "-1";
  std::string dn = named ? data_name->as_str() : "-1";
  OpRow& r = NewRow(c, named ? dn.substr(0, dn.rfind('.')) : std::move(name));
  r.data_name = std::move(dn);
  for (int i = 0; i < 4; ++i) {
    if (k.stats[i] != nullptr) r.stats[i] = *k.stats[i];
  }
  const PyValue* rg = k.requires_grad;
  r.requires_grad = (rg == nullptr || rg->is_none()) ? "N/A" : rg->PyStr();
  if (Truthy(k.dtype)) {
    r.is_tensor = true;
    r.dtype = k.dtype->PyStr();
    r.shape = k.shape ? k.shape->PyStr() : "None";
    r.nbytes = TensorBytes(*k.dtype, k.shape);
  } else {
    FillValueLeaf(k, r.name, &r);
  }
  if (Truthy(k.md5)) {
    r.md5 = k.md5->PyStr();
  } else if (r.md5.empty()) {
    r.md5 = Crc32Hex(k.value ? k.value->PyStr() : std::string());
  }
}

void Parse(const Ctx& c, const PyValue& v, std::string name, int depth) {
  if (depth > kMaxDepth) return;
  if (v.is_none()) {
    OpRow& r = NewRow(c, std::move(name));
    r.is_null = true;
    r.dtype = "None";
    r.shape = "None";
    r.requires_grad = "N/A";
    r.data_name = "-1";
    return;
  }
  if (v.kind() == PyValue::Kind::kList) {
    for (size_t i = 0; i < v.items().size(); ++i) {
      Parse(c, v.items()[i],
            c.params_grad ? name : name + "." + std::to_string(i), depth + 1);
    }
  } else if (v.kind() == PyValue::Kind::kDict) {
    Keys k = ScanKeys(v);
    if (k.class_type && k.class_type->kind() == PyValue::Kind::kStr &&
        k.class_type->as_str() == "torch.distributed.P2POp") {
      const PyValue* t = k.tensor;
      if (t && t->kind() == PyValue::Kind::kDict) {
        Keys tk = ScanKeys(*t);
        return AddLeaf(c, tk, std::move(name));
      }
      return Parse(c, PyValue(), std::move(name), depth + 1);
    }
    if (IsLeaf(k)) return AddLeaf(c, k, std::move(name));
    for (const auto& [key, sub] : v.fields())
      Parse(c, sub, name + "." + key, depth + 1);
  }
  // Other scalars directly under an io key are not leaves in msprobe: skipped.
}

bool IsParamsGradEntry(const std::string& name) {
  size_t p = name.find(".parameters_grad");
  return p != std::string::npos;
}

}  // namespace

const char* RowStateName(RowState s) {
  switch (s) {
    case RowState::kInput:
      return "input";
    case RowState::kOutput:
      return "output";
    case RowState::kParameters:
      return "parameters";
    case RowState::kParametersGrad:
      return "parameters_grad";
  }
  return "?";
}

std::string PyTypeName(const PyValue& v) {
  return "<class '" + std::string(v.TypeName()) + "'>";
}

void FlattenEntry(const DumpEntry& entry, size_t entry_index,
                  std::vector<OpRow>* out) {
  const PyValue& v = entry.value;
  if (v.kind() != PyValue::Kind::kDict) return;
  if (IsParamsGradEntry(entry.name)) {
    Ctx c{&entry.name, entry_index, RowState::kParametersGrad, true, out};
    for (const auto& [k, sub] : v.fields())
      Parse(c, sub, entry.name + "." + k, 1);
    return;
  }
  // Inputs first, then parameters, then outputs (msprobe's reorder_index).
  struct Io {
    const char* key;
    const char* suffix;
    RowState state;
  };
  static const Io kOrder[] = {
      {"input_args", ".input", RowState::kInput},
      {"input_kwargs", ".input", RowState::kInput},
      {"input", ".input", RowState::kInput},
      {"parameters", ".parameters", RowState::kParameters},
      {"output", ".output", RowState::kOutput},
  };
  for (const Io& io : kOrder) {
    const PyValue* sub = v.Find(io.key);
    if (sub == nullptr) continue;
    Ctx c{&entry.name, entry_index, io.state, false, out};
    Parse(c, *sub, entry.name + io.suffix, 1);
  }
}

std::vector<OpRow> FlattenDump(const DumpFile& dump) {
  std::vector<OpRow> rows;
  rows.reserve(dump.entries.size() * 4);
  for (size_t i = 0; i < dump.entries.size(); ++i)
    FlattenEntry(dump.entries[i], i, &rows);
  rows.shrink_to_fit();  // most entries have 2 or 3 rows, not 4
  return rows;
}

bool ValueHasMd5(const PyValue& v) {
  // Iterative: a hostile dump may nest deeply.
  std::vector<const PyValue*> todo = {&v};
  while (!todo.empty()) {
    const PyValue* x = todo.back();
    todo.pop_back();
    if (x->kind() == PyValue::Kind::kList) {
      for (const auto& item : x->items()) todo.push_back(&item);
    } else if (x->kind() == PyValue::Kind::kDict) {
      for (const auto& [k, item] : x->fields()) {
        if (k == "md5") return true;
        todo.push_back(&item);
      }
    }
  }
  return false;
}

bool DumpHasMd5(const DumpFile& dump) {
  for (const DumpEntry& e : dump.entries) {
    if (ValueHasMd5(e.value)) return true;
  }
  return false;
}

StatusOr<FlatDump> ReadFlatDump(const std::string& path,
                                const ReadProgress& progress) {
  FlatDump out;
  // msprobe writes 250-400 bytes of JSON a row: reserving for one row per
  // 96 bytes saves moving every row as the vector grows (rows are large to
  // move). The room never used is never touched: it costs address space,
  // not memory, and is not given back (that would move every row).
  std::error_code ec;
  uintmax_t size = std::filesystem::file_size(path, ec);
  constexpr uintmax_t kMaxReserve = (uintmax_t{4} << 30) / sizeof(OpRow);
  if (!ec) out.rows.reserve(std::min<uintmax_t>(size / 96 + 16, kMaxReserve));
  DumpEntrySink sink = [&out](DumpEntry entry, size_t index) {
    if (!out.has_md5) out.has_md5 = ValueHasMd5(entry.value);
    FlattenEntry(entry, index, &out.rows);
    return Status::Ok();
  };
  StatusOr<DumpFile> file = ReadDumpJsonStreaming(path, sink, progress);
  if (file.ok()) {
    out.file = std::move(*file);
    return out;
  }
  if (file.status().code() != StatusCode::kNotSupported) return file.status();
  // Repeated entry names: Python's dict keeps the first position and the
  // last value, which only the whole tree gives.
  LOCKSTEP_ASSIGN_OR_RETURN(DumpFile whole, ReadDumpJson(path));
  out = FlatDump();
  out.rows = FlattenDump(whole);
  out.has_md5 = DumpHasMd5(whole);
  whole.entries.clear();
  out.file = std::move(whole);
  return out;
}

}  // namespace lockstep
