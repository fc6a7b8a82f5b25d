# Compiler flags shared by every target of the project.
set(UTC_WARNINGS -Wall -Wextra)

function(utc_target_flags target)
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:C>:${UTC_WARNINGS}>)
  if(UTC_SANITIZE)
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:C>:-fsanitize=${UTC_SANITIZE} -fno-omit-frame-pointer>)
    target_link_options(${target} PRIVATE -fsanitize=${UTC_SANITIZE})
  endif()
endfunction()

function(utc_link_flags target)
  if(UTC_SANITIZE)
    target_link_options(${target} PRIVATE -fsanitize=${UTC_SANITIZE})
  endif()
endfunction()

# An executable of the project: warnings, sanitizers, linked to utc.
function(utc_add_executable target)
  add_executable(${target} ${ARGN})
  utc_target_flags(${target})
  target_link_libraries(${target} PRIVATE utc)
endfunction()
