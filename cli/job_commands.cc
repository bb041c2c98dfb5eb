#include "cli/job_commands.h"

#include <grpcpp/create_channel.h>
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <map>
#include <optional>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "accelopt/v1/job_service.grpc.pb.h"
#include "cli/args.h"
#include "cli/client_credentials.h"
#include "cli/job_export.h"
#include "cli/job_json.h"
#include "cli/job_spec_file.h"
#include "cli/json_output.h"
#include "cli/local_cluster.h"
#include "libs/core/enum_name.h"
#include "libs/core/status_convert.h"

namespace accelopt::cli {
namespace {

constexpr char kDefaultAddress[] = "127.0.0.1:50050";
constexpr auto kDeadline = std::chrono::seconds(60);

std::string StateName(v1::JobState s) { return core::ShortEnumName(s); }
std::string ReasonName(v1::StopReason r) { return core::ShortEnumName(r); }
std::string VerdictName(v1::Verdict v) { return core::ShortEnumName(v); }

bool Finished(v1::JobState s) {
  return s == v1::JOB_STATE_SUCCEEDED || s == v1::JOB_STATE_FAILED || s == v1::JOB_STATE_CANCELLED;
}

// The exit code of `submit --wait` and `watch` for a finished job: 0 SUCCEEDED, 1 FAILED, 3 CANCELLED.
int FinishedJobExitCode(const v1::Job& job) {
  switch (job.state()) {
    case v1::JOB_STATE_SUCCEEDED:
      return 0;
    case v1::JOB_STATE_CANCELLED:
      return 3;
    default:
      return 1;
  }
}

constexpr char kFollowExitCodes[] =
    "      Exit codes: 0 the job SUCCEEDED, 1 it FAILED (or the orchestrator could not be followed),\n"
    "      3 it was CANCELLED, 2 bad usage.";

// `args` were checked by ParseJobArgs, so their credentials resolve.
std::unique_ptr<v1::JobService::Stub> Connect(const std::string& address, const Args& args) {
  grpc::ChannelArguments channel_args;
  channel_args.SetMaxReceiveMessageSize(64 << 20);
  auto credentials = ClientCredentials(args, args.Get("data-dir", "./.accelopt"));
  return v1::JobService::NewStub(grpc::CreateCustomChannel(
      address, credentials.ok() ? *credentials : grpc::InsecureChannelCredentials(), channel_args));
}

void SetDeadline(grpc::ClientContext* context) { context->set_deadline(std::chrono::system_clock::now() + kDeadline); }

int RpcFailure(const std::string& address, const grpc::Status& status) {
  if (status.error_code() == grpc::StatusCode::UNAVAILABLE ||
      status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
    return Fail(absl::StrCat("cannot reach the orchestrator at ", address, ": ", status.error_message()));
  }
  return Fail(status.error_message());
}

// Parses the options shared by every job command plus `with_value` / `booleans`, and resolves the address.
absl::StatusOr<Args> ParseJobArgs(const std::vector<std::string>& argv, std::set<std::string> with_value,
                                  const std::set<std::string>& booleans, std::string* address) {
  with_value.insert({"server", "data-dir"});
  with_value.insert(ConnectionOptions().begin(), ConnectionOptions().end());
  auto args = ParseArgs(argv, with_value, booleans);
  if (!args.ok()) return args.status();
  if (auto credentials = ClientCredentials(*args, args->Get("data-dir", "./.accelopt")); !credentials.ok()) {
    return credentials.status();
  }
  auto resolved =
      ClusterServiceAddress(ServerOption(*args), args->Get("data-dir", "./.accelopt"), "orchestrator", kDefaultAddress);
  if (!resolved.ok()) return resolved.status();
  *address = *resolved;
  return args;
}

// Runs `body` after parsing; usage errors exit 2, other errors 1. `positionals` is the exact count wanted.
int WithArgs(const std::vector<std::string>& argv, std::set<std::string> with_value,
             const std::set<std::string>& booleans, size_t positionals, const std::string& what,
             const std::function<int(const Args&, const std::string&)>& body) {
  std::string address;
  auto args = ParseJobArgs(argv, std::move(with_value), booleans, &address);
  if (absl::IsInvalidArgument(args.status())) return UsageError(std::string(args.status().message()));
  if (!args.ok()) return Fail(std::string(args.status().message()));
  if (args->positional.size() < positionals) return UsageError(absl::StrCat("missing ", what));
  if (args->positional.size() > positionals) return UsageError("unexpected argument '" + args->positional.back() + "'");
  return body(*args, address);
}

grpc::Status GetJob(v1::JobService::Stub& stub, const std::string& id, v1::Job* job) {
  grpc::ClientContext context;
  SetDeadline(&context);
  v1::GetJobRequest request;
  request.set_job_id(id);
  return stub.GetJob(&context, request, job);
}

std::string Percent(bool has, double value) { return has ? absl::StrFormat("%.1f%%", value) : "-"; }

void PrintJobHuman(const v1::Job& job, std::ostream& out) {
  out << absl::StrFormat("job %s%s: %s", job.job_id(), job.spec().name().empty() ? "" : " (" + job.spec().name() + ")",
                         StateName(job.state()));
  if (job.stop_reason() != v1::STOP_REASON_UNSPECIFIED) out << " (" << ReasonName(job.stop_reason()) << ")";
  out << "\n";
  if (!job.message().empty()) out << "  message: " << job.message() << "\n";
  out << absl::StrFormat("  iterations: %d of %d\n", job.iterations_done(), job.spec().search().iterations());
  if (job.baseline_latency_ms() > 0) {
    out << absl::StrFormat("  baseline: %.4f ms (%s of peak)\n", job.baseline_latency_ms(),
                           Percent(job.has_baseline_peak_percent(), job.baseline_peak_percent()));
    out << absl::StrFormat("  best: %s, %.4f ms, %.3fx (%s of peak)\n", job.best_candidate_id(), job.best_latency_ms(),
                           job.best_speedup(), Percent(job.has_best_peak_percent(), job.best_peak_percent()));
  }
  std::map<std::string, int64_t> counts(job.candidates().begin(), job.candidates().end());
  std::vector<std::string> parts;
  for (const auto& [verdict, n] : counts) parts.push_back(absl::StrCat(verdict, " ", n));
  out << "  candidates: " << (parts.empty() ? "none" : absl::StrJoin(parts, ", ")) << "\n";
  out << absl::StrFormat("  tokens: %d ($%.4f); profiles run: %d (%d retried); device %.1f s; wall %.1f s\n",
                         job.usage().prompt_tokens() + job.usage().completion_tokens(), job.usage().cost_usd(),
                         job.stats().profiles_run(), job.stats().dispatch_retries(), job.stats().device_seconds(),
                         job.stats().wall_seconds());
  out << absl::StrFormat("  experiences added: %d\n", job.experiences_added());
}

// ------------------------------------------------------------------------------------------------------
// Following a job's events (watch, submit --wait).

// What `watch` shows, updated from events.
struct LiveView {
  v1::Job job;
  int iteration = 0;
  int expected = 0;  // candidates of the current iteration
  int finished = 0;  // of the current iteration
  std::map<std::string, int64_t> verdicts;
  double best_speedup = 0;
  std::optional<double> best_peak;
};

std::string ProgressLine(const LiveView& v, bool bar) {
  std::string line = absl::StrFormat("iteration %d/%d ", v.iteration, v.job.spec().search().iterations());
  if (bar) {
    constexpr int kWidth = 24;
    const int filled = v.expected > 0 ? std::min(kWidth, v.finished * kWidth / v.expected) : 0;
    absl::StrAppend(&line, "[", std::string(filled, '#'), std::string(kWidth - filled, '.'), "] ");
  }
  absl::StrAppendFormat(&line, "%d/%d", v.finished, v.expected);
  std::vector<std::string> parts;
  for (const auto& [verdict, n] : v.verdicts) parts.push_back(absl::StrCat(verdict, " ", n));
  if (!parts.empty()) absl::StrAppend(&line, " | ", absl::StrJoin(parts, " "));
  absl::StrAppendFormat(&line, " | best %.3fx", v.best_speedup);
  if (v.best_peak.has_value()) absl::StrAppendFormat(&line, " (%.1f%% of peak)", *v.best_peak);
  absl::StrAppendFormat(&line, " | %d tokens $%.4f", v.job.usage().prompt_tokens() + v.job.usage().completion_tokens(),
                        v.job.usage().cost_usd());
  return line;
}

// A line for a notable event (plain output), or "" for events folded into the progress.
std::string EventLine(const v1::JobEvent& e) {
  if (e.has_state_changed()) {
    std::string line = absl::StrCat("state ", StateName(e.state_changed().state()));
    if (e.state_changed().stop_reason() != v1::STOP_REASON_UNSPECIFIED) {
      absl::StrAppend(&line, " (", ReasonName(e.state_changed().stop_reason()), ")");
    }
    if (!e.state_changed().message().empty()) absl::StrAppend(&line, ": ", e.state_changed().message());
    return line;
  }
  if (e.has_iteration_started()) {
    return absl::StrCat("iteration ", e.iteration_started().iteration(), " started, beam ",
                        absl::StrJoin(e.iteration_started().beam(), " "));
  }
  if (e.has_iteration_finished()) return absl::StrCat("iteration ", e.iteration_finished().iteration(), " finished");
  if (e.has_new_best()) {
    std::string line = absl::StrFormat("new best %s: %.4f ms, %.3fx", e.new_best().candidate_id(),
                                       e.new_best().latency_ms(), e.new_best().speedup());
    if (e.new_best().has_peak_percent()) absl::StrAppendFormat(&line, " (%.1f%% of peak)", e.new_best().peak_percent());
    return line;
  }
  if (e.has_experience_added()) {
    return absl::StrFormat("experience %s: %s (%.3fx%s)", e.experience_added().experience_id(),
                           e.experience_added().title(), e.experience_added().speedup(),
                           e.experience_added().regression() ? ", regression" : "");
  }
  if (e.has_budget_exhausted()) return absl::StrCat("budget exhausted: ", e.budget_exhausted().detail());
  if (e.has_experiences_pending()) {
    return absl::StrCat("iteration ", e.experiences_pending().iteration(),
                        " experiences not stored yet (delivery continues): ", e.experiences_pending().error());
  }
  if (e.has_agent_retried()) {
    const auto& r = e.agent_retried();
    if (r.gave_up()) return absl::StrCat(r.agent(), " ", r.method(), " gave up: ", r.error());
    return absl::StrCat(r.agent(), " ", r.method(), " retried ", r.retries(), r.retries() == 1 ? " time" : " times",
                        ": ", r.error());
  }
  if (e.has_candidate_finished()) {
    const auto& c = e.candidate_finished();
    if (c.verdict() == v1::VERDICT_OK) {
      if (c.speedup_vs_parent() <= 0)
        return absl::StrFormat("candidate %s OK %.4f ms", c.candidate_id(), c.latency_ms());
      return absl::StrFormat("candidate %s OK %.4f ms (%.3fx vs parent)", c.candidate_id(), c.latency_ms(),
                             c.speedup_vs_parent());
    }
    return absl::StrCat("candidate ", c.candidate_id(), " ", VerdictName(c.verdict()));
  }
  return "";
}

// How Follow shows progress.
enum class Progress {
  kNone,
  // Lines for people: a live bar on a terminal, otherwise one line per notable event.
  kHuman,
  // Every event as one JSON object per line (with its sequence and time).
  kJsonLines,
};

// Follows the job's events until it finishes, reconnecting (from the next sequence) when the stream breaks.
// The final job is left in `*job`.
absl::Status Follow(v1::JobService::Stub& stub, const std::string& address, const std::string& id, Progress progress,
                    v1::Job* job) {
  const bool show = progress == Progress::kHuman;
  const bool tty = show && isatty(STDOUT_FILENO) != 0;
  LiveView view;
  if (grpc::Status s = GetJob(stub, id, &view.job); !s.ok()) return core::FromGrpcStatus(s);
  const v1::SearchParams search = view.job.spec().search();  // a copy: view.job is refreshed below
  int64_t next = 1;
  auto last_success = std::chrono::steady_clock::now();
  for (;;) {
    grpc::ClientContext context;
    v1::WatchJobRequest request;
    request.set_job_id(id);
    request.set_from_sequence(next);
    auto reader = stub.WatchJob(&context, request);
    v1::JobEvent e;
    while (reader->Read(&e)) {
      last_success = std::chrono::steady_clock::now();
      next = e.sequence() + 1;
      if (e.has_iteration_started()) {
        view.iteration = e.iteration_started().iteration();
        view.expected = e.iteration_started().beam_size() * search.plans_per_candidate() * search.samples_per_plan();
        view.finished = 0;
      } else if (e.has_candidate_finished()) {
        ++view.verdicts[VerdictName(e.candidate_finished().verdict())];
        if (view.iteration > 0) ++view.finished;
      } else if (e.has_new_best()) {
        view.best_speedup = e.new_best().speedup();
        if (e.new_best().has_peak_percent()) view.best_peak = e.new_best().peak_percent();
      }
      if (progress == Progress::kJsonLines) std::cout << JsonText(ProtoToJson(e), /*pretty=*/false) << "\n";
      if (!show) continue;
      if (e.has_iteration_finished() || e.has_new_best() || e.has_state_changed()) {
        (void)GetJob(stub, id, &view.job);  // refresh tokens and cost
      }
      if (tty) {
        const std::string line = EventLine(e);
        if (!line.empty() && !e.has_candidate_finished()) std::cout << "\r\033[K" << line << "\n";
        std::cout << "\r\033[K" << ProgressLine(view, true) << std::flush;
      } else {
        const std::string line = EventLine(e);
        if (!line.empty()) std::cout << line << "\n";
        if (e.has_iteration_finished()) std::cout << ProgressLine(view, false) << "\n";
      }
    }
    grpc::Status status = reader->Finish();
    if (status.ok()) break;
    if (status.error_code() != grpc::StatusCode::UNAVAILABLE ||
        std::chrono::steady_clock::now() - last_success > std::chrono::seconds(60)) {
      if (tty) std::cout << "\n";
      return core::FromGrpcStatus(grpc::Status(
          status.error_code(), absl::StrCat("watching ", id, " at ", address, ": ", status.error_message())));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the orchestrator restarts: reconnect
  }
  if (tty) std::cout << "\n";
  // The stream ends once the job finished; the final record may need a moment to be readable again after
  // an orchestrator restart.
  for (int attempt = 0;; ++attempt) {
    grpc::Status s = GetJob(stub, id, job);
    if (s.ok() && Finished(job->state())) return absl::OkStatus();
    if (attempt >= 100) {
      return s.ok() ? absl::DeadlineExceededError("the job did not finish") : core::FromGrpcStatus(s);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

// ------------------------------------------------------------------------------------------------------

int RunSubmit(const std::vector<std::string>& argv) {
  return WithArgs(
      argv, {"idempotency-key", "allow-path"}, {"wait", "json"}, 1, "JOB.yaml",
      [](const Args& args, const std::string& address) {
        std::vector<std::string> allowed;
        if (std::string dirs = args.Get("allow-path"); !dirs.empty()) allowed = absl::StrSplit(dirs, ':');
        auto spec = LoadJobSpecFile(args.positional[0], allowed);
        if (absl::IsInvalidArgument(spec.status())) {
          // Name the job file once: parse errors already start with it.
          const std::string message(spec.status().message());
          if (absl::StrContains(message, args.positional[0])) return Fail(message);
          return Fail(absl::StrCat(args.positional[0], ": ", message));
        }
        if (!spec.ok()) return Fail(std::string(spec.status().message()));
        auto stub = Connect(address, args);
        grpc::ClientContext context;
        SetDeadline(&context);
        v1::SubmitJobRequest request;
        *request.mutable_spec() = *std::move(spec);
        request.set_idempotency_key(args.Get("idempotency-key"));
        v1::SubmitJobResponse response;
        if (grpc::Status s = stub->SubmitJob(&context, request, &response); !s.ok()) return RpcFailure(address, s);
        const std::string id = response.job().job_id();
        if (!args.Has("wait")) {
          if (args.Has("json")) {
            const nlohmann::json out = {
                {"job_id", id}, {"state", StateName(response.job().state())}, {"created", response.created()}};
            std::cout << JsonText(out, /*pretty=*/false) << "\n";
          } else {
            std::cout << (response.created() ? "submitted " : "already submitted ") << id << "\n";
          }
          return 0;
        }
        if (!args.Has("json")) std::cout << "submitted " << id << "\n";
        v1::Job job;
        if (absl::Status s = Follow(*stub, address, id, args.Has("json") ? Progress::kNone : Progress::kHuman, &job);
            !s.ok()) {
          return Fail(std::string(s.message()));
        }
        if (args.Has("json")) {
          std::cout << JsonText(JobJson(job), /*pretty=*/false) << "\n";
        } else {
          PrintJobHuman(job, std::cout);
        }
        return FinishedJobExitCode(job);
      });
}

int RunWatch(const std::vector<std::string>& argv) {
  return WithArgs(argv, {}, {"json"}, 1, "JOB", [](const Args& args, const std::string& address) {
    auto stub = Connect(address, args);
    v1::Job job;
    const bool json = args.Has("json");
    if (absl::Status s =
            Follow(*stub, address, args.positional[0], json ? Progress::kJsonLines : Progress::kHuman, &job);
        !s.ok()) {
      return Fail(std::string(s.message()));
    }
    if (json) {
      std::cout << JsonText(JobJson(job), /*pretty=*/false) << "\n";
    } else {
      PrintJobHuman(job, std::cout);
    }
    return FinishedJobExitCode(job);
  });
}

int RunGet(const std::vector<std::string>& argv) {
  return WithArgs(argv, {}, {"json"}, 1, "JOB", [](const Args& args, const std::string& address) {
    auto stub = Connect(address, args);
    v1::Job job;
    if (grpc::Status s = GetJob(*stub, args.positional[0], &job); !s.ok()) return RpcFailure(address, s);
    if (args.Has("json")) {
      std::cout << JsonText(JobJson(job), /*pretty=*/false) << "\n";
    } else {
      PrintJobHuman(job, std::cout);
    }
    return 0;
  });
}

int RunList(const std::vector<std::string>& argv) {
  return WithArgs(argv, {"limit"}, {"json"}, 0, "", [](const Args& args, const std::string& address) {
    auto stub = Connect(address, args);
    grpc::ClientContext context;
    SetDeadline(&context);
    v1::ListJobsRequest request;
    int limit = 0;
    if (!args.Get("limit").empty() && (!absl::SimpleAtoi(args.Get("limit"), &limit) || limit < 0)) {
      return UsageError("--limit: expected a non-negative number");
    }
    request.set_limit(limit);
    v1::ListJobsResponse response;
    if (grpc::Status s = stub->ListJobs(&context, request, &response); !s.ok()) return RpcFailure(address, s);
    if (args.Has("json")) {
      nlohmann::json jobs = nlohmann::json::array();
      for (const v1::Job& job : response.jobs()) jobs.push_back(JobJson(job));
      std::cout << JsonText(jobs, /*pretty=*/false) << "\n";
      return 0;
    }
    if (response.jobs().empty()) {
      std::cout << "no jobs\n";
      return 0;
    }
    std::cout << absl::StrFormat("%-17s %-10s %-21s %-7s %9s %s\n", "JOB", "STATE", "REASON", "ITER", "SPEEDUP",
                                 "NAME");
    for (const v1::Job& job : response.jobs()) {
      std::cout << absl::StrFormat(
          "%-17s %-10s %-21s %3d/%-3d %8.3fx %s\n", job.job_id(), StateName(job.state()),
          job.stop_reason() == v1::STOP_REASON_UNSPECIFIED ? "-" : ReasonName(job.stop_reason()), job.iterations_done(),
          job.spec().search().iterations(), job.best_speedup(), job.spec().name());
    }
    return 0;
  });
}

int RunCancel(const std::vector<std::string>& argv) {
  return WithArgs(argv, {}, {"json"}, 1, "JOB", [](const Args& args, const std::string& address) {
    auto stub = Connect(address, args);
    grpc::ClientContext context;
    SetDeadline(&context);
    v1::CancelJobRequest request;
    request.set_job_id(args.positional[0]);
    v1::Job job;
    if (grpc::Status s = stub->CancelJob(&context, request, &job); !s.ok()) return RpcFailure(address, s);
    if (args.Has("json")) {
      std::cout << JsonText(JobJson(job), /*pretty=*/false) << "\n";
    } else {
      std::cout << job.job_id() << ": " << StateName(job.state()) << "\n";
    }
    return 0;
  });
}

int RunExport(const std::vector<std::string>& argv) {
  return WithArgs(argv, {"out"}, {"json"}, 1, "JOB", [](const Args& args, const std::string& address) {
    const std::string out = args.Get("out");
    if (out.empty()) return UsageError("export needs --out DIR");
    auto stub = Connect(address, args);
    grpc::ClientContext context;
    SetDeadline(&context);
    v1::GetJobReportRequest request;
    request.set_job_id(args.positional[0]);
    v1::JobReport report;
    if (grpc::Status s = stub->GetJobReport(&context, request, &report); !s.ok()) return RpcFailure(address, s);
    auto written = WriteJobExport(report, out);
    if (!written.ok()) return Fail(std::string(written.status().message()));
    if (args.Has("json")) {
      std::cout << JsonText({{"job_id", args.positional[0]}, {"written", *written}}, /*pretty=*/false) << "\n";
      return 0;
    }
    for (const std::string& path : *written) std::cout << "wrote " << path << "\n";
    return 0;
  });
}

}  // namespace

Command SubmitCommand() {
  return {"submit",
          "submit JOB.yaml [--wait] [--json] [--idempotency-key KEY] [--allow-path DIR[:DIR...]] [--server ADDR]\n"
          "         [--data-dir DIR] [--token T] [--ca FILE] [--cert FILE --key FILE]\n"
          "      Submit a job spec file; --wait follows it to the end and prints the final job. Files it names\n"
          "      must lie under its directory (or an --allow-path directory). --server defaults to $ACCELOPT_SERVER,\n"
          "      --token to $ACCELOPT_TOKEN, --ca to $ACCELOPT_CA (or DIR/tls of an `up --secure` cluster).\n" +
              std::string(kFollowExitCodes),
          RunSubmit};
}
Command WatchCommand() {
  return {
      "watch",
      "watch JOB [--json] [--server ADDR] [--data-dir DIR]\n      Follow a job live until it finishes; --json prints "
      "each event as a JSON line\n      (sequence, time, kind) and then the final job.\n" +
          std::string(kFollowExitCodes),
      RunWatch};
}
Command GetCommand() {
  return {"get", "get JOB [--json] [--server ADDR] [--data-dir DIR]\n      Show a job's state and best result.",
          RunGet};
}
Command ListCommand() {
  return {"list", "list [--limit N] [--json] [--server ADDR] [--data-dir DIR]\n      List jobs, newest first.",
          RunList};
}
Command CancelCommand() {
  return {"cancel", "cancel JOB [--json] [--server ADDR] [--data-dir DIR]\n      Stop a job; its best result stays.",
          RunCancel};
}
Command ExportCommand() {
  return {"export",
          "export JOB --out DIR [--json] [--server ADDR] [--data-dir DIR]\n"
          "      Write the best kernel, lineage.json, job.json, report.md and report.html into DIR.",
          RunExport};
}

int WithJobService(const std::vector<std::string>& argv, std::set<std::string> with_value,
                   const std::set<std::string>& booleans, size_t positionals, const std::string& what,
                   const std::function<int(const Args&, v1::JobService::Stub&, const std::string& address)>& body) {
  return WithArgs(argv, std::move(with_value), booleans, positionals, what,
                  [&](const Args& args, const std::string& address) {
                    auto stub = Connect(address, args);
                    return body(args, *stub, address);
                  });
}

int JobRpcFailure(const std::string& address, const grpc::Status& status) { return RpcFailure(address, status); }

void SetJobDeadline(grpc::ClientContext* context) { SetDeadline(context); }

}  // namespace accelopt::cli
