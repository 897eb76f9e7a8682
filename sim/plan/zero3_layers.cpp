#include "sim/plan/zero3_layers.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "models/activation_memory.h"
#include "models/compute_cost.h"
#include "models/flexsp_preset.h"
#include "models/memory_model.h"
#include "base/input_limits.h"
#include "models/memory_model.h"

namespace eppsim {

Zero3Options resolve_zero3_options(const ResolvedScenario& resolved) {
  const FieldLocator& where = resolved.where();
  const proto::Zero3Options& options = resolved.proto.plan().zero3();
  Zero3Options out;
  if (options.has_prefetch_depth()) {
    // Each buffer holds a layer: as many as a model may have layers, at most.
    if (options.prefetch_depth() > limits::kMaxLayers) {
      where.fail("plan.zero3.prefetch_depth", fmt::format("must be <= {} (the bound of base/input_limits.h), got {}",
                                                         limits::kMaxLayers, options.prefetch_depth()));
    }
    out.prefetch_depth = options.prefetch_depth();
  }
  if (options.has_prefetch_survives_group_changes())
    out.prefetch_survives_group_changes = options.prefetch_survives_group_changes();
  const std::string& dtype = options.reduce_scatter_dtype();
  if (dtype == "bf16") {
    out.reduce_scatter_bytes_per_element = 2.0;
  } else if (dtype == "fp32") {
    out.reduce_scatter_bytes_per_element = 4.0;
  } else if (!dtype.empty()) {
    where.fail("plan.zero3.reduce_scatter_dtype",
               fmt::format("must be \"bf16\" or \"fp32\" (unset: the model's training precision), got \"{}\"", dtype));
  }
  return out;
}

std::uint32_t effective_prefetch_depth(const Zero3Options& options, bool groups_change) {
  return groups_change && !options.prefetch_survives_group_changes ? 0 : options.prefetch_depth;
}

Zero3LayerBytes zero3_layer_bytes(const TransformerSpec& model, const Zero3Options& options) {
  const std::uint32_t layers = std::max<std::uint32_t>(model.layers, 1);
  const double gradient_bytes = options.reduce_scatter_bytes_per_element > 0.0 ? options.reduce_scatter_bytes_per_element
                                                                                : model.bytes_per_element;
  return Zero3LayerBytes{static_cast<std::uint64_t>(model.total_params() * model.bytes_per_element) / layers,
                         static_cast<std::uint64_t>(model.total_params() * gradient_bytes) / layers};
}

Zero3Setup add_zero3(ScheduleBuilder& builder, std::uint32_t world_size) {
  Zero3Setup s;
  s.compute = builder.stream("compute");
  s.gather = builder.stream("zero-gather");
  s.reduce = builder.stream("zero-reduce");
  s.world_size = world_size;
  std::vector<std::uint32_t> all(world_size);
  std::iota(all.begin(), all.end(), 0u);
  s.gather_group = builder.add_group(fmt::format("zero-3 weight gathers ({} ranks)", world_size), all);
  s.reduce_group = builder.add_group(fmt::format("zero-3 gradient reduce-scatters ({} ranks)", world_size), all);
  return s;
}

Zero3LayerProgram::Zero3LayerProgram(ScheduleBuilder& builder, std::uint32_t rank, const Zero3Setup& setup,
                                     Zero3LayerBytes bytes, std::uint32_t prefetch_depth)
    : builder_(builder), rank_(rank), setup_(setup), bytes_(bytes), depth_(prefetch_depth) {}

void Zero3LayerProgram::visit(std::span<LayerPiece> pieces, bool reduce_gradients) {
  std::optional<OpIndex> gathered;
  if (setup_.world_size > 1) {
    std::vector<OpIndex> deps;
    // Visit v-1-d has ended: the buffer this gather fills is free again.
    if (ended_.size() == depth_ + 1 && ended_.front()) deps.push_back(*ended_.front());
    gathered = builder_.collective(rank_, setup_.gather, deps, proto::ALL_GATHER, setup_.gather_group,
                                   bytes_.weights / setup_.world_size);
  }
  std::optional<OpIndex> end = gathered;
  if (!pieces.empty()) {
    std::vector<OpIndex> deps;
    if (gathered) deps.push_back(*gathered);
    end = emit_pieces(builder_, rank_, setup_.compute, deps, pieces);
    last_compute_ = end;
  }
  if (reduce_gradients && setup_.world_size > 1) {
    std::vector<OpIndex> deps;
    if (end) deps.push_back(*end);
    last_reduce_ = builder_.collective(rank_, setup_.reduce, deps, proto::REDUCE_SCATTER, setup_.reduce_group,
                                      bytes_.gradients);
  }
  ended_.push_back(end);
  if (ended_.size() > depth_ + 1) ended_.pop_front();
}

std::vector<OpIndex> Zero3LayerProgram::tail() const {
  std::vector<OpIndex> out;
  if (last_compute_) out.push_back(*last_compute_);
  if (last_reduce_) out.push_back(*last_reduce_);
  if (!ended_.empty() && ended_.back() && !last_compute_) out.push_back(*ended_.back());
  return out;
}

Zero3LayerSeconds zero3_layer_seconds(const PlanContext& sc, const Zero3LayerBytes& bytes) {
  const std::uint32_t n = sc.usable_gpus();
  Zero3LayerSeconds out;
  if (n <= 1) return out;
  std::vector<std::uint32_t> ranks(n);
  std::iota(ranks.begin(), ranks.end(), 0u);
  out.gather =
      sc.cost->collective_time(CommKind::AllGather, CollectiveAlgorithm::Auto, ranks, Bytes(bytes.weights / n)).value;
  out.reduce_scatter =
      sc.cost->collective_time(CommKind::ReduceScatter, CollectiveAlgorithm::Auto, ranks, Bytes(bytes.gradients))
          .value;
  return out;
}

double zero3_micro_batch_seconds(const Zero3LayerSeconds& zero, std::uint32_t layers, double compute_s,
                                 std::uint32_t prefetch_depth) {
  const double gathers = layers * zero.gather, reduces = layers * zero.reduce_scatter;
  if (prefetch_depth == 0) return std::max(compute_s + 2.0 * gathers, 2.0 * gathers + reduces) + zero.reduce_scatter;
  return std::max(compute_s, 2.0 * gathers + reduces) + zero.gather + zero.reduce_scatter;
}

std::uint64_t Zero3Memory::activation_bytes(std::uint64_t tokens, std::uint32_t degree) const {
  return static_cast<std::uint64_t>(
      std::ceil(activation_bytes_per_token * static_cast<double>(tokens) / std::max<std::uint32_t>(degree, 1)));
}

std::uint64_t Zero3Memory::capacity(std::uint64_t limit, std::uint32_t degree, double fill) const {
  if (limit <= fixed_bytes() || activation_bytes_per_token <= 0.0) return 0;
  return static_cast<std::uint64_t>(
      std::floor(fill * static_cast<double>(limit - fixed_bytes()) * degree / activation_bytes_per_token));
}

Zero3Memory zero3_memory(const PlanContext& sc, bool full_recompute, const Zero3Options& zero3,
                         std::uint32_t recomputed_mlp_layers) {
  Zero3Memory out;
  const std::uint32_t n = sc.usable_gpus();
  const auto& model = sc.model;
  if (const FlexSpModel* preset = sc.flexsp_preset) {
    const auto max_length = sc.max_length > 196608 ? FlexSpMaxLength::K384 : FlexSpMaxLength::K192;
    out.state_bytes = flexsp_model_state_bytes(*preset, max_length, n).count;
    out.activation_bytes_per_token = preset->gamma_bytes_per_token;
    out.flexsp_measured = true;
    return out;
  }
  out.state_bytes = model_state_bytes(model.total_params(), 3, n).total().count;
  const double largest = std::max(model.params_per_layer(), model.embedding_params());
  const double buffers = static_cast<double>(zero3.prefetch_depth) + 1.0;
  out.gather_buffer_bytes = static_cast<std::uint64_t>(buffers * largest * model.bytes_per_element);
  // Activations are linear in the tokens: measure a large probe.
  constexpr std::uint64_t kProbe = std::uint64_t{1} << 24;
  const std::array<Segment, 1> probe{Segment{kProbe, 0}};
  ActivationChunk chunk;
  chunk.segments = probe;
  chunk.layer_count = model.layers;
  chunk.checkpointed_layers = full_recompute ? model.layers : 0;
  chunk.includes_lm_head = true;
  const ActivationOptions options{1};
  const Bytes per_probe = chunk_activation_bytes(model, chunk, options).total() +
                          chunk_backward_transient_bytes(model, chunk, options);
  out.activation_bytes_per_token = static_cast<double>(per_probe.count) / static_cast<double>(kProbe);
  if (!full_recompute && recomputed_mlp_layers > 0) {
    out.activation_bytes_per_token -=
        static_cast<double>(recomputed_mlp_layers - 1) * mlp_checkpoint_saving_bytes_per_token_layer(model);
  }
  return out;
}

}  // namespace eppsim
