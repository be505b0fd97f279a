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

/// Makes `ev` a variable-length sysex event carrying `len` bytes at `data` as they are
/// (a complete message or one packet of a split message).
static inline void tactus_seq_ev_set_sysex(snd_seq_event_t *ev, unsigned int len, void *data) {
    snd_seq_ev_set_sysex(ev, len, data);
}

/// Makes `ev` an echo event, which the sequencer delivers back to the addressed client.
static inline void tactus_seq_ev_set_echo(snd_seq_event_t *ev) {
    ev->type = SND_SEQ_EVENT_ECHO;
}

/// True when `ev` is an echo event that `client` sent.
static inline int tactus_seq_ev_is_echo_from(const snd_seq_event_t *ev, int client) {
    return ev->type == SND_SEQ_EVENT_ECHO && ev->source.client == client;
}

/// True when the encoder produced a complete event in `ev`.
static inline int tactus_seq_ev_is_complete(const snd_seq_event_t *ev) {
    return ev->type != SND_SEQ_EVENT_NONE;
}

/// Starts `queue` at once.
static inline int tactus_seq_start_queue(snd_seq_t *seq, int queue) {
    return snd_seq_control_queue(seq, queue, SND_SEQ_EVENT_START, 0, NULL);
}

/// Stops `queue` at once.
static inline int tactus_seq_stop_queue(snd_seq_t *seq, int queue) {
    return snd_seq_control_queue(seq, queue, SND_SEQ_EVENT_STOP, 0, NULL);
}

/// The real time of `queue`, in nanoseconds, or a negative error code.
static inline long long tactus_seq_queue_real_time(snd_seq_t *seq, int queue) {
    snd_seq_queue_status_t *status;
    if (snd_seq_queue_status_malloc(&status) < 0) return -ENOMEM;
    int rc = snd_seq_get_queue_status(seq, queue, status);
    long long ns = rc;
    if (rc >= 0) {
        const snd_seq_real_time_t *t = snd_seq_queue_status_get_real_time(status);
        ns = (long long)t->tv_sec * 1000000000LL + t->tv_nsec;
    }
    snd_seq_queue_status_free(status);
    return ns;
}

#endif
