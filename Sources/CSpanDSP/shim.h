#ifndef IRISGW_CSPANDSP_SHIM_H
#define IRISGW_CSPANDSP_SHIM_H
// spandsp.h pulls in tiffio.h; include only the pieces the media layer uses.
#include <stdint.h>
#include <inttypes.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <limits.h>
#include <time.h>
#include <math.h>
#include <spandsp/telephony.h>
#include <spandsp/logging.h>
#include <spandsp/bit_operations.h>
#include <spandsp/g711.h>
#include <spandsp/g722.h>
#include <spandsp/plc.h>
#include <spandsp/complex.h>
#include <spandsp/dds.h>
#include <spandsp/tone_detect.h>

#include <spandsp/super_tone_rx.h>
#include <spandsp/dtmf.h>
#include <spandsp/modem_connect_tones.h>

// g711 encode/decode are static inline in g711.h already (linear_to_ulaw etc.).
static inline uint8_t CSpanDSP_linear_to_ulaw(int16_t s) { return linear_to_ulaw(s); }
static inline int16_t CSpanDSP_ulaw_to_linear(uint8_t b) { return ulaw_to_linear(b); }
static inline uint8_t CSpanDSP_linear_to_alaw(int16_t s) { return linear_to_alaw(s); }
static inline int16_t CSpanDSP_alaw_to_linear(uint8_t b) { return alaw_to_linear(b); }
#endif
