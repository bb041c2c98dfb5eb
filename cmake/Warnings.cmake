# Warning flags shared by every target of ours (never by generated code).
set(ACCELOPT_WARNING_FLAGS -Wall -Wextra -Wno-unused-parameter -Werror=unused-result -Werror=return-type)
# GCC 12 reports Boost.Asio's coroutine frame allocator (awaitable_frame_base::operator delete) as a
# mismatched new/delete once optimizing; it is a known false positive of that compiler version.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  list(APPEND ACCELOPT_WARNING_FLAGS -Wno-mismatched-new-delete)
endif()
if(ACCELOPT_WERROR)
  list(APPEND ACCELOPT_WARNING_FLAGS -Werror)
endif()
if(ACCELOPT_ASAN)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
if(ACCELOPT_FUZZ)
  # Coverage instrumentation everywhere; the fuzz targets add -fsanitize=fuzzer (libFuzzer's main) at link.
  # No UBSan: clang-14 fails on coroutine frames under -fsanitize=undefined ("Cannot represent a difference
  # across sections"), and the LLM client is coroutines.
  add_compile_options(-fsanitize=fuzzer-no-link,address -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address)
endif()
# Boost 1.74 detects clang's coroutines only through <experimental/coroutine>; libstdc++ has <coroutine>.
if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  add_compile_definitions(BOOST_ASIO_HAS_CO_AWAIT=1 BOOST_ASIO_HAS_STD_COROUTINE=1)
endif()
