// Fuzz target: any bytes given to the .pt reader (ZIP directory, pickle
// machine, tensor spec, strided gather) and to the checkpoint reader (the
// same archive flattened into named tensors and values) must give a result
// or an error Status, never a crash, a sanitizer report or a huge
// allocation.
//
// Seeds: fuzz/corpus/pt_fuzz/, written by tests/data/pt/make_pt.py. The
// *_nocrc.pt seeds record CRC 0 ("not computed"), so that mutated data.pkl
// bytes reach the pickle machine instead of failing the CRC check.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "lockstep/format/checkpoint.h"
#include "lockstep/format/pt_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  lockstep::PtReadOptions options;
  options.verify_crc = true;
  options.max_expanded_bytes = 1 << 20;
  options.max_inflated_bytes = 1 << 24;
  // The file's budget (read_budget.h), small enough that a mutated memo
  // reference, view or deflate stream reaches it.
  options.limits.expanded_base = 1 << 22;
  options.limits.expanded_per_file_byte = 4;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto tensor = lockstep::ReadPtTensorFromBuffer(bytes, "fuzz.pt", options);
  if (tensor.ok()) {
    // Touch every byte, so that a wrong size shows up under ASan.
    volatile unsigned sum = 0;
    for (size_t i = 0; i < tensor->nbytes(); ++i) {
      sum = sum + static_cast<unsigned>(tensor->data()[i]);
    }
  }
  // A checkpoint holds one tensor per pickled call: each may expand its
  // storage, so the limit per tensor is smaller here.
  options.max_expanded_bytes = 1 << 12;
  auto checkpoint =
      lockstep::ReadTorchCheckpoint(bytes, nullptr, "fuzz.pt", options);
  if (checkpoint.ok()) {
    volatile unsigned sum = 0;
    for (const auto& e : checkpoint->entries) {
      if (!e.is_tensor) continue;  // a value: its tensor is empty
      for (size_t i = 0; i < e.tensor.nbytes(); ++i)
        sum = sum + static_cast<unsigned>(e.tensor.data()[i]);
    }
  }
  return 0;
}
