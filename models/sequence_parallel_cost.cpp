#include "models/sequence_parallel_cost.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "base/errors.h"

namespace eppsim {
namespace {

Bytes whole_bytes(double bytes) {
  const double rounded = std::round(bytes);
  if (!(rounded >= 0.0 && rounded < 18446744073709551616.0)) {  // 2^64
    throw std::overflow_error(fmt::format("sequence-parallel cost: {} bytes is out of range", bytes));
  }
  return Bytes(static_cast<std::uint64_t>(rounded));
}

void check_degree(std::uint32_t degree) {
  if (degree == 0) throw InputError("sequence-parallel cost: degree must be >= 1, got 0");
}

std::uint64_t new_tokens(std::span<const Segment> segments) {
  std::uint64_t tokens = 0;
  for (const Segment& s : segments) tokens += s.tokens;
  return tokens;
}

std::uint64_t attended_tokens(std::span<const Segment> segments) {
  std::uint64_t tokens = 0;
  for (const Segment& s : segments) tokens += s.tokens + s.context_tokens;
  return tokens;
}

}  // namespace

bool ulysses_degree_fits(const TransformerSpec& model, std::uint32_t degree) {
  return degree >= 1 && model.attention_heads % degree == 0 && model.kv_heads % degree == 0;
}

std::array<UlyssesAllToAll, 4> ulysses_layer_all_to_alls(const TransformerSpec& model, std::uint64_t tokens,
                                                          std::uint32_t degree, Pass pass) {
  check_degree(degree);
  const double d = degree;
  const double shard_elements = degree == 1 ? 0.0 : static_cast<double>(tokens) / d;
  const double e = model.bytes_per_element;
  const double h = model.hidden_size;
  const double kv = model.kv_dim();
  auto make = [&](std::string_view tensor, double width) {
    const double buffer = shard_elements * width * e;
    return UlyssesAllToAll{tensor, whole_bytes(buffer), whole_bytes(buffer * (d - 1.0) / d)};
  };
  if (pass == Pass::Backward) return {make("dout", h), make("dq", h), make("dk", kv), make("dv", kv)};
  return {make("q", h), make("k", kv), make("v", kv), make("out", h)};
}

std::array<Bytes, 2> ulysses_layer_exchanges(const TransformerSpec& model, std::uint64_t tokens,
                                             std::uint32_t degree, Pass pass) {
  const auto a = ulysses_layer_all_to_alls(model, tokens, degree, pass);
  if (pass == Pass::Backward) return {a[0].buffer, a[1].buffer + a[2].buffer + a[3].buffer};
  return {a[0].buffer + a[1].buffer + a[2].buffer, a[3].buffer};
}

UlyssesLayerCost ulysses_layer_cost(const TransformerSpec& model, std::uint64_t tokens, std::uint32_t degree,
                                    Pass pass) {
  UlyssesLayerCost cost;
  for (const UlyssesAllToAll& a : ulysses_layer_all_to_alls(model, tokens, degree, pass)) {
    cost.buffer += a.buffer;
    cost.sent += a.sent;
  }
  return cost;
}

UlyssesLayerCost ulysses_layer_cost(const TransformerSpec& model, std::span<const Segment> segments,
                                    std::uint32_t degree, Pass pass) {
  return ulysses_layer_cost(model, new_tokens(segments), degree, pass);
}

Seconds ulysses_layer_time(const TransformerSpec& model, std::uint64_t tokens, std::span<const std::uint32_t> group,
                           Pass pass, const CostModel& cost) {
  const auto degree = static_cast<std::uint32_t>(group.size());
  Seconds time;
  if (degree <= 1) return time;
  for (const Bytes buffer : ulysses_layer_exchanges(model, tokens, degree, pass)) {
    if (buffer.count > 0) time += cost.collective_time(CommKind::AllToAll, CollectiveAlgorithm::Auto, group, buffer);
  }
  return time;
}

Bytes ring_attention_step_bytes(const TransformerSpec& model, std::uint64_t kv_tokens, std::uint32_t degree, Pass pass,
                                RingOptions options) {
  check_degree(degree);
  if (degree == 1) return Bytes(0);
  const double head_shards = std::max<std::uint32_t>(options.head_shards, 1);
  const double kv_block =
      static_cast<double>(kv_tokens) / degree * 2.0 * model.kv_dim() * model.bytes_per_element / head_shards;
  // Forward: one K+V block per step. Backward: dK/dV blocks, and K/V again unless told otherwise.
  const double blocks_per_step = pass != Pass::Backward ? 1.0 : (options.backward_resends_kv ? 2.0 : 1.0);
  return whole_bytes(kv_block * blocks_per_step);
}

Bytes ring_attention_step_bytes(const TransformerSpec& model, std::span<const Segment> segments, std::uint32_t degree,
                                Pass pass, RingOptions options) {
  return ring_attention_step_bytes(model, attended_tokens(segments), degree, pass, options);
}

}  // namespace eppsim
