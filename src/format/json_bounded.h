// Running rapidjson's SAX reader within a file's ReadLimits (read_budget.h).
// Private to src/format (json_reader.cc).
//
// rapidjson copies each string and number (numbers arrive as text) onto its
// own stack before it hands it to the handler, growing the stack by half
// each time: a 1 GiB string would cost that and more before the handler
// could say no. The stack's allocator here refuses to grow past twice the
// string limit (a string within the limit never needs more), and the
// handlers check each string's exact length.
#ifndef LOCKSTEP_SRC_FORMAT_JSON_BOUNDED_H_
#define LOCKSTEP_SRC_FORMAT_JSON_BOUNDED_H_

#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

#include <cstdlib>
#include <new>
#include <string_view>

#include "lockstep/core/status.h"
#include "lockstep/format/read_budget.h"

namespace lockstep::json_internal {

// Thrown by the stack's allocator; caught by ParseBounded, never beyond.
struct StackLimitReached {};

class BoundedStackAllocator {
 public:
  static const bool kNeedFree = true;
  explicit BoundedStackAllocator(size_t limit = 0) : limit_(limit) {}
  void* Malloc(size_t size) { return Realloc(nullptr, 0, size); }
  void* Realloc(void* p, size_t /*old_size*/, size_t new_size) {
    if (new_size > limit_) throw StackLimitReached{};
    if (new_size == 0) {
      std::free(p);
      return nullptr;
    }
    void* q = std::realloc(p, new_size);
    if (q == nullptr) throw StackLimitReached{};
    return q;
  }
  static void Free(void* p) { std::free(p); }

 private:
  size_t limit_;
};

using BoundedReader =
    rapidjson::GenericReader<rapidjson::UTF8<>, rapidjson::UTF8<>,
                             BoundedStackAllocator>;

// The stack a string of up to `limits.string_bytes` may need.
inline size_t StackLimit(const ReadLimits& limits) {
  uint64_t two = limits.string_bytes > (SIZE_MAX - 4096) / 2
                     ? SIZE_MAX
                     : 2 * limits.string_bytes + 4096;
  return static_cast<size_t>(two);
}

// reader.Parse<kFlags>(stream, handler); a string or number that outgrows
// the stack ends the parse with *too_long set (and an error result).
template <unsigned kFlags, typename Handler>
rapidjson::ParseResult ParseBounded(rapidjson::MemoryStream& stream,
                                    Handler& handler, const ReadLimits& limits,
                                    bool* too_long) {
  BoundedStackAllocator allocator(StackLimit(limits));
  BoundedReader reader(&allocator);
  *too_long = false;
  try {
    return reader.template Parse<kFlags>(stream, handler);
  } catch (const StackLimitReached&) {
    *too_long = true;
    return rapidjson::ParseResult(rapidjson::kParseErrorTermination,
                                  stream.Tell());
  }
}

}  // namespace lockstep::json_internal

#endif  // LOCKSTEP_SRC_FORMAT_JSON_BOUNDED_H_
