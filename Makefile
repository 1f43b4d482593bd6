# irisgw: `make run` and `make test` are all a newcomer needs (DESIGN section 7).
SHELL := /bin/bash
SWIFT ?= swift
# Debian packages the build and the tests need.
DEBS := libosip2-dev libopus-dev libspandsp-dev libtiff-dev libssl-dev libsqlite3-dev libcivetweb-dev \
        pkg-config sip-tester
# The whole suite must finish well inside CI's limit on 2 cores.
TEST_TIMEOUT ?= 1200

.PHONY: all deps build release test bench run fuzz lint clean

all: build

## deps: install missing Debian packages (needs root; runs apt-get update once if needed)
deps:
	@missing=""; for p in $(DEBS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  if [ "$$(id -u)" != 0 ]; then echo "make deps needs root to install:$$missing" >&2; exit 1; fi; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	fi
	@command -v $(SWIFT) >/dev/null || { echo "swift not found on PATH (expected Swift 6.3 at /opt/swift)" >&2; exit 1; }

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release

## test: unit tests and end-to-end tests against SIPp, bounded in time
test: deps
	$(SWIFT) build --build-tests
	timeout $(TEST_TIMEOUT) $(SWIFT) test --skip-build

## bench: prints BENCH lines (ratios measured in this run)
bench: release
	.build/release/irisgw-bench

## run: the gateway (SIP 127.0.0.1:5060, API 127.0.0.1:8080, profiles in sip-profiles/) until Ctrl-C
run: release
	@echo "irisgw gateway: SIP on 127.0.0.1:5060, control API on http://127.0.0.1:8080; Ctrl-C stops it."
	@echo "The built-in carrier simulator plays the PSTN on 127.0.0.1:5090 (numbers: docs/carrier-testing.md)."
	@echo "In a second terminal:"
	@echo "    .build/release/irisgw call +15550100001 --from +15557654321 --tone 440 --hangup-after 5"
	@.build/release/irisgw carrier-sim & sim=$$!; trap 'kill $$sim 2>/dev/null' EXIT INT TERM; \
	  CARRIER_SIM_PASSWORD=$${CARRIER_SIM_PASSWORD:-carrier-sim} .build/release/irisgw serve

## lint: every RFC 4475/5118 message through irisgw sip-lint (a smoke check of the CLI)
lint: build
	.build/debug/irisgw sip-lint ../shared/conformance/rfc5118/wire/ipv6-good.sip ../shared/conformance/rfc4475/wsinv.sip

## fuzz: bounded libFuzzer runs (FUZZ_SECONDS each) over the SIP and SDP parsers
FUZZ_SECONDS ?= 60
FUZZ_DIR := .build/fuzz
SIP_SOURCES = $(shell find Sources/SIP -name '*.swift')
fuzz: deps
	@mkdir -p $(FUZZ_DIR)/corpus-sip $(FUZZ_DIR)/corpus-sdp
	@cp ../shared/conformance/rfc4475/*.sip ../shared/conformance/rfc5118/wire/*.sip $(FUZZ_DIR)/corpus-sip/ 2>/dev/null || true
	@printf 'v=0\r\no=- 1 1 IN IP4 192.0.2.1\r\ns=-\r\nc=IN IP4 192.0.2.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 0 8 101\r\na=rtpmap:101 telephone-event/8000\r\na=sendonly\r\n' > $(FUZZ_DIR)/corpus-sdp/seed.sdp
	@for t in SIP SDP; do \
	  lower=$$(echo $$t | tr A-Z a-z); \
	  echo "building fuzz-$$lower"; \
	  swiftc -sanitize=fuzzer,address -parse-as-library -O -module-name SIP -swift-version 6 \
	    -I Sources/COSIP -I Sources/COpenSSL -I Sources/CLinux $(SIP_SOURCES) Fuzz/Fuzz$$t.swift \
	    -losip2 -losipparser2 -lcrypto -o $(FUZZ_DIR)/fuzz-$$lower || exit 1; \
	  echo "fuzzing $$t for $(FUZZ_SECONDS) s"; \
	  $(FUZZ_DIR)/fuzz-$$lower -max_total_time=$(FUZZ_SECONDS) -max_len=8192 -print_final_stats=1 \
	    -artifact_prefix=$(FUZZ_DIR)/crash-$$lower- $(FUZZ_DIR)/corpus-$$lower 2>&1 | grep -E "stat::number_of_executed_units|ERROR|Done" || exit 1; \
	done

clean:
	$(SWIFT) package clean
