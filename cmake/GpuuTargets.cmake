# Shared target conventions: one place for warnings and include roots.

# gpuu_internal_library(NAME SOURCES... [DEPS deps...])
# A static, position-independent piece of the SDK; libgpuu.so links them all.
function(gpuu_internal_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/include)
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
  gpuu_warnings(${name})
endfunction()

function(gpuu_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Werror=return-type
                         -Wno-missing-field-initializers)
endfunction()
