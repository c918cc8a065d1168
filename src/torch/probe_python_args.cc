// A Python API call's arguments as msprobe records them (lockstep_probe's
// api_names "python"): the call's own positional arguments and keywords,
// not the ATen operator's schema. python/lockstep_probe/_api_names.py
// encodes them (_layout); this file reads that encoding back.
#include <ATen/ATen.h>

#include <charconv>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "torch/probe_impl.h"

namespace lockstep {
namespace {

constexpr char kSep = '\x1f';

std::vector<std::string_view> Tokens(std::string_view layout) {
  std::vector<std::string_view> out;
  size_t at = 0;
  while (at <= layout.size()) {
    size_t end = layout.find(kSep, at);
    if (end == std::string_view::npos) end = layout.size();
    out.push_back(layout.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

// The tensor among `inputs` (lists included) whose TensorImpl is at `ptr`.
const at::Tensor* FindTensor(c10::ArrayRef<const c10::IValue> inputs,
                             uintptr_t ptr, std::vector<at::Tensor>* scratch) {
  for (const c10::IValue& v : inputs) {
    if (v.isTensor()) {
      if (reinterpret_cast<uintptr_t>(v.toTensor().unsafeGetTensorImpl()) ==
          ptr) {
        return &v.toTensor();
      }
    } else if (v.isTensorList()) {
      for (const at::Tensor& t : v.toTensorVector()) {
        if (reinterpret_cast<uintptr_t>(t.unsafeGetTensorImpl()) == ptr) {
          scratch->push_back(t);
          return &scratch->back();
        }
      }
    }
  }
  return nullptr;
}

class ArgWriter {
 public:
  ArgWriter(std::vector<std::string_view> tokens,
            c10::ArrayRef<const c10::IValue> inputs)
      : tokens_(std::move(tokens)), inputs_(inputs) {
    scratch_.reserve(2 * tokens_.size());  // Valid's finds, then Write's
  }

  // Checks the whole encoding (every tensor found among the inputs, lists
  // balanced) without writing.
  bool Valid() {
    int depth = 0;
    bool kwargs = false;
    for (size_t i = 0; i < tokens_.size(); ++i) {
      std::string_view t = tokens_[i];
      if (t.empty()) return false;
      // A keyword is followed by its value.
      if (t[0] == '=' && (i + 1 == tokens_.size() ||
                          std::string_view("=]K").find(tokens_[i + 1].substr(
                              0, 1)) != std::string_view::npos)) {
        return false;
      }
      switch (t[0]) {
        case '[':
          ++depth;
          break;
        case ']':
          if (--depth < 0) return false;
          break;
        case 'K':
          if (depth != 0 || kwargs) return false;
          kwargs = true;
          break;
        case 't':
          if (Tensor(t) == nullptr) return false;
          break;
        case '=':
          if (!kwargs || depth != 0) return false;
          break;
        default:
          break;
      }
    }
    return depth == 0 && kwargs;
  }

  void Write(const std::string& stem, TensorSummarizer* s, PyJsonBuilder* b) {
    size_t i = 0;
    b->Key("input_args").BeginList();
    std::string name = stem;
    for (int n = 0; tokens_[i] != "K"; ++n) {
      name.resize(stem.size());
      name += "." + std::to_string(n);
      i = Value(i, &name, s, b);
    }
    b->EndList().Key("input_kwargs").BeginDict();
    for (++i; i < tokens_.size();) {
      std::string_view key = tokens_[i].substr(1);
      b->Key(key);
      name = stem + "." + std::string(key);
      i = Value(i + 1, &name, s, b);
    }
    b->EndDict();
  }

 private:
  const at::Tensor* Tensor(std::string_view t) {
    uintptr_t ptr = 0;
    auto [end, ec] =
        std::from_chars(t.data() + 1, t.data() + t.size(), ptr, 16);
    if (ec != std::errc() || end != t.data() + t.size()) return nullptr;
    return FindTensor(inputs_, ptr, &scratch_);
  }

  static PyJsonBuilder& Typed(const char* type, PyJsonBuilder* b) {
    return b->BeginDict().Key("type").Str(type).Key("value");
  }

  // Writes the value at token i; returns the index after it.
  size_t Value(size_t i, std::string* stem, TensorSummarizer* s,
               PyJsonBuilder* b) {
    std::string_view t = tokens_[i];
    std::string_view rest = t.substr(1);
    switch (t[0]) {
      case 't':
        s->Tensor(*Tensor(t), *stem, b);
        return i + 1;
      case 'n':
        b->Null();
        return i + 1;
      case 'b':
        Typed("bool", b).Bool(rest == "1").EndDict();
        return i + 1;
      case 'i': {
        int64_t v = 0;
        std::from_chars(rest.data(), rest.data() + rest.size(), v);
        Typed("int", b).Int(v).EndDict();
        return i + 1;
      }
      case 'f':
        Typed("float", b)
            .Float(std::strtod(std::string(rest).c_str(), nullptr))
            .EndDict();
        return i + 1;
      case 's':
        Typed("str", b).Str(rest).EndDict();
        return i + 1;
      case 'd':
        Typed("torch.dtype", b).Str(rest).EndDict();
        return i + 1;
      case 'v':
        Typed("torch.device", b).Str(rest).EndDict();
        return i + 1;
      case 'e':
        Typed("ellipsis", b).Str("...").EndDict();
        return i + 1;
      case 'S':
      case 'l': {  // torch.Size: ints; slice: start, stop, step (empty: None)
        Typed(t[0] == 'S' ? "torch.Size" : "slice", b).BeginList();
        for (size_t at = 0; !rest.empty() && at <= rest.size();) {
          size_t end = rest.find(',', at);
          if (end == std::string_view::npos) end = rest.size();
          std::string_view part = rest.substr(at, end - at);
          int64_t v = 0;
          if (part.empty()) {
            b->Null();
          } else {
            std::from_chars(part.data(), part.data() + part.size(), v);
            b->Int(v);
          }
          at = end + 1;
        }
        b->EndList().EndDict();
        return i + 1;
      }
      case '[': {
        b->BeginList();
        size_t base = stem->size();
        ++i;
        for (int n = 0; tokens_[i] != "]"; ++n) {
          stem->resize(base);
          *stem += "." + std::to_string(n);
          i = Value(i, stem, s, b);
        }
        stem->resize(base);
        b->EndList();
        return i + 1;
      }
      default:  // 'o': another type, by name
        b->BeginDict().Key("type").Str(rest).EndDict();
        return i + 1;
    }
  }

  std::vector<std::string_view> tokens_;
  c10::ArrayRef<const c10::IValue> inputs_;
  std::vector<at::Tensor> scratch_;  // reserved: pointers into it stay valid
};

}  // namespace

bool WritePythonArgs(std::string_view layout,
                     c10::ArrayRef<const c10::IValue> inputs,
                     const std::string& stem, TensorSummarizer* summarizer,
                     PyJsonBuilder* b) {
  if (layout.empty()) return false;
  ArgWriter w(Tokens(layout), inputs);
  if (!w.Valid()) return false;
  w.Write(stem, summarizer, b);
  return true;
}

}  // namespace lockstep
