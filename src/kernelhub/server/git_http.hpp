// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <kernelhub/server/http_message.hpp>
#include <kernelhub/server/repo_id.hpp>

namespace kernelhub::server::handlers {

struct Context;

// git's smart HTTP protocol (read only): `GET <repo>[.git]/info/refs?service=git-upload-pack`
// advertises the refs, `POST <repo>[.git]/git-upload-pack` answers a fetch; receive-pack
// (push) is refused.
enum class GitHttpAction { advertise, upload_pack, receive_pack };
HubExpected<HttpResponse> git_http(Context& ctx, const RepoId& id, GitHttpAction action);

}  // namespace kernelhub::server::handlers
