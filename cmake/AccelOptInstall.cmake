# Install layout and the build tree's mirror of it (docs/deploy.md, "Install").
#
#   <prefix>/bin/accelopt-{orchestrator,planner,executor,profiler,memory}, accelopt, accelopt-trn-model
#   <prefix>/share/accelopt/{prompts,harness,builtin,examples}
#
# Binaries find their resources at <dir of the binary>/../share/accelopt/<name> (libs/core/resource_dir.h); no
# path of the build machine is compiled in. The build tree gets the same shape: <build>/bin/ holds the binaries and
# <build>/share/accelopt/<name> are symlinks into the source tree, so a binary run from a build tree uses the
# sources it was built from.
include(GNUInstallDirs)

set(ACCELOPT_RESOURCES
  "prompts=${PROJECT_SOURCE_DIR}/prompts"
  "harness=${PROJECT_SOURCE_DIR}/services/profiler/harness"
  "builtin=${PROJECT_SOURCE_DIR}/services/executor/builtin"
  "examples=${PROJECT_SOURCE_DIR}/examples")

file(MAKE_DIRECTORY ${PROJECT_BINARY_DIR}/share/accelopt)
foreach(resource IN LISTS ACCELOPT_RESOURCES)
  string(REPLACE "=" ";" parts "${resource}")
  list(GET parts 0 name)
  list(GET parts 1 source)
  file(CREATE_LINK ${source} ${PROJECT_BINARY_DIR}/share/accelopt/${name} SYMBOLIC)
  install(DIRECTORY ${source}/ DESTINATION ${CMAKE_INSTALL_DATADIR}/accelopt/${name}
    PATTERN "__pycache__" EXCLUDE
    PATTERN ".mypy_cache" EXCLUDE
    PATTERN "CMakeLists.txt" EXCLUDE)
endforeach()

# An installed binary carries no path of the build machine: __FILE__ and debug info name paths relative to the
# source and build roots. Only for Release, so that the dev and ci builds keep their ccache entries.
add_compile_options("$<$<CONFIG:Release>:-ffile-prefix-map=${PROJECT_SOURCE_DIR}/=>"
                    "$<$<CONFIG:Release>:-ffile-prefix-map=${PROJECT_BINARY_DIR}/=>")

# Called after every target exists (end of the top-level CMakeLists.txt).
function(accelopt_install_binaries)
  install(TARGETS orchestrator planner executor profiler memory accelopt accelopt-trn-model
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endfunction()
