#include "lockstep/format/dump_reader.h"

#include <filesystem>
#include <utility>

#include "format/str_cat.h"
#include "lockstep/core/file.h"
#include "lockstep/format/json_reader.h"

namespace lockstep {
namespace {

std::string DirOf(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  return dir.empty() ? "." : dir;
}

// A top-level string field: a str, or null / absent ("").
Status TakeString(const std::string& path, std::string_view key, PyValue v,
                  std::string* out) {
  if (v.is_none()) {
    out->clear();
    return Status::Ok();
  }
  if (v.kind() != PyValue::Kind::kStr) {
    return Status::Corruption(
        path, StrCat("\"", key, "\" is ", PyKindName(v), ", expected a str"));
  }
  *out = v.as_str();
  return Status::Ok();
}

// An entry of "data" must be a dict.
Status CheckEntry(const std::string& path, const std::string& name,
                  const PyValue& value) {
  if (value.kind() == PyValue::Kind::kDict) return Status::Ok();
  return Status::Corruption(
      path, StrCat("entry ", PyStrRepr(name), ": expected a dict, got ",
                   PyKindName(value)));
}

// Maps the regular file at `path`, parses its text with `parse(text)` and
// fails if the file shrank meanwhile (see MappedFile::CheckIntact).
template <typename Parse>
auto ParseMapped(const std::string& path, Parse parse)
    -> decltype(parse(std::string_view())) {
  LOCKSTEP_ASSIGN_OR_RETURN(auto file, MappedFile::Open(path, /*populate=*/true,
                                                        /*regular_only=*/true));
  auto result = parse(file->view());
  LOCKSTEP_RETURN_IF_ERROR(file->CheckIntact());
  return result;
}

Status TakeEntries(const std::string& path, PyValue data, DumpFile* dump) {
  if (data.kind() != PyValue::Kind::kDict) {
    return Status::Corruption(path, StrCat("\"data\" is ", PyKindName(data),
                                           ", expected a dict of entries"));
  }
  auto fields = data.TakeFields();
  dump->entries.reserve(fields.size());
  for (auto& [name, value] : fields) {
    LOCKSTEP_RETURN_IF_ERROR(CheckEntry(path, name, value));
    dump->entries.push_back(DumpEntry{std::move(name), std::move(value)});
  }
  return Status::Ok();
}

Status TakeTopLevelField(const std::string& path, std::string key,
                         PyValue value, DumpFile* dump) {
  if (key == "data") return TakeEntries(path, std::move(value), dump);
  if (key == "task")
    return TakeString(path, key, std::move(value), &dump->task);
  if (key == "level")
    return TakeString(path, key, std::move(value), &dump->level);
  if (key == "dump_data_dir") {
    return TakeString(path, key, std::move(value), &dump->dump_data_dir);
  }
  if (key == "framework") {
    dump->framework_given = !value.is_none();
    return TakeString(path, key, std::move(value), &dump->framework);
  }
  dump->extra.emplace_back(std::move(key), std::move(value));
  return Status::Ok();
}

StatusOr<std::vector<std::pair<std::string, PyValue>>> ParseTopDict(
    std::string_view text, const std::string& path) {
  LOCKSTEP_ASSIGN_OR_RETURN(PyValue root, ParsePyJson(text, path));
  if (root.kind() != PyValue::Kind::kDict) {
    return Status::Corruption(
        path,
        StrCat("the top level is ", PyKindName(root), ", expected a dict"));
  }
  return root.TakeFields();
}

// Frame strings of a stack: a list of str.
Status TakeFrames(const std::string& path, const std::string& key,
                  const PyValue& v, std::vector<std::string>* frames) {
  if (v.kind() != PyValue::Kind::kList) {
    return Status::Corruption(
        path, StrCat("key ", PyStrRepr(key),
                     ": expected a list of frames, got ", PyKindName(v)));
  }
  frames->clear();
  frames->reserve(v.items().size());
  for (const PyValue& f : v.items()) {
    if (f.kind() != PyValue::Kind::kStr) {
      return Status::Corruption(
          path, StrCat("key ", PyStrRepr(key), ": a frame is ", PyKindName(f),
                       ", expected a str"));
    }
    frames->push_back(f.as_str());
  }
  return Status::Ok();
}

// One HEAD-format stack: [[names...], [frames...]].
Status TakeSharedStack(const std::string& path, const std::string& key,
                       const PyValue& v, StackMap* out) {
  const auto& parts = v.items();
  if (v.kind() != PyValue::Kind::kList || parts.size() != 2 ||
      parts[0].kind() != PyValue::Kind::kList) {
    return Status::Corruption(
        path, StrCat("key ", PyStrRepr(key),
                     ": expected [[names...], [frames...]] (the format "
                     "with a key \"0\"), got ",
                     PyKindName(v)));
  }
  std::vector<std::string> frames;
  LOCKSTEP_RETURN_IF_ERROR(TakeFrames(path, key, parts[1], &frames));
  for (const PyValue& name : parts[0].items()) {
    if (name.kind() != PyValue::Kind::kStr) {
      return Status::Corruption(
          path, StrCat("key ", PyStrRepr(key), ": a name is ", PyKindName(name),
                       ", expected a str"));
    }
    (*out)[name.as_str()] = frames;
  }
  return Status::Ok();
}

StatusOr<DumpFile> TakeDumpFields(
    const std::string& path,
    std::vector<std::pair<std::string, PyValue>> fields);

}  // namespace

std::string PyKindName(const PyValue& v) {
  if (v.is_none()) return "None";
  std::string_view name = v.TypeName();
  bool vowel = name.find_first_of("aeiou") == 0;
  return (vowel ? "an " : "a ") + std::string(name);
}

StatusOr<DumpFile> ReadDumpJson(const std::string& path) {
  return ParseMapped(path, [&](std::string_view text) {
    return ReadDumpJsonFromString(text, path);
  });
}

StatusOr<DumpFile> ReadDumpJsonFromString(
    std::string_view text, const std::string& path_for_messages) {
  const std::string& path = path_for_messages;
  LOCKSTEP_ASSIGN_OR_RETURN(auto fields, ParseTopDict(text, path));
  return TakeDumpFields(path, std::move(fields));
}

StatusOr<DumpFile> ReadDumpJsonStreaming(const std::string& path,
                                         const DumpEntrySink& sink,
                                         const ReadProgress& progress) {
  return ParseMapped(path, [&](std::string_view text) {
    return ReadDumpJsonStreamingFromString(text, path, sink, progress);
  });
}

StatusOr<DumpFile> ReadDumpJsonStreamingFromString(
    std::string_view text, const std::string& path_for_messages,
    const DumpEntrySink& sink, const ReadProgress& progress) {
  const std::string& path = path_for_messages;
  size_t index = 0;
  bool bad_entry = false;
  JsonMemberSink member = [&](std::string name, PyValue value,
                              size_t parsed) -> Status {
    Status entry = CheckEntry(path, name, value);
    bad_entry = !entry.ok();
    LOCKSTEP_RETURN_IF_ERROR(entry);
    if (progress) progress(parsed, text.size());
    return sink(DumpEntry{std::move(name), std::move(value)}, index++);
  };
  bool needs_tree = false;
  StatusOr<PyValue> root =
      ParsePyJsonStreaming(text, path, "data", &member, &needs_tree);
  if (needs_tree) return Status::NotSupported(path, "repeated entry names");
  // A later "data" key replaces this one in Python, bad entry and all: only
  // the whole tree says whether one comes.
  if (bad_entry && ReadDumpJsonFromString(text, path).ok()) {
    return Status::NotSupported(path, "a repeated \"data\" key");
  }
  if (!root.ok()) return root.status();
  if (progress) progress(text.size(), text.size());
  if (root->kind() != PyValue::Kind::kDict) {
    return Status::Corruption(
        path,
        StrCat("the top level is ", PyKindName(*root), ", expected a dict"));
  }
  return TakeDumpFields(path, root->TakeFields());
}

StatusOr<DumpFile> ReadDumpJsonEntries(const std::string& path,
                                       const DumpNodeSink& fast,
                                       const std::function<void()>& restart,
                                       const DumpEntrySink& sink,
                                       const ReadProgress& progress) {
  return ParseMapped(path, [&](std::string_view text) -> StatusOr<DumpFile> {
    size_t index = 0;
    JsonNodeSink member = [&](std::string_view name, JsonNode value,
                              size_t parsed) -> Status {
      if (progress) progress(parsed, text.size());
      return fast(name, value, index++);
    };
    LOCKSTEP_ASSIGN_OR_RETURN(FastMembers f,
                              ParseJsonMembersFast(text, "data", member));
    if (f.decided) {
      if (progress) progress(text.size(), text.size());
      return TakeDumpFields(path, std::move(f.top));
    }
    restart();
    return ReadDumpJsonStreamingFromString(text, path, sink, progress);
  });
}

namespace {

StatusOr<DumpFile> TakeDumpFields(
    const std::string& path,
    std::vector<std::pair<std::string, PyValue>> fields) {
  DumpFile dump;
  dump.path = path;
  dump.dir = DirOf(path);
  bool have_data = false;
  for (auto& [key, value] : fields) {
    have_data = have_data || key == "data";
    LOCKSTEP_RETURN_IF_ERROR(
        TakeTopLevelField(path, std::move(key), std::move(value), &dump));
  }
  if (!have_data)
    return Status::Corruption(path, "no \"data\" key at the top level");
  if (!dump.framework_given) dump.framework = "pytorch";
  return dump;
}

}  // namespace

StatusOr<StackMap> ReadStackJson(const std::string& path) {
  return ParseMapped(path, [&](std::string_view text) {
    return ReadStackJsonFromString(text, path);
  });
}

StatusOr<StackMap> ReadStackJsonFromString(
    std::string_view text, const std::string& path_for_messages) {
  const std::string& path = path_for_messages;
  LOCKSTEP_ASSIGN_OR_RETURN(auto fields, ParseTopDict(text, path));
  bool shared = false;
  for (const auto& f : fields) shared = shared || f.first == "0";
  StackMap out;
  for (const auto& [key, value] : fields) {
    if (shared) {
      LOCKSTEP_RETURN_IF_ERROR(TakeSharedStack(path, key, value, &out));
    } else {
      LOCKSTEP_RETURN_IF_ERROR(TakeFrames(path, key, value, &out[key]));
    }
  }
  return out;
}

StatusOr<ConstructMap> ReadConstructJson(const std::string& path) {
  return ParseMapped(path, [&](std::string_view text) {
    return ReadConstructJsonFromString(text, path);
  });
}

StatusOr<ConstructMap> ReadConstructJsonFromString(
    std::string_view text, const std::string& path_for_messages) {
  LOCKSTEP_ASSIGN_OR_RETURN(auto fields, ParseTopDict(text, path_for_messages));
  ConstructMap out;
  for (auto& [key, value] : fields) out[std::move(key)] = std::move(value);
  return out;
}

}  // namespace lockstep
