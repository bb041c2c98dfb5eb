// ProfileRequest validation: each bad field is an INVALID_ARGUMENT naming it, before any sandbox starts.
#include "services/profiler/profiler_service.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "absl/strings/match.h"
#include "services/profiler/backend_registry.h"

namespace accelopt::profiler {
namespace {

TEST(ProfileRequestTest, OptionsOutsideTheirRangeNameTheField) {
  auto backend = BuiltinBackends().Create(v1::DEVICE_SIM_TRN1, v1::ProfilerConfig());
  ASSERT_TRUE(backend.ok()) << backend.status();
  v1::ProfileRequest request;
  request.mutable_kernel()->set_source("def kernel(): pass\n");
  request.mutable_problem()->set_reference_source("x = 1\n");
  ASSERT_TRUE(ValidateProfileRequest(request, **backend).ok());
  for (double timeout : {std::nan(""), std::numeric_limits<double>::infinity(), -1.0}) {
    request.mutable_options()->set_timeout_seconds(timeout);
    absl::Status s = ValidateProfileRequest(request, **backend);
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << timeout;
    EXPECT_TRUE(absl::StartsWith(s.message(), "options.timeout_seconds:")) << s;
  }
  request.mutable_options()->set_timeout_seconds(0);
  request.mutable_options()->set_seeds(33);
  EXPECT_TRUE(absl::StartsWith(ValidateProfileRequest(request, **backend).message(), "options.seeds:"));
}

}  // namespace
}  // namespace accelopt::profiler
