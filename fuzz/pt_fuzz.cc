// Fuzz target: any bytes given to the .pt reader (ZIP directory, pickle
// machine, tensor spec, strided gather) must give a Tensor or an error
// Status, never a crash, a sanitizer report or a huge allocation.
//
// Seeds: fuzz/corpus/pt_fuzz/, written by tests/data/pt/make_pt.py. The
// *_nocrc.pt seeds record CRC 0 ("not computed"), so that mutated data.pkl
// bytes reach the pickle machine instead of failing the CRC check.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "lockstep/format/pt_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  lockstep::PtReadOptions options;
  options.verify_crc = true;
  options.max_expanded_bytes = 1 << 20;
  options.max_inflated_bytes = 1 << 24;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto tensor = lockstep::ReadPtTensorFromBuffer(bytes, "fuzz.pt", options);
  if (tensor.ok()) {
    // Touch every byte, so that a wrong size shows up under ASan.
    volatile unsigned sum = 0;
    for (size_t i = 0; i < tensor->nbytes(); ++i) {
      sum = sum + static_cast<unsigned>(tensor->data()[i]);
    }
  }
  return 0;
}
