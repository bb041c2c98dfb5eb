#include "libs/llm/answer_by.h"

#include <algorithm>

namespace accelopt::llm {
namespace {

constexpr absl::Duration kMaxMargin = absl::Seconds(30);

bool IsSet(const google::protobuf::Timestamp& t) { return t.seconds() != 0 || t.nanos() != 0; }

}  // namespace

void FillAnswerBy(std::chrono::system_clock::time_point call_deadline, absl::Time now,
                  google::protobuf::Timestamp* answer_by) {
  if (IsSet(*answer_by) || call_deadline == std::chrono::system_clock::time_point::max()) return;
  const absl::Time deadline = absl::FromChrono(call_deadline);
  const absl::Duration margin = std::min(kMaxMargin, std::max(absl::ZeroDuration(), (deadline - now) / 10));
  const absl::Time by = deadline - margin;
  const int64_t nanos = absl::ToUnixNanos(by);
  answer_by->set_seconds(nanos / 1'000'000'000);
  answer_by->set_nanos(static_cast<int32_t>(nanos % 1'000'000'000));
}

absl::Time AnswerBy(const google::protobuf::Timestamp& answer_by) {
  if (!IsSet(answer_by)) return absl::InfiniteFuture();
  return absl::FromUnixSeconds(answer_by.seconds()) + absl::Nanoseconds(answer_by.nanos());
}

}  // namespace accelopt::llm
