#include "lockstep/format/env_fingerprint.h"

#include <cstdio>
#include <unordered_map>
#include <utility>

#include "format/str_cat.h"
#include "lockstep/core/check.h"
#include "lockstep/core/file.h"
#include "lockstep/format/dump_reader.h"
#include "lockstep/format/json_reader.h"
#include "lockstep/format/json_writer.h"
#include "lockstep/format/pyvalue.h"

namespace lockstep {
namespace {

constexpr std::string_view kVersionKey = "lockstep_env";
constexpr std::string_view kParameters = "parameters";
constexpr std::string_view kData = "data";

std::string Hex8(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%08x", v);
  return buf;
}

PyValue ChecksumList(const std::vector<EnvChecksum>& sums) {
  std::vector<PyValue> items;
  items.reserve(sums.size());
  for (const EnvChecksum& c : sums) {
    std::vector<PyValue> shape;
    for (int64_t d : c.shape) shape.push_back(PyValue::Int(d));
    items.push_back(PyValue::Dict({{"name", PyValue::Str(c.name)},
                                   {"dtype", PyValue::Str(c.dtype)},
                                   {"shape", PyValue::List(std::move(shape))},
                                   {"crc32c", PyValue::Str(Hex8(c.crc32c))}}));
  }
  return PyValue::List(std::move(items));
}

// Place names in errors: ['seed']['torch'].
std::string Where(std::string_view a, std::string_view b = {}) {
  std::string w = StrCat("[", PyStrRepr(std::string(a)), "]");
  if (!b.empty()) w += StrCat("[", PyStrRepr(std::string(b)), "]");
  return w;
}

Status Bad(std::string_view subject, std::string_view where,
           std::string_view problem) {
  return Status::Corruption(subject, StrCat(where, ": ", problem));
}

// `index`: key -> position in fp->fields, so that a repeated key replaces
// its earlier value (the last wins, as in Python) in constant time.
Status TakeSection(std::string_view subject, const std::string& section,
                   PyValue v, EnvFingerprint* fp,
                   std::unordered_map<std::string, size_t>* index) {
  if (section.find('.') != std::string::npos || section.empty()) {
    return Bad(subject, Where(section),
               "section names must be non-empty "
               "and have no '.'");
  }
  if (v.kind() != PyValue::Kind::kDict) {
    return Bad(subject, Where(section),
               StrCat("is ", PyKindName(v), ", expected a dict of fields"));
  }
  for (auto& [name, value] : v.TakeFields()) {
    if (name.empty()) return Bad(subject, Where(section), "empty field name");
    std::optional<std::string> text;
    if (value.kind() == PyValue::Kind::kStr) {
      text = value.as_str();
    } else if (!value.is_none()) {
      return Bad(subject, Where(section, name),
                 StrCat("is ", PyKindName(value), ", expected a str or null"));
    }
    auto [it, fresh] =
        index->try_emplace(section + "." + name, fp->fields.size());
    if (fresh) {
      fp->fields.push_back(EnvField{section, name, std::move(text)});
    } else {
      fp->fields[it->second].value = std::move(text);
    }
  }
  return Status::Ok();
}

StatusOr<uint32_t> ParseHex8(std::string_view s) {
  uint32_t v = 0;
  if (s.size() != 8) return Status::Corruption("", "");
  for (char c : s) {
    int d = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                   : -1;
    if (d < 0) return Status::Corruption("", "");
    v = v << 4 | static_cast<uint32_t>(d);
  }
  return v;
}

Status TakeChecksum(std::string_view subject, const std::string& where,
                    const PyValue& v, EnvChecksum* c) {
  const PyValue* name = v.Find("name");
  const PyValue* dtype = v.Find("dtype");
  const PyValue* shape = v.Find("shape");
  const PyValue* crc = v.Find("crc32c");
  if (name == nullptr || dtype == nullptr || shape == nullptr ||
      crc == nullptr) {
    return Bad(subject, where,
               "expected a dict with name, dtype, shape and crc32c");
  }
  if (name->kind() != PyValue::Kind::kStr ||
      dtype->kind() != PyValue::Kind::kStr ||
      shape->kind() != PyValue::Kind::kList) {
    return Bad(subject, where, "name and dtype must be str, shape a list");
  }
  c->name = name->as_str();
  c->dtype = dtype->as_str();
  for (const PyValue& d : shape->items()) {
    if (d.kind() != PyValue::Kind::kInt || d.as_int() < 0) {
      return Bad(subject, where, "shape must hold non-negative ints");
    }
    c->shape.push_back(d.as_int());
  }
  StatusOr<uint32_t> sum = crc->kind() == PyValue::Kind::kStr
                               ? ParseHex8(crc->as_str())
                               : Status::Corruption("", "");
  if (!sum.ok()) {
    return Bad(subject, where, "crc32c must be 8 lowercase hex digits");
  }
  c->crc32c = *sum;
  return Status::Ok();
}

Status TakeChecksums(std::string_view subject, const std::string& key,
                     const PyValue& v, std::vector<EnvChecksum>* out) {
  if (v.kind() != PyValue::Kind::kList) {
    return Bad(subject, Where(key),
               StrCat("is ", PyKindName(v), ", expected a list"));
  }
  for (size_t i = 0; i < v.items().size(); ++i) {
    std::string where = StrCat(Where(key), "[", std::to_string(i), "]");
    EnvChecksum c;
    LOCKSTEP_RETURN_IF_ERROR(TakeChecksum(subject, where, v.items()[i], &c));
    out->push_back(std::move(c));
  }
  return Status::Ok();
}

Status CheckVersion(std::string_view subject, const PyValue& top) {
  const PyValue* version = top.Find(kVersionKey);
  if (version == nullptr || version->kind() != PyValue::Kind::kInt) {
    return Status::Corruption(
        subject,
        "not a lockstep environment fingerprint (no integer "
        "\"lockstep_env\" version). Note: write one with 'lockstep env "
        "capture -o env.json'");
  }
  if (version->as_int() < 1 || version->as_int() > kEnvFingerprintVersion) {
    return Status::NotSupported(
        subject, StrCat("version ", std::to_string(version->as_int()),
                        " (this lockstep reads 1..",
                        std::to_string(kEnvFingerprintVersion),
                        "). Note: use a newer lockstep"));
  }
  return Status::Ok();
}

}  // namespace

void EnvFingerprint::Set(std::string_view section, std::string_view name,
                         std::optional<std::string> value) {
  LOCKSTEP_CHECK(!section.empty() && section.find('.') == std::string::npos);
  LOCKSTEP_CHECK(section != kVersionKey && section != kParameters &&
                 section != kData);
  LOCKSTEP_CHECK(!name.empty());
  for (EnvField& f : fields) {
    if (f.section == section && f.name == name) {
      f.value = std::move(value);
      return;
    }
  }
  fields.push_back(
      EnvField{std::string(section), std::string(name), std::move(value)});
}

const EnvField* EnvFingerprint::Find(std::string_view key) const {
  for (const EnvField& f : fields) {
    if (key.size() == f.section.size() + 1 + f.name.size() &&
        key.substr(0, f.section.size()) == f.section &&
        key[f.section.size()] == '.' &&
        key.substr(f.section.size() + 1) == f.name) {
      return &f;
    }
  }
  return nullptr;
}

std::string EncodeEnvFingerprint(const EnvFingerprint& fp) {
  std::vector<std::pair<std::string, PyValue>> top;
  top.emplace_back(std::string(kVersionKey),
                   PyValue::Int(kEnvFingerprintVersion));
  // Sections in order of first appearance, each with its fields in order.
  std::unordered_map<std::string_view, size_t> section_at;
  std::vector<std::vector<std::pair<std::string, PyValue>>> sections;
  std::vector<std::string_view> names;
  for (const EnvField& f : fp.fields) {
    auto [it, fresh] = section_at.try_emplace(f.section, sections.size());
    if (fresh) {
      sections.emplace_back();
      names.push_back(f.section);
    }
    sections[it->second].emplace_back(
        f.name, f.value ? PyValue::Str(*f.value) : PyValue());
  }
  for (size_t i = 0; i < sections.size(); ++i) {
    top.emplace_back(std::string(names[i]),
                     PyValue::Dict(std::move(sections[i])));
  }
  if (!fp.parameters.empty()) {
    top.emplace_back(std::string(kParameters), ChecksumList(fp.parameters));
  }
  if (!fp.data.empty()) {
    top.emplace_back(std::string(kData), ChecksumList(fp.data));
  }
  return ToPyJson(PyValue::Dict(std::move(top)), 1) + "\n";
}

StatusOr<EnvFingerprint> DecodeEnvFingerprint(std::string_view text,
                                              std::string_view subject) {
  LOCKSTEP_ASSIGN_OR_RETURN(PyValue top, ParsePyJson(text, subject));
  if (top.kind() != PyValue::Kind::kDict) {
    return Status::Corruption(
        subject, StrCat("top level is ", PyKindName(top), ", expected a dict"));
  }
  LOCKSTEP_RETURN_IF_ERROR(CheckVersion(subject, top));
  EnvFingerprint fp;
  std::unordered_map<std::string, size_t> index;
  for (auto& [key, value] : top.TakeFields()) {
    if (key == kVersionKey) continue;
    if (key == kParameters) {
      LOCKSTEP_RETURN_IF_ERROR(
          TakeChecksums(subject, key, value, &fp.parameters));
    } else if (key == kData) {
      LOCKSTEP_RETURN_IF_ERROR(TakeChecksums(subject, key, value, &fp.data));
    } else {
      LOCKSTEP_RETURN_IF_ERROR(
          TakeSection(subject, key, std::move(value), &fp, &index));
    }
  }
  return fp;
}

StatusOr<EnvFingerprint> ReadEnvFingerprint(const std::string& path) {
  LOCKSTEP_ASSIGN_OR_RETURN(auto file, MappedFile::Open(path, /*populate=*/true,
                                                        /*regular_only=*/true));
  if (file->size() > kMaxEnvJsonBytes) {
    // Decoding takes about 11 times the text: refuse before, not after.
    return Status::NotSupported(
        path,
        StrCat("is ", std::to_string(file->size()),
               " bytes; an env.json holds a few kilobytes to a few "
               "megabytes (limit ",
               std::to_string(kMaxEnvJsonBytes >> 20), " MiB), not read"));
  }
  StatusOr<EnvFingerprint> fp = DecodeEnvFingerprint(file->view(), path);
  LOCKSTEP_RETURN_IF_ERROR(file->CheckIntact());
  return fp;
}

Status WriteEnvFingerprintFile(const std::string& path,
                               const EnvFingerprint& fp) {
  return WriteFileAtomic(path, EncodeEnvFingerprint(fp));
}

}  // namespace lockstep
