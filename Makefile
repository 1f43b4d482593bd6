# irisgw: `make run` and `make test` are all a newcomer needs (docs/design.md, "Make targets").
SHELL := /bin/bash
# Swift 6.3: from PATH, else where the toolchain is installed (/opt/swift/usr/bin, which
# `sudo` leaves off PATH); `make deps` says what to do when neither has it.
SWIFT_HOME ?= /opt/swift/usr/bin
SWIFT ?= $(or $(shell command -v swift 2>/dev/null),$(wildcard $(SWIFT_HOME)/swift),swift)
# Debian packages that building and running the gateway need (`make build`, `make run`).
DEBS_RUN := libosip2-dev libopus-dev libspandsp-dev libtiff-dev libssl-dev libsqlite3-dev libc-ares-dev libsrtp2-dev \
        liburing-dev libhiredis-dev libpq-dev pkg-config
# ... and what only the tests need: their peers and tools, the servers of the cluster tests,
# systemd-analyze for the units (`make test`).
DEBS_TEST := sip-tester nftables iproute2 baresip dnsmasq-base stunnel4 chromium tshark sngrep \
        redis-server kamailio postgresql python3-venv espeak-ng opus-tools python3-yaml systemd
# Which lists `make deps` installs: run (DEBS_RUN) or test (both, and the Python venv).
DEPS ?= test
DEBS = $(DEBS_RUN) $(if $(filter test,$(DEPS)),$(DEBS_TEST))
# pjsua2 (PJSIP's Python binding, with TLS and SRTP) for the transfer peers of the end-to-end
# tests (Tests/EndToEndTests/PJSUAPeer.swift), in a venv the tests find at .build/pyenv.
PYTHON ?= /usr/bin/python3
PJSUA2_VERSION := 2.15.1.post1
PYENV := .build/pyenv
comma := ,
PYENV_STAMP := $(PYENV)/.pjsua2-$(PJSUA2_VERSION)
# websockets (PyPI) for the voice agent of the Media Streams tests (Tests/MediaStreamsTests/MediaAgent.swift).
WEBSOCKETS_VERSION := 13.1
WEBSOCKETS_STAMP := $(PYENV)/.websockets-$(WEBSOCKETS_VERSION)
# The OpenAPI contract's tools (PyPI), same venv: openapi-spec-validator checks docs/openapi.yaml,
# schemathesis runs it against a live gateway (Tests/ControlAPITests/OpenAPIDocumentTests.swift,
# Tests/EndToEndTests/OpenAPIContractTests.swift). Debian's python3-yaml reads the YAML.
OPENAPI_SPEC_VALIDATOR_VERSION := 0.9.0
SCHEMATHESIS_VERSION := 4.32.5
OPENAPI_STAMP := $(PYENV)/.openapi-$(OPENAPI_SPEC_VALIDATOR_VERSION)-$(SCHEMATHESIS_VERSION)
# The whole suite must finish well inside CI's limit on 2 cores.
TEST_TIMEOUT ?= 1200
# How many tests run at once. No test blocks a thread of the cooperative pool, so without a
# bound every test would start together on two cores and the timing checks of the first
# ones would starve; 8 keeps both cores busy while tests wait on sockets and processes.
TEST_WIDTH ?= 8

.PHONY: all deps deps-run build release release-static install deb try-package test bench bench-deps run cluster fuzz fuzz-smoke lint format clean

all: build

## deps: install the missing Debian packages of the list DEPS picks: `make deps DEPS=run` the
## build's and the gateway's (DEBS_RUN), `make deps` those and the tests' (DEBS_TEST) with
## the Python venv. Needs root; runs apt-get update once if needed. Redis, Kamailio and
## PostgreSQL are for the cluster tests, which start their own servers: their Debian
## services are kept from starting (policy-rc.d) and left disabled.
deps:
	@missing=""; for p in $(DEBS); do \
	  dpkg-query -W -f='$${db:Status-Abbrev}' $$p 2>/dev/null | grep -q '^ii' || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" != 0 ]; then \
	    echo "make deps: these Debian packages are missing and installing them needs root:$$missing" >&2; \
	    echo "  run:  sudo make deps DEPS=$(DEPS)" >&2; \
	    echo "  or:   sudo apt-get install --no-install-recommends$$missing" >&2; \
	    exit 1; \
	  fi; \
	  echo "installing:$$missing"; \
	  echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections; \
	  guard=; if [ ! -e /usr/sbin/policy-rc.d ]; then printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d && guard=1; fi; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; status=$$?; \
	  if [ -n "$$guard" ]; then rm -f /usr/sbin/policy-rc.d; fi; \
	  for svc in redis-server kamailio postgresql; do case " $$missing " in *" $$svc "*) \
	    [ -d /run/systemd/system ] && systemctl disable --now $$svc >/dev/null 2>&1 || true;; esac; done; \
	  [ $$status = 0 ] || exit $$status; \
	fi
	@command -v $(SWIFT) >/dev/null || { \
	  echo "swift not found: \"$(SWIFT)\" is neither on PATH ($$PATH) nor at $(SWIFT_HOME)/swift." >&2; \
	  echo "  Install Swift 6.3 so that $(SWIFT_HOME)/swift exists (or SWIFT_HOME=DIR names its usr/bin)," >&2; \
	  echo "  or put its usr/bin on PATH, or give the binary: make SWIFT=/path/to/swift ..." >&2; exit 1; }
	@# The venv goes in .build, which must stay the user's: under sudo it waits for `make test`.
	@if [ "$(DEPS)" = test ] && [ -z "$$SUDO_USER" ]; then $(MAKE) -s --no-print-directory $(PYENV_STAMP) $(WEBSOCKETS_STAMP) $(OPENAPI_STAMP); fi

## deps-run: `make deps DEPS=run`, what build, release, install, deb and run need
deps-run:
	@$(MAKE) -s --no-print-directory deps DEPS=run

## pip-install REQUIREMENTS, IMPORTS, SHOWN AS, WHAT FOR, NAMED IN A FAILURE, TESTS SKIPPED: PyPI packages into
## the tests' venv (made if missing), checked by importing them; the stamp ($@) is touched
## only then. A failure is not an error: the tests that need them are skipped with a notice.
define pip-install
	@echo "installing: $(3) into $(PYENV) (for $(4))"
	@{ [ -x $(PYENV)/bin/python3 ] || $(PYTHON) -m venv $(PYENV); } \
	  && $(PYENV)/bin/python3 -m pip install -q --disable-pip-version-check $(1) \
	  && $(PYENV)/bin/python3 -c "import $(2)" && touch $@ \
	  || echo "could not install $(5) into $(PYENV): the $(6) tests will be skipped" >&2
endef

## pyenv: the venv with pjsua2-python (once: a stamp file names the version).
$(PYENV_STAMP):
	$(call pip-install,pjsua2-python==$(PJSUA2_VERSION),pjsua2,pjsua2-python $(PJSUA2_VERSION),the transfer peers of the tests,pjsua2-python,pjsua2 peer)

## websockets: the voice agent's WebSocket server, in the same venv (a stamp names the version).
$(WEBSOCKETS_STAMP):
	$(call pip-install,websockets==$(WEBSOCKETS_VERSION),websockets,websockets $(WEBSOCKETS_VERSION),the voice agent of the Media Streams tests,websockets,Media Streams agent)

## openapi: openapi-spec-validator and schemathesis in the same venv (a stamp names both versions).
$(OPENAPI_STAMP):
	$(call pip-install,openapi-spec-validator==$(OPENAPI_SPEC_VALIDATOR_VERSION) schemathesis==$(SCHEMATHESIS_VERSION),openapi_spec_validator$(comma) schemathesis,openapi-spec-validator $(OPENAPI_SPEC_VALIDATOR_VERSION)$(comma) schemathesis $(SCHEMATHESIS_VERSION),the OpenAPI contract tests,the OpenAPI tools,OpenAPI validation and schemathesis)

build: deps-run
	$(SWIFT) build

release: deps-run
	$(SWIFT) build -c release

## release-static: the release binary with the Swift runtime linked in: it needs nothing from
## /opt/swift, so a toolchain upgrade cannot break an installed gateway (install and deb use
## it). Its own build folder: the flag changes every module's compile, and sharing
## .build/release with `make release` would rebuild everything at each switch.
STATIC_BUILD := .build/static
release-static: deps-run
	$(SWIFT) build -c release --static-swift-stdlib --product irisgw --scratch-path $(STATIC_BUILD)

## install: irisgw (release-static), the dialer page, example profiles and serve file, the
## man page and the systemd unit under DESTDIR/PREFIX; settings in SYSCONFDIR/irisgw unless
## there already (packaging/install.sh; docs/operations.md, "Installing").
## BINARY=path installs that binary instead and builds nothing.
PREFIX ?= /usr/local
DESTDIR ?=
SYSCONFDIR ?= $(if $(filter /usr,$(PREFIX)),/etc,$(PREFIX)/etc)
UNITDIR ?= $(PREFIX)/lib/systemd/system
BINARY ?=
INSTALL_BINARY = $(or $(BINARY),$(STATIC_BUILD)/release/irisgw)
install: $(if $(BINARY),,release-static)
	@BINARY="$(INSTALL_BINARY)" DESTDIR="$(DESTDIR)" PREFIX="$(PREFIX)" SYSCONFDIR="$(SYSCONFDIR)" \
	  UNITDIR="$(UNITDIR)" packaging/install.sh

## deb: the Debian package irisgw_<version>_<arch>.deb in DEB_DIR, from release-static (or
## BINARY=path, building nothing): packaging/build-deb.sh; docs/operations.md, "The Debian package"
DEB_DIR ?= .build/deb
deb: $(if $(BINARY),,release-static)
	@packaging/build-deb.sh "$(INSTALL_BINARY)" "$(DEB_DIR)"

## try-package: the newcomer's path on a fresh Debian 12 booted with systemd as PID 1
## (debootstrap, systemd-nspawn): apt install the package, enable the unit, the README's first
## call, reload, stop with a call draining, purge (packaging/try-on-debian.sh; docs/operations.md,
## "The Debian package"). Root, Debian's mirror and minutes: not part of `make test`. Builds the
## package with `make deb` unless DEB=path names one.
DEB ?=
try-package:
	@DEB="$(DEB)" packaging/try-on-debian.sh

## test: unit tests and end-to-end tests against SIPp, bounded in time; then fuzz-smoke
## (every fuzz target over its seeds and for FUZZ_SMOKE_SECONDS; a crash fails the test)
test: deps
	$(SWIFT) build --build-tests
	@[ -d "$${IRISGW_CONFORMANCE:-../shared/conformance}/rfc4475" ] || echo "conformance corpus not found at $${IRISGW_CONFORMANCE:-../shared/conformance}: the suites that replay it are skipped (docs/conformance.md)"
	timeout $(TEST_TIMEOUT) $(SWIFT) test --skip-build --experimental-maximum-parallelization-width $(TEST_WIDTH)
	@$(MAKE) --no-print-directory fuzz-smoke

## bench: the default set of benches (under 10 minutes on 2 cores), each under a deadline, its
## lines with their aim and pass=, then a summary; BENCH_ARGS picks benches:
##   make bench BENCH_ARGS=flood, BENCH_ARGS="soak --minutes 5", BENCH_ARGS=all (docs/benchmarks.md)
BENCH_ARGS ?=
bench: release deps bench-deps
	.build/release/irisgw-bench $(BENCH_ARGS)

## bench-deps: Debian's rtpengine for BENCH vs-rtpengine (the bench runs the binary itself;
## the Debian service is kept from starting). A failure is not an error: that line then
## says skipped.
bench-deps:
	@[ -x /usr/bin/rtpengine ] || { \
	  if [ "$$(id -u)" != 0 ]; then echo "bench: rtpengine-daemon is missing and installing it needs root: BENCH vs-rtpengine will be skipped" >&2; exit 0; fi; \
	  echo "installing: rtpengine-daemon (for BENCH vs-rtpengine)"; \
	  guard=; if [ ! -e /usr/sbin/policy-rc.d ]; then printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d && guard=1; fi; \
	  { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends rtpengine-daemon >/dev/null 2>&1 \
	    || { apt-get update -qq >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends rtpengine-daemon >/dev/null 2>&1; }; } \
	    || echo "bench: could not install rtpengine-daemon: BENCH vs-rtpengine will be skipped" >&2; \
	  if [ -n "$$guard" ]; then rm -f /usr/sbin/policy-rc.d; fi; \
	  if [ -d /run/systemd/system ] && command -v systemctl >/dev/null; then systemctl disable --now rtpengine-daemon >/dev/null 2>&1 || true; fi; \
	}

## run: the gateway with the built-in carrier simulator (SIP 127.0.0.1:5060, API :8080, simulator :5090) until Ctrl-C
run: release
	@echo "irisgw gateway: SIP on 127.0.0.1:5060, control API on http://127.0.0.1:8080; Ctrl-C stops it."
	@echo "The built-in carrier simulator plays the PSTN on 127.0.0.1:5090 (numbers: docs/carrier-testing.md)."
	@echo "In a second terminal:"
	@echo "    .build/release/irisgw call +15550100001 --from +15557654321 --tone 440 --hangup-after 5"
	@echo "    .build/release/irisgw test --profile carrier-sim --suite sip-profiles/suites/basic.json5"
	@echo "The dialer page: mint a page token, then open http://127.0.0.1:8080 + its appPath (README, Calling from a browser):"
	@echo "    curl -s -H \"Authorization: Bearer \$$(cat .irisgw/api-key)\" -d '{\"routingId\":\"alice\"}' http://127.0.0.1:8080/v1/page-tokens"
	@CARRIER_SIM_PASSWORD=$${CARRIER_SIM_PASSWORD:-carrier-sim} .build/release/irisgw serve --carrier-sim 127.0.0.1:5090

## cluster: Redis, Kamailio (cluster/kamailio.cfg), three nodes gw1..gw3 and the carrier
## simulator on this machine, every port picked free, until Ctrl-C (cluster/run-local.sh;
## docs/operations.md, "Running a cluster")
cluster: release deps
	@cluster/run-local.sh

## lint: the toolchain's swift-format over Sources, Tests, Fuzz and Package.swift, with the
## rules in .swift-format (4 spaces, 120 columns); any finding fails. `make format` rewrites
## the files to those rules.
LINT_PATHS := Sources Tests Fuzz Package.swift
lint:
	@$(SWIFT) format lint --strict --recursive --parallel $(LINT_PATHS)

format:
	@$(SWIFT) format format --in-place --recursive --parallel $(LINT_PATHS)

## fuzz: libFuzzer runs of FUZZ_SECONDS (60) each: SIP parser, SDP, SIP sessions (message
## sequences through a live user agent), RTP/RTCP, API JSON, STUN and the ICE-lite agent,
## DTLS datagrams (docs/conformance.md, Fuzzing)
## fuzz-smoke: every fuzz target over its seeds once, then FUZZ_SMOKE_SECONDS (5) of fuzzing
## each; `make test` runs it after the Swift tests, and a crash fails it
FUZZ_SECONDS ?= 60
FUZZ_SMOKE_SECONDS ?= 5
# The fuzz libraries and binaries build side by side, one compiler per core.
FUZZ_JOBS ?= $(shell nproc)
FUZZ_DIR := .build/fuzz
# `make fuzz` builds optimised (more runs a second); the smoke run of `make test` builds
# unoptimised in a folder of its own: a third of the build time, and 5 s of fuzzing need no speed.
FUZZ_OPT := -O
FUZZ_TARGETS := sip sdp sip-session rtp api stun dtls
FUZZ_BINARIES := $(addprefix $(FUZZ_DIR)/fuzz-,$(FUZZ_TARGETS))
SWIFTC ?= $(or $(shell command -v swiftc 2>/dev/null),$(wildcard $(SWIFT_HOME)/swiftc),swiftc)
# The Swift toolchain's clang (beside swiftc), for the fuzz binary's C support file.
FUZZ_CC ?= $(or $(shell command -v clang 2>/dev/null),$(wildcard $(SWIFT_HOME)/clang),clang)
SIP_SOURCES := $(shell find Sources/SIP -name '*.swift')
MEDIA_SOURCES := $(shell find Sources/Media -name '*.swift')
IOCORE_SOURCES := $(shell find Sources/IOCore -name '*.swift')
DNS_SOURCES := $(shell find Sources/DNS -name '*.swift')
LOGGING_SOURCES := $(shell find Sources/Logging -name '*.swift')
CRYPTO_SOURCES := $(shell find Sources/Crypto -name '*.swift')
TLS_SOURCES := $(shell find Sources/TLS -name '*.swift')
API_SOURCES := $(shell find Sources/IrisAPI -name '*.swift')
ICE_SOURCES := $(shell find Sources/ICE -name '*.swift')
SDP_SOURCES := $(shell find Sources/SDP -name '*.swift')
# Every SIP harness goes into one binary (one compile of Sources/SIP); its links choose.
SIP_FUZZ_SOURCES := Fuzz/FuzzSIPTargets.swift Fuzz/FuzzSIP.swift Fuzz/FuzzSDP.swift Fuzz/FuzzSIPSession.swift
FUZZ_FLAGS = -sanitize=fuzzer,address -parse-as-library $(FUZZ_OPT) -swift-version 6 -suppress-warnings
# gold warns once per ASan helper symbol; the warnings say nothing about our code.
QUIET_LD = 2>&1 | { grep -v "Cannot export local symbol" || true; }; exit $${PIPESTATUS[0]}

.PHONY: fuzz-deps fuzz-build fuzz-smoke
# libFuzzer's runtime ships with the Swift toolchain's clang (-sanitize=fuzzer links it).
fuzz-deps: deps-run
	@command -v $(SWIFTC) >/dev/null || { echo "fuzz: $(SWIFTC) not found on PATH (expected beside swift in /opt/swift/usr/bin)" >&2; exit 1; }
	@command -v $(FUZZ_CC) >/dev/null || { echo "fuzz: $(FUZZ_CC) not found on PATH (the Swift toolchain's clang, /opt/swift/usr/bin)" >&2; exit 1; }
	@ls "$$(dirname "$$(readlink -f "$$(command -v $(SWIFTC))")")"/../lib/clang/*/lib/linux/libclang_rt.fuzzer-$$(uname -m).a >/dev/null 2>&1 \
	  || { echo "fuzz: the Swift toolchain has no libFuzzer runtime (lib/clang/*/lib/linux/libclang_rt.fuzzer-*.a)" >&2; exit 1; }

fuzz-build: fuzz-deps
	@$(MAKE) -s --no-print-directory -j$(FUZZ_JOBS) $(FUZZ_BINARIES)

fuzz: fuzz-build
	@Fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_TARGETS)

FUZZ_SMOKE_DIR := .build/fuzz-smoke
fuzz-smoke: fuzz-deps
	@$(MAKE) -s --no-print-directory -j$(FUZZ_JOBS) FUZZ_DIR=$(FUZZ_SMOKE_DIR) FUZZ_OPT=-Onone \
	  $(addprefix $(FUZZ_SMOKE_DIR)/fuzz-,$(FUZZ_TARGETS))
	@FUZZ_DIR=$(FUZZ_SMOKE_DIR) Fuzz/run.sh --fresh $(FUZZ_SMOKE_SECONDS) $(FUZZ_TARGETS)

$(FUZZ_DIR)/libIOCore.a: $(IOCORE_SOURCES)
	@mkdir -p $(FUZZ_DIR)
	@echo "fuzz: building IOCore (shared by the SIP and RTP targets)"
	@$(SWIFTC) $(FUZZ_FLAGS) -module-name IOCore -I Sources/CLinux -I Sources/CLiburing -emit-module -emit-module-path $(FUZZ_DIR)/IOCore.swiftmodule \
	  -emit-library -static $(IOCORE_SOURCES) -o $@

$(FUZZ_DIR)/libLogging.a: $(LOGGING_SOURCES)
	@mkdir -p $(FUZZ_DIR)
	@echo "fuzz: building Logging (Media imports it)"
	@$(SWIFTC) $(FUZZ_FLAGS) -module-name Logging -emit-module -emit-module-path $(FUZZ_DIR)/Logging.swiftmodule \
	  -emit-library -static $(LOGGING_SOURCES) -o $@

$(FUZZ_DIR)/libDNS.a: $(DNS_SOURCES) $(FUZZ_DIR)/libIOCore.a
	@echo "fuzz: building DNS (SIP imports it)"
	@$(SWIFTC) $(FUZZ_FLAGS) -module-name DNS -I $(FUZZ_DIR) -I Sources/CAres -I Sources/CLinux -I Sources/CLiburing -emit-module -emit-module-path $(FUZZ_DIR)/DNS.swiftmodule \
	  -emit-library -static $(DNS_SOURCES) -o $@

$(FUZZ_DIR)/libCrypto.a: $(CRYPTO_SOURCES)
	@mkdir -p $(FUZZ_DIR)
	@echo "fuzz: building Crypto (TLS, SIP and ICE import it)"
	@$(SWIFTC) $(FUZZ_FLAGS) -module-name Crypto -I Sources/COpenSSL -emit-module -emit-module-path $(FUZZ_DIR)/Crypto.swiftmodule \
	  -emit-library -static $(CRYPTO_SOURCES) -o $@

$(FUZZ_DIR)/libTLS.a: $(TLS_SOURCES) $(FUZZ_DIR)/libIOCore.a $(FUZZ_DIR)/libCrypto.a
	@echo "fuzz: building TLS (SIP imports it)"
	@$(SWIFTC) $(FUZZ_FLAGS) -module-name TLS -I $(FUZZ_DIR) -I Sources/COpenSSL -I Sources/CLinux -I Sources/CLiburing -emit-module -emit-module-path $(FUZZ_DIR)/TLS.swiftmodule \
	  -emit-library -static $(TLS_SOURCES) -o $@

$(FUZZ_DIR)/libSDP.a: $(SDP_SOURCES) $(FUZZ_DIR)/libCrypto.a
	@echo "fuzz: building SDP (SIP and ICE import it)"
	@$(SWIFTC) $(FUZZ_FLAGS) -module-name SDP -I $(FUZZ_DIR) -I Sources/COpenSSL -emit-module -emit-module-path $(FUZZ_DIR)/SDP.swiftmodule \
	  -emit-library -static $(SDP_SOURCES) -o $@

$(FUZZ_DIR)/fuzz_support.o: Fuzz/CFuzzSupport/fuzz_support.c Fuzz/CFuzzSupport/fuzz_support.h
	@mkdir -p $(FUZZ_DIR)
	@$(FUZZ_CC) -O2 -Wall -Wextra -c $< -o $@

$(FUZZ_DIR)/fuzz-sip-module: $(SIP_SOURCES) $(SIP_FUZZ_SOURCES) $(FUZZ_DIR)/libIOCore.a $(FUZZ_DIR)/libDNS.a $(FUZZ_DIR)/libTLS.a $(FUZZ_DIR)/libSDP.a $(FUZZ_DIR)/fuzz_support.o
	@echo "fuzz: building fuzz-sip, fuzz-sdp, fuzz-sip-session (one binary)"
	@$(SWIFTC) $(FUZZ_FLAGS) -module-name SIP -I $(FUZZ_DIR) -I Sources/COSIP -I Sources/COpenSSL -I Sources/CLinux -I Sources/CLiburing -I Sources/CAres -I Fuzz/CFuzzSupport \
	  $(SIP_SOURCES) $(SIP_FUZZ_SOURCES) $(FUZZ_DIR)/fuzz_support.o -L $(FUZZ_DIR) -lSDP -lTLS -lCrypto -lDNS -lIOCore -luring -losip2 -losipparser2 -lssl -lcrypto -lcares -o $@ $(QUIET_LD)

$(FUZZ_DIR)/fuzz-sip $(FUZZ_DIR)/fuzz-sdp $(FUZZ_DIR)/fuzz-sip-session: $(FUZZ_DIR)/fuzz-sip-module
	@ln -sf fuzz-sip-module $@

# libsrtp's OpenSSL cipher and authenticator (Sources/CSRTPOpenSSL: one C file per primitive).
SRTP_OPENSSL_C := $(wildcard Sources/CSRTPOpenSSL/*.c)
$(FUZZ_DIR)/libsrtp_openssl.a: $(SRTP_OPENSSL_C) $(wildcard Sources/CSRTPOpenSSL/*.h) Sources/CSRTPOpenSSL/include/CSRTPOpenSSL.h
	@mkdir -p $(FUZZ_DIR)/srtp_openssl
	@for c in $(SRTP_OPENSSL_C); do \
	  $(FUZZ_CC) -O2 -Wall -I Sources/CSRTPOpenSSL/include -c $$c -o $(FUZZ_DIR)/srtp_openssl/$$(basename $$c .c).o || exit 1; \
	done
	@rm -f $@ && ar rcs $@ $(FUZZ_DIR)/srtp_openssl/*.o

$(FUZZ_DIR)/libICE.a: $(ICE_SOURCES) $(FUZZ_DIR)/libCrypto.a $(FUZZ_DIR)/libIOCore.a $(FUZZ_DIR)/libSDP.a
	@echo "fuzz: building ICE (Media imports it)"
	@$(SWIFTC) $(FUZZ_FLAGS) -module-name ICE -I $(FUZZ_DIR) -I Sources/COpenSSL -I Sources/CLinux -I Sources/CLiburing -emit-module -emit-module-path $(FUZZ_DIR)/ICE.swiftmodule \
	  -emit-library -static $(ICE_SOURCES) -o $@

$(FUZZ_DIR)/fuzz-rtp: $(MEDIA_SOURCES) Fuzz/FuzzRTP.swift $(FUZZ_DIR)/libLogging.a $(FUZZ_DIR)/libIOCore.a $(FUZZ_DIR)/libTLS.a $(FUZZ_DIR)/libICE.a $(FUZZ_DIR)/libSDP.a $(FUZZ_DIR)/libsrtp_openssl.a
	@echo "fuzz: building fuzz-rtp"
	@$(SWIFTC) $(FUZZ_FLAGS) -module-name Media -I $(FUZZ_DIR) -I Sources/COpus -I Sources/CSpanDSP -I Sources/CSRTP -I Sources/CSRTPOpenSSL/include -I Sources/COpenSSL -I Sources/CLinux -I Sources/CLiburing \
	  $$(pkg-config --cflags-only-I opus | sed 's/-I/-Xcc -I/g') \
	  $(MEDIA_SOURCES) Fuzz/FuzzRTP.swift $(FUZZ_DIR)/libsrtp_openssl.a -L $(FUZZ_DIR) -lICE -lSDP -lTLS -lCrypto -lLogging -lIOCore -luring -lopus -lspandsp -lsrtp2 -lssl -lcrypto -o $@ $(QUIET_LD)

$(FUZZ_DIR)/fuzz-stun: $(ICE_SOURCES) Fuzz/FuzzSTUN.swift $(FUZZ_DIR)/libIOCore.a $(FUZZ_DIR)/libCrypto.a $(FUZZ_DIR)/libSDP.a
	@echo "fuzz: building fuzz-stun"
	@$(SWIFTC) $(FUZZ_FLAGS) -module-name ICE -I $(FUZZ_DIR) -I Sources/COpenSSL -I Sources/CLinux -I Sources/CLiburing \
	  $(ICE_SOURCES) Fuzz/FuzzSTUN.swift -L $(FUZZ_DIR) -lSDP -lCrypto -lIOCore -luring -lssl -lcrypto -o $@ $(QUIET_LD)

$(FUZZ_DIR)/fuzz-dtls: Fuzz/FuzzDTLS.swift $(FUZZ_DIR)/libTLS.a $(FUZZ_DIR)/libIOCore.a
	@echo "fuzz: building fuzz-dtls"
	@$(SWIFTC) $(FUZZ_FLAGS) -module-name FuzzDTLS -I $(FUZZ_DIR) -I Sources/COpenSSL -I Sources/CLinux -I Sources/CLiburing \
	  Fuzz/FuzzDTLS.swift -L $(FUZZ_DIR) -lTLS -lCrypto -lIOCore -luring -lssl -lcrypto -o $@ $(QUIET_LD)

$(FUZZ_DIR)/fuzz-api: $(API_SOURCES) Fuzz/FuzzAPI.swift
	@mkdir -p $(FUZZ_DIR)
	@echo "fuzz: building fuzz-api"
	@$(SWIFTC) $(FUZZ_FLAGS) -module-name IrisAPI $(API_SOURCES) Fuzz/FuzzAPI.swift -o $@ $(QUIET_LD)

clean:
	$(SWIFT) package clean
