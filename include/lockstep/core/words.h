// Suggestions for a misspelled word: "did you mean '--output'?" for an
// option, "'dump_path'?" for a config key.
// Thread safety: pure functions.
#ifndef LOCKSTEP_CORE_WORDS_H_
#define LOCKSTEP_CORE_WORDS_H_

#include <string>
#include <vector>

namespace lockstep {

// The word of `known` closest to `word` by edit distance (insertions,
// deletions, substitutions, adjacent swaps), if it is close enough to be
// what was meant (at most a third of its letters differ); "" otherwise.
std::string ClosestWord(const std::string& word,
                        const std::vector<std::string>& known);

}  // namespace lockstep

#endif  // LOCKSTEP_CORE_WORDS_H_
