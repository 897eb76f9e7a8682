#include "sim/cli/presets.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/units.h"
#include "models/gpu_spec.h"
#include "models/transformer_spec.h"
#include "sim/plan/planner.h"

namespace eppsim {

std::string presets_listing() {
  std::string out;
  out += "GPUs (dense BF16, HBM, HBM bandwidth, NVLink per direction):\n";
  for (const auto& g : gpu_presets()) {
    out += fmt::format("  {:<12} {:>14} {:>10} {:>12} {:>12}\n", g.name, format_flops(g.peak_bf16),
                       format_bytes(g.memory), format_bandwidth(g.memory_bandwidth), format_bandwidth(g.nvlink_bandwidth));
  }
  out += "models (layers, hidden, heads/kv, ffn, vocab, parameters):\n";
  for (const auto& m : model_presets()) {
    out += fmt::format("  {:<12} {:>3} {:>6} {:>3}/{:<3} {:>6} {:>7} {:>7.2f}B\n", m.name, m.layers, m.hidden_size,
                       m.attention_heads, m.kv_heads, m.ffn_hidden_size, m.vocab_size, m.total_params() / 1e9);
  }
  out += fmt::format("strategies: {}\n", fmt::join(planner_names(), ", "));
  return out;
}

}  // namespace eppsim
