#include "common/json_writer.h"

#include <algorithm>
#include <memory>

namespace commlens {

namespace {

using Serializer = nlohmann::detail::serializer<nlohmann::json>;

// nlohmann's output interface over an OutputFile.
class OutputFileAdapter final : public nlohmann::detail::output_adapter_protocol<char> {
 public:
  explicit OutputFileAdapter(OutputFile* out) : out_(out) {}
  void write_character(char c) override { out_->Put(c); }
  void write_characters(const char* s, std::size_t n) override { out_->Write(std::string_view(s, n)); }

 private:
  OutputFile* out_;
};

void Dump(nlohmann::detail::output_adapter_t<char> adapter, const nlohmann::json& doc, int indent) {
  Serializer writer(std::move(adapter), ' ', nlohmann::json::error_handler_t::replace);
  writer.dump(doc, indent >= 0, false, static_cast<unsigned int>(std::max(indent, 0)));
}

}  // namespace

void WriteJson(OutputFile* out, const nlohmann::json& doc, int indent) {
  Dump(std::make_shared<OutputFileAdapter>(out), doc, indent);
}

void WriteJson(std::ostream& out, const nlohmann::json& doc, int indent) {
  Dump(nlohmann::detail::output_adapter<char>(out), doc, indent);
}

std::string JsonText(const nlohmann::json& doc, int indent) {
  std::string text;
  Dump(nlohmann::detail::output_adapter<char>(text), doc, indent);
  return text;
}

std::string JsonString(std::string_view s) {
  // A string value dumps as its literal; the library owns the escaping rules.
  return JsonText(nlohmann::json(std::string(s)), -1);
}

Status WriteJsonFile(const std::string& path, const nlohmann::json& doc, int indent) {
  COMMLENS_ASSIGN_OR_RETURN(std::unique_ptr<OutputFile> out, OutputFile::Create(path));
  WriteJson(out.get(), doc, indent);
  out->Write("\n");
  return out->Commit();
}

}  // namespace commlens
