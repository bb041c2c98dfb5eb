// Small rules of the search shared by the job engine's parts: what counts as an OK candidate, how token
// usage adds up, which stop condition a job has reached, and the events that describe a transition.
#pragma once

#include <string>
#include <vector>

#include "accelopt/v1/job.pb.h"
#include "google/protobuf/timestamp.pb.h"

namespace accelopt::orchestrator {

// The current time as a protobuf Timestamp.
google::protobuf::Timestamp NowTimestamp();

// Adds every counter of `usage` to `total`.
void AddUsageTo(v1::TokenUsage* total, const v1::TokenUsage& usage);

// The job's view of a candidate's latency in ms (0 without a result): its profile's mean, or with
// re-measurements (search.reprofile_beam) the median of all its measurements (of the middle two for an even
// count).
double Latency(const v1::Candidate& c);

// A correct kernel with a measured latency.
inline bool IsOk(const v1::Candidate& c) { return c.result().verdict() == v1::VERDICT_OK && c.result().has_latency(); }

// A candidate whose kernel is worth profiling once (not a duplicate, not a failed sample).
inline bool IsOriginalKernel(const v1::Candidate& c) {
  return !c.kernel().sha256().empty() && c.result().verdict() != v1::VERDICT_DUPLICATE &&
         c.result().verdict() != v1::VERDICT_NO_KERNEL;
}

v1::JobEvent StateChangedEvent(v1::JobState state, v1::StopReason reason, const std::string& message);
// The event announcing `candidate` as the job's best, at `speedup` over the baseline.
v1::JobEvent NewBestEvent(const v1::Candidate& candidate, double speedup);

// Which stop condition, if any, the job has reached (budgets first, then the target).
struct StopCheck {
  v1::StopReason reason = v1::STOP_REASON_UNSPECIFIED;
  std::string detail;
};
StopCheck CheckStops(const v1::Job& job);

// A kernel verdict: the candidate's kernel was produced and judged (OK, INCORRECT, COMPILE_ERROR, ...;
// DUPLICATE too, its kernel was produced). Not NO_KERNEL, INFRA_ERROR or CANCELLED: those failed for
// reasons outside the kernel.
bool WasJudged(const v1::Candidate& c);

// Whether iteration `iteration`, all of whose `candidates` are final, failed for reasons outside the
// kernels: any candidate lost to an agent call that failed after its retries (AGENTS_UNAVAILABLE naming how
// many and the first), or none of them judged (PROFILERS_UNAVAILABLE when every one is an INFRA_ERROR,
// NO_VALID_CANDIDATE otherwise) with a detail naming the counts and the first error (lowest ordinal). No
// candidates: no failure.
StopCheck CheckIterationJudged(int iteration, const std::vector<const v1::Candidate*>& candidates);

// Why a job whose wall-time budget ran out did not do its work although its baseline was measured: candidates
// were waiting for a profiler (queued or being profiled) and not one candidate besides the baseline was judged,
// e.g. every profiler worker was down. Empty when some candidate was judged or none was waiting.
std::string UnjudgedWaitingForProfiles(const std::vector<const v1::Candidate*>& candidates);

// The message of a job that SUCCEEDED with the baseline still its best: "no improvement ...", followed by
// `message` when there is one.
std::string NoImprovementMessage(const std::string& message);

}  // namespace accelopt::orchestrator
