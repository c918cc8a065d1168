// Fuzz target: any bytes given to the safetensors reader (header length,
// JSON header, dtypes, shapes, offsets) must give tensors that lie inside
// the input, or an error Status: never a crash, a sanitizer report or a
// huge allocation.
//
// Seeds: fuzz/corpus/safetensors_fuzz/, written by
// tests/data/checkpoint/make_safetensors_seeds.py.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "fuzz_check.h"
#include "lockstep/format/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  // A no-op owner: tensors view the input where they can, as they view a
  // mapped file.
  std::shared_ptr<const void> owner(data, [](const void*) {});
  auto c = lockstep::ReadSafetensors(bytes, owner, "fuzz.safetensors");
  if (!c.ok()) return 0;
  const std::byte* begin = reinterpret_cast<const std::byte*>(data);
  for (const lockstep::CheckpointEntry& e : c->entries) {
    const lockstep::Tensor& t = e.tensor;
    lockstep::fuzz::Require(e.is_tensor && t.numel() >= 0);
    // A view into the input lies wholly inside it.
    if (t.data() >= begin && t.data() < begin + size)
      lockstep::fuzz::Require(t.data() + t.nbytes() <= begin + size);
    volatile uint64_t sum =
        lockstep::fuzz::Checksum(t);  // ASan sees a bad size
    (void)sum;
  }
  return 0;
}
