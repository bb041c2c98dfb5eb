# Warning flags shared by every target of ours (never by generated code).
set(ACCELOPT_WARNING_FLAGS -Wall -Wextra -Wno-unused-parameter -Werror=unused-result -Werror=return-type)
if(ACCELOPT_WERROR)
  list(APPEND ACCELOPT_WARNING_FLAGS -Werror)
endif()
if(ACCELOPT_ASAN)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
