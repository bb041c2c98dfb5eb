// Adding a backend takes one class and one registration: a test-only `fake-device` backend, registered in a
// copy of the builtin registry, profiles through KernelProfiler and through the gRPC ProfilerService with its
// own runner, arguments, environment, measurement and version string.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <memory>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "libs/core/file.h"
#include "services/profiler/backend_registry.h"
#include "services/profiler/kernel_profiler.h"
#include "services/profiler/profiler_service.h"

namespace accelopt::profiler {
namespace {

// Proto3 enums are open: a device number no builtin backend uses.
constexpr v1::Device kFakeDevice = static_cast<v1::Device>(100);
constexpr int kCyclesPerSeed = 1000;
constexpr double kCyclesPerMs = 1e6;  // a 1 GHz clock
constexpr int kSeeds = 3;

// The run reports how many cycles it took (run_fake_device.py); the latency is those cycles at 1 GHz.
class FakeDeviceBackend final : public DeviceBackend {
 public:
  v1::Device device() const override { return kFakeDevice; }
  std::string name() const override { return "fake-device"; }
  std::string version() const override { return "fake-device: cycles at 1 GHz"; }
  absl::Status CheckReady() const override { return absl::OkStatus(); }

  BackendRunner Runner(const RunPaths& paths) const override {
    BackendRunner run;
    run.runner = "run_fake_device.py";
    run.args = {"--cycles-out", paths.work + "/cycles.txt"};
    run.env = {{"FAKE_DEVICE_CYCLES_PER_SEED", absl::StrCat(kCyclesPerSeed)}};
    return run;
  }

  absl::Status Measure(const MeasureInput& input, v1::ProfileResult* result) const override {
    auto text = core::ReadFile(input.scratch + "/cycles.txt");
    double cycles = 0;
    if (!text.ok() || !absl::SimpleAtod(*text, &cycles)) return absl::InternalError("fake-device: no cycle count");
    auto* latency = result->mutable_latency();
    latency->set_mean_ms(cycles / kCyclesPerMs);
    latency->set_min_ms(cycles / kCyclesPerMs);
    latency->set_max_ms(cycles / kCyclesPerMs);
    latency->set_runs(1);
    return absl::OkStatus();
  }
};

BackendRegistry RegistryWithFakeDevice() {
  BackendRegistry registry = BuiltinBackends();
  absl::Status s = registry.Register(
      {kFakeDevice, "fake-device", [](const v1::ProfilerConfig&) -> absl::StatusOr<std::unique_ptr<DeviceBackend>> {
         return std::make_unique<FakeDeviceBackend>();
       }});
  EXPECT_TRUE(s.ok()) << s;
  return registry;
}

std::unique_ptr<KernelProfiler> FakeDeviceProfiler() {
  auto backend = RegistryWithFakeDevice().Create(kFakeDevice, v1::ProfilerConfig());
  EXPECT_TRUE(backend.ok()) << backend.status();
  KernelProfilerOptions options;
  options.harness_dir = ACCELOPT_SOURCE_DIR "/services/profiler/testdata/fake_harness";
  options.worker_name = "fake-worker";
  return std::make_unique<KernelProfiler>(options, *std::move(backend));
}

v1::ProfileRequest Request(v1::Device device) {
  v1::ProfileRequest request;
  request.mutable_kernel()->set_source("def kernel(): pass\n");
  request.mutable_problem()->set_reference_source("def get_inputs(): return []\n");
  request.mutable_options()->set_seeds(kSeeds);
  request.set_device(device);
  return request;
}

TEST(FakeDeviceBackendTest, TheRegistryKnowsItsName) {
  BackendRegistry registry = RegistryWithFakeDevice();
  EXPECT_EQ(*registry.ParseDevice("fake-device"), kFakeDevice);
  EXPECT_EQ(registry.Name(kFakeDevice), "fake-device");
  EXPECT_EQ(registry.Names().back(), "fake-device");
  // The builtin registry is left as it was.
  EXPECT_FALSE(BuiltinBackends().ParseDevice("fake-device").ok());
}

TEST(FakeDeviceBackendTest, ProfilesThroughKernelProfiler) {
  auto profiler = FakeDeviceProfiler();
  ASSERT_TRUE(profiler->CheckReady().ok()) << profiler->CheckReady();
  v1::ProfileRequest request = Request(kFakeDevice);
  v1::ProfileResult r = profiler->Profile(request.kernel(), request.problem(), request.options(), 0, nullptr);
  ASSERT_EQ(v1::Verdict_Name(r.verdict()), "VERDICT_OK") << r.message();
  // The runner saw the backend's --cycles-out and environment; Measure read what it wrote.
  EXPECT_DOUBLE_EQ(r.latency().mean_ms(), kSeeds * kCyclesPerSeed / kCyclesPerMs);
  EXPECT_EQ(r.seeds_checked(), kSeeds);
  EXPECT_EQ(r.device(), kFakeDevice);
  EXPECT_EQ(r.backend_version(), "fake-device: cycles at 1 GHz");
  EXPECT_EQ(r.worker(), "fake-worker");
}

TEST(FakeDeviceBackendTest, ProfilesThroughProfilerService) {
  auto profiler = FakeDeviceProfiler();
  prometheus::Registry metrics;
  ProfilerServiceImpl service(profiler.get(), /*slots=*/1, /*queue_limit=*/4, ProfilerMetrics::Create(metrics));
  grpc::ServerBuilder builder;
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  auto stub = v1::ProfilerService::NewStub(server->InProcessChannel({}));

  grpc::ClientContext status_ctx;
  v1::WorkerStatus status;
  ASSERT_TRUE(stub->GetWorkerStatus(&status_ctx, v1::GetWorkerStatusRequest(), &status).ok());
  EXPECT_EQ(status.device(), kFakeDevice);
  EXPECT_EQ(status.backend_version(), "fake-device: cycles at 1 GHz");

  grpc::ClientContext profile_ctx;
  v1::ProfileResponse response;
  grpc::Status s = stub->Profile(&profile_ctx, Request(kFakeDevice), &response);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(v1::Verdict_Name(response.result().verdict()), "VERDICT_OK") << response.result().message();
  EXPECT_DOUBLE_EQ(response.result().latency().mean_ms(), kSeeds * kCyclesPerSeed / kCyclesPerMs);

  grpc::ClientContext wrong_ctx;
  s = stub->Profile(&wrong_ctx, Request(v1::DEVICE_SIM_TRN1), &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(), "device: this worker serves fake-device, not sim-trn1");
  server->Shutdown();
}

// The busy gauge counts running profiles only: once every profile has finished it reads 0 again.
TEST(FakeDeviceBackendTest, BusySlotsGaugeReturnsToZeroAfterAProfile) {
  auto profiler = FakeDeviceProfiler();
  prometheus::Registry metrics;
  ProfilerMetrics gauges = ProfilerMetrics::Create(metrics);
  {
    ProfilerServiceImpl service(profiler.get(), /*slots=*/1, /*queue_limit=*/4, gauges);
    grpc::ServerBuilder builder;
    builder.RegisterService(&service);
    std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
    auto stub = v1::ProfilerService::NewStub(server->InProcessChannel({}));
    grpc::ClientContext ctx;
    v1::ProfileResponse response;
    grpc::Status s = stub->Profile(&ctx, Request(kFakeDevice), &response);
    ASSERT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(gauges.slots.Value(), 1);
    server->Shutdown();
  }  // the service's destructor waits for its slot to be freed
  EXPECT_EQ(gauges.slots_busy.Value(), 0);
  EXPECT_EQ(gauges.queue_depth.Value(), 0);
}

}  // namespace
}  // namespace accelopt::profiler
