// The translation unit that builds the test binaries' precompiled header
// (tests/CMakeLists.txt: eppsim_test_pch); it holds nothing of its own.
