#pragma once
// The model shape a Schedule carries (schedule.proto's ModelShape) and the
// TransformerSpec it stands for, so an executor learns what a COMPUTE op runs
// from the Schedule alone, without the scenario.
#include <string_view>

#include "models/transformer_spec.h"
#include "proto/scenario.pb.h"
#include "proto/schedule.pb.h"

namespace eppsim {

proto::ModelShape to_model_shape(const TransformerSpec& model);

// The TransformerSpec of `shape`. Throws InputError naming `where` (the file)
// and the field when the shape cannot describe a transformer: zero layers,
// hidden size, heads, KV heads, FFN size, vocabulary or element size; a hidden
// size the heads do not divide, or KV heads that do not divide the heads.
TransformerSpec from_model_shape(const proto::ModelShape& shape, std::string_view where);

// A scenario's model block with every field of `model` written out (no preset),
// so a scenario resolves to exactly the model a Schedule's header names.
proto::Model to_scenario_model(const TransformerSpec& model);

}  // namespace eppsim
