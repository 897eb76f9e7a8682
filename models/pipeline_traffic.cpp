#include "models/pipeline_traffic.h"

#include <cmath>

#include "base/errors.h"

namespace eppsim {

Bytes pipeline_boundary_bytes(const TransformerSpec& model, std::uint64_t tokens, std::uint32_t shard) {
  if (shard == 0) throw InputError("pipeline traffic: shard degree must be >= 1, got 0");
  const double bytes =
      static_cast<double>(tokens) * model.hidden_size * model.bytes_per_element / static_cast<double>(shard);
  return Bytes(static_cast<std::uint64_t>(std::round(bytes)));
}

}  // namespace eppsim
