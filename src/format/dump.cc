#include "lockstep/format/dump.h"

namespace lockstep {

std::string TensorDataDir(const DumpFile& dump) {
  if (dump.dir.empty()) return "dump_tensor_data";
  return dump.dir + "/dump_tensor_data";
}

}  // namespace lockstep
