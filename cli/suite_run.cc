#include "cli/suite_run.h"

#include <chrono>
#include <filesystem>
#include <map>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli/job_commands.h"
#include "cli/json_output.h"
#include "cli/suite_results.h"
#include "libs/core/file.h"
#include "libs/core/status_convert.h"

namespace accelopt::cli {
namespace {

namespace fs = std::filesystem;

bool Finished(v1::JobState s) {
  return s == v1::JOB_STATE_SUCCEEDED || s == v1::JOB_STATE_FAILED || s == v1::JOB_STATE_CANCELLED;
}

absl::StatusOr<std::map<std::string, std::string>> LoadState(const std::string& path) {
  std::map<std::string, std::string> jobs;
  if (!fs::exists(path)) return jobs;
  auto text = core::ReadFile(path);
  if (!text.ok()) return text.status();
  try {
    const nlohmann::json state = nlohmann::json::parse(*text);
    for (const auto& [problem, id] : state.at("jobs").items()) jobs[problem] = id.get<std::string>();
  } catch (const nlohmann::json::exception& e) {
    return absl::DataLossError(absl::StrCat(path, ": not a suite state file: ", e.what()));
  }
  return jobs;
}

absl::Status SaveState(const std::string& path, const std::string& suite,
                       const std::map<std::string, std::string>& jobs) {
  nlohmann::json state = {{"suite", suite}, {"jobs", nlohmann::json::object()}};
  for (const auto& [problem, id] : jobs) state["jobs"][problem] = id;
  return core::WriteFileAtomic(path, JsonText(state, /*pretty=*/true) + "\n");
}

absl::StatusOr<v1::Job> GetJob(v1::JobService::Stub& stub, const std::string& id) {
  grpc::ClientContext context;
  SetJobDeadline(&context);
  v1::GetJobRequest request;
  request.set_job_id(id);
  v1::Job job;
  if (grpc::Status s = stub.GetJob(&context, request, &job); !s.ok()) return core::FromGrpcStatus(s);
  return job;
}

std::string Outcome(const SuiteRow& r) {
  std::string line = absl::StrFormat("%s: %s", r.problem, r.state);
  if (r.speedup > 0) absl::StrAppendFormat(&line, ", speedup %.3fx", r.speedup);
  if (r.peak_before && r.peak_after)
    absl::StrAppendFormat(&line, ", %.1f%% -> %.1f%% of peak", *r.peak_before, *r.peak_after);
  return line;
}

}  // namespace

absl::Status RunSuite(const Suite& suite, const std::string& out_dir, v1::JobService::Stub& stub, std::ostream& log,
                      double poll_seconds) {
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) return absl::FailedPreconditionError(absl::StrCat("cannot create ", out_dir, ": ", ec.message()));
  const std::string state_path = (fs::path(out_dir) / "state.json").string();
  auto jobs = LoadState(state_path);
  if (!jobs.ok()) return jobs.status();
  if (!jobs->empty())
    log << "resuming: " << jobs->size() << " of " << suite.problems.size() << " jobs submitted" << std::endl;
  const std::string absolute_out = fs::absolute(out_dir).lexically_normal().string();

  std::map<std::string, SuiteRow> done;
  size_t next = 0;
  while (done.size() < suite.problems.size()) {
    // Follow what is in flight; then fill the free slots in suite order.
    int in_flight = 0;
    for (const SuiteProblem& p : suite.problems) {
      auto it = jobs->find(p.name);
      if (it == jobs->end() || done.count(p.name)) continue;
      auto job = GetJob(stub, it->second);
      if (job.status().code() == absl::StatusCode::kNotFound) {
        return absl::NotFoundError(
            absl::StrCat(p.name, ": job ", it->second, ", recorded in ", state_path,
                         ", is not on this cluster (or not visible to this caller); resume with the cluster "
                         "that ran it, or give a new --out directory to run the suite here"));
      }
      if (!job.ok())
        return absl::Status(job.status().code(),
                            absl::StrCat(p.name, " (job ", it->second, "): ", job.status().message()));
      if (Finished(job->state())) {
        done[p.name] = RowFromJob(p.name, *job);
        log << absl::StrFormat("[%d/%d] ", done.size(), suite.problems.size()) << Outcome(done[p.name]) << std::endl;
      } else {
        ++in_flight;
      }
    }
    for (; next < suite.problems.size() && in_flight < suite.concurrency; ++next) {
      const SuiteProblem& p = suite.problems[next];
      if (jobs->count(p.name)) continue;
      grpc::ClientContext context;
      SetJobDeadline(&context);
      v1::SubmitJobRequest request;
      *request.mutable_spec() = p.spec;
      request.set_idempotency_key(absl::StrCat("suite/", suite.name, "/", p.name, "/", absolute_out));
      v1::SubmitJobResponse response;
      if (grpc::Status s = stub.SubmitJob(&context, request, &response); !s.ok()) {
        return absl::Status(core::FromGrpcStatus(s).code(),
                            absl::StrCat(p.name, ": submit failed: ", s.error_message()));
      }
      (*jobs)[p.name] = response.job().job_id();
      if (absl::Status s = SaveState(state_path, suite.name, *jobs); !s.ok()) return s;
      log << "submitted " << p.name << " as job " << response.job().job_id() << std::endl;
      ++in_flight;
    }
    if (done.size() < suite.problems.size()) {
      std::this_thread::sleep_for(std::chrono::duration<double>(poll_seconds));
    }
  }
  std::vector<SuiteRow> rows;
  for (const SuiteProblem& p : suite.problems) rows.push_back(done[p.name]);
  struct Output {
    const char* name;
    std::string contents;
  };
  for (const Output& f : {Output{"results.md", SuiteMarkdown(suite.name, rows)},
                          Output{"results.json", JsonText(SuiteJson(suite.name, rows), /*pretty=*/true) + "\n"},
                          Output{"report.html", SuiteHtml(suite.name, rows)}}) {
    if (absl::Status s = core::WriteFileAtomic((fs::path(out_dir) / f.name).string(), f.contents); !s.ok()) return s;
  }
  std::vector<std::string> unsuccessful;
  for (const SuiteRow& r : rows) {
    if (r.state != "SUCCEEDED") unsuccessful.push_back(absl::StrCat(r.problem, " ", r.state));
  }
  if (!unsuccessful.empty()) {
    return absl::AbortedError(absl::StrCat(unsuccessful.size(), " of ", rows.size(), " problems did not succeed (",
                                           absl::StrJoin(unsuccessful, ", "), "); results written to ", out_dir));
  }
  return absl::OkStatus();
}

}  // namespace accelopt::cli
