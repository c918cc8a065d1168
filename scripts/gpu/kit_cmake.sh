# Sourced by gpu_check.sh and gpu_cost.sh: configures a lockstep build with
# the kit's unpacked Debian packages (deps/, beside this file) and a given
# Torch_DIR; CUDA for an sm_90 GPU (H100, H200) where nvcc is found.
#   kit_configure SOURCE_DIR BUILD_DIR TORCH_DIR PYTHON
kit_configure() {
  local deps lib
  deps=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/deps
  lib=$deps/usr/lib/x86_64-linux-gnu
  local cuda=()
  if command -v nvcc > /dev/null; then
    cuda=(-DCMAKE_CUDA_COMPILER="$(command -v nvcc)" -DLOCKSTEP_CUDA_ARCHITECTURES=90-real)
  fi
  TORCH_CUDA_ARCH_LIST=9.0 cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DLOCKSTEP_BUILD_TESTS=OFF -DLOCKSTEP_BUILD_BENCH=OFF -DLOCKSTEP_WITH_MPI=OFF \
    -DLOCKSTEP_PYTHON="$4" \
    -DRapidJSON_DIR="$deps/usr/share/cmake/RapidJSON" \
    -DZLIB_INCLUDE_DIR="$deps/usr/include" -DZLIB_LIBRARY="$lib/libz.so" \
    -DMPFR_INCLUDE_DIR="$deps/usr/include" -DMPFR_LIBRARY="$lib/libmpfr.so" \
    -DGMP_LIBRARY="$lib/libgmp.so" \
    -DCMAKE_CXX_FLAGS="-isystem $deps/usr/include/x86_64-linux-gnu" \
    -DTorch_DIR="$3" -DCaffe2_DIR="$3/../Caffe2" "${cuda[@]}"
}
