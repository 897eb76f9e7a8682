#pragma once
// Attention by its definition, in double, for the kernel tests of both
// backends: inputs from the kernels' fixed pattern, the forward pass and the
// gradients of sum(O * dO) by the chain rule.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "runtime/cpu/cpu_attention.h"
#include "runtime/cpu/cpu_kernels.h"

namespace eppsim::runtime {

inline std::vector<double> pattern(std::uint64_t n, std::uint64_t seed) {
  std::vector<float> f(n + seed);
  fill_deterministic(f.data(), 0, f.size());
  return std::vector<double>(f.begin() + static_cast<std::ptrdiff_t>(seed), f.end());
}

inline std::vector<float> to_float(const std::vector<double>& v) { return std::vector<float>(v.begin(), v.end()); }

struct Inputs {
  std::vector<double> q, k, v, d_o;
};

inline Inputs inputs_for(const AttentionShape& a) {
  // Different slices of the pattern, scaled up so the softmax is far from uniform.
  Inputs in{pattern(attention_query_elements(a), 0), pattern(attention_key_elements(a), 7),
            pattern(attention_key_elements(a), 13), pattern(attention_query_elements(a), 29)};
  for (double& x : in.q) x *= 8.0;
  for (double& x : in.k) x *= 8.0;
  return in;
}

// The definition, in double: query i of head h over keys 0..c+i.
inline std::vector<double> naive_forward(const AttentionShape& a, const std::vector<double>& q, const std::vector<double>& k,
                                  const std::vector<double>& v) {
  const std::uint64_t d = a.head_dim, hq = a.heads, hk = a.kv_heads, group = hq / hk;
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  std::vector<double> o(attention_query_elements(a), 0.0);
  for (std::uint64_t h = 0; h < hq; ++h) {
    const std::uint64_t kv = h / group;
    for (std::uint64_t i = 0; i < a.tokens; ++i) {
      const std::uint64_t visible = a.context_tokens + i + 1;
      std::vector<double> s(visible);
      for (std::uint64_t j = 0; j < visible; ++j) {
        double dot = 0.0;
        for (std::uint64_t x = 0; x < d; ++x) dot += q[(i * hq + h) * d + x] * k[(j * hk + kv) * d + x];
        s[j] = dot * scale;
      }
      const double max = *std::max_element(s.begin(), s.end());
      double sum = 0.0;
      for (double& x : s) sum += (x = std::exp(x - max));
      for (std::uint64_t j = 0; j < visible; ++j)
        for (std::uint64_t x = 0; x < d; ++x) o[(i * hq + h) * d + x] += s[j] / sum * v[(j * hk + kv) * d + x];
    }
  }
  return o;
}

struct Grads {
  std::vector<double> dq, dk, dv;
};

// The gradients of sum(O * dO), by the chain rule, in double.
inline Grads naive_backward(const AttentionShape& a, const Inputs& in) {
  const std::uint64_t d = a.head_dim, hq = a.heads, hk = a.kv_heads, group = hq / hk;
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  Grads g{std::vector<double>(in.q.size()), std::vector<double>(in.k.size()), std::vector<double>(in.v.size())};
  for (std::uint64_t h = 0; h < hq; ++h) {
    const std::uint64_t kv = h / group;
    for (std::uint64_t i = 0; i < a.tokens; ++i) {
      const std::uint64_t visible = a.context_tokens + i + 1;
      std::vector<double> p(visible), dp(visible);
      for (std::uint64_t j = 0; j < visible; ++j) {
        double dot = 0.0;
        for (std::uint64_t x = 0; x < d; ++x) dot += in.q[(i * hq + h) * d + x] * in.k[(j * hk + kv) * d + x];
        p[j] = dot * scale;
      }
      const double max = *std::max_element(p.begin(), p.end());
      double sum = 0.0;
      for (double& x : p) sum += (x = std::exp(x - max));
      for (double& x : p) x /= sum;
      double D = 0.0;
      for (std::uint64_t j = 0; j < visible; ++j) {
        for (std::uint64_t x = 0; x < d; ++x) {
          dp[j] += in.d_o[(i * hq + h) * d + x] * in.v[(j * hk + kv) * d + x];
          g.dv[(j * hk + kv) * d + x] += p[j] * in.d_o[(i * hq + h) * d + x];
        }
        D += p[j] * dp[j];
      }
      for (std::uint64_t j = 0; j < visible; ++j) {
        const double ds = p[j] * (dp[j] - D) * scale;
        for (std::uint64_t x = 0; x < d; ++x) {
          g.dq[(i * hq + h) * d + x] += ds * in.k[(j * hk + kv) * d + x];
          g.dk[(j * hk + kv) * d + x] += ds * in.q[(i * hq + h) * d + x];
        }
      }
    }
  }
  return g;
}

}  // namespace eppsim::runtime
