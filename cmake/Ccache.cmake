# Compile through ccache when it is installed (never wraps links).
find_program(ACCELOPT_CCACHE ccache)
if(ACCELOPT_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  set(CMAKE_CXX_COMPILER_LAUNCHER "${ACCELOPT_CCACHE}")
endif()
