# The layering check must fail on a tree that breaks every rule, naming each
# offending file:line at once, and must leave allowed includes alone.
# Run as: cmake -DCHECKER=check_layering.cmake -DFIXTURE=<fixture tree> -P checker_test.cmake
execute_process(COMMAND ${CMAKE_COMMAND} -DROOT=${FIXTURE} -P ${CHECKER}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(all "${out}${err}")
message("${all}")
if(rc EQUAL 0)
  message(FATAL_ERROR "the check passed a tree with layering violations")
endif()
foreach(expected
    "src/backends/backend.h:3: the backend contract includes backends/alpha/alpha.h"
    "src/backends/alpha/alpha.cpp:4: backend 'alpha' includes backends/beta/beta.h"
    "src/backends/beta/CMakeLists.txt:3: backend 'beta' names gpuu_backends_alpha"
    "src/kernels/kernel.cpp:2: src/kernels is below the backends but includes backends/backend.h"
    "src/gpu/gpu.h:4: src/gpu is below the kernel library but includes kernels/kernel.h"
    "src/gpu/CMakeLists.txt:1: gpuu_gpu is below the kernel library but names gpuu_kernels"
    "src/standalone_vgf/standalone_vgf.cpp:2: src/standalone_vgf is below the backends but includes backends/backend.h"
    "src/runtime/session.cpp:3: src/runtime includes backends/beta/beta_kernels.h, a file of backend 'beta' (only runtime/builtin_backends.cpp opens a backend, by its door)"
    "src/capi/capi_vgf.cpp:3: src/capi includes backends/alpha/alpha_backend.h, a file of backend 'alpha' (only runtime/builtin_backends.cpp opens a backend, by its door)"
    "src/runtime/builtin_backends.cpp:3: builtin_backends.cpp includes backends/alpha/alpha_private.h, not the door of backend 'alpha' (backends/alpha/alpha_backend.h)"
    "10 layering violation")
  string(FIND "${all}" "${expected}" at)
  if(at LESS 0)
    message(FATAL_ERROR "missing from the report: ${expected}")
  endif()
endforeach()
foreach(allowed "alpha/alpha.h:" "beta/CMakeLists.txt:1:" "builtin_backends.cpp:2:" "session.cpp:2:" "capi_vgf.cpp:2:")
  string(FIND "${all}" "${allowed}" at)
  if(NOT at LESS 0)
    message(FATAL_ERROR "an allowed line was reported: ${allowed}")
  endif()
endforeach()
