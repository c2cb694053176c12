// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/checks/python_imports_check.hpp>

#include <algorithm>
#include <array>
#include <system_error>

#include <fmt/format.h>

#include <kernelhub/checks/python_statements.hpp>
#include <kernelhub/checks/python_tokenizer.hpp>
#include <kernelhub/config/python_dependencies.hpp>
#include <kernelhub/util/file_io.hpp>

namespace kernelhub::checks {

namespace {

void add_depends(const std::optional<std::vector<std::string>>& names,
                 config::PythonDependencyScope scope, KernelImports& out) {
  if (!names) {
    return;
  }
  const auto& allowed = config::PythonDependencies::builtin();
  for (const auto& name : *names) {
    if (const auto* packages = allowed.find(scope, name)) {
      for (const auto& package : *packages) {
        if (package.import_name) {
          out.python_depends[*package.import_name] = name;
        }
      }
    }
  }
}

// The loaders that import a kernel: one of them is always present while the kernel's code
// runs, and `get_kernel_dep` is how a kernel with kernel-depends receives its dependencies
// (the reference's idiom is `from kernels import get_kernel_dep`). Anything else of theirs
// (`get_kernel` at import time, say) fetches kernels build.toml does not declare.
constexpr std::array<std::string_view, 2> k_loader_packages = {"kernels", "kernelhub"};
constexpr std::string_view k_loader_api = "get_kernel_dep";

bool is_loader_package(std::string_view top) {
  return std::find(k_loader_packages.begin(), k_loader_packages.end(), top) !=
         k_loader_packages.end();
}

// The names `import` takes from a loader package other than get_kernel_dep ("" when none).
std::string loader_names_refused(const Import& import) {
  if (!import.from_form) {
    return {};  // `import kernels`: the module itself, used as `kernels.get_kernel_dep(...)`
  }
  std::string refused;
  for (const auto& [name, alias] : import.names) {
    if (name != k_loader_api) {
      refused += refused.empty() ? "" : ", ";
      refused += name;
    }
  }
  return refused;
}

// The python-depends entry (any scope) that would provide `module`, for the hint.
std::string provider_of(std::string_view module) {
  const auto& allowed = config::PythonDependencies::builtin();
  std::vector<config::PythonDependencyScope> scopes = {std::nullopt};
  for (auto backend : types::k_all_backends) {
    scopes.emplace_back(backend);
  }
  for (const auto& scope : scopes) {
    for (const auto& name : allowed.names(scope)) {
      for (const auto& package : *allowed.find(scope, name)) {
        if (package.import_name == module) {
          return scope ? fmt::format("\"{}\" to [general.{}] python-depends", name,
                                     types::to_string(*scope))
                       : fmt::format("\"{}\" to [general] python-depends", name);
        }
      }
    }
  }
  return {};
}

using NameSet = std::set<std::string, std::less<>>;

// The names that record whether an optional import worked: those assigned in a `try` body or
// an `except` handler (`HAS_JAX = True` / `= False`, `jax = None`), the names a `try` body
// imports, and names assigned from importlib's find_spec. An `if` on one of them guards the
// imports in its branches.
NameSet availability_flags(const std::vector<Statement>& statements,
                           const std::vector<Import>& imports) {
  NameSet flags;
  for (const auto& statement : statements) {
    const auto tokens = statement.tokens;
    if (tokens.size() < 3 || tokens[0].kind != TokenKind::name || tokens[1].kind != TokenKind::op ||
        (tokens[1].text != "=" && tokens[1].text != ":")) {
      continue;
    }
    const bool guarded = statement.in_try_body() || statement.in_except_handler();
    const bool probe = std::any_of(tokens.begin(), tokens.end(), [](const Token& token) {
      return token.kind == TokenKind::name && token.text == "find_spec";
    });
    if (guarded || probe) {
      flags.emplace(tokens[0].text);
    }
  }
  for (const auto& import : imports) {
    if (!import.statement->in_try_body()) {
      continue;
    }
    if (!import.alias.empty()) {
      flags.insert(import.alias);
    } else if (!import.from_form) {
      flags.insert(import.module.substr(0, import.module.find('.')));
    }
    for (const auto& [name, alias] : import.names) {
      flags.insert(alias.empty() ? name : alias);
    }
  }
  return flags;
}

// Adds the flags this file takes from the kernel's own modules: `from ._ops import has_jax`
// (any number of leading dots, as a subpackage's `from .._ops import ...`), with its alias.
void add_imported_flags(const std::vector<Import>& imports, const KernelImports& kernel,
                        NameSet& flags) {
  for (const auto& import : imports) {
    if (import.level == 0 || import.module.empty()) {
      continue;
    }
    const auto found = kernel.module_flags.find(import.module.substr(0, import.module.find('.')));
    if (found == kernel.module_flags.end()) {
      continue;
    }
    for (const auto& [name, alias] : import.names) {
      if (found->second.contains(name)) {
        flags.insert(alias.empty() ? name : alias);
      }
    }
  }
}

// Whether `blocks` lies inside `outer` (the same enclosing blocks, then maybe more).
bool inside(const std::vector<Block>& blocks, const std::vector<Block>& outer) {
  return blocks.size() >= outer.size() &&
         std::equal(outer.begin(), outer.end(), blocks.begin(), [](const Block& x, const Block& y) {
           return x.keyword == y.keyword && x.indent == y.indent;
         });
}

bool starts_with_keyword(const Statement& statement, std::string_view keyword) {
  const auto& first = statement.tokens.front();
  return first.kind == TokenKind::name && first.text == keyword;
}

// Statements after an early exit on a flag, each with the flag: in a function, an `if` (no
// elif/else) whose condition names a flag and whose body ends in `raise` or `return` lets the
// rest of that function's block run only in one state of the flag.
std::map<const Statement*, std::string> after_early_exits(const std::vector<Statement>& statements,
                                                          const NameSet& flags) {
  std::map<const Statement*, std::string> guarded;
  for (std::size_t i = 0; i < statements.size(); ++i) {
    const auto& header = statements[i];
    const auto in_function = std::any_of(header.blocks.begin(), header.blocks.end(),
                                         [](const Block& block) { return block.keyword == "def"; });
    if (!in_function || !starts_with_keyword(header, "if")) {
      continue;
    }
    // The `if` body: the statements directly inside the block the header opens.
    std::size_t end = i + 1;
    const Statement* last = nullptr;
    std::string flag;
    while (end < statements.size() && statements[end].blocks.size() > header.blocks.size()) {
      const auto& inner = statements[end];
      if (inner.blocks.size() == header.blocks.size() + 1) {
        last = &inner;
        for (const auto& name : inner.blocks.back().condition_names) {
          if (flag.empty() && flags.contains(name)) {
            flag = name;
          }
        }
      }
      ++end;
    }
    if (last == nullptr || flag.empty() ||
        !(starts_with_keyword(*last, "raise") || starts_with_keyword(*last, "return"))) {
      continue;
    }
    if (end < statements.size() && statements[end].blocks.size() == header.blocks.size() &&
        (starts_with_keyword(statements[end], "elif") ||
         starts_with_keyword(statements[end], "else"))) {
      continue;  // the other branch may go on either way
    }
    // The rest of the enclosing block: until a statement leaves it (a shorter block list, as
    // the next function's header at the level above).
    for (std::size_t j = end; j < statements.size() && inside(statements[j].blocks, header.blocks);
         ++j) {
      guarded.emplace(&statements[j], flag);
    }
  }
  return guarded;
}

// Why `import` may fail without breaking the kernel, or "" when it may not.
std::string optional_because(const Import& import, const NameSet& flags,
                             const std::map<const Statement*, std::string>& early_exits) {
  if (import.statement->in_try_body()) {
    return "inside try/except";
  }
  for (const auto& block : import.statement->blocks) {
    for (const auto& name : block.condition_names) {
      if (flags.contains(name)) {
        return fmt::format("under a condition on \"{}\", set by an availability check", name);
      }
    }
  }
  if (const auto found = early_exits.find(import.statement); found != early_exits.end()) {
    return fmt::format("after an early exit on \"{}\", set by an availability check",
                       found->second);
  }
  return {};
}

}  // namespace

std::set<std::string> availability_flags(std::string_view source) {
  const auto tokenized = tokenize_python(source);
  const auto statements = split_statements(tokenized.tokens);
  const auto flags = availability_flags(statements, find_imports(statements));
  return {flags.begin(), flags.end()};
}

KernelImports kernel_imports(const config::BuildConfig& config,
                             const std::filesystem::path& package_dir) {
  KernelImports out;
  out.package = config.general.name.python_name();
  out.own_modules.insert("_ops");  // generated into every variant
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(package_dir, ec)) {
    const auto name = entry.path().filename();
    if (entry.is_directory(ec) && name != "__pycache__") {
      out.own_modules.insert(name.string());
    } else if (name.extension() == ".py") {
      out.own_modules.insert(name.stem().string());
    }
  }
  add_depends(config.general.python_depends, std::nullopt, out);
  // A [tvm-ffi] kernel's framework is tvm_ffi as a torch kernel's is torch: every user of the
  // variant has it, and the reference's own tvm-ffi kernels import it without declaring it.
  if (std::holds_alternative<config::TvmFfi>(config.framework)) {
    out.python_depends["tvm_ffi"] = "tvm-ffi";
    out.module_flags["_ops"] = k_tvm_ffi_ops_flags;
  }
  // The kernel's own top-level modules may define availability flags the others import.
  for (const auto& entry : std::filesystem::directory_iterator(package_dir, ec)) {
    if (entry.path().extension() != ".py" || !entry.is_regular_file(ec)) {
      continue;
    }
    if (const auto text = util::read_file(entry.path())) {
      if (auto flags = availability_flags(*text); !flags.empty()) {
        out.module_flags[entry.path().stem().string()].merge(flags);
      }
    }
  }
  for (auto backend : config.general.backends) {
    const auto& table = config.general.backend_table(backend);
    if (table) {
      add_depends(table->python_depends, backend, out);
    }
  }
  return out;
}

void check_python_imports(std::string_view file, std::string_view source,
                          const KernelImports& kernel, const ImportPolicy& policy,
                          util::DiagnosticSink& sink) {
  const auto tokenized = tokenize_python(source);
  const auto statements = split_statements(tokenized.tokens);
  const auto imports = find_imports(statements);
  auto flags = availability_flags(statements, imports);
  add_imported_flags(imports, kernel, flags);
  const auto early_exits = after_early_exits(statements, flags);
  for (const auto& import : imports) {
    if (import.level > 0 || import.statement->type_checking_only()) {
      continue;
    }
    const auto top = import.module.substr(0, import.module.find('.'));
    if (top.empty() || policy.is_stdlib(top) || policy.comes_with_torch(top) ||
        kernel.python_depends.contains(top)) {
      continue;
    }
    if (const auto because = optional_because(import, flags, early_exits); !because.empty()) {
      // Users without the module get the kernel's fallback; say so where asked (--verbose).
      util::Diagnostic note;
      note.severity = util::Severity::note;
      note.location = {std::string(file), import.line, import.column};
      note.source_line = std::string(util::line_of(source, import.line));
      note.message = fmt::format("optional import of \"{}\" allowed: it is {}", top, because);
      sink.report(std::move(note));
      continue;
    }
    // A module of the kernel's own named like a loader is the kernel's (imported absolutely).
    const bool loader = is_loader_package(top) && !kernel.own_modules.contains(top);
    const auto loader_refused = loader ? loader_names_refused(import) : "";
    if (loader && loader_refused.empty()) {
      continue;
    }
    util::Diagnostic diagnostic;
    diagnostic.location = {std::string(file), import.line, import.column};
    diagnostic.source_line = std::string(util::line_of(source, import.line));
    if (!loader_refused.empty()) {
      diagnostic.message = fmt::format(
          "a kernel may import only \"{}\" from the loader \"{}\", not \"{}\"", k_loader_api,
          top, loader_refused);
      diagnostic.hint = fmt::format(
          "declare the kernels it needs in [general] kernel-depends of build.toml and take them "
          "with `from {} import {}` while the kernel is imported",
          top, k_loader_api);
    } else if (top == kernel.package) {
      diagnostic.message = fmt::format("the kernel's own package \"{}\" is imported absolutely", top);
      diagnostic.hint = "import it relatively (`from . import x`, `from .module import y`): each "
                        "build is loaded under its own unique module name";
    } else if (kernel.own_modules.contains(top)) {
      diagnostic.message = fmt::format("the kernel's module \"{}\" is imported absolutely", top);
      diagnostic.hint = fmt::format("import it relatively: `from .{} import ...`", top);
    } else {
      diagnostic.message = fmt::format(
          "\"{}\" is not in the standard library, torch or its requirements, or the kernel's "
          "python-depends",
          top);
      const auto provider = provider_of(top);
      diagnostic.hint = provider.empty()
                            ? "a kernel may only import what every user has; vendor the code "
                              "into the kernel or drop the import"
                            : fmt::format("add {} in build.toml", provider);
    }
    sink.report(std::move(diagnostic));
  }
}

}  // namespace kernelhub::checks
