#pragma once
// Runs a piece of work in a forked child process and brings back its result
// or its error. The flow engine runs each simulation this way because SimGrid
// 3.32 allows one engine per process: a second engine continues the first
// one's clock and aborts when its settings change ("Cannot change the model
// after the initialization"), so every run gets a fresh process.
//
// The child runs `body`; its returned bytes, or the exception it threw (as
// kind + message), come back over a pipe; the child ends with _exit (no atexit
// handlers, no flushing of the parent's buffers). The parent reads to EOF,
// reaps the child and returns the bytes, or rethrows the child's exception as
// the same type (InputError, ScheduleDeadlock, ScheduleMismatch,
// std::invalid_argument; anything else as std::runtime_error) with the same
// message. A child that dies without answering (a signal, an abort inside
// SimGrid) is a std::runtime_error naming `what` and the signal or exit status.
// The child dies with its parent (PR_SET_PDEATHSIG: a parent killed outright
// leaves nothing running), and a SIGINT or SIGTERM the parent records
// (base/interrupt.h) kills the child within 0.1 s and throws Interrupted.
#include <functional>
#include <string>
#include <string_view>

namespace eppsim {

std::string run_forked(std::string_view what, const std::function<std::string()>& body);

}  // namespace eppsim
