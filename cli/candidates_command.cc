#include "cli/candidates_command.h"

#include <algorithm>
#include <iostream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/job_commands.h"
#include "cli/json_output.h"
#include "libs/core/enum_name.h"

namespace accelopt::cli {
namespace {

std::string Title(const v1::Candidate& c) {
  std::string title = c.plan().title().empty() ? c.plan().text() : c.plan().title();
  title = title.substr(0, title.find('\n'));
  if (c.parent_id().empty()) return "(baseline)";
  return title.size() > 60 ? title.substr(0, 57) + "..." : title;
}

int RunCandidates(const std::vector<std::string>& argv) {
  return WithJobService(
      argv, {"verdict"}, {"json"}, 1, "JOB",
      [](const Args& args, v1::JobService::Stub& stub, const std::string& address) {
        v1::ListCandidatesRequest request;
        request.set_job_id(args.positional[0]);
        request.set_omit_sources(true);
        if (const std::string verdict = args.Get("verdict"); !verdict.empty()) {
          v1::Verdict v;
          if (!v1::Verdict_Parse(absl::StrCat("VERDICT_", absl::AsciiStrToUpper(verdict)), &v)) {
            return UsageError("unknown verdict '" + verdict + "' (e.g. ok, incorrect, compile_error)");
          }
          request.set_verdict(v);
        }
        grpc::ClientContext context;
        SetJobDeadline(&context);
        v1::ListCandidatesResponse response;
        if (grpc::Status s = stub.ListCandidates(&context, request, &response); !s.ok()) {
          return JobRpcFailure(address, s);
        }
        const std::vector<v1::Candidate> candidates(response.candidates().begin(), response.candidates().end());
        if (args.Has("json")) {
          std::cout << JsonText(CandidatesJson(candidates), /*pretty=*/true) << std::endl;
        } else {
          std::cout << CandidatesTable(candidates) << std::flush;
        }
        return 0;
      });
}

}  // namespace

std::string CandidatesTable(const std::vector<v1::Candidate>& candidates) {
  std::vector<std::vector<std::string>> rows = {
      {"CANDIDATE", "IT", "PARENT", "VERDICT", "LATENCY_MS", "VS_PARENT", "VS_BASELINE", "PEAK", "PLAN"}};
  for (const v1::Candidate& c : candidates) {
    const bool ok = c.result().verdict() == v1::VERDICT_OK;
    rows.push_back(
        {c.candidate_id(), absl::StrCat(c.iteration()), c.parent_id().empty() ? "-" : c.parent_id(),
         core::ShortEnumName(c.result().verdict()), ok ? absl::StrFormat("%.4f", c.result().latency().mean_ms()) : "-",
         ok && !c.parent_id().empty() ? absl::StrFormat("%.3fx", c.speedup_vs_parent()) : "-",
         ok && !c.parent_id().empty() ? absl::StrFormat("%.3fx", c.speedup_vs_baseline()) : "-",
         c.result().has_peak_percent() ? absl::StrFormat("%.1f%%", c.result().peak_percent()) : "-", Title(c)});
  }
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      absl::StrAppend(&line, row[i], i + 1 < row.size() ? std::string(width[i] - row[i].size() + 2, ' ') : "");
    }
    absl::StrAppend(&out, line, "\n");
  }
  return out;
}

nlohmann::json CandidatesJson(const std::vector<v1::Candidate>& candidates) {
  nlohmann::json out = nlohmann::json::array();
  for (v1::Candidate c : candidates) {
    c.mutable_kernel()->clear_source();
    out.push_back(ProtoToJson(c));
  }
  return out;
}

Command CandidatesCommand() {
  return {"candidates",
          "candidates JOB [--verdict V] [--json] [--server ADDR] [--data-dir DIR]\n"
          "      List a job's candidates in search order (id, iteration, parent, verdict, latency, speedups, % of\n"
          "      peak, plan); --verdict keeps one verdict (ok, incorrect, ...); --json prints them as JSON.",
          RunCandidates};
}

}  // namespace accelopt::cli
