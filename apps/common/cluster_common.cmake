# Shared build rules of the cluster apps (mm, heat, kmeans, nbody, mc). Each app's
# CMakeLists.txt includes this file; the driver library is defined once.
if(NOT TARGET utc_cluster_app)
  add_library(utc_cluster_app STATIC ${CMAKE_CURRENT_LIST_DIR}/cluster_app.c)
  target_include_directories(utc_cluster_app PUBLIC ${CMAKE_CURRENT_LIST_DIR})
  target_link_libraries(utc_cluster_app PUBLIC utc m)
  utc_target_flags(utc_cluster_app)
  if(UTC_WITH_CUDA)
    # GPU helpers (cluster_gpu.h), for the apps' GPU tasks.
    target_sources(utc_cluster_app PRIVATE ${CMAKE_CURRENT_LIST_DIR}/cluster_gpu.cu)
    set_target_properties(utc_cluster_app PROPERTIES CUDA_RUNTIME_LIBRARY Shared)
    target_link_libraries(utc_cluster_app PUBLIC CUDA::cudart)
  endif()
endif()

# utc_cluster_app(<name> SOURCES <c files> [GPU_SOURCES <c and cu files>])
# One binary named like the app. GPU_SOURCES are built only with UTC_WITH_CUDA, which
# also defines CAPP_WITH_CUDA=1 for the app's C files.
function(utc_cluster_app name)
  cmake_parse_arguments(A "" "" "SOURCES;GPU_SOURCES" ${ARGN})
  utc_add_executable(${name} ${A_SOURCES})
  target_link_libraries(${name} PRIVATE utc_cluster_app m)
  # Every implementation runs the same arithmetic: no contraction into FMA (so seq, mpi,
  # utc and gpu results are bit-identical), and -O3 so the kernels are vectorized.
  # -fno-math-errno only lets sqrt be inlined; sqrt's result is correctly rounded anyway.
  target_compile_options(${name} PRIVATE
    $<$<COMPILE_LANGUAGE:C>:-ffp-contract=off>
    $<$<COMPILE_LANGUAGE:C>:-fno-math-errno>
    $<$<AND:$<COMPILE_LANGUAGE:C>,$<NOT:$<CONFIG:Debug>>>:-O3>)
  if(UTC_WITH_CUDA AND A_GPU_SOURCES)
    target_sources(${name} PRIVATE ${A_GPU_SOURCES})
    target_compile_definitions(${name} PRIVATE CAPP_WITH_CUDA=1)
    # One CUDA runtime in the process: the shared one that utc links.
    set_target_properties(${name} PROPERTIES CUDA_RUNTIME_LIBRARY Shared)
    # --fmad=false: the same rounding as the CPU code, so --verify can ask for equality.
    target_compile_options(${name} PRIVATE
      $<$<COMPILE_LANGUAGE:CUDA>:--fmad=false>
      $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>)
  endif()
endfunction()
