# Front door. `make test` and `make demo` work on a fresh clone: they install missing Debian packages first.
PRESET ?= dev
BUILD_DIR := build/$(PRESET)

.PHONY: all deps configure build test demo bench chaos fuzz thread-safety images image-test multihost-test install clean help

FUZZ_SECONDS ?= 60

all: build

help:
	@echo "make test    install deps if missing, configure, build, run every test (PRESET=$(PRESET))"
	@echo "make demo    build, start a local cluster, show it works, stop it"
	@echo "make build   configure and build only"
	@echo "make bench   build and run the benchmarks in bench/ (use PRESET=bench for optimized numbers)"
	@echo "make chaos   build and run the full chaos suite (kill -9, SIGSTOP, full disk, dropped connections, corrupt store)"
	@echo "make fuzz    build the libFuzzer targets (clang) and run each for FUZZ_SECONDS=$(FUZZ_SECONDS)"
	@echo "make thread-safety  clang -Wthread-safety -Werror over every C++ file (needs a build)"
	@echo "make install PREFIX=DIR  configure, build and install bin/ and share/accelopt/ under DIR"
	@echo "make images  one OCI archive per service in build/images/ (Debian packages only; IMAGE_PRESET=$(IMAGE_PRESET))"
	@echo "make image-test  unpack each image, run it under bubblewrap, check SERVING and a profile (after images)"
	@echo "make multihost-test  services in separate network namespaces, a job, one profiler killed (root)"
	@echo "make clean   remove build/$(PRESET)"

deps:
	@scripts/install-deps.sh --check >/dev/null 2>&1 || scripts/install-deps.sh

$(BUILD_DIR)/build.ninja: CMakeLists.txt CMakePresets.json | deps
	cmake --preset $(PRESET)

configure: deps $(BUILD_DIR)/build.ninja

build: configure
	cmake --build --preset $(PRESET)

# Under a fresh temporary root that must be empty afterwards (scripts/run-tests.sh).
test: build
	scripts/run-tests.sh $(PRESET)

demo: build
	scripts/demo.sh $(BUILD_DIR)

bench: configure
	scripts/run-benchmarks.sh $(BUILD_DIR)

chaos: configure
	cmake --build --preset $(PRESET) --target chaos_test
	ACCELOPT_CHAOS=1 $(BUILD_DIR)/tests/chaos/chaos_test

fuzz: deps
	FUZZ_SECONDS=$(FUZZ_SECONDS) scripts/fuzz.sh

thread-safety: build
	tests/style/check_thread_safety.py $(BUILD_DIR)

# Install layout (docs/deploy.md, "Install").
PREFIX ?= /usr/local
INSTALL_TARGETS := orchestrator planner executor profiler memory accelopt accelopt-trn-model
install: configure
	cmake --build --preset $(PRESET) --target $(INSTALL_TARGETS)
	cmake --install $(BUILD_DIR) --prefix $(PREFIX)

# Images (docs/deploy.md, "Images"): a stripped install of IMAGE_PRESET, then deploy/images/build.sh.
IMAGE_PRESET ?= release
IMAGE_DIR := build/images
images: deps
	test -f build/$(IMAGE_PRESET)/build.ninja || cmake --preset $(IMAGE_PRESET)
	cmake --build --preset $(IMAGE_PRESET) --target $(INSTALL_TARGETS)
	rm -rf $(IMAGE_DIR)/install
	cmake --install build/$(IMAGE_PRESET) --prefix $(IMAGE_DIR)/install --strip
	deploy/images/build.sh $(IMAGE_DIR)/install $(IMAGE_DIR)

# The CLI that probes the images comes from IMAGE_PRESET's build tree.
image-test:
	deploy/images/test.sh $(IMAGE_DIR) build/$(IMAGE_PRESET)

# Multi-host test (docs/deploy.md, "Multi-host test"): needs root for network namespaces.
multihost-test: build
	tests/multihost/run.sh $(BUILD_DIR)

clean:
	rm -rf $(BUILD_DIR)
