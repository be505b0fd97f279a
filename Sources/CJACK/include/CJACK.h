// The part of the JACK API that Tactus uses, declared here rather than taken from <jack/jack.h>:
// libjack is loaded at run time (CJACK.c), so Tactus builds and runs without JACK installed,
// and the same binary runs under jackd or PipeWire's libjack (pw-jack) unchanged. Layouts and
// values follow JACK's ABI (jack/types.h, stable across JACK 1, JACK 2 and PipeWire).
#ifndef TACTUS_CJACK_H
#define TACTUS_CJACK_H

#include <stddef.h>
#include <stdint.h>

#define TACTUS_JACK_HIDDEN __attribute__((visibility("hidden")))

typedef struct _jack_client jack_client_t;
typedef struct _jack_port jack_port_t;
typedef uint32_t jack_nframes_t;
typedef uint64_t jack_time_t;
typedef uint64_t jack_unique_t;
typedef unsigned char jack_midi_data_t;

#define TACTUS_JACK_DEFAULT_AUDIO_TYPE "32 bit float mono audio"
#define TACTUS_JACK_DEFAULT_MIDI_TYPE "8 bit raw midi"

// jack_options_t
#define JackNullOption 0x00
#define JackNoStartServer 0x01
#define JackUseExactName 0x02
#define JackServerName 0x04
// jack_status_t
#define JackFailure 0x01
#define JackNameNotUnique 0x04
#define JackServerStarted 0x08
#define JackServerFailed 0x10
#define JackServerError 0x20
#define JackNoSuchClient 0x40
// JackPortFlags
#define JackPortIsInput 0x1
#define JackPortIsOutput 0x2
#define JackPortIsPhysical 0x4
#define JackPortIsTerminal 0x10
// jack_latency_callback_mode_t
#define JackCaptureLatency 0
#define JackPlaybackLatency 1

typedef enum { JackTransportStopped = 0, JackTransportRolling = 1, JackTransportLooping = 2, JackTransportStarting = 3 } jack_transport_state_t;
typedef enum { JackPositionBBT = 0x10, JackPositionTimecode = 0x20, JackBBTFrameOffset = 0x40 } jack_position_bits_t;

typedef struct __attribute__((packed)) {
    jack_unique_t unique_1;
    jack_time_t usecs;
    jack_nframes_t frame_rate;
    jack_nframes_t frame;
    int32_t valid;  // jack_position_bits_t
    int32_t bar;
    int32_t beat;
    int32_t tick;
    double bar_start_tick;
    float beats_per_bar;
    float beat_type;
    double ticks_per_beat;
    double beats_per_minute;
    double frame_time;
    double next_time;
    jack_nframes_t bbt_offset;
    float audio_frames_per_video_frame;
    jack_nframes_t video_offset;
    int32_t padding[7];
    jack_unique_t unique_2;
} jack_position_t;
_Static_assert(sizeof(jack_position_t) == 136, "jack_position_t must match JACK's 136-byte layout");

typedef struct { jack_nframes_t time; size_t size; jack_midi_data_t *buffer; } jack_midi_event_t;
typedef struct { jack_nframes_t min; jack_nframes_t max; } jack_latency_range_t;

typedef int (*JackProcessCallback)(jack_nframes_t nframes, void *arg);
typedef int (*JackXRunCallback)(void *arg);
typedef int (*JackBufferSizeCallback)(jack_nframes_t nframes, void *arg);
typedef void (*JackInfoShutdownCallback)(int code, const char *reason, void *arg);
typedef int (*JackSyncCallback)(jack_transport_state_t state, jack_position_t *pos, void *arg);
typedef void (*JackTimebaseCallback)(jack_transport_state_t state, jack_nframes_t nframes, jack_position_t *pos, int new_pos, void *arg);
typedef void (*JackMessageFunction)(const char *message);

#define TACTUS_JACK_FUNCTIONS(X, V) \
    X(int, jack_client_close, (jack_client_t *client), (client), -1) \
    X(char *, jack_get_client_name, (jack_client_t *client), (client), NULL) \
    X(int, jack_activate, (jack_client_t *client), (client), -1) \
    X(int, jack_deactivate, (jack_client_t *client), (client), -1) \
    X(jack_nframes_t, jack_get_sample_rate, (jack_client_t *client), (client), 0) \
    X(jack_nframes_t, jack_get_buffer_size, (jack_client_t *client), (client), 0) \
    X(int, jack_set_process_callback, (jack_client_t *client, JackProcessCallback callback, void *arg), (client, callback, arg), -1) \
    V(jack_on_info_shutdown, (jack_client_t *client, JackInfoShutdownCallback callback, void *arg), (client, callback, arg)) \
    X(int, jack_set_xrun_callback, (jack_client_t *client, JackXRunCallback callback, void *arg), (client, callback, arg), -1) \
    X(int, jack_set_buffer_size_callback, (jack_client_t *client, JackBufferSizeCallback callback, void *arg), (client, callback, arg), -1) \
    X(jack_port_t *, jack_port_register, (jack_client_t *client, const char *name, const char *type, unsigned long flags, unsigned long buffer_size), (client, name, type, flags, buffer_size), NULL) \
    X(void *, jack_port_get_buffer, (jack_port_t *port, jack_nframes_t frames), (port, frames), NULL) \
    X(const char *, jack_port_name, (const jack_port_t *port), (port), "") \
    V(jack_port_get_latency_range, (jack_port_t *port, int mode, jack_latency_range_t *range), (port, mode, range)) \
    X(int, jack_connect, (jack_client_t *client, const char *source, const char *destination), (client, source, destination), -1) \
    X(int, jack_disconnect, (jack_client_t *client, const char *source, const char *destination), (client, source, destination), -1) \
    X(const char **, jack_get_ports, (jack_client_t *client, const char *name_pattern, const char *type_pattern, unsigned long flags), (client, name_pattern, type_pattern, flags), NULL) \
    V(jack_free, (void *ptr), (ptr)) \
    X(jack_nframes_t, jack_last_frame_time, (const jack_client_t *client), (client), 0) \
    X(jack_nframes_t, jack_frame_time, (const jack_client_t *client), (client), 0) \
    X(jack_time_t, jack_get_time, (void), (), 0) \
    X(int, jack_get_cycle_times, (const jack_client_t *client, jack_nframes_t *current_frames, jack_time_t *current_usecs, jack_time_t *next_usecs, float *period_usecs), (client, current_frames, current_usecs, next_usecs, period_usecs), -1) \
    X(jack_transport_state_t, jack_transport_query, (const jack_client_t *client, jack_position_t *pos), (client, pos), JackTransportStopped) \
    V(jack_transport_start, (jack_client_t *client), (client)) \
    V(jack_transport_stop, (jack_client_t *client), (client)) \
    X(int, jack_transport_locate, (jack_client_t *client, jack_nframes_t frame), (client, frame), -1) \
    X(int, jack_set_sync_callback, (jack_client_t *client, JackSyncCallback callback, void *arg), (client, callback, arg), -1) \
    X(int, jack_set_timebase_callback, (jack_client_t *client, int conditional, JackTimebaseCallback callback, void *arg), (client, conditional, callback, arg), -1) \
    X(int, jack_release_timebase, (jack_client_t *client), (client), -1) \
    X(uint32_t, jack_midi_get_event_count, (void *buffer), (buffer), 0) \
    X(int, jack_midi_event_get, (jack_midi_event_t *event, void *buffer, uint32_t index), (event, buffer, index), -1) \
    V(jack_midi_clear_buffer, (void *buffer), (buffer)) \
    X(int, jack_midi_event_write, (void *buffer, jack_nframes_t time, const jack_midi_data_t *data, size_t size), (buffer, time, data, size), -1) \
    V(jack_set_error_function, (JackMessageFunction function), (function)) \
    V(jack_set_info_function, (JackMessageFunction function), (function))

#define TACTUS_JACK_DECLARE(ret, name, params, args, failure) TACTUS_JACK_HIDDEN ret name params;
#define TACTUS_JACK_DECLARE_VOID(name, params, args) TACTUS_JACK_HIDDEN void name params;
TACTUS_JACK_FUNCTIONS(TACTUS_JACK_DECLARE, TACTUS_JACK_DECLARE_VOID)
#undef TACTUS_JACK_DECLARE
#undef TACTUS_JACK_DECLARE_VOID

/// Opens a client (jack_client_open is variadic, which Swift cannot call): never starts a
/// server; `server_name` NULL means the default server. `status` receives JACK's status bits.
TACTUS_JACK_HIDDEN jack_client_t *tactus_jack_client_open(const char *client_name, const char *server_name, int *status);

/// Loads libjack.so.0 and resolves every function above, once per process; 1 when usable.
/// Also silences libjack's own messages to stderr (Tactus reports errors itself).
TACTUS_JACK_HIDDEN int tactus_jack_load(void);
/// Why loading failed, or NULL when it did not.
TACTUS_JACK_HIDDEN const char *tactus_jack_load_error(void);

#endif
