#include "tests/chaos/chaos_support.h"

#include <grpcpp/create_channel.h>

#include <algorithm>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "grpc/health/v1/health.grpc.pb.h"

namespace accelopt::chaos {
namespace {

using namespace std::chrono_literals;

bool Finished(const v1::Job& job) {
  return job.state() == v1::JOB_STATE_SUCCEEDED || job.state() == v1::JOB_STATE_FAILED ||
         job.state() == v1::JOB_STATE_CANCELLED;
}

bool Profiled(const v1::Candidate& c) {
  const v1::Verdict v = c.result().verdict();
  return v != v1::VERDICT_NO_KERNEL && v != v1::VERDICT_DUPLICATE && v != v1::VERDICT_CANCELLED &&
         v != v1::VERDICT_UNSPECIFIED;
}

absl::Mutex table_mu;
std::vector<FaultRow>& Rows() ABSL_EXCLUSIVE_LOCKS_REQUIRED(table_mu) {
  static auto* rows = new std::vector<FaultRow>();
  return *rows;
}

}  // namespace

v1::JobSpec RopeSpec(int iterations) {
  v1::JobSpec spec = e2e::ExampleJobSpec("rope", "chaos-rope", 7, "builtin");
  spec.mutable_search()->set_iterations(iterations);
  return spec;
}

absl::StatusOr<Outcome> RunJob(e2e::E2eCluster& c, const v1::JobSpec& spec, std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  grpc::Status last;
  while (std::chrono::steady_clock::now() < deadline) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 10s);
    v1::SubmitJobRequest request;
    *request.mutable_spec() = spec;
    v1::SubmitJobResponse response;
    last = c.jobs().SubmitJob(&context, request, &response);
    if (last.ok()) return WaitForOutcome(c, response.job().job_id(), timeout);
    if (last.error_code() != grpc::StatusCode::UNAVAILABLE) break;
    std::this_thread::sleep_for(100ms);
  }
  return absl::UnavailableError(absl::StrCat("submit failed: ", last.error_message()));
}

absl::StatusOr<Outcome> WaitForOutcome(e2e::E2eCluster& c, const std::string& job_id, std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  v1::Job job;
  while (true) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 5s);
    v1::GetJobRequest request;
    request.set_job_id(job_id);
    if (c.jobs().GetJob(&context, request, &job).ok() && Finished(job)) break;
    if (std::chrono::steady_clock::now() > deadline) {
      return absl::DeadlineExceededError(absl::StrCat("job ", job_id, " did not finish: ", job.ShortDebugString()));
    }
    std::this_thread::sleep_for(100ms);
  }
  Outcome out;
  out.job_id = job_id;
  out.state = job.state();
  out.stop_reason = job.stop_reason();
  out.message = job.message();
  out.candidates = {job.candidates().begin(), job.candidates().end()};
  out.profiles_run = job.stats().profiles_run();
  out.experiences_added = job.experiences_added();
  grpc::ClientContext context;
  v1::ListCandidatesRequest request;
  request.set_job_id(job_id);
  v1::ListCandidatesResponse response;
  grpc::Status s = c.jobs().ListCandidates(&context, request, &response);
  if (!s.ok()) return absl::UnavailableError(absl::StrCat("list candidates: ", s.error_message()));
  for (const v1::Candidate& cand : response.candidates()) {
    if (Profiled(cand)) ++out.distinct_profiled;
    if (cand.candidate_id() == job.best_candidate_id()) out.best_source = cand.kernel().source();
  }
  return out;
}

std::vector<std::string> Differences(const Outcome& reference, const Outcome& faulted) {
  std::vector<std::string> lost;
  if (faulted.state != reference.state) {
    lost.push_back(absl::StrCat("state ", v1::JobState_Name(faulted.state), " (", faulted.message, ")"));
  }
  if (faulted.best_source != reference.best_source) lost.push_back("a different best kernel");
  if (faulted.candidates != reference.candidates) lost.push_back("different candidate counts");
  if (faulted.profiles_run != faulted.distinct_profiled) {
    lost.push_back(absl::StrCat(faulted.profiles_run, " profiles for ", faulted.distinct_profiled, " candidates"));
  }
  if (faulted.experiences_added != reference.experiences_added) {
    lost.push_back(
        absl::StrCat(faulted.experiences_added, " experiences stored, ", reference.experiences_added, " expected"));
  }
  return lost;
}

std::string Health(const std::string& address) {
  auto stub = grpc::health::v1::Health::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + 2s);
  grpc::health::v1::HealthCheckResponse response;
  grpc::Status s = stub->Check(&context, grpc::health::v1::HealthCheckRequest(), &response);
  if (!s.ok()) return absl::StrCat("rpc error: ", s.error_message());
  return grpc::health::v1::HealthCheckResponse::ServingStatus_Name(response.status());
}

bool WaitForHealth(const std::string& address, const std::string& want, std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (Health(address) == want) return true;
    std::this_thread::sleep_for(100ms);
  }
  return false;
}

void Record(FaultRow row) {
  absl::MutexLock lock(&table_mu);
  Rows().push_back(std::move(row));
}

std::string Table() {
  absl::MutexLock lock(&table_mu);
  std::string out = "| fault | injected | survived | result |\n|---|---|---|---|\n";
  for (const FaultRow& r : Rows()) {
    const bool survived = r.result == "identical" || r.result.rfind("failed:", 0) == 0;
    absl::StrAppend(&out, "| ", r.fault, " | ", r.injected, " | ", survived ? "yes" : "no", " | ", r.result, " |\n");
  }
  return out;
}

}  // namespace accelopt::chaos
