// PLACEHOLDER (helper "exec"'s branch only): lets the rank executor link before
// helper "kernels"'s runtime/kernel_plan.cpp lands. The integrator replaces
// this file with theirs. It plans no kernels: only the pass.
#include "runtime/kernel_plan.h"

namespace eppsim::runtime {

KernelPlan plan_kernels(const proto::ModelShape&, const proto::ComputeOp& op, const std::vector<std::uint32_t>&) {
  KernelPlan plan;
  plan.pass = op.phase() == proto::BACKWARD ? Pass::Backward : Pass::Forward;
  return plan;
}

}  // namespace eppsim::runtime
