// The profile dispatcher's queues: per job, the candidates waiting for a profiler slot in FIFO order; across
// jobs, round-robin (the job after the one served last, by job id, wrapping), so a job with 144 queued kernels
// does not starve one with 2.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "absl/time/time.h"

namespace accelopt::orchestrator {

// Not thread-safe: used only from the job engine's event loop.
class ProfileQueues {
 public:
  struct Entry {
    std::string job_id;
    std::string candidate_id;
    // When the candidate was queued (for the stage wait-time metric).
    absl::Time since;
    // A beam member's re-measurement (search.reprofile_beam), not its first profile.
    bool remeasure = false;
  };

  void Push(const std::string& job_id, const std::string& candidate_id, absl::Time now, bool remeasure = false);
  // Removes and returns the next candidate to profile: the oldest of the first job after the one served last
  // for which `eligible(job_id)` holds; nullopt when no eligible job has one queued.
  std::optional<Entry> Pop(const std::function<bool(const std::string& job_id)>& eligible);
  // Forgets every candidate queued for `job_id` (the job stopped).
  void Drop(const std::string& job_id);
  // Candidates queued over all jobs.
  size_t size() const { return size_; }

 private:
  struct Waiting {
    std::string candidate_id;
    absl::Time since;
    bool remeasure;
  };
  // Only jobs with at least one queued candidate.
  std::map<std::string, std::deque<Waiting>> by_job_;
  std::string last_served_;
  size_t size_ = 0;
};

}  // namespace accelopt::orchestrator
