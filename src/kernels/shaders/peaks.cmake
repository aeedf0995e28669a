# Calibration kernels (device_peaks.cpp): a profile's measured peaks of memory
# bandwidth, f32 FMA throughput and f16 cooperative-matrix throughput.
gpuu_shader(peak_copy peak_copy.comp)
gpuu_shader(peak_fma peak_fma.comp)
gpuu_coopmat_shader(peak_coopmat_f16 peak_coopmat.comp)
