#include "base/protobuf_log.h"

#include <mutex>
#include <string_view>

#include <google/protobuf/stubs/logging.h>

#include "base/log.h"

namespace eppsim {
namespace {

thread_local ProtobufLogCapture* active = nullptr;
thread_local std::string* sink = nullptr;

void handle(google::protobuf::LogLevel level, const char*, int, const std::string& message) {
  std::string_view text(message);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\n')) text.remove_suffix(1);
  if (sink != nullptr) {
    if (!sink->empty()) sink->append("; ");
    sink->append(text);
    return;
  }
  logging::message(level >= google::protobuf::LOGLEVEL_ERROR ? logging::Level::Error : logging::Level::Warn, "protobuf",
                   "{}", text);
}

}  // namespace

ProtobufLogCapture::ProtobufLogCapture() : outer_(active) {
  static std::once_flag installed;
  std::call_once(installed, [] { google::protobuf::SetLogHandler(&handle); });
  active = this;
  sink = &text_;
}

ProtobufLogCapture::~ProtobufLogCapture() {
  active = outer_;
  sink = outer_ != nullptr ? &outer_->text_ : nullptr;
}

std::string ProtobufLogCapture::detail() const { return text_.empty() ? std::string() : " (" + text_ + ")"; }

}  // namespace eppsim
