#include "lockstep/torch/tensor_bridge.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstring>

namespace lockstep {
namespace {

TEST(TensorBridgeTest, DTypesRoundTrip) {
  for (DType t : {DType::kBool, DType::kUInt8, DType::kInt8, DType::kInt16,
                  DType::kInt32, DType::kInt64, DType::kFloat16,
                  DType::kBFloat16, DType::kFloat32, DType::kFloat64}) {
    ASSERT_EQ(FromScalarType(ToScalarType(t)), t) << TorchDTypeName(t);
  }
  EXPECT_FALSE(FromScalarType(c10::ScalarType::ComplexFloat).has_value());
}

TEST(TensorBridgeTest, ContiguousCpuTensorIsShared) {
  at::Tensor t = at::arange(12, at::kFloat).reshape({3, 4});
  StatusOr<Tensor> host = ToHostTensor(t);
  ASSERT_TRUE(host.ok()) << host.status().ToString();
  EXPECT_EQ(host->dtype(), DType::kFloat32);
  EXPECT_EQ(host->shape(), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(static_cast<const void*>(host->data()), t.data_ptr());
}

TEST(TensorBridgeTest, StridedTensorIsCopiedInCOrder) {
  at::Tensor t = at::arange(6, at::kDouble).reshape({2, 3}).t();  // 3x2
  StatusOr<Tensor> host = ToHostTensor(t);
  ASSERT_TRUE(host.ok());
  ASSERT_EQ(host->shape(), (std::vector<int64_t>{3, 2}));
  const double* d = host->data_as<double>();
  EXPECT_EQ(std::vector<double>(d, d + 6),
            (std::vector<double>{0, 3, 1, 4, 2, 5}));
}

TEST(TensorBridgeTest, HostTensorOutlivesTheTorchTensor) {
  StatusOr<Tensor> host = [] {
    at::Tensor t = at::full({1000}, 2.5, at::kBFloat16);
    return ToHostTensor(t);
  }();
  ASSERT_TRUE(host.ok());
  EXPECT_EQ(host->dtype(), DType::kBFloat16);
  uint16_t bits;
  std::memcpy(&bits, host->data() + 999 * 2, 2);
  EXPECT_EQ(bits, 0x4020);  // bf16 2.5
}

TEST(TensorBridgeTest, RejectsWhatItCannotStore) {
  EXPECT_FALSE(ToHostTensor(at::Tensor()).ok());
  StatusOr<Tensor> c = ToHostTensor(at::zeros({2}, at::kComplexFloat));
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("ComplexFloat"), std::string::npos);
}

TEST(TensorBridgeTest, ToTorchTensorCopies) {
  at::Tensor src = at::randn({4, 5});
  StatusOr<Tensor> host = ToHostTensor(src);
  ASSERT_TRUE(host.ok());
  at::Tensor back = ToTorchTensor(*host);
  EXPECT_TRUE(at::equal(back, src));
  EXPECT_NE(back.data_ptr(), src.data_ptr());
}

}  // namespace
}  // namespace lockstep
