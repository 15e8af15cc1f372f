# WalletVault: `make run` starts a development server, `make test` runs every test.
# Both install missing Debian packages first (as root, or through sudo).

APT_PACKAGES := pkg-config libssl-dev libargon2-dev libsqlite3-dev libmicrohttpd-dev libjansson-dev libyajl-dev libsimdjson-dev libpq-dev postgresql curl python3-venv openssl nginx-light kotlin junit5 libbcprov-java libjackson2-core-java libkotlinx-coroutines-java libkotlinx-atomicfu-java
BENCH_PACKAGES := wrk nginx-light argon2 openssl
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
SWIFT_BUILD_FLAGS ?=

.PHONY: deps bench-deps build release run test format format-check crosscheck bench hostile nginx-front fuzz-smoke crash-test soak clean

deps:
	@missing=""; for p in $(APT_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; fi

bench-deps: deps
	@missing=""; for p in $(BENCH_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; fi

build: deps
	swift build $(SWIFT_BUILD_FLAGS)

release: deps
	swift build -c release

run: build
	swift run $(SWIFT_BUILD_FLAGS) walletvault-server --dev

# Suites that time a live server's deadlines run on their own, one test at a time: in the parallel run, tests that
# block on sockets hold the two cooperative threads and a deadline test's own sleeps are late by tens of seconds.
# They run after the parallel run, beside the other checks that mostly wait (scripts/checks_side_by_side.sh).
# HTTPServerStartTests runs with them for another reason: it leaves the process without descriptors for a moment.
TIMED_SUITES = SlowClientAndDrainTests|HTTPServerSuspendTests|OperationsTests|PostgresOutageTests|LongPollTests|HTTPServerStartTests

test: deps format-check
	swift build --build-tests $(SWIFT_BUILD_FLAGS)
	scripts/with-postgres.sh swift test --skip-build $(SWIFT_BUILD_FLAGS) --skip "$(TIMED_SUITES)"
	scripts/checks_side_by_side.sh "$$(swift build $(SWIFT_BUILD_FLAGS) --show-bin-path)" "$(TIMED_SUITES)" $(SWIFT_BUILD_FLAGS)

# One style, .swift-format's, checked by the toolchain's formatter (Swift 6 ships `swift format`); `make format` applies it.
FORMATTED = Sources Tests Package.swift Fuzz/Sources Fuzz/Package.swift

format:
	swift format format --in-place --recursive $(FORMATTED)

format-check:
	@if swift format --version >/dev/null 2>&1; then \
	  swift format lint --strict --recursive $(FORMATTED) || { echo "style: run 'make format'"; exit 1; }; \
	else echo "style: this toolchain has no 'swift format'; the style check is skipped"; fi

# The blob-format vectors read by a second reader written from docs/FORMAT.md alone (Python cryptography).
crosscheck:
	scripts/crosscheck.sh

hostile: build
	WALLETVAULT_SERVER_BIN=$$(swift build $(SWIFT_BUILD_FLAGS) --show-bin-path)/walletvault-server python3 scripts/hostile.py

# The documented deployment: the real nginx with deploy/nginx-tls.conf in front of the server, every desync shape of
# the hostile corpus sent through it (issue 29).
nginx-front: deps build
	WALLETVAULT_SERVER_BIN=$$(swift build $(SWIFT_BUILD_FLAGS) --show-bin-path)/walletvault-server python3 scripts/nginx_front.py

fuzz-smoke: deps
	scripts/fuzz_smoke.sh

# SQLite, then PostgreSQL on a throwaway cluster; each 20 rounds of a 64-client save storm and a SIGKILL.
crash-test: build
	scripts/crash_test.sh
	scripts/with-postgres.sh env CRASH_DATABASE=postgres scripts/crash_test.sh

soak: build
	scripts/soak.sh

# One markdown table, every path beside its anchor from the same run; saved under .build/bench/.
bench: bench-deps release
	scripts/bench_all.sh

clean:
	rm -rf .build
