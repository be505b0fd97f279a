// The part of ALSA's C API that Tactus uses, declared here rather than taken from
// <alsa/asoundlib.h>: libasound is loaded at run time (CALSA.c), so Tactus builds on a machine
// without ALSA's headers and runs without the library for everything but live audio and MIDI.
// Layouts and values follow libasound 1.2's ABI (stable since 1.0); the sizes are checked by
// the ALSA tests against the library.
#ifndef TACTUS_CALSA_H
#define TACTUS_CALSA_H

#include <poll.h>
#include <stddef.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

#define TACTUS_ALSA_HIDDEN __attribute__((visibility("hidden")))

// MARK: Opaque handles

typedef struct _snd_pcm snd_pcm_t;
typedef struct _snd_pcm_hw_params snd_pcm_hw_params_t;
typedef struct _snd_pcm_sw_params snd_pcm_sw_params_t;
typedef struct _snd_seq snd_seq_t;
typedef struct _snd_seq_client_info snd_seq_client_info_t;
typedef struct _snd_seq_port_info snd_seq_port_info_t;
typedef struct _snd_seq_queue_status snd_seq_queue_status_t;
typedef struct _snd_seq_queue_tempo snd_seq_queue_tempo_t;
typedef struct _snd_rawmidi snd_rawmidi_t;
typedef struct _snd_rawmidi_params snd_rawmidi_params_t;
typedef struct _snd_midi_event snd_midi_event_t;

typedef unsigned long snd_pcm_uframes_t;
typedef long snd_pcm_sframes_t;

// MARK: PCM

typedef enum _snd_pcm_stream { SND_PCM_STREAM_PLAYBACK = 0, SND_PCM_STREAM_CAPTURE = 1 } snd_pcm_stream_t;
typedef enum _snd_pcm_access { SND_PCM_ACCESS_RW_INTERLEAVED = 3 } snd_pcm_access_t;
typedef enum _snd_pcm_format {
    SND_PCM_FORMAT_S16_LE = 2,
    SND_PCM_FORMAT_S32_LE = 10,
    SND_PCM_FORMAT_FLOAT_LE = 14
} snd_pcm_format_t;

// MARK: Raw MIDI

#define SND_RAWMIDI_NONBLOCK 0x0002
typedef enum _snd_rawmidi_read_mode { SND_RAWMIDI_READ_STANDARD = 0, SND_RAWMIDI_READ_TSTAMP = 1 } snd_rawmidi_read_mode_t;
typedef enum _snd_rawmidi_clock {
    SND_RAWMIDI_CLOCK_NONE = 0,
    SND_RAWMIDI_CLOCK_REALTIME = 1,
    SND_RAWMIDI_CLOCK_MONOTONIC = 2
} snd_rawmidi_clock_t;

// MARK: Sequencer

#define SND_SEQ_OPEN_OUTPUT 1
#define SND_SEQ_OPEN_INPUT 2
#define SND_SEQ_OPEN_DUPLEX 3
#define SND_SEQ_NONBLOCK 0x0001

#define SND_SEQ_PORT_CAP_READ (1 << 0)
#define SND_SEQ_PORT_CAP_WRITE (1 << 1)
#define SND_SEQ_PORT_CAP_SUBS_READ (1 << 5)
#define SND_SEQ_PORT_CAP_SUBS_WRITE (1 << 6)
#define SND_SEQ_PORT_CAP_NO_EXPORT (1 << 7)
#define SND_SEQ_PORT_TYPE_MIDI_GENERIC (1 << 1)
#define SND_SEQ_PORT_TYPE_APPLICATION (1 << 20)

#define SND_SEQ_QUEUE_DIRECT 253
#define SND_SEQ_ADDRESS_UNKNOWN 253
#define SND_SEQ_ADDRESS_SUBSCRIBERS 254

#define SND_SEQ_EVENT_SONGPOS 20
#define SND_SEQ_EVENT_START 30
#define SND_SEQ_EVENT_CONTINUE 31
#define SND_SEQ_EVENT_STOP 32
#define SND_SEQ_EVENT_CLOCK 36
#define SND_SEQ_EVENT_ECHO 50
#define SND_SEQ_EVENT_SYSEX 130
#define SND_SEQ_EVENT_NONE 255

#define SND_SEQ_TIME_STAMP_REAL (1 << 0)
#define SND_SEQ_TIME_STAMP_MASK (1 << 0)
#define SND_SEQ_TIME_MODE_REL (1 << 1)
#define SND_SEQ_TIME_MODE_MASK (1 << 1)
#define SND_SEQ_EVENT_LENGTH_VARIABLE (1 << 2)
#define SND_SEQ_EVENT_LENGTH_MASK (3 << 2)

typedef struct snd_seq_addr { unsigned char client; unsigned char port; } snd_seq_addr_t;
typedef struct snd_seq_real_time { unsigned int tv_sec; unsigned int tv_nsec; } snd_seq_real_time_t;
typedef unsigned int snd_seq_tick_time_t;
typedef union snd_seq_timestamp { snd_seq_tick_time_t tick; snd_seq_real_time_t time; } snd_seq_timestamp_t;

typedef struct snd_seq_ev_note {
    unsigned char channel, note, velocity, off_velocity;
    unsigned int duration;
} snd_seq_ev_note_t;
typedef struct snd_seq_ev_ctrl {
    unsigned char channel, unused[3];
    unsigned int param;
    signed int value;
} snd_seq_ev_ctrl_t;
typedef struct snd_seq_ev_raw8 { unsigned char d[12]; } snd_seq_ev_raw8_t;
typedef struct snd_seq_ev_raw32 { unsigned int d[3]; } snd_seq_ev_raw32_t;
// Packed in ALSA's ABI: a 32-bit length then the pointer, 12 bytes on 64-bit machines.
typedef struct __attribute__((packed)) snd_seq_ev_ext { unsigned int len; void *ptr; } snd_seq_ev_ext_t;
typedef struct snd_seq_ev_queue_control {
    unsigned char queue, unused[3];
    union { signed int value; snd_seq_timestamp_t time; unsigned int position; unsigned int d32[2]; unsigned char d8[8]; } param;
} snd_seq_ev_queue_control_t;

typedef struct snd_seq_event {
    unsigned char type, flags, tag, queue;
    snd_seq_timestamp_t time;
    snd_seq_addr_t source, dest;
    union {
        snd_seq_ev_note_t note;
        snd_seq_ev_ctrl_t control;
        snd_seq_ev_raw8_t raw8;
        snd_seq_ev_raw32_t raw32;
        snd_seq_ev_ext_t ext;
        snd_seq_ev_queue_control_t queue;
        snd_seq_addr_t addr;
    } data;
} snd_seq_event_t;

_Static_assert(sizeof(snd_seq_event_t) == 28, "snd_seq_event_t must match libasound's 28-byte layout");
_Static_assert(offsetof(snd_seq_event_t, data) == 16, "snd_seq_event_t data must sit at byte 16");

typedef void (*snd_lib_error_handler_t)(const char *file, int line, const char *function, int err, const char *fmt, ...);

// MARK: Functions (forwarded to the loaded library)

#define TACTUS_ALSA_FUNCTIONS(X, V) \
    X(const char *, snd_strerror, (int errnum), (errnum), "the ALSA library is not loaded") \
    X(int, snd_lib_error_set_handler, (snd_lib_error_handler_t handler), (handler), -38) \
    X(int, snd_pcm_open, (snd_pcm_t **pcm, const char *name, snd_pcm_stream_t stream, int mode), (pcm, name, stream, mode), -38) \
    X(int, snd_pcm_close, (snd_pcm_t *pcm), (pcm), -38) \
    X(int, snd_pcm_drain, (snd_pcm_t *pcm), (pcm), -38) \
    X(int, snd_pcm_drop, (snd_pcm_t *pcm), (pcm), -38) \
    X(int, snd_pcm_prepare, (snd_pcm_t *pcm), (pcm), -38) \
    X(int, snd_pcm_recover, (snd_pcm_t *pcm, int err, int silent), (pcm, err, silent), -38) \
    X(snd_pcm_sframes_t, snd_pcm_writei, (snd_pcm_t *pcm, const void *buffer, snd_pcm_uframes_t size), (pcm, buffer, size), -38) \
    X(int, snd_pcm_hw_params_malloc, (snd_pcm_hw_params_t **ptr), (ptr), -38) \
    V(snd_pcm_hw_params_free, (snd_pcm_hw_params_t *obj), (obj)) \
    X(int, snd_pcm_hw_params, (snd_pcm_t *pcm, snd_pcm_hw_params_t *params), (pcm, params), -38) \
    X(int, snd_pcm_hw_params_any, (snd_pcm_t *pcm, snd_pcm_hw_params_t *params), (pcm, params), -38) \
    X(int, snd_pcm_hw_params_set_access, (snd_pcm_t *pcm, snd_pcm_hw_params_t *params, snd_pcm_access_t access), (pcm, params, access), -38) \
    X(int, snd_pcm_hw_params_set_format, (snd_pcm_t *pcm, snd_pcm_hw_params_t *params, snd_pcm_format_t format), (pcm, params, format), -38) \
    X(int, snd_pcm_hw_params_set_channels, (snd_pcm_t *pcm, snd_pcm_hw_params_t *params, unsigned int val), (pcm, params, val), -38) \
    X(int, snd_pcm_hw_params_set_rate_near, (snd_pcm_t *pcm, snd_pcm_hw_params_t *params, unsigned int *val, int *dir), (pcm, params, val, dir), -38) \
    X(int, snd_pcm_hw_params_set_period_size_near, (snd_pcm_t *pcm, snd_pcm_hw_params_t *params, snd_pcm_uframes_t *val, int *dir), (pcm, params, val, dir), -38) \
    X(int, snd_pcm_hw_params_set_buffer_size_near, (snd_pcm_t *pcm, snd_pcm_hw_params_t *params, snd_pcm_uframes_t *val), (pcm, params, val), -38) \
    X(int, snd_pcm_hw_params_get_period_size, (const snd_pcm_hw_params_t *params, snd_pcm_uframes_t *frames, int *dir), (params, frames, dir), -38) \
    X(int, snd_pcm_hw_params_get_buffer_size, (const snd_pcm_hw_params_t *params, snd_pcm_uframes_t *val), (params, val), -38) \
    X(int, snd_rawmidi_open, (snd_rawmidi_t **in_rmidi, snd_rawmidi_t **out_rmidi, const char *name, int mode), (in_rmidi, out_rmidi, name, mode), -38) \
    X(int, snd_rawmidi_close, (snd_rawmidi_t *rmidi), (rmidi), -38) \
    X(int, snd_rawmidi_params_malloc, (snd_rawmidi_params_t **ptr), (ptr), -38) \
    V(snd_rawmidi_params_free, (snd_rawmidi_params_t *obj), (obj)) \
    X(int, snd_rawmidi_params_current, (snd_rawmidi_t *rmidi, snd_rawmidi_params_t *params), (rmidi, params), -38) \
    X(int, snd_rawmidi_params_set_read_mode, (const snd_rawmidi_t *rmidi, snd_rawmidi_params_t *params, snd_rawmidi_read_mode_t val), (rmidi, params, val), -38) \
    X(int, snd_rawmidi_params_set_clock_type, (const snd_rawmidi_t *rmidi, snd_rawmidi_params_t *params, snd_rawmidi_clock_t val), (rmidi, params, val), -38) \
    X(int, snd_rawmidi_params, (snd_rawmidi_t *rmidi, snd_rawmidi_params_t *params), (rmidi, params), -38) \
    X(int, snd_rawmidi_poll_descriptors_count, (snd_rawmidi_t *rmidi), (rmidi), -38) \
    X(int, snd_rawmidi_poll_descriptors, (snd_rawmidi_t *rmidi, struct pollfd *pfds, unsigned int space), (rmidi, pfds, space), -38) \
    X(ssize_t, snd_rawmidi_tread, (snd_rawmidi_t *rmidi, struct timespec *tstamp, void *buffer, size_t size), (rmidi, tstamp, buffer, size), -38) \
    X(int, snd_seq_open, (snd_seq_t **handle, const char *name, int streams, int mode), (handle, name, streams, mode), -38) \
    X(int, snd_seq_close, (snd_seq_t *handle), (handle), -38) \
    X(int, snd_seq_set_client_name, (snd_seq_t *seq, const char *name), (seq, name), -38) \
    X(int, snd_seq_client_id, (snd_seq_t *handle), (handle), -38) \
    X(int, snd_seq_nonblock, (snd_seq_t *handle, int nonblock), (handle, nonblock), -38) \
    X(int, snd_seq_create_simple_port, (snd_seq_t *seq, const char *name, unsigned int caps, unsigned int type), (seq, name, caps, type), -38) \
    X(int, snd_seq_connect_to, (snd_seq_t *seq, int my_port, int dest_client, int dest_port), (seq, my_port, dest_client, dest_port), -38) \
    X(int, snd_seq_connect_from, (snd_seq_t *seq, int my_port, int src_client, int src_port), (seq, my_port, src_client, src_port), -38) \
    X(int, snd_seq_parse_address, (snd_seq_t *seq, snd_seq_addr_t *addr, const char *str), (seq, addr, str), -38) \
    X(int, snd_seq_client_info_malloc, (snd_seq_client_info_t **ptr), (ptr), -38) \
    V(snd_seq_client_info_free, (snd_seq_client_info_t *ptr), (ptr)) \
    V(snd_seq_client_info_set_client, (snd_seq_client_info_t *info, int client), (info, client)) \
    X(int, snd_seq_client_info_get_client, (const snd_seq_client_info_t *info), (info), -38) \
    X(const char *, snd_seq_client_info_get_name, (snd_seq_client_info_t *info), (info), "") \
    X(int, snd_seq_query_next_client, (snd_seq_t *handle, snd_seq_client_info_t *info), (handle, info), -38) \
    X(int, snd_seq_port_info_malloc, (snd_seq_port_info_t **ptr), (ptr), -38) \
    V(snd_seq_port_info_free, (snd_seq_port_info_t *ptr), (ptr)) \
    V(snd_seq_port_info_set_client, (snd_seq_port_info_t *info, int client), (info, client)) \
    V(snd_seq_port_info_set_port, (snd_seq_port_info_t *info, int port), (info, port)) \
    V(snd_seq_port_info_set_timestamping, (snd_seq_port_info_t *info, int enable), (info, enable)) \
    V(snd_seq_port_info_set_timestamp_real, (snd_seq_port_info_t *info, int realtime), (info, realtime)) \
    V(snd_seq_port_info_set_timestamp_queue, (snd_seq_port_info_t *info, int queue), (info, queue)) \
    X(int, snd_seq_port_info_get_port, (const snd_seq_port_info_t *info), (info), -38) \
    X(const char *, snd_seq_port_info_get_name, (const snd_seq_port_info_t *info), (info), "") \
    X(unsigned int, snd_seq_port_info_get_capability, (const snd_seq_port_info_t *info), (info), 0) \
    X(int, snd_seq_query_next_port, (snd_seq_t *handle, snd_seq_port_info_t *info), (handle, info), -38) \
    X(int, snd_seq_get_port_info, (snd_seq_t *handle, int port, snd_seq_port_info_t *info), (handle, port, info), -38) \
    X(int, snd_seq_set_port_info, (snd_seq_t *handle, int port, snd_seq_port_info_t *info), (handle, port, info), -38) \
    X(int, snd_seq_alloc_named_queue, (snd_seq_t *seq, const char *name), (seq, name), -38) \
    X(int, snd_seq_free_queue, (snd_seq_t *handle, int q), (handle, q), -38) \
    X(int, snd_seq_control_queue, (snd_seq_t *seq, int q, int type, int value, snd_seq_event_t *ev), (seq, q, type, value, ev), -38) \
    X(int, snd_seq_queue_tempo_malloc, (snd_seq_queue_tempo_t **ptr), (ptr), -38) \
    V(snd_seq_queue_tempo_free, (snd_seq_queue_tempo_t *ptr), (ptr)) \
    V(snd_seq_queue_tempo_set_tempo, (snd_seq_queue_tempo_t *info, unsigned int tempo), (info, tempo)) \
    V(snd_seq_queue_tempo_set_ppq, (snd_seq_queue_tempo_t *info, int ppq), (info, ppq)) \
    X(int, snd_seq_get_queue_tempo, (snd_seq_t *handle, int q, snd_seq_queue_tempo_t *tempo), (handle, q, tempo), -38) \
    X(int, snd_seq_set_queue_tempo, (snd_seq_t *handle, int q, snd_seq_queue_tempo_t *tempo), (handle, q, tempo), -38) \
    X(int, snd_seq_queue_status_malloc, (snd_seq_queue_status_t **ptr), (ptr), -38) \
    V(snd_seq_queue_status_free, (snd_seq_queue_status_t *ptr), (ptr)) \
    X(int, snd_seq_get_queue_status, (snd_seq_t *handle, int q, snd_seq_queue_status_t *status), (handle, q, status), -38) \
    X(const snd_seq_real_time_t *, snd_seq_queue_status_get_real_time, (const snd_seq_queue_status_t *info), (info), NULL) \
    X(int, snd_seq_event_output, (snd_seq_t *handle, snd_seq_event_t *ev), (handle, ev), -38) \
    X(int, snd_seq_drain_output, (snd_seq_t *handle), (handle), -38) \
    X(int, snd_seq_drop_output, (snd_seq_t *handle), (handle), -38) \
    X(int, snd_seq_event_input, (snd_seq_t *handle, snd_seq_event_t **ev), (handle, ev), -38) \
    X(int, snd_seq_poll_descriptors_count, (snd_seq_t *handle, short events), (handle, events), -38) \
    X(int, snd_seq_poll_descriptors, (snd_seq_t *handle, struct pollfd *pfds, unsigned int space, short events), (handle, pfds, space, events), -38) \
    X(int, snd_midi_event_new, (size_t bufsize, snd_midi_event_t **rdev), (bufsize, rdev), -38) \
    V(snd_midi_event_free, (snd_midi_event_t *dev), (dev)) \
    V(snd_midi_event_reset_encode, (snd_midi_event_t *dev), (dev)) \
    V(snd_midi_event_reset_decode, (snd_midi_event_t *dev), (dev)) \
    V(snd_midi_event_no_status, (snd_midi_event_t *dev, int on), (dev, on)) \
    X(long, snd_midi_event_encode, (snd_midi_event_t *dev, const unsigned char *buf, long count, snd_seq_event_t *ev), (dev, buf, count, ev), -38) \
    X(long, snd_midi_event_decode, (snd_midi_event_t *dev, unsigned char *buf, long count, const snd_seq_event_t *ev), (dev, buf, count, ev), -38)

#define TACTUS_ALSA_DECLARE(ret, name, params, args, failure) TACTUS_ALSA_HIDDEN ret name params;
#define TACTUS_ALSA_DECLARE_VOID(name, params, args) TACTUS_ALSA_HIDDEN void name params;
TACTUS_ALSA_FUNCTIONS(TACTUS_ALSA_DECLARE, TACTUS_ALSA_DECLARE_VOID)
#undef TACTUS_ALSA_DECLARE
#undef TACTUS_ALSA_DECLARE_VOID

// MARK: Loading

/// Loads libasound.so.2 and resolves every function above, once per process. Returns 1 when
/// the library is usable, 0 otherwise (the reason is then `tactus_alsa_load_error()`). Until it
/// succeeds, the functions above fail with -ENOSYS (or NULL / an empty string) instead of
/// calling into a library that is not there.
TACTUS_ALSA_HIDDEN int tactus_alsa_load(void);
/// Why loading failed: dlopen's or dlsym's message, or NULL when it did not.
TACTUS_ALSA_HIDDEN const char *tactus_alsa_load_error(void);

// MARK: What ALSA provides as macros, for Swift

/// Silences ALSA's default error printer (it writes to stderr from inside library calls);
/// Tactus reports errors itself, with the device name.
TACTUS_ALSA_HIDDEN void tactus_alsa_silence_errors(void);

static inline int tactus_pcm_hw_params_malloc(snd_pcm_hw_params_t **params) { return snd_pcm_hw_params_malloc(params); }
static inline int tactus_seq_client_info_malloc(snd_seq_client_info_t **info) { return snd_seq_client_info_malloc(info); }
static inline int tactus_seq_port_info_malloc(snd_seq_port_info_t **info) { return snd_seq_port_info_malloc(info); }

/// Addresses an event from `port` to its subscribers, or to `client:port` when client >= 0.
static inline void tactus_seq_ev_address(snd_seq_event_t *ev, int source_port, int dest_client, int dest_port) {
    ev->source.port = (unsigned char)source_port;
    if (dest_client >= 0) {
        ev->dest.client = (unsigned char)dest_client;
        ev->dest.port = (unsigned char)dest_port;
    } else {
        ev->dest.client = SND_SEQ_ADDRESS_SUBSCRIBERS;
        ev->dest.port = SND_SEQ_ADDRESS_UNKNOWN;
    }
}

/// Delivers an event at once, bypassing any queue.
static inline void tactus_seq_ev_direct(snd_seq_event_t *ev) { ev->queue = SND_SEQ_QUEUE_DIRECT; }

/// Schedules an event on `queue` at an absolute real time.
static inline void tactus_seq_ev_schedule_real(snd_seq_event_t *ev, int queue, unsigned int sec, unsigned int nsec) {
    ev->flags &= (unsigned char)~(SND_SEQ_TIME_STAMP_MASK | SND_SEQ_TIME_MODE_MASK);
    ev->flags |= SND_SEQ_TIME_STAMP_REAL;
    ev->time.time.tv_sec = sec;
    ev->time.time.tv_nsec = nsec;
    ev->queue = (unsigned char)queue;
}

static inline void tactus_seq_ev_clear(snd_seq_event_t *ev) { memset(ev, 0, sizeof *ev); }

/// Makes `ev` a variable-length sysex event carrying `len` bytes at `data` as they are
/// (a complete message or one packet of a split message).
static inline void tactus_seq_ev_set_sysex(snd_seq_event_t *ev, unsigned int len, void *data) {
    ev->flags &= (unsigned char)~SND_SEQ_EVENT_LENGTH_MASK;
    ev->flags |= SND_SEQ_EVENT_LENGTH_VARIABLE;
    ev->type = SND_SEQ_EVENT_SYSEX;
    ev->data.ext.len = len;
    ev->data.ext.ptr = data;
}

/// Makes `ev` an echo event, which the sequencer delivers back to the addressed client.
static inline void tactus_seq_ev_set_echo(snd_seq_event_t *ev) { ev->type = SND_SEQ_EVENT_ECHO; }

/// True when `ev` is an echo event that `client` sent.
static inline int tactus_seq_ev_is_echo_from(const snd_seq_event_t *ev, int client) {
    return ev->type == SND_SEQ_EVENT_ECHO && ev->source.client == client;
}

/// True when the encoder produced a complete event in `ev`.
static inline int tactus_seq_ev_is_complete(const snd_seq_event_t *ev) { return ev->type != SND_SEQ_EVENT_NONE; }

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
    int rc = snd_seq_queue_status_malloc(&status);
    if (rc < 0) return rc;
    rc = snd_seq_get_queue_status(seq, queue, status);
    long long ns = rc;
    if (rc >= 0) {
        const snd_seq_real_time_t *t = snd_seq_queue_status_get_real_time(status);
        ns = t ? (long long)t->tv_sec * 1000000000LL + t->tv_nsec : -38;
    }
    snd_seq_queue_status_free(status);
    return ns;
}

#endif
