#include "lockstep/compare/op_rows.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <optional>

#include "lockstep/format/dump_reader.h"
#include "lockstep/format/json_reader.h"
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

// A dump value as flattening reads it: the reader's PyValue tree, or the
// fast reader's JsonNode (format/json_reader.h). Flattening is written once,
// over either.
class PyView {
 public:
  explicit PyView(const PyValue* v) : v_(v) {}
  PyValue::Kind kind() const { return v_->kind(); }
  std::string_view str() const { return v_->as_str(); }
  size_t size() const {
    return kind() == PyValue::Kind::kDict ? v_->fields().size()
                                          : v_->items().size();
  }
  PyView item(size_t k) const {
    return PyView(kind() == PyValue::Kind::kDict ? &v_->fields()[k].second
                                                 : &v_->items()[k]);
  }
  std::string_view key(size_t k) const { return v_->fields()[k].first; }
  bool boolean() const { return v_->as_bool(); }
  int64_t integer() const { return v_->as_int(); }
  double number() const { return v_->as_double(); }
  PyValue Value() const { return *v_; }
  std::string PyStr() const { return v_->PyStr(); }

 private:
  const PyValue* v_;
};

class NodeView {
 public:
  explicit NodeView(JsonNode n) : n_(n) {}
  PyValue::Kind kind() const { return n_.kind(); }
  std::string_view str() const { return n_.as_str(); }
  size_t size() const { return n_.size(); }
  NodeView item(size_t k) const { return NodeView(n_.item(k)); }
  std::string_view key(size_t k) const { return n_.key(k); }
  bool boolean() const { return n_.as_bool(); }
  int64_t integer() const { return n_.as_int(); }
  double number() const { return n_.as_double(); }
  PyValue Value() const { return n_.ToPyValue(); }
  // Python str(): strings and shapes (lists of small ints) directly, other
  // values through a PyValue.
  std::string PyStr() const {
    if (kind() == PyValue::Kind::kStr) return std::string(str());
    if (kind() == PyValue::Kind::kList) {
      std::string out = "[";
      for (size_t k = 0; k < size(); ++k) {
        NodeView d = item(k);
        if (d.kind() != PyValue::Kind::kInt || !d.str().empty())
          return Value().PyStr();  // not all plain ints
        if (k > 0) out += ", ";
        out += std::to_string(d.integer());
      }
      return out + "]";
    }
    return Value().PyStr();
  }

 private:
  JsonNode n_;
};

template <typename V>
int64_t TensorBytes(const V& dtype, const std::optional<V>& shape) {
  std::optional<DType> t = ParseDTypeName(dtype.kind() == PyValue::Kind::kStr
                                              ? std::string(dtype.str())
                                              : dtype.PyStr());
  if (!t || !shape || shape->kind() != PyValue::Kind::kList) return 0;
  int64_t n = static_cast<int64_t>(DTypeSize(*t));
  for (size_t k = 0; k < shape->size(); ++k) {
    V d = shape->item(k);
    if (d.kind() != PyValue::Kind::kInt || d.integer() < 0) return 0;
    if (d.integer() != 0 && n > INT64_MAX / d.integer()) return 0;
    n *= d.integer();
  }
  return n;
}

// Python truthiness of a JSON value (msprobe tests `if not op_item.get(...)`).
template <typename V>
bool Truthy(const std::optional<V>& v) {
  if (!v) return false;
  switch (v->kind()) {
    case PyValue::Kind::kNone:
      return false;
    case PyValue::Kind::kBool:
      return v->boolean();
    case PyValue::Kind::kInt:
    case PyValue::Kind::kFloat:
      return v->number() != 0;
    case PyValue::Kind::kStr:
      return !v->str().empty();
    case PyValue::Kind::kList:
    case PyValue::Kind::kDict:
      return v->size() > 0;
  }
  return false;
}

struct Ctx {
  std::string_view entry;
  size_t entry_index;
  RowState state;
  bool params_grad;  // list indices are not appended under parameters_grad
  std::vector<OpRow>* out;
};

// The keys of a dict that flattening reads, found in one pass over its
// fields (keys are unique: the reader keeps a repeated key's last value).
template <typename V>
struct Keys {
  std::optional<V> type;  // a str "type" makes the dict a leaf
  std::optional<V> class_type, tensor, data_name;
  std::optional<V> stats[4];
  std::optional<V> requires_grad, dtype, shape, md5, value, group_ranks;
};

// Whether `key` is the literal `lit` (its size known here: an inlined
// compare, no strlen).
template <size_t N>
bool Is(std::string_view key, const char (&lit)[N]) {
  return key.size() == N - 1 && std::memcmp(key.data(), lit, N - 1) == 0;
}

template <typename V>
Keys<V> ScanKeys(const V& dict) {
  Keys<V> k;
  for (size_t i = 0, n = dict.size(); i < n; ++i) {
    std::string_view key = dict.key(i);
    auto set = [&](std::optional<V>* slot) { slot->emplace(dict.item(i)); };
    switch (key.size()) {
      case 3:
        if (Is(key, "Max")) set(&k.stats[0]);
        if (Is(key, "Min")) set(&k.stats[1]);
        if (Is(key, "md5")) set(&k.md5);
        break;
      case 4:
        if (Is(key, "type")) set(&k.type);
        if (Is(key, "Mean")) set(&k.stats[2]);
        if (Is(key, "Norm")) set(&k.stats[3]);
        break;
      case 5:
        if (Is(key, "dtype")) set(&k.dtype);
        if (Is(key, "shape")) set(&k.shape);
        if (Is(key, "value")) set(&k.value);
        break;
      case 6:
        if (Is(key, "tensor")) set(&k.tensor);
        break;
      case 9:
        if (Is(key, "data_name")) set(&k.data_name);
        break;
      case 10:
        if (Is(key, "class_type")) set(&k.class_type);
        break;
      case 11:
        if (Is(key, "group_ranks")) set(&k.group_ranks);
        break;
      case 13:
        if (Is(key, "requires_grad")) set(&k.requires_grad);
        break;
      default:
        break;
    }
  }
  return k;
}

template <typename V>
bool IsLeaf(const Keys<V>& k) {
  return k.type && k.type->kind() == PyValue::Kind::kStr;
}

// A new row at the end of c.out, filled in place (rows are large to move).
OpRow& NewRow(const Ctx& c, const std::string& name) {
  OpRow& r = c.out->emplace_back();
  r.name = name;  // a copy: sized to the name (a moved name keeps the
                  // room its concatenation grew, up to twice the memory)
  r.entry = c.entry;
  r.entry_index = c.entry_index;
  r.state = c.state;
  return r;
}

void SetAllStats(OpRow* r, const PyValue& v) {
  for (auto& s : r->stats) s = v;
}

// "cuda", "npu:0", "cpu": a device as torch spells it in a string
// argument (x.to("cuda")), which runs on different devices give by design.
bool LooksLikeDevice(std::string_view s) {
  static constexpr std::string_view kTypes[] = {
      "cpu",  "cuda", "npu",  "xpu", "mps", "xla",          "hpu",
      "meta", "mlu",  "musa", "ipu", "hip", "privateuseone"};
  std::string_view type = s.substr(0, s.find(':'));
  bool known = false;
  for (std::string_view t : kTypes) known = known || type == t;
  if (!known) return false;
  if (type.size() == s.size()) return true;
  std::string_view index = s.substr(type.size() + 1);
  if (index.empty()) return false;
  for (char c : index) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// The special cases of msprobe's gen_op_item for leaves without a dtype.
template <typename V>
void FillValueLeaf(const Keys<V>& k, std::string_view name, OpRow* r) {
  // A P2POp's "tensor" may lack a "type": no special case then.
  std::string_view type = k.type ? k.type->str() : std::string_view();
  const PyValue value = k.value ? k.value->Value() : PyValue();
  std::string_view last = name.substr(name.rfind('.') + 1);
  if (type == "torch.Size") {
    r->dtype = type;
    r->shape = value.PyStr();
  } else if (type == "slice") {
    r->dtype = type;
    size_t n = value.kind() == PyValue::Kind::kList ? value.items().size() : 0;
    r->shape = value.kind() == PyValue::Kind::kList
                   ? "(" + std::to_string(n) + ",)"
                   : "()";
  } else if (type == "ellipsis") {
    r->dtype = type;
    r->shape = "[]";
    SetAllStats(r, value);
  } else if (last == "src" || last == "dst" || last == "group_src" ||
             last == "group_dst") {
    r->dtype = type;
    r->shape = "[]";
    SetAllStats(r, PyValue::Str(value.PyStr()));
    r->md5 = value.PyStr();
  } else if (type == "torch.ProcessGroup") {
    std::string s = k.group_ranks ? k.group_ranks->PyStr() : "None";
    r->dtype = type;
    r->shape = "[]";
    SetAllStats(r, PyValue::Str(s));
    r->md5 = s;
  } else {
    r->dtype = PyTypeName(value);
    r->shape = "[]";
    SetAllStats(r, value);
  }
  r->is_device =
      type == "torch.device" ||
      (value.kind() == PyValue::Kind::kStr && LooksLikeDevice(value.as_str()));
}

template <typename V>
void AddLeaf(const Ctx& c, const Keys<V>& k, const std::string& name) {
  const std::optional<V>& data_name = k.data_name;
  bool named = Truthy(data_name) && data_name->kind() == PyValue::Kind::kStr &&
               data_name->str() != "-1";
  std::string dn = named ? std::string(data_name->str()) : "-1";
  OpRow& r = named ? NewRow(c, dn.substr(0, dn.rfind('.'))) : NewRow(c, name);
  r.data_name = std::move(dn);
  for (int i = 0; i < 4; ++i) {
    if (k.stats[i]) r.stats[i] = k.stats[i]->Value();
  }
  const std::optional<V>& rg = k.requires_grad;
  r.requires_grad =
      (!rg || rg->kind() == PyValue::Kind::kNone) ? "N/A" : rg->PyStr();
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
    // A tensor has no value: the CRC of "" is 0.
    r.md5 = k.value ? Crc32Hex(k.value->PyStr()) : "00000000";
  }
}

// Flattens `v` named `*name`; `*name` is a scratch buffer that nested
// values extend and give back as they were (no string per level).
template <typename V>
void Parse(const Ctx& c, const V* v, std::string* name, int depth) {
  if (depth > kMaxDepth) return;
  if (v == nullptr || v->kind() == PyValue::Kind::kNone) {
    OpRow& r = NewRow(c, *name);
    r.is_null = true;
    r.dtype = "None";
    r.shape = "None";
    r.requires_grad = "N/A";
    r.data_name = "-1";
    return;
  }
  const size_t size = name->size();
  if (v->kind() == PyValue::Kind::kList) {
    for (size_t i = 0; i < v->size(); ++i) {
      if (!c.params_grad) name->append(".").append(std::to_string(i));
      V item = v->item(i);
      Parse(c, &item, name, depth + 1);
      name->resize(size);
    }
  } else if (v->kind() == PyValue::Kind::kDict) {
    Keys<V> k = ScanKeys(*v);
    if (k.class_type && k.class_type->kind() == PyValue::Kind::kStr &&
        k.class_type->str() == "torch.distributed.P2POp") {
      if (k.tensor && k.tensor->kind() == PyValue::Kind::kDict)
        return AddLeaf(c, ScanKeys(*k.tensor), *name);
      return Parse<V>(c, nullptr, name, depth + 1);  // as None
    }
    if (IsLeaf(k)) return AddLeaf(c, k, *name);
    for (size_t i = 0; i < v->size(); ++i) {
      name->append(".").append(v->key(i));
      V sub = v->item(i);
      Parse(c, &sub, name, depth + 1);
      name->resize(size);
    }
  }
  // Other scalars directly under an io key are not leaves in msprobe: skipped.
}

bool IsParamsGradEntry(std::string_view name) {
  return name.find(".parameters_grad") != std::string_view::npos;
}

bool IsDebugEntry(std::string_view name) {
  constexpr std::string_view kDebug = ".debug";
  return name.size() > kDebug.size() && name.ends_with(kDebug);
}

template <typename V>
void Flatten(std::string_view entry, const V& v, size_t entry_index,
             std::vector<OpRow>* out) {
  if (IsDebugEntry(entry)) {  // the saved value itself, named by the entry
    Ctx c{entry, entry_index, RowState::kDebug, false, out};
    std::string name(entry);
    Parse(c, &v, &name, 1);
    return;
  }
  if (v.kind() != PyValue::Kind::kDict) return;
  if (IsParamsGradEntry(entry)) {
    Ctx c{entry, entry_index, RowState::kParametersGrad, true, out};
    for (size_t i = 0; i < v.size(); ++i) {
      std::string name = std::string(entry) + "." + std::string(v.key(i));
      V sub = v.item(i);
      Parse(c, &sub, &name, 1);
    }
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
    for (size_t i = 0; i < v.size(); ++i) {
      if (v.key(i) != io.key) continue;
      Ctx c{entry, entry_index, io.state, false, out};
      std::string name = std::string(entry) + io.suffix;
      V sub = v.item(i);
      Parse(c, &sub, &name, 1);
      break;
    }
  }
}

// Whether the value holds an "md5" key at any depth (iterative: a hostile
// dump may nest deeply).
template <typename V>
bool HasMd5Key(const V& v) {
  std::vector<V> todo = {v};
  while (!todo.empty()) {
    V x = todo.back();
    todo.pop_back();
    bool dict = x.kind() == PyValue::Kind::kDict;
    if (!dict && x.kind() != PyValue::Kind::kList) continue;
    for (size_t i = 0; i < x.size(); ++i) {
      if (dict && x.key(i) == "md5") return true;
      todo.push_back(x.item(i));
    }
  }
  return false;
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
    case RowState::kDebug:
      return "debug";
  }
  return "?";
}

std::string PyTypeName(const PyValue& v) {
  return "<class '" + std::string(v.TypeName()) + "'>";
}

void FlattenEntry(const DumpEntry& entry, size_t entry_index,
                  std::vector<OpRow>* out) {
  Flatten(entry.name, PyView(&entry.value), entry_index, out);
}

std::vector<OpRow> FlattenDump(const DumpFile& dump) {
  std::vector<OpRow> rows;
  rows.reserve(dump.entries.size() * 4);
  for (size_t i = 0; i < dump.entries.size(); ++i)
    FlattenEntry(dump.entries[i], i, &rows);
  rows.shrink_to_fit();  // most entries have 2 or 3 rows, not 4
  return rows;
}

bool ValueHasMd5(const PyValue& v) { return HasMd5Key(PyView(&v)); }

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
  DumpNodeSink fast = [&out](std::string_view name, JsonNode value,
                             size_t index) {
    NodeView v(value);
    if (!out.has_md5) out.has_md5 = HasMd5Key(v);
    Flatten(name, v, index, &out.rows);
    return Status::Ok();
  };
  auto restart = [&out] {
    out.rows.clear();
    out.has_md5 = false;
  };
  DumpEntrySink sink = [&out](DumpEntry entry, size_t index) {
    if (!out.has_md5) out.has_md5 = ValueHasMd5(entry.value);
    FlattenEntry(entry, index, &out.rows);
    return Status::Ok();
  };
  StatusOr<DumpFile> file =
      ReadDumpJsonEntries(path, fast, restart, sink, progress);
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
