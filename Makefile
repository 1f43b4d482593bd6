# irisgw: `make run` and `make test` are all a newcomer needs (DESIGN section 7).
SHELL := /bin/bash
SWIFT ?= swift
# Debian packages the build and the tests need.
DEBS := libosip2-dev libopus-dev libspandsp-dev libtiff-dev libssl-dev libsqlite3-dev \
        pkg-config sip-tester nftables iproute2 baresip
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

## run: the gateway with the built-in carrier simulator (SIP 127.0.0.1:5060, API :8080, simulator :5090) until Ctrl-C
run: release
	@echo "irisgw gateway: SIP on 127.0.0.1:5060, control API on http://127.0.0.1:8080; Ctrl-C stops it."
	@echo "The built-in carrier simulator plays the PSTN on 127.0.0.1:5090 (numbers: docs/carrier-testing.md)."
	@echo "In a second terminal:"
	@echo "    .build/release/irisgw call +15550100001 --from +15557654321 --tone 440 --hangup-after 5"
	@echo "    .build/release/irisgw test --profile carrier-sim --suite sip-profiles/suites/basic.json5"
	@CARRIER_SIM_PASSWORD=$${CARRIER_SIM_PASSWORD:-carrier-sim} .build/release/irisgw serve --carrier-sim 127.0.0.1:5090

## lint: every RFC 4475/5118 message through irisgw sip-lint (a smoke check of the CLI)
lint: build
	.build/debug/irisgw sip-lint ../shared/conformance/rfc5118/wire/ipv6-good.sip ../shared/conformance/rfc4475/wsinv.sip

## fuzz: bounded libFuzzer runs (FUZZ_SECONDS each) over the SIP, SDP, RTP/RTCP and API JSON parsers
FUZZ_SECONDS ?= 60
FUZZ_DIR := .build/fuzz
SIP_SOURCES = $(shell find Sources/SIP -name '*.swift')
MEDIA_SOURCES = $(shell find Sources/Media -name '*.swift')
IOCORE_SOURCES = $(shell find Sources/IOCore -name '*.swift')
API_SOURCES = $(shell find Sources/IrisAPI -name '*.swift')
FUZZ_FLAGS = -sanitize=fuzzer,address -parse-as-library -O -swift-version 6
# gold warns once per ASan helper symbol; the warnings say nothing about our code.
QUIET_LD = 2>&1 | { grep -v "Cannot export local symbol" || true; }; exit $${PIPESTATUS[0]}
fuzz: deps
	@mkdir -p $(FUZZ_DIR)/corpus-sip $(FUZZ_DIR)/corpus-sdp $(FUZZ_DIR)/corpus-rtp $(FUZZ_DIR)/corpus-api
	@cp ../shared/conformance/rfc4475/*.sip ../shared/conformance/rfc5118/wire/*.sip $(FUZZ_DIR)/corpus-sip/ 2>/dev/null || true
	@printf 'v=0\r\no=- 1 1 IN IP4 192.0.2.1\r\ns=-\r\nc=IN IP4 192.0.2.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 0 8 101\r\na=rtpmap:101 telephone-event/8000\r\na=sendonly\r\n' > $(FUZZ_DIR)/corpus-sdp/seed.sdp
	@printf '\x80\x00\x00\x01\x00\x00\x00\xa0\x00\x00\x00\x01\xff\xfe' > $(FUZZ_DIR)/corpus-rtp/seed.rtp
	@printf '{"targetTN":"+15551230001","sourceTN":"+15557654321","media":{"sdp":"v=0"}}' > $(FUZZ_DIR)/corpus-api/seed.json
	@echo "building IOCore (shared by the SIP and RTP targets)"
	@swiftc $(FUZZ_FLAGS) -module-name IOCore -I Sources/CLinux -emit-module -emit-module-path $(FUZZ_DIR)/IOCore.swiftmodule \
	  -emit-library -static $(IOCORE_SOURCES) -o $(FUZZ_DIR)/libIOCore.a
	@echo "building fuzz-sip, fuzz-sdp"
	@swiftc $(FUZZ_FLAGS) -module-name SIP -I $(FUZZ_DIR) -I Sources/COSIP -I Sources/COpenSSL -I Sources/CLinux \
	  $(SIP_SOURCES) Fuzz/FuzzSIP.swift -L $(FUZZ_DIR) -lIOCore -losip2 -losipparser2 -lcrypto -o $(FUZZ_DIR)/fuzz-sip $(QUIET_LD)
	@swiftc $(FUZZ_FLAGS) -module-name SIP -I $(FUZZ_DIR) -I Sources/COSIP -I Sources/COpenSSL -I Sources/CLinux \
	  $(SIP_SOURCES) Fuzz/FuzzSDP.swift -L $(FUZZ_DIR) -lIOCore -losip2 -losipparser2 -lcrypto -o $(FUZZ_DIR)/fuzz-sdp $(QUIET_LD)
	@echo "building fuzz-rtp"
	@swiftc $(FUZZ_FLAGS) -module-name Media -I $(FUZZ_DIR) -I Sources/COpus -I Sources/CSpanDSP -I Sources/CLinux \
	  $$(pkg-config --cflags-only-I opus | sed 's/-I/-Xcc -I/g') \
	  $(MEDIA_SOURCES) Fuzz/FuzzRTP.swift -L $(FUZZ_DIR) -lIOCore -lopus -lspandsp -o $(FUZZ_DIR)/fuzz-rtp $(QUIET_LD)
	@echo "building fuzz-api"
	@swiftc $(FUZZ_FLAGS) -module-name IrisAPI $(API_SOURCES) Fuzz/FuzzAPI.swift -o $(FUZZ_DIR)/fuzz-api $(QUIET_LD)
	@for t in sip sdp rtp api; do \
	  echo "fuzzing $$t for $(FUZZ_SECONDS) s"; \
	  $(FUZZ_DIR)/fuzz-$$t -max_total_time=$(FUZZ_SECONDS) -max_len=8192 -print_final_stats=1 \
	    -artifact_prefix=$(FUZZ_DIR)/crash-$$t- $(FUZZ_DIR)/corpus-$$t 2>&1 | grep -E "stat::number_of_executed_units|ERROR|Done" || exit 1; \
	done

clean:
	$(SWIFT) package clean
