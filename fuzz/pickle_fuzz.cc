// Fuzz target: the pickle machine and the tensor-spec checks on raw pickle
// bytes (no ZIP around them, no CRC in the way). Any input must give an
// object or an error Status; Repr and Describe must terminate on any object
// graph, cycles included.
//
// Seeds: fuzz/corpus/pickle_fuzz/ (data.pkl files that torch 1.13 wrote),
// written by tests/data/pt/make_pt.py.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "lockstep/format/pickle.h"
#include "lockstep/format/pt_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto u = lockstep::Unpickle(bytes, "fuzz.pkl");
  if (!u.ok()) return 0;
  (void)u->root().Repr();
  (void)u->root().Describe();
  auto spec = lockstep::ParsePtTensorSpec(u->root(), "fuzz.pkl");
  (void)spec;
  return 0;
}
