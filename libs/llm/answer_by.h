// When an agent must answer: the caller's gRPC deadline less a margin, carried in a request's `answer_by` to
// the model calls, which stop retrying and waiting then. The response (with the tokens of every sample that
// finished) reaches the caller before it gives up, instead of a DEADLINE_EXCEEDED that loses them all.
#pragma once

#include <chrono>

#include "absl/time/time.h"
#include "google/protobuf/timestamp.pb.h"

namespace accelopt::llm {

// `call_deadline` less 10% of the time left, at most 30 s; unset (an empty Timestamp) when the call has no
// deadline (system_clock::time_point::max()) or `answer_by` is already set.
void FillAnswerBy(std::chrono::system_clock::time_point call_deadline, absl::Time now,
                  google::protobuf::Timestamp* answer_by);

// The time in `answer_by`, or absl::InfiniteFuture() when it is unset.
absl::Time AnswerBy(const google::protobuf::Timestamp& answer_by);

}  // namespace accelopt::llm
