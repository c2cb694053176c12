// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/cli/completion_script.hpp>

#include <algorithm>
#include <cctype>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace kernelhub::cli {

namespace {

constexpr std::size_t k_max_description = 80;
constexpr std::string_view k_help_description = "print this help message and exit";

// Every command has -h/--help, which the command model leaves out (docs/cli.md says it once).
ArgumentDoc help_option() {
  ArgumentDoc help;
  help.names = {"-h", "--help"};
  help.description = std::string(k_help_description);
  help.flag = true;
  return help;
}

std::vector<ArgumentDoc> options_with_help(const CommandDoc& command) {
  auto options = command.options;
  options.push_back(help_option());
  return options;
}

// "kernel-builder" -> "_kernel_builder": a shell function name.
std::string function_name(std::string_view program) {
  std::string name = "_";
  for (char c : program) {
    name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  }
  return name;
}

// A word the scripts may write unquoted: option names, command names, IsMember values. Any
// other value (none today) is left out of the word lists rather than risk a broken script.
bool plain_word(std::string_view word) {
  return !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("-_.,+=/@%").find(c) !=
                                                              std::string_view::npos;
  });
}

std::vector<std::string> plain_words(const std::vector<std::string>& words) {
  std::vector<std::string> kept;
  std::copy_if(words.begin(), words.end(), std::back_inserter(kept),
               [](const std::string& word) { return plain_word(word); });
  return kept;
}

// One line, at most k_max_description characters: completion menus show a short hint, the
// whole text is in --help.
std::string short_description(std::string_view text) {
  std::string line;
  for (char c : text) {
    const bool space = std::isspace(static_cast<unsigned char>(c)) != 0;
    if (space && (line.empty() || line.back() == ' ')) {
      continue;
    }
    line += space ? ' ' : c;
  }
  while (!line.empty() && line.back() == ' ') {
    line.pop_back();
  }
  if (line.size() <= k_max_description) {
    return line;
  }
  auto cut = line.rfind(' ', k_max_description - 3);
  if (cut == std::string::npos || cut == 0) {
    cut = k_max_description - 3;
  }
  return line.substr(0, cut) + "...";
}

std::vector<std::string> option_words(const std::vector<ArgumentDoc>& options) {
  std::vector<std::string> words;
  for (const auto& option : options) {
    words.insert(words.end(), option.names.begin(), option.names.end());
  }
  return plain_words(words);
}

std::vector<std::string> command_names(const CommandDoc& program) {
  std::vector<std::string> names;
  for (const auto& command : program.subcommands) {
    names.push_back(command.path.substr(command.path.rfind(' ') + 1));
  }
  return plain_words(names);
}

// --- bash -----------------------------------------------------------------------------------

// The `case "$prev"` arms of one command: after an option that takes a value, its allowed
// values, or nothing so that bash falls back to file names (`complete -o default`).
std::string bash_value_arms(const CommandDoc& command) {
  std::string arms;
  std::vector<std::string> free_value;
  for (const auto& option : command.options) {
    if (option.flag) {
      continue;
    }
    const auto names = plain_words(option.names);
    if (names.empty()) {
      continue;
    }
    const auto values = plain_words(option.allowed_values);
    if (values.empty()) {
      free_value.insert(free_value.end(), names.begin(), names.end());
    } else {
      arms += fmt::format("        {}) COMPREPLY=($(compgen -W \"{}\" -- \"$cur\")); return 0 ;;\n",
                          fmt::join(names, "|"), fmt::join(values, " "));
    }
  }
  if (!free_value.empty()) {
    arms += fmt::format("        {}) return 0 ;;\n", fmt::join(free_value, "|"));
  }
  return arms.empty() ? "" : "      case \"$prev\" in\n" + arms + "      esac\n";
}

std::string bash_script(const CommandDoc& program) {
  const auto function = function_name(program.path);
  std::string out = fmt::format(
      "# bash completion for {0}, generated from its command table by\n"
      "# `{0} completions bash`.\n"
      "# Load it with `source <({0} completions bash)`, or save it as\n"
      "# ~/.local/share/bash-completion/completions/{0}.\n",
      program.path);
  out += function + "() {\n";
  out += "  local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"\" command=\"\" options=\"\" i\n";
  out += "  ((COMP_CWORD > 0)) && prev=\"${COMP_WORDS[COMP_CWORD - 1]}\"\n";
  out += "  # The command is the first word that is no option: the program's own options take no\n";
  out += "  # value.\n";
  out += "  for ((i = 1; i < COMP_CWORD; i++)); do\n";
  out += "    case \"${COMP_WORDS[i]}\" in\n";
  out += "      -*) ;;\n";
  out += "      *) command=\"${COMP_WORDS[i]}\"; break ;;\n";
  out += "    esac\n";
  out += "  done\n";
  out += "  case \"$command\" in\n";
  out += "    \"\")\n";
  out += "      if [[ \"$cur\" != -* ]]; then\n";
  out += fmt::format("        COMPREPLY=($(compgen -W \"{}\" -- \"$cur\"))\n",
                     fmt::join(command_names(program), " "));
  out += "        return 0\n";
  out += "      fi\n";
  out += fmt::format("      options=\"{}\"\n", fmt::join(option_words(options_with_help(program)), " "));
  out += "      ;;\n";
  for (const auto& command : program.subcommands) {
    const auto name = command.path.substr(command.path.rfind(' ') + 1);
    if (!plain_word(name)) {
      continue;
    }
    out += fmt::format("    {})\n", name);
    out += bash_value_arms(command);
    out += fmt::format("      options=\"{}\"\n",
                       fmt::join(option_words(options_with_help(command)), " "));
    out += "      ;;\n";
  }
  out += "    *) return 0 ;;\n";
  out += "  esac\n";
  out += "  # Anything but an option is a positional argument: bash completes file names.\n";
  out += "  if [[ \"$cur\" == -* ]]; then\n";
  out += "    COMPREPLY=($(compgen -W \"$options\" -- \"$cur\"))\n";
  out += "  fi\n";
  out += "  return 0\n";
  out += "}\n";
  out += fmt::format("complete -o default -F {} {}\n", function, program.path);
  return out;
}

// --- zsh ------------------------------------------------------------------------------------

// `text` inside a single-quoted zsh word.
std::string zsh_quoted(std::string_view text) {
  std::string out;
  for (char c : text) {
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  }
  return out;
}

// An _arguments description: brackets end it and colons separate a spec's fields.
std::string zsh_description(std::string_view text) {
  std::string out;
  for (char c : short_description(text)) {
    if (c == '\\' || c == '[' || c == ']' || c == ':') {
      out += '\\';
    }
    out += c;
  }
  return zsh_quoted(out);
}

std::string zsh_value_name(const ArgumentDoc& option) {
  std::string name;
  for (char c : option.value_name) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
      name += c;
    }
  }
  return name.empty() ? "VALUE" : name;
}

std::string zsh_option_specs(const std::vector<ArgumentDoc>& options, std::string_view indent) {
  std::string out;
  for (const auto& option : options) {
    const auto description = zsh_description(option.description);
    std::string value;
    if (!option.flag) {
      const auto values = plain_words(option.allowed_values);
      value = values.empty() ? fmt::format(":{}:_files", zsh_value_name(option))
                             : fmt::format(":{}:({})", zsh_value_name(option),
                                           fmt::join(values, " "));
    }
    for (const auto& name : plain_words(option.names)) {
      out += fmt::format("{}'{}{}[{}]{}' \\\n", indent, option.repeatable ? "*" : "", name,
                         description, value);
    }
  }
  return out;
}

std::string zsh_script(const CommandDoc& program) {
  const auto function = function_name(program.path);
  std::string out = fmt::format(
      "#compdef {0}\n"
      "# zsh completion for {0}, generated from its command table by\n"
      "# `{0} completions zsh`. Save it as _{0} in a folder of $fpath, or run\n"
      "# `source <({0} completions zsh)` after compinit.\n\n",
      program.path);
  out += function + "() {\n";
  out += "  local curcontext=\"$curcontext\" state line\n";
  out += "  local -a commands\n";
  out += "  commands=(\n";
  for (const auto& command : program.subcommands) {
    const auto name = command.path.substr(command.path.rfind(' ') + 1);
    if (plain_word(name)) {
      out += fmt::format("    '{}:{}'\n", name, zsh_quoted(short_description(command.synopsis)));
    }
  }
  out += "  )\n";
  out += "  _arguments -C \\\n";
  out += zsh_option_specs(options_with_help(program), "    ");
  out += "    '1: :->command' \\\n";
  out += "    '*:: :->argument'\n";
  out += "  case $state in\n";
  out += "    command)\n";
  out += fmt::format("      _describe -t commands '{} command' commands\n", program.path);
  out += "      ;;\n";
  out += "    argument)\n";
  out += "      case $line[1] in\n";
  for (const auto& command : program.subcommands) {
    const auto name = command.path.substr(command.path.rfind(' ') + 1);
    if (!plain_word(name)) {
      continue;
    }
    out += fmt::format("        {})\n", name);
    out += "          _arguments \\\n";
    out += zsh_option_specs(options_with_help(command), "            ");
    out += command.positionals.empty() ? "            && return 0\n"
                                       : "            '*:file:_files'\n";
    out += "          ;;\n";
  }
  out += "      esac\n";
  out += "      ;;\n";
  out += "  esac\n";
  out += "}\n\n";
  // Autoloaded from $fpath the file is the function's body; sourced, it registers itself.
  out += "if [[ $zsh_eval_context[-1] == loadautofunc ]]; then\n";
  out += fmt::format("  {} \"$@\"\n", function);
  out += "else\n";
  out += fmt::format("  compdef {} {}\n", function, program.path);
  out += "fi\n";
  return out;
}

// --- fish -----------------------------------------------------------------------------------

std::string fish_quoted(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\\' || c == '\'') {
      out += '\\';
    }
    out += c;
  }
  return out + "'";
}

std::string fish_option_lines(const std::string& prefix, const std::vector<ArgumentDoc>& options) {
  std::string out;
  for (const auto& option : options) {
    std::string line = prefix;
    for (const auto& name : plain_words(option.names)) {
      line += name.starts_with("--") ? " -l " + name.substr(2) : " -s " + name.substr(1);
    }
    if (!option.flag) {
      const auto values = plain_words(option.allowed_values);
      line += values.empty() ? " -r"
                             : fmt::format(" -x -a {}", fish_quoted(fmt::format(
                                                            "{}", fmt::join(values, " "))));
    }
    out += line + " -d " + fish_quoted(short_description(option.description)) + "\n";
  }
  return out;
}

std::string fish_script(const CommandDoc& program) {
  std::string out = fmt::format(
      "# fish completion for {0}, generated from its command table by\n"
      "# `{0} completions fish`.\n"
      "# Save it as ~/.config/fish/completions/{0}.fish, or run\n"
      "# `{0} completions fish | source`.\n",
      program.path);
  const auto head = fmt::format("complete -c {}", program.path);
  // Before a command: the commands themselves (no file names) and the program's options.
  for (const auto& command : program.subcommands) {
    const auto name = command.path.substr(command.path.rfind(' ') + 1);
    if (plain_word(name)) {
      out += fmt::format("{} -f -n __fish_use_subcommand -a {} -d {}\n", head, name,
                         fish_quoted(short_description(command.synopsis)));
    }
  }
  out += fish_option_lines(head + " -n __fish_use_subcommand", options_with_help(program));
  for (const auto& command : program.subcommands) {
    const auto name = command.path.substr(command.path.rfind(' ') + 1);
    if (plain_word(name)) {
      out += fish_option_lines(
          fmt::format("{} -n {}", head, fish_quoted("__fish_seen_subcommand_from " + name)),
          options_with_help(command));
    }
  }
  return out;
}

}  // namespace

std::optional<Shell> parse_shell(std::string_view name) {
  if (name == "bash") {
    return Shell::bash;
  }
  if (name == "zsh") {
    return Shell::zsh;
  }
  if (name == "fish") {
    return Shell::fish;
  }
  return std::nullopt;
}

std::string completion_script(const CommandDoc& program, Shell shell) {
  switch (shell) {
    case Shell::bash:
      return bash_script(program);
    case Shell::zsh:
      return zsh_script(program);
    case Shell::fish:
      return fish_script(program);
  }
  return {};
}

}  // namespace kernelhub::cli
