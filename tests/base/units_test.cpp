#include "base/units.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "base/errors.h"

namespace eppsim {
namespace {

using ::testing::HasSubstr;

constexpr std::uint64_t kKiB = 1024;
constexpr std::uint64_t kMiB = kKiB * 1024;
constexpr std::uint64_t kGiB = kMiB * 1024;

// Runs `parse` on `text`, expecting an InputError that quotes the string and
// lists the accepted forms (checked through `accepted`, one of them).
template <typename Parse>
void expect_rejected(Parse parse, const std::string& text, const std::string& accepted) {
  try {
    parse(text);
    ADD_FAILURE() << "'" << text << "' was accepted";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("'" + text + "'")) << "for '" << text << "'";
    EXPECT_THAT(e.what(), HasSubstr(accepted)) << "for '" << text << "'";
  }
}

TEST(ParseBytes, AcceptsDecimalAndBinaryUnits) {
  EXPECT_EQ(parse_bytes("80GiB"), Bytes(80 * kGiB));
  EXPECT_EQ(parse_bytes("1.5GB"), Bytes(1'500'000'000));
  EXPECT_EQ(parse_bytes("512MiB"), Bytes(512 * kMiB));
  EXPECT_EQ(parse_bytes("4096B"), Bytes(4096));
  EXPECT_EQ(parse_bytes("2KB"), Bytes(2000));
  EXPECT_EQ(parse_bytes("2kB"), Bytes(2000));
  EXPECT_EQ(parse_bytes("3KiB"), Bytes(3 * kKiB));
  EXPECT_EQ(parse_bytes("1TB"), Bytes(1'000'000'000'000));
  EXPECT_EQ(parse_bytes("1TiB"), Bytes(1024 * kGiB));
  EXPECT_EQ(parse_bytes("1PB"), Bytes(1'000'000'000'000'000));
  EXPECT_EQ(parse_bytes("1PiB"), Bytes(1024 * 1024 * kGiB));
}

TEST(ParseBytes, BareNumberMeansBytes) {
  EXPECT_EQ(parse_bytes("4096"), Bytes(4096));
  EXPECT_EQ(parse_bytes("0"), Bytes(0));
  EXPECT_EQ(parse_bytes("1e3"), Bytes(1000));
}

TEST(ParseBytes, AllowsWhitespace) {
  EXPECT_EQ(parse_bytes("80 GiB"), Bytes(80 * kGiB));
  EXPECT_EQ(parse_bytes("  80  GiB \t"), Bytes(80 * kGiB));
  EXPECT_EQ(parse_bytes(" 4096 "), Bytes(4096));
}

TEST(ParseBytes, RoundsToTheNearestByte) {
  EXPECT_EQ(parse_bytes("1.4"), Bytes(1));
  EXPECT_EQ(parse_bytes("1.6B"), Bytes(2));
  EXPECT_EQ(parse_bytes("0.001KiB"), Bytes(1));  // 1.024 bytes
  EXPECT_EQ(parse_bytes(".5KB"), Bytes(500));
}

TEST(ParseBytes, LargestValues) {
  EXPECT_EQ(parse_bytes("16383PiB"), Bytes(16383ULL << 50));
  // 2^64 bytes does not fit.
  expect_rejected(parse_bytes, "16384PiB", "KiB");
  expect_rejected(parse_bytes, "1e20", "KiB");
}

TEST(ParseBytes, RejectsBadStrings) {
  for (const std::string bad : {"", " ", "abc", "-1GB", "1.5XB", "nan", "NaN", "inf", "infinity", "10 parsecs",
                                "1e400GB", "GB", "+1GB", "1 G B", "1GBs", "80Gb", "1.2.3GB", "0x10", "1e", "1,5GB"}) {
    expect_rejected(parse_bytes, bad, "GiB");
  }
}

TEST(ParseBytes, MessageNamesTheProblem) {
  try {
    parse_bytes("1.5XB");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("unknown unit 'XB'"));
    EXPECT_THAT(e.what(), HasSubstr("a bare number means bytes"));
  }
  try {
    parse_bytes("-1GB");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("negative"));
  }
}

TEST(ParseSeconds, AcceptsEveryUnit) {
  EXPECT_DOUBLE_EQ(parse_seconds("1.5us").value, 1.5e-6);
  EXPECT_DOUBLE_EQ(parse_seconds("1.5\u00b5s").value, 1.5e-6);  // micro sign
  EXPECT_DOUBLE_EQ(parse_seconds("1.5\u03bcs").value, 1.5e-6);  // Greek mu
  EXPECT_DOUBLE_EQ(parse_seconds("2ms").value, 2e-3);
  EXPECT_DOUBLE_EQ(parse_seconds("3s").value, 3.0);
  EXPECT_DOUBLE_EQ(parse_seconds("500ns").value, 500e-9);
  EXPECT_DOUBLE_EQ(parse_seconds("1e-6s").value, 1e-6);
  EXPECT_DOUBLE_EQ(parse_seconds("2 ms").value, 2e-3);
  EXPECT_DOUBLE_EQ(parse_seconds("0s").value, 0.0);
}

TEST(ParseSeconds, RejectsBadStrings) {
  for (const std::string bad : {"", "3", "abc", "-1s", "1.5XB", "nan", "nans", "inf s", "10 parsecs", "1e400s",
                                "2 min", "1h", "1S", "1 Ms", "1e-400s"}) {
    expect_rejected(parse_seconds, bad, "ns, us");
  }
}

TEST(ParseBandwidth, AcceptsBytesAndBits) {
  EXPECT_DOUBLE_EQ(parse_bandwidth("900GB/s").value, 900e9);
  EXPECT_DOUBLE_EQ(parse_bandwidth("50GiB/s").value, 50.0 * kGiB);
  EXPECT_DOUBLE_EQ(parse_bandwidth("400Gbps").value, 50e9);
  EXPECT_DOUBLE_EQ(parse_bandwidth("1.8TB/s").value, 1.8e12);
  EXPECT_DOUBLE_EQ(parse_bandwidth("100Mbit/s").value, 12.5e6);
  EXPECT_DOUBLE_EQ(parse_bandwidth("400 Gbit/s").value, 50e9);
  EXPECT_DOUBLE_EQ(parse_bandwidth("8bps").value, 1.0);
  EXPECT_DOUBLE_EQ(parse_bandwidth("8Kbps").value, 1e3);
  EXPECT_DOUBLE_EQ(parse_bandwidth("8Tbps").value, 1e12);
  EXPECT_DOUBLE_EQ(parse_bandwidth("1B/s").value, 1.0);
  EXPECT_DOUBLE_EQ(parse_bandwidth("1KiB/s").value, 1024.0);
  EXPECT_DOUBLE_EQ(parse_bandwidth("2TiB/s").value, 2048.0 * kGiB);
  EXPECT_DOUBLE_EQ(parse_bandwidth("3MB/s").value, 3e6);
}

TEST(ParseBandwidth, RejectsBadStrings) {
  for (const std::string bad : {"", "900", "900GB", "400Gbs", "abc", "-1GB/s", "nan", "inf", "10 parsecs",
                                "1e400GB/s", "1.5XB/s", "1 GB / s"}) {
    expect_rejected(parse_bandwidth, bad, "Gbps");
  }
}

TEST(ParseFlops, AcceptsBothSpellings) {
  EXPECT_DOUBLE_EQ(parse_flops("989TFLOPS").value, 989e12);
  EXPECT_DOUBLE_EQ(parse_flops("1.98PFLOPS").value, 1.98e15);
  EXPECT_DOUBLE_EQ(parse_flops("312e12FLOPS").value, 312e12);
  EXPECT_DOUBLE_EQ(parse_flops("989 TFLOP/s").value, 989e12);
  EXPECT_DOUBLE_EQ(parse_flops("5GFLOPS").value, 5e9);
  EXPECT_DOUBLE_EQ(parse_flops("5MFLOP/s").value, 5e6);
  EXPECT_DOUBLE_EQ(parse_flops("5KFLOPS").value, 5e3);
}

TEST(ParseFlops, RejectsBadStrings) {
  for (const std::string bad : {"", "989", "989T", "989 TF", "abc", "-1TFLOPS", "nan", "inf", "10 parsecs",
                                "1e400FLOPS", "1e300PFLOPS", "1.5XFLOPS"}) {
    expect_rejected(parse_flops, bad, "TFLOPS");
  }
}

TEST(FormatUnits, ThreeSignificantDigits) {
  EXPECT_EQ(format_bytes(Bytes(80 * kGiB)), "80 GiB");
  EXPECT_EQ(format_bytes(Bytes(0)), "0 B");
  EXPECT_EQ(format_bytes(Bytes(512)), "512 B");
  EXPECT_EQ(format_bytes(Bytes(1536)), "1.5 KiB");
  EXPECT_EQ(format_bytes(Bytes(1'500'000'000)), "1.4 GiB");
  EXPECT_EQ(format_bytes(Bytes(123'456'789)), "118 MiB");
  EXPECT_EQ(format_bytes(Bytes(1023)), "0.999 KiB");  // never "1.02e+03 B"

  EXPECT_EQ(format_seconds(Seconds(1.5e-6)), "1.5 us");
  EXPECT_EQ(format_seconds(Seconds(0.0)), "0 s");
  EXPECT_EQ(format_seconds(Seconds(2e-3)), "2 ms");
  EXPECT_EQ(format_seconds(Seconds(1.23456)), "1.23 s");
  EXPECT_EQ(format_seconds(Seconds(500e-9)), "500 ns");
  EXPECT_EQ(format_seconds(Seconds(5000.0)), "5000 s");

  EXPECT_EQ(format_bandwidth(BytesPerSecond(900e9)), "900 GB/s");
  EXPECT_EQ(format_bandwidth(BytesPerSecond(2039e9)), "2.04 TB/s");
  EXPECT_EQ(format_bandwidth(BytesPerSecond(12.5e6)), "12.5 MB/s");

  EXPECT_EQ(format_flops(FlopsPerSecond(989e12)), "989 TFLOP/s");
  EXPECT_EQ(format_flops(FlopsPerSecond(2.25e15)), "2.25 PFLOP/s");
}

TEST(FormatUnits, OutputParsesBack) {
  EXPECT_EQ(parse_bytes(format_bytes(Bytes(80 * kGiB))), Bytes(80 * kGiB));
  EXPECT_DOUBLE_EQ(parse_seconds(format_seconds(Seconds(1.5e-6))).value, 1.5e-6);
  EXPECT_DOUBLE_EQ(parse_bandwidth(format_bandwidth(BytesPerSecond(900e9))).value, 900e9);
  EXPECT_DOUBLE_EQ(parse_flops(format_flops(FlopsPerSecond(989e12))).value, 989e12);
}

TEST(Units, TransferAndComputeTime) {
  EXPECT_DOUBLE_EQ(transfer_time(Bytes(1'000'000'000), BytesPerSecond(100e9)).value, 0.01);
  EXPECT_DOUBLE_EQ(compute_time(989e12, FlopsPerSecond(989e12)).value, 1.0);
}

TEST(Units, Arithmetic) {
  EXPECT_EQ(Bytes(3) + Bytes(4), Bytes(7));
  EXPECT_EQ(Bytes(7) - Bytes(4), Bytes(3));
  EXPECT_EQ(Bytes(3) * 4, Bytes(12));
  Bytes b(1);
  b += Bytes(2);
  EXPECT_EQ(b, Bytes(3));
  EXPECT_LT(Bytes(1), Bytes(2));
  EXPECT_DOUBLE_EQ((Seconds(1.5) + Seconds(0.5)).value, 2.0);
  EXPECT_DOUBLE_EQ((Seconds(1.5) * 2.0).value, 3.0);
}

}  // namespace
}  // namespace eppsim
