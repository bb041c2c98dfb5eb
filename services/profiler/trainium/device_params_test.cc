#include "services/profiler/trainium/device_params.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/profiler/trainium/embedded_devices.h"

namespace accelopt::trainium {
namespace {

using ::testing::HasSubstr;

TEST(DeviceParamsTest, BuiltinDevicesLoad) {
  absl::StatusOr<DeviceParams> trn1 = BuiltinDeviceParams("trn1");
  ASSERT_TRUE(trn1.ok()) << trn1.status();
  EXPECT_EQ(trn1->name, "trn1");
  EXPECT_DOUBLE_EQ(trn1->pe_clock_hz, 2.8e9);
  EXPECT_DOUBLE_EQ(trn1->psum_banks, 8);
  EXPECT_DOUBLE_EQ(trn1->roofline_peak_bandwidth_bytes_per_s, 410.0 * (1ull << 30));
  EXPECT_DOUBLE_EQ(trn1->roofline_peak_vector_flops, 286.72e9);
  EXPECT_DOUBLE_EQ(trn1->roofline_peak_matmul_flops, 23.75e12);

  absl::StatusOr<DeviceParams> trn2 = BuiltinDeviceParams("trn2");
  ASSERT_TRUE(trn2.ok()) << trn2.status();
  EXPECT_EQ(trn2->name, "trn2");
  EXPECT_DOUBLE_EQ(trn2->pe_clock_hz, 2.4e9);

  EXPECT_EQ(BuiltinDeviceParams("trn9").status().code(), absl::StatusCode::kNotFound);
}

#ifdef ACCELOPT_SOURCE_DIR
TEST(DeviceParamsTest, EmbeddedCopyMatchesSourceFile) {
  absl::StatusOr<DeviceParams> from_file =
      LoadDeviceParamsFile(std::string(ACCELOPT_SOURCE_DIR) + "/services/profiler/trainium/devices/trn1.yaml");
  ASSERT_TRUE(from_file.ok()) << from_file.status();
  absl::StatusOr<DeviceParams> builtin = BuiltinDeviceParams("trn1");
  ASSERT_TRUE(builtin.ok());
  EXPECT_DOUBLE_EQ(from_file->act_overhead_cycles, builtin->act_overhead_cycles);
  EXPECT_DOUBLE_EQ(from_file->dma_fixed_latency_ns, builtin->dma_fixed_latency_ns);
}
#endif

// The embedded trn1 file with `from` replaced by `to`.
std::string EditedTrn1(const std::string& from, const std::string& to) {
  std::string text(*EmbeddedDeviceYaml("trn1"));
  const size_t pos = text.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  if (pos != std::string::npos) text.replace(pos, from.size(), to);
  return text;
}

void ExpectRejected(const std::string& from, const std::string& to, const std::string& what) {
  absl::StatusOr<DeviceParams> params = ParseDeviceParams(EditedTrn1(from, to));
  ASSERT_FALSE(params.ok()) << "accepted " << to;
  EXPECT_EQ(params.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(params.status().message()), HasSubstr(what));
}

TEST(DeviceParamsTest, RejectsBadFiles) {
  ExpectRejected("  pe_clock_hz:", "  pe_clock_hzz:", "unknown constant 'pe_clock_hzz'");
  ExpectRejected("  act_clock_hz: {value: 1.4e9, source: \"[doc] trn1 arch guide engine table (ScalarE)\"}\n", "",
                 "missing constant 'act_clock_hz'");
  ExpectRejected("source: \"[doc] trn1 arch guide engine table (ScalarE)\"", "source: \"arch guide\"",
                 "'act_clock_hz' needs a source");
  ExpectRejected("{value: 1.4e9,", "{value: fast,", "'act_clock_hz': value is not a number");
  ExpectRejected("{value: 1.4e9,", "{value: 1.4e9, unit: Hz,", "unknown key 'unit'");
  ExpectRejected("{value: 1.4e9,", "{value: -1,", "below its minimum");
  ExpectRejected("device: trn1", "device: trn1\nvendor: aws", "unknown key 'vendor'");
  ExpectRejected("constants:", "constants: [", "line");
}

}  // namespace
}  // namespace accelopt::trainium
