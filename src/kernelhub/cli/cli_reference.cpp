// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/cli/cli_reference.hpp>

#include <algorithm>
#include <cctype>
#include <string_view>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

namespace kernelhub::cli {

namespace {

// CLI11 hides an option or a subcommand by putting it in the empty group.
bool is_hidden(const std::string& group) { return group.empty(); }

std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const auto end = text.find(separator, start);
    parts.emplace_back(text.substr(start, end - start));
    if (end == std::string_view::npos) {
      return parts;
    }
    start = end + 1;
  }
}

// CLI11 exposes an option's validators only through get_type_name(), as "TEXT:{a,b}:DIR":
// the type, then one description per validator. IsMember describes itself as "{a,b}".
void describe_type(const CLI::Option& option, ArgumentDoc& doc) {
  auto parts = split(option.get_type_name(), ':');
  if (!doc.flag) {
    doc.value_name = parts.front();
  }
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const std::string& part = parts[i];
    if (part.size() >= 2 && part.front() == '{' && part.back() == '}') {
      auto values = split(std::string_view(part).substr(1, part.size() - 2), ',');
      doc.allowed_values.insert(doc.allowed_values.end(), values.begin(), values.end());
    } else if (!part.empty()) {
      doc.checks.push_back(part);
    }
  }
}

ArgumentDoc describe_option(const CLI::Option& option) {
  ArgumentDoc doc;
  if (option.nonpositional()) {
    for (const auto& name : option.get_snames()) {
      doc.names.push_back("-" + name);
    }
    for (const auto& name : option.get_lnames()) {
      doc.names.push_back("--" + name);
    }
  } else {
    doc.names.push_back(option.get_name(/*positional=*/true));
  }
  // Flags are declared with expected(0); CLI11 keeps a type size of 1 for callback flags.
  doc.flag = option.get_expected_max() == 0;
  describe_type(option, doc);
  doc.description = option.get_description();
  if (!doc.flag) {
    doc.default_value = option.get_default_str();
  }
  doc.environment = option.get_envname();
  for (const CLI::Option* other : option.get_excludes()) {
    doc.excludes.push_back(other->get_name());
  }
  // get_excludes() is a set ordered by address; sort so the output is reproducible.
  std::sort(doc.excludes.begin(), doc.excludes.end());
  doc.required = option.get_required();
  doc.repeatable = option.get_expected_max() >= CLI::detail::expected_max_vector_size;
  return doc;
}

std::string positional_usage(const ArgumentDoc& positional) {
  const std::string name = positional.names.front() + (positional.repeatable ? "..." : "");
  return positional.required ? "<" + name + ">" : "[" + name + "]";
}

CommandDoc describe_app(const CLI::App& app, const std::string& path) {
  CommandDoc doc;
  doc.path = path;
  doc.synopsis = app.get_description();
  for (const CLI::Option* option : app.get_options()) {
    if (option == app.get_help_ptr() || option == app.get_help_all_ptr() ||
        is_hidden(option->get_group())) {
      continue;
    }
    auto& list = option->nonpositional() ? doc.options : doc.positionals;
    list.push_back(describe_option(*option));
  }
  const auto visible = app.get_subcommands([](const CLI::App* sub) {
    return !sub->get_name().empty() && !sub->get_disabled() && !is_hidden(sub->get_group());
  });
  for (const CLI::App* sub : visible) {
    doc.subcommands.push_back(describe_app(*sub, path + " " + sub->get_name()));
  }

  doc.usage = path;
  if (!doc.options.empty()) {
    doc.usage += " [OPTIONS]";
  }
  for (const auto& positional : doc.positionals) {
    doc.usage += " " + positional_usage(positional);
  }
  if (!doc.subcommands.empty()) {
    doc.usage += app.get_require_subcommand_min() > 0 ? " <COMMAND>" : " [COMMAND]";
  }
  return doc;
}

// --- Markdown -------------------------------------------------------------------------------

// A table cell holds one line, and a bare '|' would end it (GitHub applies this even inside
// code spans).
std::string table_cell(std::string_view text) {
  std::string cell;
  for (char c : text) {
    if (c == '\n') {
      cell += ' ';
    } else if (c == '|') {
      cell += "\\|";
    } else {
      cell += c;
    }
  }
  return cell;
}

std::string code_list(const std::vector<std::string>& values) {
  std::string out;
  for (const auto& value : values) {
    out += (out.empty() ? "" : ", ") + fmt::format("`{}`", value);
  }
  return out;
}

// GitHub's heading anchor for a heading made of code spans: lowercase, spaces become '-',
// other punctuation is dropped.
std::string anchor(std::string_view heading) {
  std::string out;
  for (char c : heading) {
    if (c == ' ') {
      out += '-';
    } else if (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') {
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  return out;
}

std::string argument_label(const ArgumentDoc& argument, bool positional) {
  if (positional) {
    return positional_usage(argument);
  }
  std::string label;
  for (const auto& name : argument.names) {
    label += (label.empty() ? "" : ", ") + name;
  }
  if (!argument.flag) {
    label += " <" + (argument.value_name.empty() ? std::string("VALUE") : argument.value_name) + ">";
    label += argument.repeatable ? "..." : "";
  }
  return label;
}

std::string argument_details(const ArgumentDoc& argument) {
  std::vector<std::string> details;
  if (!argument.description.empty()) {
    details.push_back(argument.description);
  }
  if (argument.required) {
    details.push_back("Required.");
  }
  if (!argument.default_value.empty()) {
    details.push_back(fmt::format("Default: `{}`.", argument.default_value));
  }
  if (!argument.allowed_values.empty()) {
    details.push_back(fmt::format("One of: {}.", code_list(argument.allowed_values)));
  }
  if (!argument.checks.empty()) {
    details.push_back(fmt::format("Must be: {}.", fmt::join(argument.checks, ", ")));
  }
  if (!argument.environment.empty()) {
    details.push_back(fmt::format("Environment: `{}`.", argument.environment));
  }
  if (!argument.excludes.empty()) {
    details.push_back(fmt::format("Not with {}.", code_list(argument.excludes)));
  }
  // Descriptions follow the CLI's style (lowercase, no final period); the details after one
  // are sentences, so close the description first.
  std::string text;
  for (const auto& detail : details) {
    if (!text.empty()) {
      text += std::string_view(".:!?").find(text.back()) == std::string_view::npos ? ". " : " ";
    }
    text += detail;
  }
  return table_cell(text);
}

void render_arguments(std::string& out, const std::vector<ArgumentDoc>& arguments,
                      bool positional) {
  if (arguments.empty()) {
    return;
  }
  out += positional ? "| argument | description |\n" : "| option | description |\n";
  out += "|---|---|\n";
  for (const auto& argument : arguments) {
    out += fmt::format("| `{}` | {} |\n", table_cell(argument_label(argument, positional)),
                       argument_details(argument));
  }
  out += "\n";
}

void render_command(std::string& out, const CommandDoc& command, int depth) {
  const int level = std::min(2 + depth, 6);
  out += fmt::format("{} `{}`\n\n", std::string(static_cast<std::size_t>(level), '#'),
                     command.path);
  if (!command.synopsis.empty()) {
    out += command.synopsis + "\n\n";
  }
  out += fmt::format("```text\n{}\n```\n\n", command.usage);
  render_arguments(out, command.positionals, /*positional=*/true);
  render_arguments(out, command.options, /*positional=*/false);
  for (const auto& sub : command.subcommands) {
    render_command(out, sub, depth + 1);
  }
}

void render_index(std::string& out, const CommandDoc& command, int depth) {
  out += fmt::format("{}- [`{}`](#{})", std::string(static_cast<std::size_t>(depth) * 2, ' '),
                     command.path, anchor(command.path));
  out += command.synopsis.empty() ? "\n" : ": " + command.synopsis + "\n";
  for (const auto& sub : command.subcommands) {
    render_index(out, sub, depth + 1);
  }
}

// --- JSON -----------------------------------------------------------------------------------

nlohmann::ordered_json argument_json(const ArgumentDoc& argument) {
  return {
      {"names", argument.names},
      {"value_name", argument.value_name},
      {"description", argument.description},
      {"default", argument.default_value},
      {"allowed_values", argument.allowed_values},
      {"checks", argument.checks},
      {"environment", argument.environment},
      {"excludes", argument.excludes},
      {"required", argument.required},
      {"flag", argument.flag},
      {"repeatable", argument.repeatable},
  };
}

nlohmann::ordered_json command_json(const CommandDoc& command) {
  auto positionals = nlohmann::ordered_json::array();
  for (const auto& argument : command.positionals) {
    positionals.push_back(argument_json(argument));
  }
  auto options = nlohmann::ordered_json::array();
  for (const auto& argument : command.options) {
    options.push_back(argument_json(argument));
  }
  auto subcommands = nlohmann::ordered_json::array();
  for (const auto& sub : command.subcommands) {
    subcommands.push_back(command_json(sub));
  }
  return {
      {"path", command.path},       {"synopsis", command.synopsis}, {"usage", command.usage},
      {"positionals", positionals}, {"options", options},           {"commands", subcommands},
  };
}

}  // namespace

CommandDoc describe_program(const Program& program) {
  RunState state;
  const auto app = make_app(program, state);
  return describe_app(*app, std::string(program.name));
}

std::vector<CommandDoc> describe_all_programs() {
  return {describe_program(kernel_builder_program()), describe_program(kernelhub_program())};
}

std::string render_markdown(std::span<const CommandDoc> programs) {
  std::string out =
      "# Command-line reference\n\n"
      "<!-- Generated by `kernel-builder generate-docs` from the command tables and the options\n"
      "     each command declares. Do not edit by hand: run scripts/update-docs.sh. -->\n\n"
      "Every command also accepts `-h, --help`.\n\n";
  for (const auto& program : programs) {
    render_index(out, program, 0);
  }
  out += "\n";
  for (const auto& program : programs) {
    render_command(out, program, 0);
  }
  // Exactly one trailing newline, whatever the last block was.
  while (out.size() > 1 && out.back() == '\n' && out[out.size() - 2] == '\n') {
    out.pop_back();
  }
  return out;
}

std::string render_json(std::span<const CommandDoc> programs) {
  auto list = nlohmann::ordered_json::array();
  for (const auto& program : programs) {
    list.push_back(command_json(program));
  }
  return nlohmann::ordered_json{{"programs", list}}.dump(2) + "\n";
}

}  // namespace kernelhub::cli
