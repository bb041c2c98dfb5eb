# Front door. `make test` and `make demo` work on a fresh clone: they install missing Debian packages first.
PRESET ?= dev
BUILD_DIR := build/$(PRESET)

.PHONY: all deps configure build test demo bench fuzz thread-safety clean help

FUZZ_SECONDS ?= 60

all: build

help:
	@echo "make test    install deps if missing, configure, build, run every test (PRESET=$(PRESET))"
	@echo "make demo    build, start a local cluster, show it works, stop it"
	@echo "make build   configure and build only"
	@echo "make bench   build and run the benchmarks in bench/ (use PRESET=bench for optimized numbers)"
	@echo "make fuzz    build the libFuzzer targets (clang) and run each for FUZZ_SECONDS=$(FUZZ_SECONDS)"
	@echo "make thread-safety  clang -Wthread-safety -Werror over every C++ file (needs a build)"
	@echo "make clean   remove build/$(PRESET)"

deps:
	@scripts/install-deps.sh --check >/dev/null 2>&1 || scripts/install-deps.sh

$(BUILD_DIR)/build.ninja: CMakeLists.txt CMakePresets.json | deps
	cmake --preset $(PRESET)

configure: deps $(BUILD_DIR)/build.ninja

build: configure
	cmake --build --preset $(PRESET)

test: build
	ctest --preset $(PRESET)

demo: build
	scripts/demo.sh $(BUILD_DIR)

bench: configure
	scripts/run-benchmarks.sh $(BUILD_DIR)

fuzz: deps
	FUZZ_SECONDS=$(FUZZ_SECONDS) scripts/fuzz.sh

thread-safety: build
	tests/style/check_thread_safety.py $(BUILD_DIR)

clean:
	rm -rf $(BUILD_DIR)
