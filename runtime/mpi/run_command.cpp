#include "runtime/mpi/run_command.h"

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <numeric>
#include <optional>

#include <boost/program_options.hpp>
#include <fmt/format.h>

#include "base/errors.h"
#include "base/index_list.h"
#include "schedule/identical_replicas.h"
#include "schedule/trace_file.h"
#include "base/input_limits.h"
#include "base/memory_limit.h"
#include "base/units.h"
#include "runtime/comm_plan.h"
#include "runtime/fault_signals.h"
#include "runtime/mpi/clock_sync.h"
#include "runtime/mpi/mpi_wait.h"
#include "runtime/hybrid_comm_engine.h"
#include "runtime/mpi/mpi_group_barrier.h"
#include "runtime/rank_executor.h"
#include "runtime/trace_merge.h"
#include "runtime/virtual_peers.h"
#include "runtime/virtual_world.h"
#include "base/proto_io.h"
#include "schedule/schedule_file.h"

namespace po = boost::program_options;

namespace eppsim::runtime {
namespace {

constexpr int kClockRounds = 10;

// --inject-fault KIND:RANK:OP: rank RANK, as its op OP starts in the first
// measured step, kills itself (SIGKILL: dies without a word, as under the OOM
// killer), crashes (SIGSEGV) or stalls (SIGSTOP: stops answering). For tests
// of the fault handling and for chaos runs.
struct InjectedFault {
  std::string kind;
  std::uint32_t rank = 0;
  std::uint32_t op = 0;
};

InjectedFault parse_fault(const std::string& text) {
  const auto error = [&](const std::string& rule) {
    return InputError(fmt::format("--inject-fault '{}': {}", text, rule));
  };
  const auto first = text.find(':');
  const auto second = first == std::string::npos ? first : text.find(':', first + 1);
  if (second == std::string::npos) throw error("must be KIND:RANK:OP");
  InjectedFault f;
  f.kind = text.substr(0, first);
  if (f.kind != "kill" && f.kind != "crash" && f.kind != "stall") throw error("KIND must be kill, crash or stall");
  try {
    std::size_t used = 0;
    const std::string rank = text.substr(first + 1, second - first - 1), op = text.substr(second + 1);
    f.rank = static_cast<std::uint32_t>(std::stoul(rank, &used));
    if (used != rank.size()) throw std::invalid_argument(rank);
    f.op = static_cast<std::uint32_t>(std::stoul(op, &used));
    if (used != op.size()) throw std::invalid_argument(op);
  } catch (const std::logic_error&) {
    throw error("RANK and OP must be non-negative integers");
  }
  return f;
}

// MEMORY ops never start on the rank's streams, so a fault must name another kind.
void check_fault(const InjectedFault& fault, const proto::Schedule& schedule, const std::string& file) {
  if (fault.rank >= schedule.num_ranks() ||
      fault.op >= ops_of(schedule, fault.rank).size()) {
    throw InputError(fmt::format("--inject-fault: {}: there is no rank {} op {}", file, fault.rank, fault.op));
  }
  if (ops_of(schedule, fault.rank)[fault.op].is_memory()) {
    throw InputError(fmt::format("--inject-fault: {}: rank {} op {} is a MEMORY op; name a COMPUTE, SEND, "
                                 "RECV or COLLECTIVE op",
                                 file, fault.rank, fault.op));
  }
}

void inject(const InjectedFault& fault, const proto::Schedule& schedule, OpRef op) {
  const int signal = fault.kind == "kill" ? SIGKILL : fault.kind == "crash" ? SIGSEGV : SIGSTOP;
  fmt::print(stderr, "eppsim-run: rank {}: injected fault: {} as {} starts\n", op.rank, fault.kind,
             describe_op(schedule, op));
  std::fflush(stderr);
  std::raise(signal);
}

struct RunOptions {
  std::string schedule;
  std::string backend;
  std::string attention;
  std::string max_memory;
  std::string trace;
  int warmup_steps = 1;
  int steps = 3;
  double timeout_s = 300.0;
  std::optional<InjectedFault> fault;
  std::string real_ranks;      // --ranks: a hybrid emulation's ranks run for real
  std::string virtual_trace;   // --virtual: the simulation that times the others
  bool closed_loop = false;    // --closed-loop: re-time the virtual ranks from the real ranks' progress
};

std::optional<RunOptions> parse(int argc, char** argv, int rank) {
  RunOptions o;
  std::string fault;
  po::options_description options("mpirun -np N eppsim-run SCHEDULE --backend cpu|cuda -o TRACE [options]");
  options.add_options()("help,h", "show this help")                                               //
      ("schedule", po::value(&o.schedule)->required(), "the Schedule (.pb, .json or .textproto)")  //
      ("backend", po::value(&o.backend)->required(), "cpu (OpenBLAS + MPI) or cuda (cuBLAS + NCCL)")
      ("attention", po::value(&o.attention),
       "cuda: flash (cuDNN's flash attention, the default where built) or reference (the backend's own kernel)")
      ("output,o", po::value(&o.trace)->required(), "the merged Trace to write (.pb, .json or .textproto)")
      ("warmup-steps", po::value(&o.warmup_steps)->default_value(1), "steps run before the measured ones")
      ("steps", po::value(&o.steps)->default_value(3), "measured steps; the trace is the median one's")
      ("timeout", po::value(&o.timeout_s)->default_value(300.0),
       "seconds an op may wait on its peers before the run fails naming the rank and op")
      ("max-memory", po::value(&o.max_memory),
       "the most host memory the ranks of a machine may take together, e.g. 16GiB: past it the run is refused "
       "(exit 2) before its first op (default: 85% of the machine's memory)")
      ("ranks", po::value(&o.real_ranks),
       "LIST (0,3,7-9): run only these ranks of the Schedule, one process each (-np their number); every other "
       "rank is virtual, timed by --virtual (hybrid emulation)")
      ("virtual", po::value(&o.virtual_trace),
       "with --ranks: the Trace of a calibrated simulation of the whole Schedule (eppsim sim), whose times the "
       "virtual ranks keep")
      ("closed-loop", po::bool_switch(&o.closed_loop),
       "with --ranks: re-time the virtual ranks as the real ranks progress (the simulation's durations, the real "
       "ranks' ends), not at the simulation's times; needs every rank's events in --virtual")
      ("inject-fault", po::value(&fault),
       "KIND:RANK:OP: rank RANK kills itself (kill), crashes (crash) or stops answering (stall) as its op OP "
       "starts in the first measured step; to test fault handling");
  po::positional_options_description positional;
  positional.add("schedule", 1);
  po::variables_map vars;
  try {
    po::store(po::command_line_parser(argc, argv).options(options).positional(positional).run(), vars);
    if (vars.count("help")) {
      if (rank == 0) std::cout << options << "\n";
      return std::nullopt;
    }
    po::notify(vars);
  } catch (const po::error& e) {
    throw InputError(e.what());
  }
  if (o.backend != "cpu" && o.backend != "cuda") {
    throw InputError(fmt::format("--backend: must be cpu or cuda, got '{}'", o.backend));
  }
  if (!o.attention.empty() && o.backend != "cuda") {
    throw InputError("--attention: only with --backend cuda");
  }
  if (o.warmup_steps < 0 || o.warmup_steps > static_cast<int>(limits::kMaxMeasuredSteps)) {
    throw InputError(fmt::format("--warmup-steps: must be in [0, {}], got {}", limits::kMaxMeasuredSteps,
                                 o.warmup_steps));
  }
  if (o.steps < 1 || o.steps > static_cast<int>(limits::kMaxMeasuredSteps)) {
    throw InputError(fmt::format("--steps: must be in [1, {}], got {}", limits::kMaxMeasuredSteps, o.steps));
  }
  if (!(o.timeout_s > 0.0)) throw InputError(fmt::format("--timeout: must be > 0, got {}", o.timeout_s));
  if (!fault.empty()) o.fault = parse_fault(fault);
  if (!o.virtual_trace.empty() && o.real_ranks.empty()) {
    throw InputError("--virtual: only with --ranks, the ranks run for real");
  }
  if (o.closed_loop && o.real_ranks.empty()) throw InputError("--closed-loop: only with --ranks and --virtual");
  if (!o.real_ranks.empty() && o.virtual_trace.empty()) {
    throw InputError(fmt::format("--ranks {}: the other ranks are virtual and need the calibrated simulation "
                                 "that times them: --virtual SIM_TRACE (eppsim sim with cost_model {{ calibration_file }})",
                                 o.real_ranks));
  }
  if (!o.max_memory.empty()) set_memory_limit_from_option("", o.max_memory);
  return o;
}

// The index of the median of `values` (the lower one of an even count).
std::size_t median_index(const std::vector<double>& values) {
  std::vector<std::size_t> order(values.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return values[a] < values[b]; });
  return order[(order.size() - 1) / 2];
}

struct Run {
  int rank = 0;  // in the world
  int size = 1;
  std::uint32_t schedule_rank = 0;  // the Schedule's rank this process runs
  std::optional<RunOptions> options;
  proto::Schedule schedule;  // outlives the executor, which reads it for the partial trace
  // A hybrid emulation: the ranks run for real (ascending; world rank i runs
  // real_ranks[i]) and the simulation that times the others. Empty: every rank is real.
  std::vector<std::uint32_t> real_ranks;
  proto::Trace simulated;
  std::unique_ptr<VirtualPeers> virtual_peers;
  std::unique_ptr<VirtualWorld> world;    // closed loop: handed to the hybrid engine
  std::unique_ptr<VirtualWorld> retimer;  // closed loop, rank 0: every real rank pinned, after each step
  std::unique_ptr<RankExecutor> executor;

  // The memory guard before the first op: this rank's kernel buffers, times
  // the ranks on its machine (which hold theirs beside it), within the limit.
  void check_kernel_memory(const RankExecutor& executor, const ComputeQueue& compute) const {
    KernelBuffers buffers;
    for (const KernelPlan& plan : executor.plans()) buffers.grow(plan);
    const std::uint64_t bytes = compute.host_bytes(buffers);
    if (bytes == 0) return;
    const int local_ranks = ranks_on_this_machine();
    check_memory_estimate(fmt::format("the kernels' memory ({}) times the {} rank{} on this machine",
                                      format_bytes(Bytes(bytes)), local_ranks, local_ranks == 1 ? "" : "s"),
                          bytes * static_cast<std::uint64_t>(local_ranks),
                          "run a Schedule of shorter sequences, fewer ranks a machine, or raise --max-memory");
  }

  // Which ranks run here: every one, -np the Schedule's; or, with --ranks, those.
  void choose_ranks(const RunOptions& o) {
    if (o.real_ranks.empty()) {
      if (schedule.num_ranks() != static_cast<std::uint32_t>(size)) {
        throw InputError(fmt::format("{}: num_ranks is {} but mpirun started {} processes (-np {})", o.schedule,
                                     schedule.num_ranks(), size, schedule.num_ranks()));
      }
      schedule_rank = static_cast<std::uint32_t>(rank);
      return;
    }
    try {
      real_ranks = parse_index_list(o.real_ranks, schedule.num_ranks(), "--ranks", "rank");
    } catch (const InputError& e) {
      throw InputError(fmt::format("{} (the ranks of {})", e.what(), o.schedule));
    }
    if (real_ranks.size() != static_cast<std::size_t>(size)) {
      throw InputError(fmt::format("--ranks {}: names {} rank{} but mpirun started {} processes (-np {})",
                                   o.real_ranks, real_ranks.size(), real_ranks.size() == 1 ? "" : "s", size,
                                   real_ranks.size()));
    }
    schedule_rank = real_ranks[static_cast<std::size_t>(rank)];
    install_fault_signals(static_cast<int>(schedule_rank));  // crash messages name the Schedule's rank
    simulated = read_trace(o.virtual_trace);
    if (o.closed_loop) {
      // This rank's ops, but those that meet a virtual rank, end as they really do.
      world = std::make_unique<VirtualWorld>(
          schedule, simulated,
          [this](OpRef op) { return op.rank == schedule_rank && !virtual_peers->meeting(op.op).has_value(); },
          o.virtual_trace);
      if (rank == 0) {
        retimer = std::make_unique<VirtualWorld>(
            schedule, simulated,
            [this](OpRef op) { return std::binary_search(real_ranks.begin(), real_ranks.end(), op.rank); },
            o.virtual_trace);
      }
    }
    virtual_peers = std::make_unique<VirtualPeers>(schedule, simulated, real_ranks, schedule_rank, o.virtual_trace);
  }

  // One measured step's Trace of every rank, on rank 0: the real ranks' events
  // (`all`, by world rank) on its clock and the virtual ranks', as simulated
  // (open loop) or re-timed from the real ones (closed loop).
  proto::Trace merge_hybrid(std::span<const proto::Trace> all, std::span<const double> offsets_s) {
    proto::Trace merged = merge_onto_clock(all, offsets_s, real_ranks);
    if (options->closed_loop) {
      add_virtual_ranks(merged, retimer->retime(merged), real_ranks);
    } else {
      add_virtual_ranks(merged, simulated, real_ranks);
    }
    return merged;
  }

  // The options and files, before any rank communicates: false for --help.
  bool prepare(int argc, char** argv) {
    options = parse(argc, argv, rank);
    if (!options) return false;
    const RunOptions& o = *options;
    // Checked before anything reads it (groups, kernel plans): an index out of
    // range is a message naming the file, not a crash.
    // Every rank runs its own program (a Schedule of identical replicas lists replica 0's).
    schedule = expand_identical_replicas(read_schedule_file(o.schedule));
    choose_ranks(o);
    if (o.fault) {
      check_fault(*o.fault, schedule, o.schedule);
      if (!real_ranks.empty() && !std::binary_search(real_ranks.begin(), real_ranks.end(), o.fault->rank)) {
        throw InputError(fmt::format("--inject-fault: rank {} is virtual (--ranks {})", o.fault->rank,
                                     o.real_ranks));
      }
    }
    return true;
  }

  int execute(const BackendFactory& make_backend) {
    const RunOptions& o = *options;
    const double wait_s = 2.0 * o.timeout_s;  // outside steps: let the rank stuck on an op report first
    StepClock clock;
    MpiGroups groups(schedule, MPI_COMM_WORLD, real_ranks);
    Backend backend = make_backend(BackendRequest{o.backend, o.attention}, schedule, groups, clock);
    if (virtual_peers) {
      backend.comm = std::make_unique<HybridCommEngine>(schedule, schedule_rank, *virtual_peers, std::move(backend.comm),
                                                        std::make_unique<MpiGroupBarrier>(groups, clock), clock,
                                                        std::move(world));
    }
    RankExecutorOptions executor_options;
    executor_options.timeout_s = o.timeout_s;
    executor_options.engine = o.backend;
    int step = 0;
    if (o.fault && o.fault->rank == schedule_rank) {
      executor_options.on_op_started = [&](OpRef op) {
        if (step == o.warmup_steps && op.op == o.fault->op) inject(*o.fault, schedule, op);
      };
    }
    auto planned = std::make_unique<RankExecutor>(schedule, schedule_rank, *backend.compute, *backend.comm, clock,
                                                  executor_options);
    check_kernel_memory(*planned, *backend.compute);  // a refusal leaves no partial trace: nothing ran
    executor = std::move(planned);
    std::vector<proto::Trace> traces;
    std::vector<std::vector<double>> offsets;  // rank 0: per measured step
    std::vector<double> step_times_s;          // rank 0
    std::vector<proto::Trace> hybrid_steps;    // rank 0, a hybrid emulation: each measured step's whole trace
    for (; step < o.warmup_steps + o.steps; ++step) {
      barrier(MPI_COMM_WORLD, wait_s, fmt::format("rank {}: barrier before step {}", schedule_rank, step + 1));
      clock.restart();
      proto::Trace trace = executor->run_step();
      if (step < o.warmup_steps) continue;
      offsets.push_back(measure_clock_offsets(MPI_COMM_WORLD, clock, kClockRounds, wait_s));
      if (!real_ranks.empty()) {
        // The step's time needs the virtual ranks, which a closed loop re-times from every real rank's events.
        const auto all = gather_traces(MPI_COMM_WORLD, trace, wait_s);
        if (rank == 0) {
          hybrid_steps.push_back(merge_hybrid(all, offsets.back()));
          step_times_s.push_back(static_cast<double>(hybrid_steps.back().step_time_ns()) * 1e-9);
        }
        continue;
      }
      const auto spans = gather_spans(MPI_COMM_WORLD, trace_span(trace), wait_s);
      if (rank == 0) step_times_s.push_back(merged_step_time_s(spans, offsets.back()));
      traces.push_back(std::move(trace));
    }
    proto::Trace merged;
    if (real_ranks.empty()) {
      int chosen = rank == 0 ? static_cast<int>(median_index(step_times_s)) : 0;
      MPI_Request request = MPI_REQUEST_NULL;
      check_mpi(MPI_Ibcast(&chosen, 1, MPI_INT, 0, MPI_COMM_WORLD, &request), "choosing the median step");
      wait_all(std::span(&request, 1), wait_s, fmt::format("rank {}: choosing the median step", schedule_rank));
      const auto all = gather_traces(MPI_COMM_WORLD, traces[static_cast<std::size_t>(chosen)], wait_s);
      if (rank == 0) merged = merge_traces(all, offsets[static_cast<std::size_t>(chosen)]);
    } else if (rank == 0) {
      merged = std::move(hybrid_steps[median_index(step_times_s)]);
    }
    if (rank == 0) {
      const std::size_t chosen = median_index(step_times_s);
      for (const double t : step_times_s) merged.add_measured_step_times_ns(std::llround(t * 1e9));
      write_trace_file(merged, o.trace);
      std::string times;
      for (const double t : step_times_s) times += fmt::format(" {:.6f}", t);
      const std::string ranks =
          real_ranks.empty() ? fmt::format("{} ranks", size)
                             : fmt::format("{} real rank{} ({}) of {}, the others virtual ({}, {} loop)", size,
                                           size == 1 ? "" : "s", o.real_ranks, schedule.num_ranks(), o.virtual_trace,
                                           o.closed_loop ? "closed" : "open");
      fmt::print(stderr, "eppsim-run: {}, {} backend, {} warm-up + {} measured steps; step times (s):{}; trace of "
                 "the median step ({:.6f} s) written to {}\n",
                 ranks, o.backend, o.warmup_steps, o.steps, times, step_times_s[static_cast<std::size_t>(chosen)], o.trace);
    }
    return 0;
  }

  // Prints the failure, keeps rank 0's partial trace, ends every rank.
  [[noreturn]] void fail(int status, const std::string& message) {
    fmt::print(stderr, "eppsim-run: rank {}: error: {}\n", schedule_rank, message);
    if (rank == 0 && executor && options) {
      try {
        write_trace_file(executor->partial_trace(), options->trace);
        fmt::print(stderr, "eppsim-run: rank {0}: the trace of what completed on rank {0} (its own clock) is in {1}\n",
                   schedule_rank, options->trace);
      } catch (const std::exception& e) {
        fmt::print(stderr, "eppsim-run: rank {}: could not keep the partial trace: {}\n", schedule_rank, e.what());
      }
    }
    std::fflush(stderr);
    // Told to end, the rank has about a second before mpirun's SIGKILL: the
    // job is ending already, so no MPI_Abort.
    if (termination_signal() != 0) std::_Exit(status);
    MPI_Abort(MPI_COMM_WORLD, status);
    std::_Exit(status);  // MPI_Abort does not return; this is for the compiler
  }
};

}  // namespace

int run_eppsim_run(int argc, char** argv, const BackendFactory& make_backend) {
  int provided = 0;
  // Only the main thread calls MPI; compute workers never do.
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  Run run;
  MPI_Comm_rank(MPI_COMM_WORLD, &run.rank);
  run.schedule_rank = static_cast<std::uint32_t>(run.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &run.size);
  install_fault_signals(run.rank);  // after MPI_Init, whose handlers these replace
  int status = 0;
  // Bad options and files are found alike by every rank before any of them
  // communicates: the ranks agree on them (one reduction), the lowest failing
  // rank prints one line, and every rank exits with status 2, no abort.
  std::string input_error;
  bool proceed = false;
  try {
    proceed = run.prepare(argc, argv);
  } catch (const InputError& e) {
    input_error = e.what();
  } catch (const std::exception& e) {
    run.fail(1, e.what());
  }
  int failing = input_error.empty() ? INT_MAX : run.rank, first_failing = INT_MAX;
  MPI_Allreduce(&failing, &first_failing, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (first_failing != INT_MAX || !proceed) {
    if (run.rank == first_failing) fmt::print(stderr, "eppsim-run: error: {}\n", input_error);
    MPI_Finalize();
    return first_failing != INT_MAX ? 2 : 0;
  }
  try {
    if (provided < MPI_THREAD_FUNNELED) {
      throw std::runtime_error("this MPI does not support MPI_THREAD_FUNNELED (compute runs on its own threads)");
    }
    status = run.execute(make_backend);
  } catch (const InputError& e) {
    run.fail(2, e.what());
  } catch (const std::exception& e) {
    run.fail(1, e.what());
  }
  run.executor.reset();
  MPI_Finalize();
  return status;
}

}  // namespace eppsim::runtime
