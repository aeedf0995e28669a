// Aggregating and rendering an execute's profile (see execute_profile.h).
#include "runtime/execute_profile.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <map>

#include "base/json_writer.h"

namespace gpuu::runtime {
namespace {

// Where each plan step and each dispatch begins on the trace's timeline:
// steps end to end in plan order, a delegate's dispatches end to end inside it.
struct Timeline {
  std::vector<double> step_begin;
  std::vector<std::vector<double>> dispatch_begin;  // per plan step
};

Timeline lay_out(const ExecuteProfile& profile) {
  Timeline t;
  double now = 0;
  for (const PlanStepProfile& step : profile.plan) {
    t.step_begin.push_back(now);
    t.dispatch_begin.emplace_back();
    if (step.cpu) {
      now += step.cpu_step.host_us;
      continue;
    }
    double at = now;
    for (const gpu::TimedStep& d : step.delegate.dispatches) {
      t.dispatch_begin.back().push_back(at);
      at += d.us;
    }
    now += std::max(step.delegate.gpu_us, 0.0);
  }
  return t;
}

std::string format(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  va_list again;
  va_copy(again, args);
  const int n = std::vsnprintf(nullptr, 0, fmt, args);
  va_end(args);
  std::string out(n > 0 ? static_cast<size_t>(n) : 0, '\0');
  if (n > 0) std::vsnprintf(out.data(), out.size() + 1, fmt, again);
  va_end(again);
  return out;
}

// A number, or null where `known` is false.
void number_or_null(JsonWriter& w, std::string_view key, double v, bool known) {
  w.key(key);
  if (known) {
    w.value(v);
  } else {
    w.null();
  }
}

void write_achieved(JsonWriter& w, const Achieved& a, uint64_t flops, uint64_t bytes) {
  number_or_null(w, "tflops", a.tflops, flops > 0);
  number_or_null(w, "gbps", a.gbps, bytes > 0);
  number_or_null(w, "flops_of_peak", a.flops_of_peak, a.flops_of_peak >= 0);
  number_or_null(w, "bytes_of_peak", a.bytes_of_peak, a.bytes_of_peak >= 0);
}

const DevicePeaks& peaks_of(const ExecuteProfile& profile, int device) {
  static const DevicePeaks unknown;
  return device >= 0 && static_cast<size_t>(device) < profile.devices.size()
             ? profile.devices[static_cast<size_t>(device)].peaks
             : unknown;
}

// `v` to three significant digits, in fixed notation (lavapipe's rates are
// millionths of a GPU's).
std::string significant(double v) {
  if (v <= 0) return "0";
  const int digits = std::max(0, std::min(6, 2 - static_cast<int>(std::floor(std::log10(v)))));
  return format("%.*f", digits, v);
}

// "1 dispatch", "2 dispatches".
std::string count_of(size_t n, const char* one, const char* many) { return format("%zu %s", n, n == 1 ? one : many); }

// "12.3%", or "-" for an unknown fraction.
std::string percent(double fraction) { return fraction < 0 ? "-" : format("%.1f%%", 100 * fraction); }

// `text` cut to `width` characters, "..." marking the cut.
std::string clip(const std::string& text, size_t width) {
  return text.size() <= width ? text : text.substr(0, width - 3) + "...";
}

// The rate a dispatch or op is best judged by: FLOPs where it has them, else bytes.
std::string main_rate(const Achieved& a, uint64_t flops, uint64_t bytes) {
  if (flops) return significant(a.tflops) + " TFLOP/s";
  if (bytes) return significant(a.gbps) + " GB/s";
  return "-";
}
double main_fraction(const Achieved& a, uint64_t flops) { return flops ? a.flops_of_peak : a.bytes_of_peak; }

std::string describe_peaks(const DevicePeaks& p) {
  auto known = [](double v, const std::string& text) { return v > 0 ? text : std::string("unknown"); };
  std::string f16 = p.f16_matrix_flops_per_s > 0 ? significant(p.f16_matrix_flops_per_s / 1e12) + " TFLOP/s"
                                                 : "unknown (" + p.f16_matrix_unknown_why + ")";
  return "memory " + known(p.bytes_per_s, significant(p.bytes_per_s / 1e9) + " GB/s") + ", f32 FMA " +
         known(p.f32_flops_per_s, significant(p.f32_flops_per_s / 1e12) + " TFLOP/s") + ", f16 matrix " + f16 +
         format("; measured in %.0f ms", p.measure_ms);
}

}  // namespace

double ExecuteProfile::gpu_us() const {
  double total = 0;
  for (const PlanStepProfile& s : plan) {
    if (!s.cpu && s.delegate.gpu_us > 0) total += s.delegate.gpu_us;
  }
  return total;
}

double ExecuteProfile::host_us() const {
  double total = 0;
  for (const PlanStepProfile& s : plan) {
    if (s.cpu) total += s.cpu_step.host_us;
  }
  return total;
}

size_t ExecuteProfile::dispatch_count() const {
  size_t n = 0;
  for (const PlanStepProfile& s : plan) n += s.cpu ? 0 : s.delegate.dispatches.size();
  return n;
}

Achieved achieved(uint64_t flops, uint64_t bytes, bool matrix_cores, double us, const DevicePeaks& peaks) {
  Achieved a;
  if (us <= 0) return a;
  const double seconds = us * 1e-6;
  if (flops) {
    const double per_s = static_cast<double>(flops) / seconds;
    const double peak = matrix_cores ? peaks.f16_matrix_flops_per_s : peaks.f32_flops_per_s;
    a.tflops = per_s / 1e12;
    if (peak > 0) a.flops_of_peak = per_s / peak;
  }
  if (bytes) {
    const double per_s = static_cast<double>(bytes) / seconds;
    a.gbps = per_s / 1e9;
    if (peaks.bytes_per_s > 0) a.bytes_of_peak = per_s / peaks.bytes_per_s;
  }
  return a;
}

std::vector<OpTotal> ops_by_time(const ExecuteProfile& profile) {
  std::vector<OpTotal> totals;
  std::map<std::string, size_t> index;
  for (const PlanStepProfile& s : profile.plan) {
    if (s.cpu) continue;
    const int device = static_cast<int>(s.delegate.device);
    for (const gpu::TimedStep& d : s.delegate.dispatches) {
      auto [it, fresh] = index.emplace(d.work.ops, totals.size());
      if (fresh) totals.push_back(OpTotal{d.work.ops, 0, 0, 0, 0, false, device});
      OpTotal& t = totals[it->second];
      ++t.count;
      t.us += d.us;
      t.flops += d.work.flops;
      t.bytes += d.work.bytes;
      t.matrix_cores |= d.work.matrix_cores;
      if (t.device != device) t.device = -1;
    }
  }
  std::stable_sort(totals.begin(), totals.end(), [](const OpTotal& a, const OpTotal& b) { return a.us > b.us; });
  return totals;
}

ExecuteProfile mean_profile(const std::vector<ExecuteProfile>& runs) {
  if (runs.empty()) return {};
  ExecuteProfile mean = runs.front();
  for (size_t r = 1; r < runs.size(); ++r) {
    for (size_t p = 0; p < mean.plan.size() && p < runs[r].plan.size(); ++p) {
      PlanStepProfile& into = mean.plan[p];
      const PlanStepProfile& from = runs[r].plan[p];
      into.cpu_step.host_us += from.cpu_step.host_us;
      into.delegate.gpu_us += from.delegate.gpu_us;
      for (size_t d = 0; d < into.delegate.dispatches.size() && d < from.delegate.dispatches.size(); ++d) {
        into.delegate.dispatches[d].us += from.delegate.dispatches[d].us;
      }
    }
  }
  const double n = static_cast<double>(runs.size());
  for (PlanStepProfile& s : mean.plan) {
    s.cpu_step.host_us /= n;
    s.delegate.gpu_us /= n;
    for (gpu::TimedStep& d : s.delegate.dispatches) d.us /= n;
  }
  return mean;
}

std::string profile_json(const ExecuteProfile& profile) {
  const Timeline timeline = lay_out(profile);
  const double gpu_total = profile.gpu_us();
  JsonWriter w;
  w.begin_object();
  w.field("peaks_measured", true);
  w.key("devices").begin_array();
  for (const ProfileDevice& d : profile.devices) {
    const DevicePeaks& p = d.peaks;
    w.begin_object().field("name", d.name);
    number_or_null(w, "memory_gbps", p.bytes_per_s / 1e9, p.bytes_per_s > 0);
    number_or_null(w, "f32_tflops", p.f32_flops_per_s / 1e12, p.f32_flops_per_s > 0);
    number_or_null(w, "f16_matrix_tflops", p.f16_matrix_flops_per_s / 1e12, p.f16_matrix_flops_per_s > 0);
    w.field("f16_matrix_unknown_why", p.f16_matrix_unknown_why);
    w.field("measure_ms", p.measure_ms).end_object();
  }
  w.end_array();
  w.field("gpu_us", gpu_total).field("host_us", profile.host_us());
  w.key("plan").begin_array();
  for (size_t i = 0; i < profile.plan.size(); ++i) {
    const PlanStepProfile& s = profile.plan[i];
    w.begin_object();
    if (s.cpu) {
      w.field("kind", "cpu").field("node", s.cpu_step.node).field("op", s.cpu_step.op);
      w.field("host_us", s.cpu_step.host_us).field("begin_us", timeline.step_begin[i]).end_object();
      continue;
    }
    const DelegateProfile& d = s.delegate;
    const DevicePeaks& peaks = peaks_of(profile, static_cast<int>(d.device));
    w.field("kind", "delegate").field("index", d.index).field("backend", d.backend);
    w.field("device", static_cast<uint64_t>(d.device));
    number_or_null(w, "gpu_us", d.gpu_us, d.gpu_us >= 0);
    w.field("begin_us", timeline.step_begin[i]);
    w.key("dispatches").begin_array();
    for (size_t k = 0; k < d.dispatches.size(); ++k) {
      const gpu::TimedStep& t = d.dispatches[k];
      w.begin_object().field("label", t.label).field("ops", t.work.ops).field("kernel", t.kernel);
      w.field("choice", t.work.choice).field("why", t.work.why);
      w.field("gpu_us", t.us).field("begin_us", timeline.dispatch_begin[i][k]);
      w.field("flops", t.work.flops).field("bytes", t.work.bytes).field("matrix_cores", t.work.matrix_cores);
      write_achieved(w, achieved(t.work.flops, t.work.bytes, t.work.matrix_cores, t.us, peaks), t.work.flops,
                     t.work.bytes);
      w.end_object();
    }
    w.end_array().end_object();
  }
  w.end_array();
  double dispatch_total = 0;
  for (const OpTotal& t : ops_by_time(profile)) dispatch_total += t.us;
  w.key("by_op").begin_array();
  for (const OpTotal& t : ops_by_time(profile)) {
    w.begin_object().field("ops", t.ops).field("count", static_cast<uint64_t>(t.count)).field("gpu_us", t.us);
    w.field("share", dispatch_total > 0 ? t.us / dispatch_total : 0.0);
    w.field("flops", t.flops).field("bytes", t.bytes);
    write_achieved(w, achieved(t.flops, t.bytes, t.matrix_cores, t.us, peaks_of(profile, t.device)), t.flops,
                   t.bytes);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  return w.take();
}

std::string profile_trace_json(const ExecuteProfile& profile) {
  const Timeline timeline = lay_out(profile);
  constexpr int kHostTrack = 0;  // delegates' tracks follow, in plan order
  JsonWriter w;
  w.begin_object().key("traceEvents").begin_array();
  auto track_name = [&](int tid, const std::string& name) {
    w.begin_object().field("name", "thread_name").field("ph", "M").field("pid", 0).field("tid", tid);
    w.key("args").begin_object().field("name", name).end_object().end_object();
  };
  w.begin_object().field("name", "process_name").field("ph", "M").field("pid", 0);
  w.key("args").begin_object().field("name", "gpuu execute").end_object().end_object();
  track_name(kHostTrack, "host (CPU fallback)");
  int track = kHostTrack;
  for (size_t i = 0; i < profile.plan.size(); ++i) {
    const PlanStepProfile& s = profile.plan[i];
    if (s.cpu) {
      w.begin_object().field("name", s.cpu_step.node).field("cat", s.cpu_step.op).field("ph", "X");
      w.field("ts", timeline.step_begin[i]).field("dur", s.cpu_step.host_us).field("pid", 0).field("tid", kHostTrack);
      w.key("args").begin_object().field("op", s.cpu_step.op).end_object().end_object();
      continue;
    }
    const DelegateProfile& d = s.delegate;
    track_name(++track, format("delegate %d (%s)", d.index, d.backend.c_str()));
    if (d.dispatches.empty() && d.gpu_us > 0) {
      w.begin_object().field("name", format("delegate %d", d.index)).field("cat", d.backend).field("ph", "X");
      w.field("ts", timeline.step_begin[i]).field("dur", d.gpu_us).field("pid", 0).field("tid", track).end_object();
    }
    for (size_t k = 0; k < d.dispatches.size(); ++k) {
      const gpu::TimedStep& t = d.dispatches[k];
      w.begin_object().field("name", t.label).field("cat", t.work.ops).field("ph", "X");
      w.field("ts", timeline.dispatch_begin[i][k]).field("dur", t.us).field("pid", 0).field("tid", track);
      w.key("args").begin_object().field("kernel", t.kernel).field("ops", t.work.ops);
      if (!t.work.choice.empty()) w.field("choice", t.work.choice).field("why", t.work.why);
      w.field("flops", t.work.flops).field("bytes", t.work.bytes).end_object().end_object();
    }
  }
  w.end_array().field("displayTimeUnit", "ms").end_object();
  return w.take();
}

std::string profile_text(const ExecuteProfile& profile, size_t top_dispatches) {
  std::string out;
  size_t delegates = 0, cpu_steps = 0;
  for (const PlanStepProfile& s : profile.plan) (s.cpu ? cpu_steps : delegates) += 1;
  out += "gpuu profile of the last execute: " + count_of(delegates, "delegate", "delegates") + ", " +
         count_of(profile.dispatch_count(), "dispatch", "dispatches") + format(", %.1f us of GPU time", profile.gpu_us());
  if (cpu_steps) {
    out += "; " + count_of(cpu_steps, "CPU-fallback step", "CPU-fallback steps") +
           format(", %.1f us on the host", profile.host_us());
  }
  out += "\n(a timestamp after every dispatch serialises the GPU: each time is that dispatch's alone)\n";
  out += "peaks, measured by gpuu when profiling began on the device (Vulkan reports none):\n";
  for (size_t i = 0; i < profile.devices.size(); ++i) {
    out += format("  device %zu '%s': ", i, profile.devices[i].name.c_str()) +
           describe_peaks(profile.devices[i].peaks) + "\n";
  }

  out += "\nplan:\n";
  for (const PlanStepProfile& s : profile.plan) {
    if (s.cpu) {
      out += format("  cpu step     %-32s %10.1f us host\n", (s.cpu_step.node + " (" + s.cpu_step.op + ")").c_str(),
                    s.cpu_step.host_us);
    } else if (s.delegate.gpu_us < 0) {
      out += format("  delegate %-3d %-32s    unknown GPU time\n", s.delegate.index, s.delegate.backend.c_str());
    } else {
      out += format("  delegate %-3d %-32s %10.1f us GPU, %s\n", s.delegate.index, s.delegate.backend.c_str(),
                    s.delegate.gpu_us, count_of(s.delegate.dispatches.size(), "dispatch", "dispatches").c_str());
    }
  }

  const std::vector<OpTotal> ops = ops_by_time(profile);
  double dispatch_total = 0;
  size_t op_width = 2;
  for (const OpTotal& t : ops) {
    dispatch_total += t.us;
    op_width = std::max(op_width, std::min<size_t>(t.ops.size(), 40));
  }
  auto share = [&](double us) { return percent(dispatch_total > 0 ? us / dispatch_total : -1); };
  if (!ops.empty()) {
    out += format("\nby op:\n  %-*s %6s %10s %7s %12s %8s %10s %8s\n", static_cast<int>(op_width), "op", "count",
                  "GPU us", "share", "TFLOP/s", "of peak", "GB/s", "of peak");
    for (const OpTotal& t : ops) {
      const Achieved a = achieved(t.flops, t.bytes, t.matrix_cores, t.us, peaks_of(profile, t.device));
      out += format("  %-*s %6zu %10.1f %7s %12s %8s %10s %8s\n", static_cast<int>(op_width),
                    clip(t.ops, op_width).c_str(), t.count, t.us, share(t.us).c_str(),
                    t.flops ? significant(a.tflops).c_str() : "-", percent(a.flops_of_peak).c_str(),
                    t.bytes ? significant(a.gbps).c_str() : "-", percent(a.bytes_of_peak).c_str());
    }
  }

  struct Ranked {
    const gpu::TimedStep* step;
    const DevicePeaks* peaks;
  };
  std::vector<Ranked> ranked;
  for (const PlanStepProfile& s : profile.plan) {
    if (s.cpu) continue;
    for (const gpu::TimedStep& d : s.delegate.dispatches) {
      ranked.push_back(Ranked{&d, &peaks_of(profile, static_cast<int>(s.delegate.device))});
    }
  }
  std::stable_sort(ranked.begin(), ranked.end(), [](const Ranked& a, const Ranked& b) { return a.step->us > b.step->us; });
  if (ranked.size() > top_dispatches) ranked.resize(top_dispatches);
  if (ranked.empty()) return out;
  size_t label_width = 4, kernel_width = 6;
  for (const Ranked& r : ranked) {
    label_width = std::max(label_width, std::min<size_t>(r.step->label.size(), 32));
    kernel_width = std::max(kernel_width, r.step->kernel.size());
  }
  out += format("\ntop %zu dispatches:\n  %10s %7s  %-*s  %-*s  %-*s  %16s %8s  %s\n", ranked.size(), "GPU us",
                "share", static_cast<int>(label_width), "node", static_cast<int>(op_width), "op",
                static_cast<int>(kernel_width), "kernel", "achieved", "of peak", "choice");
  for (const Ranked& r : ranked) {
    const gpu::TimedStep& t = *r.step;
    const Achieved a = achieved(t.work.flops, t.work.bytes, t.work.matrix_cores, t.us, *r.peaks);
    std::string choice = t.work.choice.empty() ? "" : t.work.choice + (t.work.why.empty() ? "" : " (" + t.work.why + ")");
    std::string row = format("  %10.1f %7s  %-*s  %-*s  %-*s  %16s %8s  %s", t.us, share(t.us).c_str(),
                             static_cast<int>(label_width), clip(t.label, label_width).c_str(),
                             static_cast<int>(op_width), clip(t.work.ops, op_width).c_str(),
                             static_cast<int>(kernel_width), t.kernel.c_str(),
                             main_rate(a, t.work.flops, t.work.bytes).c_str(),
                             percent(main_fraction(a, t.work.flops)).c_str(), choice.c_str());
    out += row.substr(0, row.find_last_not_of(' ') + 1) + "\n";
  }
  return out;
}

}  // namespace gpuu::runtime
