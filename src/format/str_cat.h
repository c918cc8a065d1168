// StrCat: joins string pieces into one std::string (messages, paths).
// Private to the format layer. Also sidesteps GCC 12's false -Wrestrict
// warning on `"literal" + std::string(...)` (GCC bug 105329).
#ifndef LOCKSTEP_SRC_FORMAT_STR_CAT_H_
#define LOCKSTEP_SRC_FORMAT_STR_CAT_H_

#include <string>
#include <string_view>

namespace lockstep {

template <typename... Pieces>
std::string StrCat(const Pieces&... pieces) {
  std::string out;
  (out.append(std::string_view(pieces)), ...);
  return out;
}

}  // namespace lockstep

#endif  // LOCKSTEP_SRC_FORMAT_STR_CAT_H_
