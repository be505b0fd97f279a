// The parts of ALSA that Swift cannot call directly: macros, variadic error handlers and
// alloca-based allocators, wrapped in static inline functions.
#ifndef TACTUS_CALSA_SHIM_H
#define TACTUS_CALSA_SHIM_H

#include <alsa/asoundlib.h>

/// Silences ALSA's default error printer (it writes to stderr from inside library calls);
/// Tactus reports errors itself, with the device name.
static void tactus_alsa_silent_error_handler(const char *file, int line, const char *function, int err, const char *fmt, ...) {
    (void)file; (void)line; (void)function; (void)err; (void)fmt;
}

static inline void tactus_alsa_silence_errors(void) {
    snd_lib_error_set_handler(tactus_alsa_silent_error_handler);
}

static inline int tactus_pcm_hw_params_malloc(snd_pcm_hw_params_t **params) {
    return snd_pcm_hw_params_malloc(params);
}

static inline int tactus_pcm_sw_params_malloc(snd_pcm_sw_params_t **params) {
    return snd_pcm_sw_params_malloc(params);
}

#endif
