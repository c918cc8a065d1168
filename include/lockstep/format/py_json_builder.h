// Writes one JSON value straight to text, byte-identical to what
// AppendPyJson (json_writer.h) writes for the same PyValue tree: Python's
// json.dump(indent=1) layout, ensure_ascii strings, Python float repr.
// For writers that produce many small documents (the probe: ~100 entries
// and ~400 tensor dicts per training step) and would otherwise build a
// PyValue tree only to encode it.
//
//   PyJsonBuilder b(/*level=*/2);
//   b.BeginDict().Key("shape").BeginList().Int(32).Int(6).EndList();
//   b.Key("Max").Float(1.5).EndDict();
//   std::string text = b.Take();
//
// `level` is how deep the value sits in the document it will be part of:
// its inner lines are indented by indent * (level + 1) spaces, its closing
// bracket by indent * level (as AppendPyJson's `level`). A value built at
// level 0 can be placed anywhere with Fragment, which re-indents it.
//
// Misuse (a value where a key is due, unbalanced End*) is a programming
// error, checked in debug builds.
// Thread safety: none; one builder per thread.
#ifndef LOCKSTEP_FORMAT_PY_JSON_BUILDER_H_
#define LOCKSTEP_FORMAT_PY_JSON_BUILDER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lockstep {

class PyJsonBuilder {
 public:
  explicit PyJsonBuilder(int level = 0, int indent = 1)
      : level_(level), indent_(indent) {}

  PyJsonBuilder& BeginList();
  PyJsonBuilder& EndList();
  PyJsonBuilder& BeginDict();
  PyJsonBuilder& EndDict();
  // The name of the next dict member; its value follows.
  PyJsonBuilder& Key(std::string_view key);

  PyJsonBuilder& Null();
  PyJsonBuilder& Bool(bool b);
  PyJsonBuilder& Int(int64_t i);
  PyJsonBuilder& Float(double d);  // repr; NaN, Infinity, -Infinity
  // A late float (json_writer.h): the text is JSON only once passed
  // through AppendExpandingLateFloats.
  PyJsonBuilder& LateFloat(double d);
  PyJsonBuilder& Str(std::string_view s);
  // A whole value encoded at level 0 with the same indent (another
  // builder's Take()), indented to this position.
  PyJsonBuilder& Fragment(std::string_view text);
  // Bytes written as they are where a value is due (a placeholder that is
  // replaced before the text is used).
  PyJsonBuilder& Raw(std::string_view bytes);

  // Open containers.
  size_t depth() const { return open_.size(); }
  // The text so far; complete when depth() == 0.
  const std::string& text() const { return out_; }
  // Moves the text out and resets the builder (same level and indent).
  std::string Take();

 private:
  struct Open {
    bool dict;
    size_t items;
  };
  // Separator and line break before a value (not after a Key).
  void BeforeValue();
  // A line break indented for `level`, after a comma if `comma`.
  void NewLine(size_t level, bool comma);
  PyJsonBuilder& End(bool dict, char close);

  std::string out_;
  std::vector<Open> open_;
  int level_;
  int indent_;
  bool after_key_ = false;
};

}  // namespace lockstep

#endif  // LOCKSTEP_FORMAT_PY_JSON_BUILDER_H_
