// Who listens on a local TCP port: `up` starts a service only on a free port, and trusts a SERVING answer on it
// only from the process it started (a foreign server on the port would otherwise answer for a child that then
// fails to bind and exits).
#pragma once

#include <sys/types.h>

namespace accelopt::cli {

// Whether nothing is bound to 127.0.0.1:`port` (a TIME_WAIT connection of an earlier run does not count, as it
// does not stop a server that sets SO_REUSEADDR, as gRPC does).
bool PortIsFree(int port);

// Whether process `pid` holds a socket listening on TCP `port` (any local address, IPv4 or IPv6), read from
// /proc/net/tcp{,6} and the process's descriptors; true when neither table can be read.
bool ProcessListensOn(pid_t pid, int port);

}  // namespace accelopt::cli
