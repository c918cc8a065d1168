// msprobe's renumber_index_pass (postprocess_pass.py) for `-lm`: pipeline
// parallelism numbers a MindSpore model's layers globally (layers.4,
// layers.5 on the second stage) and a PyTorch one's locally (layers.0,
// layers.1), so the layers below each dumped ParallelTransformer are
// renumbered from 0 on both sides.
//
// Numbers are Python ints there: kept here as decimal digits, so that no
// number is too long; a difference may be negative where an earlier prefix
// rewrote a scope (as in msprobe), and a part without digits under a
// prefix where no part has any becomes "nan" (msprobe's inf - inf).
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "layer_scope.h"

namespace lockstep::layer_detail {
namespace {

using Sv = std::string_view;

bool IsAsciiDigit(char c) { return c >= '0' && c <= '9'; }

bool IsRegexSpace(char c) {  // Python's \s, for ASCII bytes
  return c == ' ' || (c >= '\t' && c <= '\r') || (c >= '\x1c' && c <= '\x1f');
}

// The part of `scope` right after `prefix.`, as the pattern
// ^prefix\.(\S+?)(?:\.|$) finds it; nullopt when it does not match.
std::optional<Sv> NextPart(Sv scope, Sv prefix) {
  if (scope.size() <= prefix.size() || !scope.starts_with(prefix) ||
      scope[prefix.size()] != '.')
    return std::nullopt;
  Sv rest = scope.substr(prefix.size() + 1);
  for (size_t k = 1; k <= rest.size(); ++k) {
    if (IsRegexSpace(rest[k - 1])) return std::nullopt;
    if (k == rest.size() || rest[k] == '.' ||
        (rest[k] == '\n' && k + 1 == rest.size()))
      return rest.substr(0, k);
  }
  return std::nullopt;
}

// The last run of digits in `part` without leading zeros ("layers4_07" ->
// "7"); nullopt (msprobe's inf) when it has none.
std::optional<std::string> LastNumber(Sv part) {
  size_t end = part.size();
  while (end > 0 && !IsAsciiDigit(part[end - 1])) --end;
  if (end == 0) return std::nullopt;
  size_t begin = end;
  while (begin > 0 && IsAsciiDigit(part[begin - 1])) --begin;
  while (begin + 1 < end && part[begin] == '0') ++begin;
  return std::string(part.substr(begin, end - begin));
}

// a < b for numbers without leading zeros.
bool Less(const std::string& a, const std::string& b) {
  return a.size() != b.size() ? a.size() < b.size() : a < b;
}

// a - b for numbers without leading zeros, a >= b.
std::string Minus(const std::string& a, const std::string& b) {
  std::string out(a.size(), '0');
  int borrow = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    int d = a[a.size() - 1 - i] - '0' - borrow;
    if (i < b.size()) d -= b[b.size() - 1 - i] - '0';
    borrow = d < 0;
    out[a.size() - 1 - i] = static_cast<char>('0' + d + 10 * borrow);
  }
  size_t zeros = out.find_first_not_of('0');
  return zeros == std::string::npos ? "0" : out.substr(zeros);
}

// The number of `scope`'s part after `prefix.` (nullopt: msprobe's inf).
std::optional<std::string> NumberAfter(Sv scope, Sv prefix) {
  std::optional<Sv> part = NextPart(scope, prefix);
  return part ? LastNumber(*part) : std::nullopt;
}

// Rewrites `*scope`'s part after `prefix.` as its number less `least`.
void Rewrite(const std::string& prefix, const std::optional<std::string>& least,
             std::string* scope) {
  std::optional<Sv> part = NextPart(*scope, prefix);
  if (!part) return;
  std::optional<std::string> n = LastNumber(*part);
  std::string index;
  if (n && least) {
    index = Less(*n, *least) ? "-" + Minus(*least, *n) : Minus(*n, *least);
  } else if (!n && !least) {
    index = "nan";  // inf - inf
  } else {
    return;  // +-inf: left as it is
  }
  size_t tail = prefix.size() + 1 + part->size();
  *scope = prefix + "." + index + scope->substr(tail);
}

}  // namespace

void RenumberParallelLayers(std::vector<LayerItem>* items) {
  // Each prefix (first occurrence order) and the least number after it,
  // over the scopes as they are before any rewrite.
  std::vector<std::pair<std::string, std::optional<std::string>>> prefixes;
  for (const LayerItem& item : *items) {
    if (item.type_name != "ParallelTransformer") continue;
    std::string prefix = item.full_scope + ".layers";
    bool seen = false;
    for (const auto& p : prefixes) seen = seen || p.first == prefix;
    if (!seen) prefixes.emplace_back(std::move(prefix), std::nullopt);
  }
  for (auto& [prefix, least] : prefixes) {
    for (const LayerItem& item : *items) {
      std::optional<std::string> n = NumberAfter(item.full_scope, prefix);
      if (n && (!least || Less(*n, *least))) least = std::move(n);
    }
  }
  for (const auto& [prefix, least] : prefixes) {
    for (LayerItem& item : *items) Rewrite(prefix, least, &item.full_scope);
  }
}

}  // namespace lockstep::layer_detail
