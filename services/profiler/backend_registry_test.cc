#include "services/profiler/backend_registry.h"

#include <gtest/gtest.h>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_replace.h"

namespace accelopt::profiler {
namespace {

TEST(BackendRegistryTest, BuiltinNamesParseToTheirDevicesAndBack) {
  const BackendRegistry& registry = BuiltinBackends();
  EXPECT_EQ(registry.Names(), (std::vector<std::string>{"sim-trn1", "sim-trn2", "neuron"}));
  for (const std::string& name : registry.Names()) {
    auto device = registry.ParseDevice(name);
    ASSERT_TRUE(device.ok()) << device.status();
    EXPECT_EQ(registry.Name(*device), name);
  }
  EXPECT_EQ(*registry.ParseDevice("sim-trn2"), v1::DEVICE_SIM_TRN2);
}

// Config files spell devices in the friendly enum form (libs/config: "sim-trn1" is DEVICE_SIM_TRN1), so
// each backend's name must be that form of its Device value.
TEST(BackendRegistryTest, NamesAreTheFriendlyFormOfTheirDeviceValue) {
  for (const std::string& name : BuiltinBackends().Names()) {
    v1::Device device = *BuiltinBackends().ParseDevice(name);
    EXPECT_EQ(v1::Device_Name(device), "DEVICE_" + absl::AsciiStrToUpper(absl::StrReplaceAll(name, {{"-", "_"}})));
  }
}

TEST(BackendRegistryTest, UnknownNameListsTheKnownOnes) {
  auto device = BuiltinBackends().ParseDevice("gpu");
  EXPECT_EQ(device.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(device.status().message(), "unknown device 'gpu' (one of sim-trn1, sim-trn2, neuron)");
  EXPECT_EQ(BuiltinBackends().Name(v1::DEVICE_UNSPECIFIED), "unknown device 0");
}

TEST(BackendRegistryTest, EachBuiltinBackendIsCreatedForItsDevice) {
  for (const std::string& name : BuiltinBackends().Names()) {
    v1::Device device = *BuiltinBackends().ParseDevice(name);
    auto backend = BuiltinBackends().Create(device, v1::ProfilerConfig());
    ASSERT_TRUE(backend.ok()) << backend.status();
    EXPECT_EQ((*backend)->device(), device);
    EXPECT_EQ((*backend)->name(), name);
    EXPECT_TRUE(absl::StartsWith((*backend)->version(), name)) << (*backend)->version();
  }
}

TEST(BackendRegistryTest, SimulatorVersionsNameTheirDevice) {
  auto trn2 = BuiltinBackends().Create(v1::DEVICE_SIM_TRN2, v1::ProfilerConfig());
  ASSERT_TRUE(trn2.ok()) << trn2.status();
  EXPECT_EQ((*trn2)->version(), "sim-trn2 simulator, timing model v1");
}

TEST(BackendRegistryTest, CreatingAnUnregisteredDeviceIsNotFound) {
  BackendRegistry empty;
  auto backend = empty.Create(v1::DEVICE_SIM_TRN1, v1::ProfilerConfig());
  EXPECT_EQ(backend.status().code(), absl::StatusCode::kNotFound);
}

TEST(BackendRegistryTest, RefusesTakenDevicesAndNames) {
  BackendRegistry registry = BuiltinBackends();
  auto create = [](const v1::ProfilerConfig&) -> absl::StatusOr<std::unique_ptr<DeviceBackend>> {
    return absl::UnimplementedError("not needed");
  };
  EXPECT_EQ(registry.Register({v1::DEVICE_SIM_TRN1, "other", create}).code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(registry.Register({static_cast<v1::Device>(100), "neuron", create}).code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(registry.Register({v1::DEVICE_UNSPECIFIED, "none", create}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(registry.Register({static_cast<v1::Device>(100), "", create}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(registry.Register({static_cast<v1::Device>(100), "no-factory", nullptr}).code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace accelopt::profiler
