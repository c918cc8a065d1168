#include "numerics/kv_text.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>

namespace lockstep::internal {
namespace {

bool ParseDouble(const std::string& s, double* out) {
  char* end = nullptr;
  *out = std::strtod(s.c_str(), &end);
  return !s.empty() && end == s.c_str() + s.size();
}

bool ParseInt(const std::string& s, int64_t* out) {
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(s.c_str(), &end, 10);
  *out = v;
  return !s.empty() && errno == 0 && end == s.c_str() + s.size();
}

// Splits on ','; "" gives no items.
std::vector<std::string> SplitCommas(const std::string& s) {
  std::vector<std::string> out;
  if (s.empty()) return out;
  size_t pos = 0;
  while (true) {
    size_t c = s.find(',', pos);
    out.push_back(s.substr(pos, c == std::string::npos ? c : c - pos));
    if (c == std::string::npos) return out;
    pos = c + 1;
  }
}

}  // namespace

std::string HexDouble(double d) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%a", d);
  return buf;
}

void PutKeyValue(std::string* out, std::string_view key,
                 std::string_view value) {
  out->append(key).append(" ").append(value).append("\n");
}

Status ParseKeyValueText(std::string_view text, std::string_view magic,
                         int version, std::string_view subject,
                         KeyValues* out) {
  std::string_view first = text.substr(0, text.find('\n'));
  if (first.substr(0, magic.size()) != magic ||
      first.size() <= magic.size() + 1 || first[magic.size()] != ' ') {
    return Status::Corruption(subject, "not a lockstep " +
                                           std::string(subject) +
                                           ": does not start with '" +
                                           std::string(magic) + " <version>'");
  }
  std::string v(first.substr(magic.size() + 1));
  if (v != std::to_string(version)) {
    return Status::NotSupported(
        subject,
        "version " + v + "; this build reads " + std::to_string(version));
  }
  size_t line_no = 1;
  size_t pos = first.size();
  while (pos < text.size()) {
    size_t end = text.find('\n', pos + 1);
    std::string_view line = text.substr(pos + 1, end == std::string_view::npos
                                                     ? std::string_view::npos
                                                     : end - pos - 1);
    ++line_no;
    pos = end == std::string_view::npos ? text.size() : end;
    if (line.empty()) continue;
    size_t sp = line.find(' ');
    if (sp == std::string_view::npos || sp == 0) {
      return Status::Corruption(subject, "line " + std::to_string(line_no) +
                                             ": expected 'key value'");
    }
    std::string key(line.substr(0, sp));
    if (!out->emplace(key, std::string(line.substr(sp + 1))).second) {
      return Status::Corruption(subject, "key '" + key + "' appears twice");
    }
  }
  return Status::Ok();
}

const std::string* KeyValueReader::Get(const char* key) {
  read_.insert(key);
  auto it = fields_.find(key);
  if (it != fields_.end()) return &it->second;
  if (status_.ok()) {
    status_ =
        Status::Corruption(subject_, std::string("missing '") + key + "'");
  }
  return nullptr;
}

void KeyValueReader::Bad(const char* key, const std::string& value) {
  if (status_.ok()) {
    status_ = Status::Corruption(
        subject_, std::string(key) + " '" + value + "' is not a valid value");
  }
}

double KeyValueReader::Double(const char* key) {
  const std::string* v = Get(key);
  double d = 0;
  if (v != nullptr && !ParseDouble(*v, &d)) Bad(key, *v);
  return d;
}

int64_t KeyValueReader::Int(const char* key) {
  const std::string* v = Get(key);
  int64_t i = 0;
  if (v != nullptr && !ParseInt(*v, &i)) Bad(key, *v);
  return i;
}

bool KeyValueReader::Bool(const char* key) {
  const std::string* v = Get(key);
  if (v != nullptr && *v != "0" && *v != "1") Bad(key, *v);
  return v != nullptr && *v == "1";
}

std::string KeyValueReader::Str(const char* key) {
  const std::string* v = Get(key);
  return v ? *v : std::string();
}

std::vector<int64_t> KeyValueReader::IntList(const char* key) {
  const std::string* v = Get(key);
  std::vector<int64_t> out;
  if (v == nullptr) return out;
  for (const std::string& item : SplitCommas(*v)) {
    int64_t i = 0;
    if (!ParseInt(item, &i)) Bad(key, *v);
    out.push_back(i);
  }
  return out;
}

std::vector<double> KeyValueReader::DoubleList(const char* key) {
  const std::string* v = Get(key);
  std::vector<double> out;
  if (v == nullptr) return out;
  for (const std::string& item : SplitCommas(*v)) {
    double d = 0;
    if (!ParseDouble(item, &d)) Bad(key, *v);
    out.push_back(d);
  }
  return out;
}

Status KeyValueReader::CheckNoUnknownKeys() {
  for (const auto& [key, value] : fields_) {
    if (!read_.count(key)) {
      return Status::Corruption(subject_, "unknown key '" + key + "'");
    }
  }
  return Status::Ok();
}

}  // namespace lockstep::internal
