// Boost.Asio C++20 coroutine headers. Boost 1.74's awaitable.hpp uses std::exchange without including
// <utility>; include it first so every translation unit compiles regardless of include order.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <utility>
