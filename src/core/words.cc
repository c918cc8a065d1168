#include "lockstep/core/words.h"

#include <algorithm>

namespace lockstep {

std::string ClosestWord(const std::string& word,
                        const std::vector<std::string>& known) {
  std::string best;
  size_t best_d = std::max<size_t>(1, word.size() / 3) + 1;
  for (const std::string& k : known) {
    // Optimal string alignment distance, three rows.
    size_t n = word.size(), m = k.size();
    std::vector<size_t> prev2(m + 1), prev(m + 1), cur(m + 1);
    for (size_t j = 0; j <= m; ++j) prev[j] = j;
    for (size_t i = 1; i <= n; ++i) {
      cur[0] = i;
      for (size_t j = 1; j <= m; ++j) {
        size_t cost = word[i - 1] == k[j - 1] ? 0 : 1;
        cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
        if (i > 1 && j > 1 && word[i - 1] == k[j - 2] &&
            word[i - 2] == k[j - 1])
          cur[j] = std::min(cur[j], prev2[j - 2] + 1);
      }
      prev2.swap(prev);
      prev.swap(cur);
    }
    if (prev[m] < best_d) {
      best_d = prev[m];
      best = k;
    }
  }
  return best;
}

}  // namespace lockstep
