#pragma once
// protobuf's own log lines ("[libprotobuf ERROR ...] String field ... contains
// invalid UTF-8 data") as eppsim's. While a ProtobufLogCapture lives on a
// thread, what protobuf logs there is kept for the error its caller raises;
// anything protobuf logs elsewhere goes to eppsim's log (category "protobuf").
// Nothing of protobuf's reaches stderr in its own format.
#include <string>

namespace eppsim {

class ProtobufLogCapture {
 public:
  ProtobufLogCapture();
  ~ProtobufLogCapture();
  ProtobufLogCapture(const ProtobufLogCapture&) = delete;
  ProtobufLogCapture& operator=(const ProtobufLogCapture&) = delete;

  // What protobuf logged on this thread since, lines joined by "; "; empty when nothing.
  const std::string& text() const { return text_; }
  // " (TEXT)" when protobuf said something, else "": for the end of an error message.
  std::string detail() const;

 private:
  std::string text_;
  ProtobufLogCapture* outer_;
};

}  // namespace eppsim
