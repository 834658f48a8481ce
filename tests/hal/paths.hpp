#pragma once
#include <filesystem>

namespace anec::test {
inline std::filesystem::path tables() { return ANEC_TEST_TABLES_DIR; }
inline std::filesystem::path tool(const char *name) { return std::filesystem::path(ANEC_TEST_TOOLS_DIR) / name; }
inline std::filesystem::path golden() { return ANEC_TEST_GOLDEN_DIR; }
inline std::filesystem::path fixture(const char *name) { return std::filesystem::path(ANEC_TEST_FIXTURE_DIR) / name; }
} // namespace anec::test
