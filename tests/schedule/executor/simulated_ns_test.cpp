#include "schedule/executor/simulated_ns.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "base/errors.h"
#include "base/input_limits.h"

namespace eppsim {
namespace {

std::string the_op() { return "the op"; }

TEST(ToNs, RoundsAsLlround) {
  // Halves, the doubles either side of them, whole numbers past 2^53 and the bound.
  for (const double ns : {0.0, 0.5, 1.5, 2.5, 1e9 + 0.5, 4503599627370495.5, 9007199254740993.0, 9.2e18}) {
    for (const double x : {std::nextafter(ns, 0.0), ns, std::nextafter(ns, 1e19)}) {
      if (x / 1e9 > limits::kMaxSimulatedSeconds) continue;
      EXPECT_EQ(to_ns(x / 1e9, the_op), std::llround(x / 1e9 * 1e9)) << x;
    }
  }
  std::mt19937_64 random(7);
  for (const double scale : {1e-9, 1e-6, 1.0, 1e3, 1e6, 9.2e9}) {
    std::uniform_real_distribution<double> seconds(0.0, scale);
    for (int i = 0; i < 100000; ++i) {
      const double s = seconds(random);
      ASSERT_EQ(to_ns(s, the_op), std::llround(s * 1e9)) << s;
    }
  }
}

TEST(ToNs, RefusesTimesItCannotRepresent) {
  for (const double s : {-1e-9, limits::kMaxSimulatedSeconds * 1.01, std::numeric_limits<double>::infinity(),
                         std::numeric_limits<double>::quiet_NaN()}) {
    EXPECT_THROW(to_ns(s, the_op), InputError) << s;
  }
  try {
    to_ns(-1.0, the_op);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("the op: simulated time -1 s cannot be represented"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace eppsim
