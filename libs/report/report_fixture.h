// A small finished job with a baseline, two iterations and mixed verdicts, for report tests.
#pragma once

#include <vector>

#include "accelopt/v1/job.pb.h"

namespace accelopt::report::testing {

struct JobFixture {
  v1::Job job;
  std::vector<v1::Candidate> candidates;
  // An experience added, and the usage snapshots of the two iterations.
  std::vector<v1::JobEvent> events;
};

// Baseline c0 (10 ms, 20% of peak); iteration 1: c1 OK 8 ms, c2 INCORRECT, c3 COMPILE_ERROR; iteration 2 from
// c1: c4 OK 5 ms (the best, 40% of peak), c5 TIMEOUT. c1's plan title holds HTML special characters.
JobFixture SmallJob();

}  // namespace accelopt::report::testing
