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

static inline int tactus_seq_client_info_malloc(snd_seq_client_info_t **info) {
    return snd_seq_client_info_malloc(info);
}

static inline int tactus_seq_port_info_malloc(snd_seq_port_info_t **info) {
    return snd_seq_port_info_malloc(info);
}

/// Addresses an event from `port` to its subscribers, or to `client:port` when client >= 0.
static inline void tactus_seq_ev_address(snd_seq_event_t *ev, int source_port, int dest_client, int dest_port) {
    snd_seq_ev_set_source(ev, source_port);
    if (dest_client >= 0) {
        snd_seq_ev_set_dest(ev, dest_client, dest_port);
    } else {
        snd_seq_ev_set_subs(ev);
    }
}

/// Delivers an event at once, bypassing any queue.
static inline void tactus_seq_ev_direct(snd_seq_event_t *ev) {
    snd_seq_ev_set_direct(ev);
}

/// Schedules an event on `queue` at an absolute real time.
static inline void tactus_seq_ev_schedule_real(snd_seq_event_t *ev, int queue, unsigned int sec, unsigned int nsec) {
    snd_seq_real_time_t t = { sec, nsec };
    snd_seq_ev_schedule_real(ev, queue, 0, &t);
}

static inline void tactus_seq_ev_clear(snd_seq_event_t *ev) {
    snd_seq_ev_clear(ev);
}

#endif
