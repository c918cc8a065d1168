// safetensors: 8-byte length, JSON header, data. Every field of the header
// is checked before any tensor is made, so a malformed file is an error
// Status and never a read out of bounds.
#include "lockstep/format/safetensors.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <utility>

#include "format/bytes.h"
#include "lockstep/format/json_reader.h"

namespace lockstep {
namespace safetensors_internal {

constexpr size_t kMaxDims = 64;

std::optional<DType> DTypeOf(const std::string& s) {
  static const std::pair<const char*, DType> kTable[] = {
      {"F64", DType::kFloat64}, {"F32", DType::kFloat32},
      {"F16", DType::kFloat16}, {"BF16", DType::kBFloat16},
      {"I64", DType::kInt64},   {"I32", DType::kInt32},
      {"I16", DType::kInt16},   {"I8", DType::kInt8},
      {"U64", DType::kUInt64},  {"U32", DType::kUInt32},
      {"U16", DType::kUInt16},  {"U8", DType::kUInt8},
      {"BOOL", DType::kBool}};
  for (const auto& [n, t] : kTable) {
    if (s == n) return t;
  }
  return std::nullopt;
}

// A JSON int >= 0 (a float or a big int is not one).
bool AsCount(const PyValue& v, uint64_t* out) {
  if (v.kind() != PyValue::Kind::kInt || v.as_int() < 0) return false;
  if (v.as_int() == INT64_MAX && v.as_str().size() > 0) return false;  // big
  *out = static_cast<uint64_t>(v.as_int());
  return true;
}

Status ParseShape(const PyValue& v, const std::string& subject,
                  SafetensorsTensor* t) {
  if (v.kind() != PyValue::Kind::kList || v.items().size() > kMaxDims) {
    return Status::Corruption(subject, "shape is " + v.PyRepr() +
                                           ", expected a list of at most 64 "
                                           "ints >= 0");
  }
  for (const PyValue& d : v.items()) {
    uint64_t n = 0;
    if (!AsCount(d, &n) || n > uint64_t{INT64_MAX}) {
      return Status::Corruption(subject, "shape " + v.PyRepr() +
                                             " has a dimension that is not an "
                                             "int >= 0");
    }
    t->shape.push_back(static_cast<int64_t>(n));
  }
  return Status::Ok();
}

// The byte size that dtype and shape need; nullopt when it overflows.
std::optional<uint64_t> NeededBytes(const SafetensorsTensor& t) {
  uint64_t n = DTypeSize(t.dtype);
  for (int64_t d : t.shape) {
    uint64_t u = static_cast<uint64_t>(d);
    if (u != 0 && n > UINT64_MAX / u) return std::nullopt;
    n *= u;
  }
  return n;
}

Status ParseOffsets(const PyValue& v, uint64_t data_size,
                    const std::string& subject, SafetensorsTensor* t) {
  if (v.kind() != PyValue::Kind::kList || v.items().size() != 2 ||
      !AsCount(v.items()[0], &t->begin) || !AsCount(v.items()[1], &t->end) ||
      t->begin > t->end) {
    return Status::Corruption(subject, "data_offsets is " + v.PyRepr() +
                                           ", expected [begin, end] with 0 "
                                           "<= begin <= end");
  }
  if (t->end > data_size) {
    return Status::Corruption(
        subject, "data_offsets " + v.PyRepr() + " end beyond the data (" +
                     std::to_string(data_size) + " bytes)");
  }
  std::optional<uint64_t> need = NeededBytes(*t);
  if (!need || *need != t->end - t->begin) {
    return Status::Corruption(
        subject, "data_offsets " + v.PyRepr() + " hold " +
                     std::to_string(t->end - t->begin) + " bytes, but shape " +
                     ShapeToString(t->shape) + " of " +
                     std::string(TorchDTypeName(t->dtype)) + " needs " +
                     (need ? std::to_string(*need) : std::string("more")));
  }
  return Status::Ok();
}

StatusOr<SafetensorsTensor> ParseTensor(const std::string& key,
                                        const PyValue& v, uint64_t data_size,
                                        const std::string& name) {
  std::string subject = name + ": tensor " + PyStrRepr(key);
  if (v.kind() != PyValue::Kind::kDict) {
    return Status::Corruption(
        subject, "is " + std::string(v.TypeName()) + ", expected a dict");
  }
  const PyValue* dtype = v.Find("dtype");
  const PyValue* shape = v.Find("shape");
  const PyValue* offsets = v.Find("data_offsets");
  if (!dtype || !shape || !offsets || dtype->kind() != PyValue::Kind::kStr) {
    return Status::Corruption(subject,
                              "needs \"dtype\" (a str), \"shape\" and "
                              "\"data_offsets\"");
  }
  SafetensorsTensor t;
  t.name = key;
  std::optional<DType> d = DTypeOf(dtype->as_str());
  if (!d) {
    return Status::NotSupported(subject, "dtype " + dtype->PyRepr() +
                                             " is not supported (F64 F32 F16 "
                                             "BF16 I64 I32 I16 I8 U64 U32 U16 "
                                             "U8 BOOL are)");
  }
  t.dtype = *d;
  LOCKSTEP_RETURN_IF_ERROR(ParseShape(*shape, subject, &t));
  LOCKSTEP_RETURN_IF_ERROR(ParseOffsets(*offsets, data_size, subject, &t));
  return t;
}

// The sorted offsets must tile [0, data_size): no hole, no overlap.
Status CheckTiling(const SafetensorsHeader& h, uint64_t data_size,
                   const std::string& name) {
  std::vector<const SafetensorsTensor*> order;
  for (const SafetensorsTensor& t : h.tensors) order.push_back(&t);
  std::sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  uint64_t at = 0;
  for (const SafetensorsTensor* t : order) {
    if (t->begin != at) {
      return Status::Corruption(
          name + ": tensor " + PyStrRepr(t->name),
          "data_offsets [" + std::to_string(t->begin) + ", " +
              std::to_string(t->end) + "] " +
              (t->begin < at ? "overlap" : "leave a hole before them") +
              ": the previous tensor ends at byte " + std::to_string(at));
    }
    at = t->end;
  }
  if (at != data_size) {
    return Status::Corruption(name, "the tensors cover " + std::to_string(at) +
                                        " bytes of data, but the file holds " +
                                        std::to_string(data_size));
  }
  return Status::Ok();
}

Status CheckMetadata(const PyValue& m, const std::string& name) {
  bool ok = m.kind() == PyValue::Kind::kDict;
  for (const auto& [k, v] : m.fields())
    ok = ok && v.kind() == PyValue::Kind::kStr;
  if (ok) return Status::Ok();
  return Status::Corruption(name, "__metadata__ is " +
                                      m.PyRepr().substr(0, 80) +
                                      ", expected a dict of str to str");
}

}  // namespace safetensors_internal

bool LooksLikeSafetensors(std::string_view bytes) {
  if (bytes.size() < 10) return false;
  uint64_t n = internal::LoadLe64(bytes.data());
  return n >= 2 && n <= kMaxSafetensorsHeader && n <= bytes.size() - 8 &&
         bytes[8] == '{';
}

StatusOr<SafetensorsHeader> ParseSafetensorsHeader(std::string_view bytes,
                                                   const std::string& name) {
  using namespace safetensors_internal;
  if (bytes.size() < 8) {
    return Status::Corruption(name, "is " + std::to_string(bytes.size()) +
                                        " bytes, shorter than the 8-byte "
                                        "header length");
  }
  uint64_t n = internal::LoadLe64(bytes.data());
  if (n > kMaxSafetensorsHeader || n > bytes.size() - 8) {
    return Status::Corruption(
        name,
        "header length " + std::to_string(n) + " is beyond " +
            (n > kMaxSafetensorsHeader
                 ? "the limit of " + std::to_string(kMaxSafetensorsHeader)
                 : "the file (" + std::to_string(bytes.size()) + " bytes)"));
  }
  std::string_view text = bytes.substr(8, n);
  if (text.empty() || text[0] != '{') {
    return Status::Corruption(name, "the header does not start with '{'");
  }
  LOCKSTEP_ASSIGN_OR_RETURN(PyValue json, ParsePyJson(text, name + ": header"));
  if (json.kind() != PyValue::Kind::kDict) {
    return Status::Corruption(name, "the header is not a JSON object");
  }
  SafetensorsHeader h;
  h.data_offset = 8 + n;
  uint64_t data_size = bytes.size() - h.data_offset;
  for (const auto& [key, v] : json.fields()) {
    if (key == "__metadata__") {
      LOCKSTEP_RETURN_IF_ERROR(CheckMetadata(v, name));
      h.metadata = v;
      continue;
    }
    LOCKSTEP_ASSIGN_OR_RETURN(SafetensorsTensor t,
                              ParseTensor(key, v, data_size, name));
    h.tensors.push_back(std::move(t));
  }
  LOCKSTEP_RETURN_IF_ERROR(CheckTiling(h, data_size, name));
  return h;
}

StatusOr<Checkpoint> ReadSafetensors(std::string_view bytes,
                                     std::shared_ptr<const void> owner,
                                     const std::string& name) {
  LOCKSTEP_ASSIGN_OR_RETURN(SafetensorsHeader h,
                            ParseSafetensorsHeader(bytes, name));
  Checkpoint c;
  c.path = name;
  c.format = "safetensors";
  c.metadata = std::move(h.metadata);
  for (SafetensorsTensor& t : h.tensors) {
    CheckpointEntry e;
    e.name = std::move(t.name);
    e.is_tensor = true;
    const char* p = bytes.data() + h.data_offset + t.begin;
    size_t size = static_cast<size_t>(t.end - t.begin);
    bool aligned = reinterpret_cast<uintptr_t>(p) % DTypeSize(t.dtype) == 0;
    if (owner && aligned) {
      e.tensor = Tensor(t.dtype, std::move(t.shape),
                        reinterpret_cast<const std::byte*>(p), owner);
    } else {
      e.tensor =
          Tensor::FromBytes(t.dtype, std::move(t.shape), std::string(p, size));
    }
    c.entries.push_back(std::move(e));
  }
  return c;
}

}  // namespace lockstep
