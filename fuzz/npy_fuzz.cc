// Fuzzes the .npy reader: no input may crash it or read out of bounds
// (every element of a tensor it returns is read), and what it reads must
// survive EncodeNpy and a re-read unchanged.
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "fuzz_check.h"
#include "lockstep/format/npy.h"

using lockstep::fuzz::Checksum;
using lockstep::fuzz::Require;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // A heap copy of exactly `size` bytes, so that ASan sees any overread,
  // read both zero-copy (with an owner) and copied.
  auto bytes = std::make_shared<const std::string>(
      reinterpret_cast<const char*>(data), size);
  auto viewed = lockstep::ReadNpyFromBuffer(*bytes, "fuzz.npy", bytes);
  auto copied = lockstep::ReadNpyFromBuffer(*bytes, "fuzz.npy");
  Require(viewed.ok() == copied.ok());
  if (!viewed.ok()) return 0;
  uint64_t sum = Checksum(*viewed);
  Require(sum == Checksum(*copied));
  lockstep::NpyWriteOptions opt;
  opt.bfloat16 = lockstep::NpyBFloat16::kDescrBFloat16;
  std::string encoded = lockstep::EncodeNpy(*viewed, opt);
  auto back = lockstep::ReadNpyFromBuffer(encoded, "encoded.npy");
  Require(back.ok() && back->dtype() == viewed->dtype() &&
          back->shape() == viewed->shape());
  Require(Checksum(*back) == sum);
  return 0;
}
