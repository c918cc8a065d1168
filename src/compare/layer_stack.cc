// The framework function an API was called from, read from its stack in
// stack.json: msprobe's set_stack_scope (data_scope_parser.py) for `-lm`.
#include <string>
#include <string_view>
#include <vector>

#include "layer_scope.h"
#include "lockstep/format/pyvalue.h"

namespace lockstep::layer_detail {
namespace {

using Sv = std::string_view;

// Frames in these files are the framework's own.
constexpr Sv kFrameworkFiles[] = {"site-packages/torch", "package/torch",
                                  "site-packages/mindspore",
                                  "package/mindspore"};
// Frames msprobe leaves out: its own, MindSpeed's, and the call machinery.
constexpr Sv kSkippedFiles[] = {"msprobe", "MindSpeed"};
constexpr Sv kSkippedFunctions[] = {"construct", "__call__"};

template <size_t N>
bool ContainsAny(Sv text, const Sv (&words)[N]) {
  for (Sv w : words) {
    if (text.find(w) != Sv::npos) return true;
  }
  return false;
}

// The frame that closes the window: the cell's `construct` (MindSpore), the
// module's forward or backward (PyTorch). Searched in the whole frame.
bool ClosesWindow(Sv frame, bool mindspore) {
  if (mindspore) return frame.find("construct") != Sv::npos;
  return frame.find("in forward,") != Sv::npos ||
         frame.find("in backward,") != Sv::npos;
}

// Python's str.isspace for one ASCII byte.
bool IsPySpace(char c) {
  return c == ' ' || (c >= '\t' && c <= '\r') || (c >= '\x1c' && c <= '\x1f');
}

// The comma-separated field `k` of `frame`, or npos-sized "" with *found
// false when the frame has fewer fields.
Sv Field(Sv frame, size_t k, bool* found) {
  size_t begin = 0;
  for (size_t i = 0; i < k; ++i) {
    size_t comma = frame.find(',', begin);
    if (comma == Sv::npos) {
      *found = false;
      return Sv();
    }
    begin = comma + 1;
  }
  *found = true;
  return frame.substr(begin, frame.find(',', begin) - begin);
}

// The function a frame names, the second word of its third field
// ("File a.py, line 3, in forward, x = f()" -> "forward"); "" for a frame
// msprobe skips (empty, in msprobe's or MindSpeed's files, or in construct
// or __call__). A frame without those parts is an error, where msprobe
// fails with an IndexError.
StatusOr<std::string> FrameFunction(Sv frame, Sv subject) {
  bool found = false;
  if (frame.empty() || ContainsAny(Field(frame, 0, &found), kSkippedFiles))
    return std::string();
  Sv func = Field(frame, 2, &found);
  if (found && ContainsAny(func, kSkippedFunctions)) return std::string();
  size_t a = 0;
  while (a < func.size() && IsPySpace(func[a])) ++a;   // "in"
  while (a < func.size() && !IsPySpace(func[a])) ++a;  // its end
  while (a < func.size() && IsPySpace(func[a])) ++a;
  size_t b = a;
  while (b < func.size() && !IsPySpace(func[b])) ++b;
  if (!found || a == b) {
    return Status::Corruption(
        subject, "frame '" + Abbreviate(frame) +
                     "' has no `in <function>` part (expected `File <path>, "
                     "line <n>, in <function>, <code>`)");
  }
  return std::string(func.substr(a, b - a));
}

// The frames below the API template ("Template" in any frame, the last
// one) up to the one that closes the window: lines[*begin, *end).
void Window(const std::vector<PyValue>& lines, bool mindspore, size_t* begin,
            size_t* end) {
  bool started = false;
  *begin = 0;
  *end = lines.size();
  for (size_t i = 0; i < lines.size(); ++i) {
    Sv line = lines[i].as_str();
    if (line.find("Template") != Sv::npos) {
      started = true;
      *begin = i + 1;
    } else if (started && ClosesWindow(line, mindspore)) {
      *end = i;
      return;
    }
  }
}

}  // namespace

StatusOr<std::string> FrameworkFunction(const PyValue& stack, bool mindspore,
                                        std::string_view subject) {
  bool strings = stack.kind() == PyValue::Kind::kList;
  for (const PyValue& v : stack.items())
    strings = strings && v.kind() == PyValue::Kind::kStr;
  if (!strings)
    return Status::Corruption(subject, "the stack is not a list of strings");
  size_t begin = 0, end = 0;
  Window(stack.items(), mindspore, &begin, &end);
  // The framework frames that come first (the last of them is the
  // function that called the API), then the user's frames, which msprobe
  // reads (and so checks) but does not use.
  const std::string* framework = nullptr;
  bool user = false;
  for (size_t i = begin; i < end; ++i) {
    const std::string& line = stack.items()[i].as_str();
    Sv file = Sv(line).substr(0, line.find(','));
    if (!user && ContainsAny(file, kFrameworkFiles)) {
      framework = &line;
      continue;
    }
    user = true;
    LOCKSTEP_RETURN_IF_ERROR(FrameFunction(line, subject).status());
  }
  if (framework == nullptr) return std::string();
  return FrameFunction(*framework, subject);
}

}  // namespace lockstep::layer_detail
