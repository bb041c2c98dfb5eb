// Port ranges for test clusters that other processes on the machine are not using.
#pragma once

namespace accelopt::testing {

// A base port whose `span` ports base .. base + span - 1 on 127.0.0.1 could all be bound just now. Candidates lie
// in 20000-32000, below Linux's ephemeral range (32768 and up), so outgoing connections of other processes never
// take them; each is probed by binding every port of its range (with SO_REUSEADDR, as the servers bind). Different
// processes and different `attempt`s start from different candidates; a caller that loses a race to another
// process retries with the next attempt.
int FreePortRange(int span, int attempt = 0);

}  // namespace accelopt::testing
