#include "services/orchestrator/profile_queues.h"

namespace accelopt::orchestrator {

void ProfileQueues::Push(const std::string& job_id, const std::string& candidate_id, absl::Time now, bool remeasure) {
  by_job_[job_id].push_back({candidate_id, now, remeasure});
  ++size_;
}

std::optional<ProfileQueues::Entry> ProfileQueues::Pop(const std::function<bool(const std::string&)>& eligible) {
  auto it = by_job_.upper_bound(last_served_);
  for (size_t n = 0; n < by_job_.size(); ++n, ++it) {
    if (it == by_job_.end()) it = by_job_.begin();
    if (!eligible(it->first)) continue;
    Entry entry{it->first, std::move(it->second.front().candidate_id), it->second.front().since,
                it->second.front().remeasure};
    it->second.pop_front();
    if (it->second.empty()) by_job_.erase(it);
    --size_;
    last_served_ = entry.job_id;
    return entry;
  }
  return std::nullopt;
}

void ProfileQueues::Drop(const std::string& job_id) {
  auto it = by_job_.find(job_id);
  if (it == by_job_.end()) return;
  size_ -= it->second.size();
  by_job_.erase(it);
}

}  // namespace accelopt::orchestrator
