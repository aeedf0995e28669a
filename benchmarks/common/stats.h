// Summary statistics the benchmarks report.
#pragma once

#include <algorithm>
#include <vector>

namespace gpuu::bench {

// The middle sample (the upper one of an even count), or -1 for none.
inline double median(std::vector<double> v) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace gpuu::bench
