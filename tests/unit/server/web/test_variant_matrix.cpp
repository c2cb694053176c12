// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/web/variant_matrix.hpp>

#include <gtest/gtest.h>

namespace kernelhub::server::web {

namespace {

VariantInfo variant(std::string name, std::string framework, int rank, std::string version,
                    std::string compute) {
  VariantInfo info;
  info.name = std::move(name);
  info.parsed = true;
  info.framework = std::move(framework);
  info.framework_rank = rank;
  info.framework_version = std::move(version);
  info.compute = std::move(compute);
  info.platform = "x86_64-linux";
  return info;
}

std::size_t at(const std::string& html, std::string_view text) { return html.find(text); }

TEST(VariantMatrix, RowsGoNewestTorchFirstByNumberNotByText) {
  const std::vector<VariantInfo> variants = {
      variant("torch-stable-abi211-cu126-x86_64-linux", "torch stable ABI 2.11", 1, "2.11",
              "cu126"),
      variant("torch215-cxx11-cpu-x86_64-linux", "torch 2.15", 0, "2.15", "cpu"),
      variant("torch29-cxx11-cpu-x86_64-linux", "torch 2.9", 0, "2.9", "cpu"),
  };
  const std::string html = render_variant_matrix(variants, "/kernels/o/k", "/kernels/o/k/tree/v1");
  ASSERT_NE(at(html, ">torch 2.9<"), std::string::npos) << html;
  EXPECT_LT(at(html, ">torch 2.15<"), at(html, ">torch 2.9<"));
  EXPECT_LT(at(html, ">torch 2.9<"), at(html, ">torch stable ABI 2.11<"));
  // Columns sorted by compute, each cell linking to its variant's folder.
  EXPECT_LT(at(html, "<th scope=\"col\">cpu</th>"), at(html, "<th scope=\"col\">cu126</th>"));
  EXPECT_NE(at(html, "href=\"/kernels/o/k/tree/v1/build/torch29-cxx11-cpu-x86_64-linux\""),
            std::string::npos);
}

TEST(VariantMatrix, NamesAndMetadataAreEscaped) {
  VariantInfo odd = variant("torch-<x>", "unrecognised", 4, "", "torch-<x>");
  odd.archs = {"<9.0>"};
  odd.metadata_error = "metadata.json is not a JSON object <b>";
  const std::string html = render_variant_matrix({odd}, "/kernels/o/k", "/kernels/o/k/tree/v1");
  EXPECT_EQ(html.find("<x>"), std::string::npos) << html;
  EXPECT_EQ(html.find("<9.0>"), std::string::npos) << html;
  EXPECT_EQ(html.find("<b>"), std::string::npos) << html;
  EXPECT_NE(html.find("build/torch-%3Cx%3E"), std::string::npos) << html;
}

TEST(VariantMatrix, TheHubsOwnChecksAreShownAndMismatchesMarked) {
  VariantInfo checked = variant("torch-cpu", "torch (any)", 3, "", "cpu");
  checked.digest = "sha256 over 2 files";
  checked.signed_ = true;
  checked.checked = VariantInfo::Checked::at_upload;
  checked.checked_commit = std::string(40, 'c');
  checked.integrity.digest_matches = false;
  checked.integrity.digest_detail = "File hash mismatch for <a>.py: expected: x, got: y";
  checked.integrity.signature_valid = true;
  checked.integrity.signature_detail = "key Mri+";
  std::string html = render_variant_matrix({checked}, "/kernels/o/k", "/kernels/o/k/tree/v1");
  EXPECT_NE(html.find("sha256 over 2 files: <span class=\"error mismatch\">files do not match: "
                      "File hash mismatch for &lt;a&gt;.py"),
            std::string::npos)
      << html;
  // A valid signature over files that changed since is marked, in its cell and above the table.
  EXPECT_NE(html.find("<span class=\"error mismatch\">valid (key Mri+), but the files changed "
                      "after signing</span>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("id=\"variant-mismatch\">Files do not match the digest in their "
                      "metadata.json, so loaders refuse these variants: <code>torch-cpu</code> "
                      "(changed after signing).</p>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<tr data-variant=\"torch-cpu\" class=\"mismatch\">"), std::string::npos)
      << html;
  EXPECT_NE(html.find("<td>at upload (<a href=\"/kernels/o/k/commit/" + std::string(40, 'c') +
                      "\">cccccccccccc</a>)</td>"),
            std::string::npos)
      << html;

  checked.integrity.digest_matches = true;
  checked.integrity.signature_valid = false;
  checked.integrity.signature_detail = "SignatureVerificationFailure: not a trusted key";
  checked.checked = VariantInfo::Checked::on_first_view;
  checked.signature_rechecked = true;
  html = render_variant_matrix({checked}, "/kernels/o/k", "/kernels/o/k/tree/v1");
  EXPECT_NE(html.find("sha256 over 2 files: <span class=\"verified\">files match</span>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("not valid: SignatureVerificationFailure"), std::string::npos) << html;
  EXPECT_EQ(html.find("variant-mismatch"), std::string::npos) << html;
  EXPECT_NE(html.find("<td>when first shown; signature checked again: the hub's keys changed "
                      "since</td>"),
            std::string::npos)
      << html;

  checked.integrity.signature_valid = true;
  checked.integrity.signature_detail = "key Mri+";
  checked.signature_rechecked = false;
  html = render_variant_matrix({checked}, "/kernels/o/k", "/kernels/o/k/tree/v1");
  EXPECT_NE(html.find("<span class=\"verified\">valid</span> (key Mri+)"), std::string::npos)
      << html;

  // Queued for the check after its upload: neither claim is shown as verified.
  checked.checked = VariantInfo::Checked::verifying;
  checked.integrity = {};
  html = render_variant_matrix({checked}, "/kernels/o/k", "/kernels/o/k/tree/v1");
  EXPECT_NE(html.find("<td>sha256 over 2 files: <span class=\"muted verifying\">verifying (the "
                      "hub checks it after the upload)</span></td><td>yes: <span "
                      "class=\"muted verifying\">verifying"),
            std::string::npos)
      << html;

  // Unchecked (the listing): what metadata.json claims, as before.
  checked.checked = VariantInfo::Checked::no;
  html = render_variant_matrix({checked}, "/kernels/o/k", "/kernels/o/k/tree/v1");
  EXPECT_NE(html.find("<td>sha256 over 2 files</td><td>yes</td>"), std::string::npos) << html;
}

TEST(VariantMatrix, NoVariantsSaysSo) {
  EXPECT_NE(render_variant_matrix({}, "/x", "/x/tree/main").find("no build variants"), std::string::npos);
}

}  // namespace

}  // namespace kernelhub::server::web
