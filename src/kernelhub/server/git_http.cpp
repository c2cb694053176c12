// SPDX-License-Identifier: Apache-2.0
// `git clone` of a repository over HTTP (git's smart protocol, read only), as huggingface.co
// allows: git's own `upload-pack --stateless-rpc` answers, run with the request body on its
// stdin and its stdout in an unnamed file, so neither side of a large clone is held in memory.
// A clone shows LFS files as their pointers; git-lfs then fetches the objects through the
// batch API at `<clone url>.git/info/lfs` (lfs_handlers.cpp). Pushes go through the Hub API.
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <kernelhub/server/git_http.hpp>
#include <kernelhub/server/handlers.hpp>
#include <kernelhub/util/unique_fd.hpp>

extern char** environ;

namespace kernelhub::server::handlers {

namespace {

// A request body inflated from gzip (git compresses large negotiations) may not grow past this.
constexpr std::size_t k_max_inflated_body = std::size_t{64} << 20;

using Descriptor = util::UniqueFd;

tl::unexpected<HubError> system_failure(std::string_view what) {
  return hub_fail(500, "", fmt::format("cannot {}: {}", what, std::strerror(errno)));
}

// A file with no name under the server's root: gone with its last descriptor.
HubExpected<std::shared_ptr<Descriptor>> unnamed_file(const Context& ctx) {
  auto file = std::make_shared<Descriptor>(
      ::open(ctx.store.root().c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600));
  if (!*file) {
    // A file system without O_TMPFILE: a named file, unlinked at once.
    std::string pattern = (ctx.store.root() / ".git-http-XXXXXX").string();
    file->reset(::mkostemp(pattern.data(), O_CLOEXEC));
    if (!*file) {
      return system_failure("create a temporary file");
    }
    ::unlink(pattern.c_str());
  }
  return file;
}

HubExpected<void> write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0) {
      return system_failure("write a temporary file");
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return {};
}

HubExpected<std::string> gunzip(std::string_view compressed) {
  z_stream stream{};
  if (inflateInit2(&stream, 16 + MAX_WBITS) != Z_OK) {
    return hub_fail(500, "", "cannot start zlib");
  }
  std::string out;
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data()));
  stream.avail_in = static_cast<uInt>(compressed.size());
  int status = Z_OK;
  while (status == Z_OK) {
    char block[64 << 10];
    stream.next_out = reinterpret_cast<Bytef*>(block);
    stream.avail_out = sizeof block;
    status = inflate(&stream, Z_NO_FLUSH);
    out.append(block, sizeof block - stream.avail_out);
    if (out.size() > k_max_inflated_body) {
      status = Z_DATA_ERROR;
    }
  }
  inflateEnd(&stream);
  if (status != Z_STREAM_END) {
    return bad_request("malformed gzip request body");
  }
  return out;
}

// Runs `git upload-pack --stateless-rpc [extra] <dir>` with `input` on stdin; its stdout is
// left in an unnamed file, rewound.
HubExpected<std::shared_ptr<Descriptor>> run_upload_pack(const Context& ctx,
                                                         const std::string& dir,
                                                         std::string_view input,
                                                         bool advertise) {
  const auto in = KH_HUB_TRY(unnamed_file(ctx));
  const auto out = KH_HUB_TRY(unnamed_file(ctx));
  KH_HUB_TRY(write_all(in->get(), input));
  ::lseek(in->get(), 0, SEEK_SET);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in->get(), STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out->get(), STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  std::vector<std::string> arguments = {"git", "upload-pack", "--stateless-rpc"};
  if (advertise) {
    arguments.emplace_back("--advertise-refs");
  }
  arguments.push_back(dir);
  std::vector<char*> argv;
  for (auto& argument : arguments) {
    argv.push_back(argument.data());
  }
  argv.push_back(nullptr);
  // Protocol v2 when the client asks for it (the `Git-Protocol` header), as git's
  // http-backend passes it on; nothing else of the server's environment steers git.
  std::vector<std::string> environment = {"PATH=/usr/local/bin:/usr/bin:/bin",
                                          "GIT_CONFIG_NOSYSTEM=1", "HOME=/nonexistent"};
  if (const auto protocol = ctx.request.header("git-protocol")) {
    if (protocol->find_first_of("\r\n") == std::string_view::npos) {
      environment.push_back(fmt::format("GIT_PROTOCOL={}", *protocol));
    }
  }
  std::vector<char*> envp;
  for (auto& entry : environment) {
    envp.push_back(entry.data());
  }
  envp.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, "git", &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    errno = spawned;
    return system_failure("run git upload-pack");
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return hub_fail(500, "", "git upload-pack failed");
  }
  ::lseek(out->get(), 0, SEEK_SET);
  return out;
}

// git's pkt-line: four hex digits of the length (themselves included), then the data.
std::string pkt_line(std::string_view data) {
  return fmt::format("{:04x}{}", data.size() + 4, data);
}

HttpResponse file_response(std::shared_ptr<Descriptor> file, std::string prefix,
                           std::string content_type) {
  struct stat info {};
  ::fstat(file->get(), &info);
  HttpResponse response;
  response.content_type = std::move(content_type);
  response.set_header("Cache-Control", "no-cache");
  response.has_stream = true;
  response.stream_size = prefix.size() + static_cast<std::uint64_t>(info.st_size);
  response.stream_reader = [file, prefix = std::move(prefix), sent = std::size_t{0}](
                               char* out, std::size_t capacity) mutable -> HubExpected<std::size_t> {
    if (sent < prefix.size()) {
      const std::size_t n = std::min(capacity, prefix.size() - sent);
      std::memcpy(out, prefix.data() + sent, n);
      sent += n;
      return n;
    }
    while (true) {
      const ssize_t n = ::read(file->get(), out, capacity);
      if (n < 0 && errno == EINTR) {
        continue;
      }
      if (n < 0) {
        return system_failure("read git's answer");
      }
      return static_cast<std::size_t>(n);
    }
  };
  return response;
}

// A private repository asks git for credentials (it sends the token as the password of
// Basic auth, as with huggingface.co); a missing one is the same 404 as anywhere else.
HubExpected<OpenRepository> open_for_clone(Context& ctx, const RepoId& id) {
  auto opened = ctx.store.open(id);
  if (opened && opened->is_private && !has_valid_token(ctx)) {
    HubError error{401, "", "authentication required: use a token as the password"};
    return tl::unexpected(error);
  }
  if (!opened) {
    return tl::unexpected(opened.error());
  }
  return opened;
}

}  // namespace

HubExpected<HttpResponse> git_http(Context& ctx, const RepoId& id, GitHttpAction action) {
  const HttpRequest& request = ctx.request;
  if (action == GitHttpAction::receive_pack) {
    return hub_fail(403, "", "pushing with git is not supported here: upload with "
                             "huggingface_hub or kernel-builder upload");
  }
  auto opened = open_for_clone(ctx, id);
  if (!opened) {
    HttpResponse refused = error_response(opened.error());
    if (opened.error().status == 401) {
      refused.set_header("WWW-Authenticate", "Basic realm=\"kernelhub\"");
    }
    return refused;
  }
  const std::string dir = ctx.store.directory(id).string();
  if (action == GitHttpAction::advertise) {
    if (ctx.target.param("service") != std::optional<std::string_view>("git-upload-pack")) {
      return hub_fail(403, "", "only git-upload-pack (clone and fetch) is served over HTTP");
    }
    const bool v2 = request.header("git-protocol").value_or("").find("version=2") !=
                    std::string_view::npos;
    auto out = KH_HUB_TRY(run_upload_pack(ctx, dir, "", /*advertise=*/true));
    // Protocol v0/v1 answers start with the service line and a flush (git's http-backend).
    std::string prefix = v2 ? "" : pkt_line("# service=git-upload-pack\n") + "0000";
    return file_response(std::move(out), std::move(prefix),
                         "application/x-git-upload-pack-advertisement");
  }
  std::string_view body = request.body;
  std::string inflated;
  if (request.header("content-encoding") == std::optional<std::string_view>("gzip")) {
    inflated = KH_HUB_TRY(gunzip(body));
    body = inflated;
  }
  auto out = KH_HUB_TRY(run_upload_pack(ctx, dir, body, /*advertise=*/false));
  return file_response(std::move(out), "", "application/x-git-upload-pack-result");
}

}  // namespace kernelhub::server::handlers
