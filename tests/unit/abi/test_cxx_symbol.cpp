// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/abi/cxx_symbol.hpp>

#include <gtest/gtest.h>

namespace kernelhub::abi {
namespace {

using Scope = std::vector<std::string>;

TEST(CxxSymbol, Demangles) {
  EXPECT_EQ(demangle("_ZN3c105ErrorD1Ev"), "c10::Error::~Error()");
  EXPECT_EQ(demangle("pthread_create"), "");
  EXPECT_EQ(demangle("_Zgarbage"), "");
}

TEST(CxxSymbol, ScopeOfNestedNames) {
  EXPECT_EQ(mangled_scope("_ZN5torch6stable6detail4callEv"), (Scope{"torch", "stable", "detail"}));
  EXPECT_EQ(mangled_scope("_ZN3c105ErrorD1Ev"), (Scope{"c10", "Error"}));
  EXPECT_EQ(mangled_scope("_ZNK2at10TensorBase5numelEv"), (Scope{"at", "TensorBase"}));
  // The return type of a template comes after the name, so the scope is still c10's.
  EXPECT_EQ(mangled_scope("_ZN3c1010Dispatcher4callIN2at6TensorEJEEET_v")[0], "c10");
  // An ABI tag is not a scope.
  EXPECT_EQ(mangled_scope("_ZN3c106detail4failB5cxx11Ev"), (Scope{"c10", "detail"}));
}

TEST(CxxSymbol, ScopeOfSpecialNames) {
  EXPECT_EQ(mangled_scope("_ZTIN3c105ErrorE"), Scope{"c10"});   // typeinfo
  EXPECT_EQ(mangled_scope("_ZTVN2at10TensorImplE"), Scope{"at"});  // vtable
  EXPECT_EQ(mangled_scope("_ZThn16_N3c105Error4whatEv")[0], "c10");  // thunk
  EXPECT_EQ(mangled_scope("_ZZN2at3fooEvE1x")[0], "at");  // local static
  EXPECT_EQ(mangled_scope("_ZTISt9exception"), Scope{"std"});
}

TEST(CxxSymbol, GlobalAndMalformedNames) {
  EXPECT_TRUE(mangled_scope("_Z3foov").empty());
  EXPECT_TRUE(mangled_scope("foo").empty());
  EXPECT_TRUE(mangled_scope("_ZN").empty());
  EXPECT_TRUE(mangled_scope("_ZN99999999999999999999999c10").empty());
  EXPECT_TRUE(mangled_scope("_ZN5tor").empty());
}

}  // namespace
}  // namespace kernelhub::abi
