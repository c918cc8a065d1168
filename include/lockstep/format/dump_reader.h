// Reading msprobe's per-rank JSON files: dump.json, stack.json and
// construct.json (docs/msprobe_reference.md §2.3-2.6), PyTorch and MindSpore
// alike. Values are typed as Python's json module types them (see
// format/json_reader.h): NaN/Infinity statistics, null leaves, BigInts.
//
// Errors name the file and, where it is one entry that is wrong, the entry:
//   "run/rank0/dump.json: entry 'Functional.linear.0.forward': expected a
//    dict, got a list"
// JSON syntax errors give line and column; a file cut short (msprobe killed
// while rewriting dump.json) says where it stops and inside which entry.
//
// Thread safety: pure functions; distinct files may be read concurrently.
#ifndef LOCKSTEP_FORMAT_DUMP_READER_H_
#define LOCKSTEP_FORMAT_DUMP_READER_H_

#include <functional>
#include <string>
#include <string_view>

#include "lockstep/core/status.h"
#include "lockstep/format/dump.h"
#include "lockstep/format/json_reader.h"

namespace lockstep {

// Reads dump.json (or debug.json, same shape). The file is memory-mapped and
// parsed without an intermediate document.
//
// Top level: "data" must be a dict whose values are dicts (Corruption
// otherwise); "task", "level", "framework" are strings or absent ("" when
// absent; framework "pytorch" with framework_given == false, as msprobe
// assumes); "dump_data_dir" is a string or null (""). Other top-level keys go
// to DumpFile::extra. Entries keep file order; a repeated entry name keeps
// its first position and last value (as Python's json.load does).
// Errors: NotFound / IoError for the file, Corruption for its content.
StatusOr<DumpFile> ReadDumpJson(const std::string& path);

// As ReadDumpJson, from text already in memory. `path_for_messages` names it
// in errors and becomes DumpFile::path (DumpFile::dir is its directory).
StatusOr<DumpFile> ReadDumpJsonFromString(std::string_view text,
                                          const std::string& path_for_messages);

// Receives each entry of a streamed dump.json and its position (0, 1, ...).
// A status that is not ok stops the read and is returned.
using DumpEntrySink = std::function<Status(DumpEntry entry, size_t index)>;

// As ReadDumpJson, but hands each entry to `sink` as soon as it is parsed
// and keeps none (the result's `entries` is empty): memory is that of one
// entry, not of the file. A dump.json that repeats an entry name, or the
// "data" key after an entry that is not a dict, cannot be streamed with
// Python's meaning (first position, last value): the read then stops with
// NotSupported, after the sink has seen some entries; read it with
// ReadDumpJson. An entry that is not a dict is Corruption otherwise.
// `progress`, when given, is told after each entry how many bytes of the
// text are parsed, and the text's size.
using ReadProgress = std::function<void(size_t parsed, size_t total)>;
StatusOr<DumpFile> ReadDumpJsonStreaming(const std::string& path,
                                         const DumpEntrySink& sink,
                                         const ReadProgress& progress = {});
StatusOr<DumpFile> ReadDumpJsonStreamingFromString(
    std::string_view text, const std::string& path_for_messages,
    const DumpEntrySink& sink, const ReadProgress& progress = {});

// Receives each entry of a dump.json read fast: its name, its value (a dict,
// valid during the call only) and its position.
using DumpNodeSink =
    std::function<Status(std::string_view name, JsonNode value, size_t index)>;

// ReadDumpJsonStreaming, several times faster on well-formed files: each
// entry goes to `fast` as a JsonNode (json_reader.h's ParseJsonMembersFast).
// When the file holds what only the general reader decides (a syntax
// error, a repeated key or entry name, an entry that is not a dict, ...),
// `restart` is called (drop what `fast` was given) and the file is read
// again by ReadDumpJsonStreaming with `sink`, whose result and errors are
// then this call's.
StatusOr<DumpFile> ReadDumpJsonEntries(const std::string& path,
                                       const DumpNodeSink& fast,
                                       const std::function<void()>& restart,
                                       const DumpEntrySink& sink,
                                       const ReadProgress& progress = {});

// Reads stack.json in either format:
//   HEAD: {"0": [[names...], [frames...]], "1": ...}  (stacks shared by names)
//   old:  {"Functional.linear.0.forward": [frames...], ...}
// The HEAD format is recognised, as msprobe does, by a key "0" (an empty
// file "{}" is an empty map). Result: entry name -> frame strings; a name
// listed twice keeps its last stack. Frames must be strings (Corruption
// naming the key otherwise).
StatusOr<StackMap> ReadStackJson(const std::string& path);
StatusOr<StackMap> ReadStackJsonFromString(
    std::string_view text, const std::string& path_for_messages);

// Reads construct.json: {name: parent} where parent is a string, null or,
// for Megatron runs, [parent, micro_step]; other keys (e.g.
// "megatron_micro_step_number") are kept too, as they are.
StatusOr<ConstructMap> ReadConstructJson(const std::string& path);
StatusOr<ConstructMap> ReadConstructJsonFromString(
    std::string_view text, const std::string& path_for_messages);

// Python's name for a value's kind, for messages: "a dict", "a list",
// "a str", "an int", "a float", "a bool", "None".
std::string PyKindName(const PyValue& v);

}  // namespace lockstep

#endif  // LOCKSTEP_FORMAT_DUMP_READER_H_
