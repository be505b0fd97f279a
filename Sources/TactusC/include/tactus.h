/* tactus.h: the C interface of Tactus (libTactusC.so), version 1.
 *
 * Every function returns an int32 result code (TACTUS_OK or a TACTUS_ERROR_*); on failure
 * tactus_last_error_message() says why, in a thread-local string. No Swift error or trap
 * crosses this interface: pointers and counts are checked, and a handle is a number that is
 * looked up, so a freed or invented handle gives TACTUS_ERROR_INVALID_HANDLE.
 *
 * Buffers belong to the caller: ask a count first (..._count), allocate, then fill. A fill
 * with too little room writes nothing and returns TACTUS_ERROR_BUFFER_TOO_SMALL. A NULL
 * column is skipped.
 *
 * Threads: every function may be called from any thread, on distinct handles or on the same
 * handle (scores and renders are immutable once made). Freeing a handle that another thread
 * is using is safe: that call finishes on its own reference.
 *
 * fork: a child may use handles made before the fork, and make new ones, provided no other
 * thread of the parent was inside a tactus_* call at the moment of the fork (a lock or the
 * allocator could be held by a thread that does not exist in the child). A render runs two
 * threads of its own (the session's control thread and the backend's render thread) while
 * tactus_render_score is in progress; the render thread is joined before it returns, the
 * detached control thread may still be releasing the finished session for a moment after
 * (holding no Tactus lock; glibc's allocator is fork-safe). Forking data loader workers
 * between calls is what the tests exercise.
 */
#ifndef TACTUS_H
#define TACTUS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct TactusScore TactusScore;
typedef struct TactusRender TactusRender;

enum {
    TACTUS_OK = 0,
    TACTUS_ERROR_INVALID_ARGUMENT = 1, /* a NULL pointer, a negative count, an option out of range */
    TACTUS_ERROR_INVALID_HANDLE = 2,   /* a handle already freed, or never made */
    TACTUS_ERROR_NOT_FOUND = 3,        /* no file at the path */
    TACTUS_ERROR_UNREADABLE = 4,       /* a directory, no permission, an I/O error */
    TACTUS_ERROR_INVALID_FILE = 5,     /* the content is refused (not an SMF, damaged, no timing) */
    TACTUS_ERROR_BUFFER_TOO_SMALL = 6,
    TACTUS_ERROR_RENDER_FAILED = 7,
    TACTUS_ERROR_WRITE_FAILED = 8      /* a file could not be written (no space, no permission, no folder) */
};

enum {
    TACTUS_RENDER_NO_REVERB = 1, /* the SoundFont sampler's reverb off (--no-reverb) */
    TACTUS_RENDER_NO_CHORUS = 2  /* the SoundFont sampler's chorus off (--no-chorus) */
};

/* 2 for this header (1 had no controls, lyrics, edits or writing). */
int32_t tactus_abi_version(void);
/* Why the last failed call on this thread failed ("" before any failed). Calls that succeed
 * leave it, as they leave errno, so read it right after a call returns non-zero. Valid until
 * this thread's next failed call; owned by the library. */
const char *tactus_last_error_message(void);

/* Scores: Standard MIDI Files as read (formats 0, 1, 2, RIFF RMID). */
int32_t tactus_score_load_path(const char *path, TactusScore **out);
int32_t tactus_score_load_bytes(const uint8_t *bytes, int64_t count, TactusScore **out);
int32_t tactus_score_free(TactusScore *score);
/* ticks_per_quarter: for an SMPTE division, the ticks of half a second. */
int32_t tactus_score_header(const TactusScore *score, int32_t *format, int32_t *division_word,
                            int32_t *ticks_per_quarter, int64_t *track_count);
/* The end of track `track`, or of the longest track for -1. */
int32_t tactus_score_end_tick(const TactusScore *score, int64_t track, int64_t *out);
/* UTF-8, NUL-terminated; *needed gets the size with the NUL. */
int32_t tactus_score_track_name(const TactusScore *score, int64_t track, char *buffer, int64_t capacity,
                                int64_t *needed);
/* Notes in note-on order, paired first in, first out per channel and key (as
 * `tactus dump --notes`); note-ons that never end are left out. */
int32_t tactus_score_track_note_count(const TactusScore *score, int64_t track, int64_t *out);
int32_t tactus_score_track_notes(const TactusScore *score, int64_t track, int64_t *start, int64_t *duration,
                                 uint8_t *pitch, uint8_t *velocity, uint8_t *channel, int64_t capacity);
/* Every track's notes in one call: per-track counts (room for the track count, or NULL)
 * and their total; then all tracks' notes concatenated in file order. */
int32_t tactus_score_note_counts(const TactusScore *score, int64_t *per_track, int64_t capacity, int64_t *total);
int32_t tactus_score_notes(const TactusScore *score, int64_t *start, int64_t *duration, uint8_t *pitch,
                           uint8_t *velocity, uint8_t *channel, int64_t capacity);
/* Tempo changes and time signatures of all tracks, sorted by tick. */
int32_t tactus_score_tempo_count(const TactusScore *score, int64_t *out);
int32_t tactus_score_tempos(const TactusScore *score, int64_t *ticks, int32_t *microseconds_per_quarter,
                            int64_t capacity);
int32_t tactus_score_time_signature_count(const TactusScore *score, int64_t *out);
int32_t tactus_score_time_signatures(const TactusScore *score, int64_t *ticks, int32_t *numerator,
                                     int32_t *denominator, int64_t capacity);
/* Through the tempo map of all tracks; TACTUS_ERROR_INVALID_FILE for division 0. */
int32_t tactus_score_ticks_to_seconds(const TactusScore *score, const int64_t *ticks, double *seconds,
                                      int64_t count);

/* Channel messages other than notes, in file order: kind is TACTUS_CONTROL_*; number is the
 * controller, program or key (0 for pitch bend and channel pressure); value is the controller
 * value, the pressure, or the bend centred on 0 (-8192...8191), 0 for a program change. */
enum {
    TACTUS_CONTROL_CHANGE = 0,
    TACTUS_CONTROL_PROGRAM = 1,
    TACTUS_CONTROL_PITCH_BEND = 2,
    TACTUS_CONTROL_CHANNEL_PRESSURE = 3,
    TACTUS_CONTROL_KEY_PRESSURE = 4
};
int32_t tactus_score_track_control_count(const TactusScore *score, int64_t track, int64_t *out);
int32_t tactus_score_track_controls(const TactusScore *score, int64_t track, int64_t *tick, uint8_t *channel,
                                    uint8_t *kind, uint8_t *number, int16_t *value, int64_t capacity);
/* Lyrics as `tactus dump --lyrics` finds them, in time order. The texts are UTF-8, one after
 * another without terminators; text_end[i] is where row i's ends (row i starts at row i-1's
 * end, row 0 at 0). *text_bytes gets the bytes all texts take. */
int32_t tactus_score_lyric_count(const TactusScore *score, int64_t *count, int64_t *text_bytes);
int32_t tactus_score_lyrics(const TactusScore *score, int64_t *tick, int64_t *track, int64_t *text_end, uint8_t *text,
                            int64_t capacity, int64_t text_capacity);

/* Edits: each makes a new score and leaves the old one as it was. transpose and shift edit as
 * `tactus edit --transpose N --overflow P` and `--move N` do and lay the file out as it was
 * read, so writing the result gives the bytes the command writes. */
enum {
    TACTUS_OVERFLOW_CLAMP = 0, /* a note moved past 0 or 127 stops there */
    TACTUS_OVERFLOW_DROP = 1,  /* ... is removed */
    TACTUS_OVERFLOW_FOLD = 2   /* ... moves back by octaves */
};
/* semitones: -127...127; channel 10 (drums) stays unless MPE makes it a member channel. */
int32_t tactus_score_transpose(const TactusScore *score, int32_t semitones, int32_t overflow, TactusScore **out);
/* Every event of the event tracks (not the tempo track) by `ticks`; nothing goes before 0. */
int32_t tactus_score_shift(const TactusScore *score, int64_t ticks, TactusScore **out);
/* Keeps the notes whose keep[i] is non-zero, i a row of tactus_score_notes; count must be the
 * score's note count. Everything else stays. */
int32_t tactus_score_keep_notes(const TactusScore *score, const uint8_t *keep, int64_t count, TactusScore **out);
/* The score as Standard MIDI File bytes (*needed gets the size; NULL buffer asks it), or
 * written to `path` through a temporary renamed into place (a device or FIFO is written in
 * place). TACTUS_ERROR_INVALID_FILE when an event lies past tick 2^31 - 1. */
int32_t tactus_score_smf_bytes(const TactusScore *score, uint8_t *buffer, int64_t capacity, int64_t *needed);
int32_t tactus_score_write(const TactusScore *score, const char *path);

/* Renders: the samples `tactus render --format f32` writes for the same song and options.
 * soundfont: a SoundFont 2/3 path, an SFZ instrument (a path ending in .sfz, as --instrument
 * FILE.sfz), or NULL for the built-in synthesizer. sample_rate: 44100,
 * 48000 or 96000. gain_db: -24...24. tail_seconds: 0...600, or negative for 'auto' (until
 * below -90 dBFS, at most 30 s). flags: TACTUS_RENDER_*. Blocks until done. */
int32_t tactus_render_score(const TactusScore *score, const char *soundfont, int32_t sample_rate, float gain_db,
                            double tail_seconds, uint32_t flags, TactusRender **out);
int32_t tactus_render_info(const TactusRender *render, int64_t *frames, int32_t *sample_rate);
/* Interleaved float32 stereo, left then right. */
int32_t tactus_render_copy(const TactusRender *render, float *buffer, int64_t capacity_frames);
/* As copy, releasing the render's memory chunk by chunk as it goes (peak memory about one
 * copy of the audio); afterwards the render holds no audio. */
int32_t tactus_render_take(TactusRender *render, float *buffer, int64_t capacity_frames);
int32_t tactus_render_free(TactusRender *render);
/* Writes float audio (channels 1, or 2 interleaved) as `tactus render -o PATH --format FORMAT`
 * writes: format is the CLI's --format text ("s24", "flac", "flac,s24", "ogg", "opus"...) or
 * NULL for the path's extension (WAV s16 without one). sample_rate: 44100, 48000 or 96000
 * (Opus: 48000). FLAC, Ogg and Opus load libsndfile at run time. Through a temporary file
 * renamed into place; TACTUS_ERROR_WRITE_FAILED when it cannot be written. */
int32_t tactus_write_audio(const float *samples, int64_t frames, int32_t channels, int32_t sample_rate, const char *path,
                           const char *format);

/* Training data: stems and note labels, as `tactus render --stems DIR --stems-by track|class
 * --labels FILE` writes them. Track numbers are file track indices (as for the notes). */
enum {
    TACTUS_STEMS_BY_TRACK = 0, /* one stem per track with notes */
    TACTUS_STEMS_BY_CLASS = 1  /* one per General MIDI program family, one for the drums */
};
int32_t tactus_score_stem_count(const TactusScore *score, int32_t by, int64_t *out);
/* The stem's file name without extension, copied as tactus_score_track_name copies. */
int32_t tactus_score_stem_name(const TactusScore *score, int32_t by, int64_t stem, char *buffer, int64_t capacity,
                               int64_t *needed);
/* *count gets the stem's track count; tracks (NULL to ask the count) their indices. */
int32_t tactus_score_stem_tracks(const TactusScore *score, int32_t by, int64_t stem, int64_t *tracks, int64_t capacity,
                                 int64_t *count);
/* The stem rendered as tactus_render_score renders the mix, through a fresh instrument, exactly
 * `frames` frames long: pass the mix's frame count and it lines up with the mix. */
int32_t tactus_render_stem(const TactusScore *score, int32_t by, int64_t stem, int64_t frames, const char *soundfont,
                           int32_t sample_rate, float gain_db, uint32_t flags, TactusRender **out);
/* A new score varied as `tactus render --augment SPEC --seed SEED` varies a file: transpose,
 * tempo, velocity and gain knobs drawn from the seed and `key` (NULL: the score's file name).
 * Renders of the new score add the drawn gain. tactus_score_augmentation copies the draw as a
 * spec of fixed values ("" for a score as loaded). */
int32_t tactus_score_augment(const TactusScore *score, const char *spec, uint64_t seed, const char *key,
                             TactusScore **out);
int32_t tactus_score_augmentation(const TactusScore *score, char *buffer, int64_t capacity, int64_t *needed);
/* Every note as the engine plays it, in start order: onset_frame is its first sample in a
 * render from the start at rate 1. stems_by: TACTUS_STEMS_BY_* to fill `stem` with stem
 * indices, or -1 (stem gets -1). NULL columns are skipped. */
int32_t tactus_score_label_count(const TactusScore *score, int32_t sample_rate, int64_t *out);
int32_t tactus_score_labels(const TactusScore *score, int32_t sample_rate, int32_t stems_by, int64_t *track,
                            uint8_t *channel, uint8_t *key, uint8_t *velocity, uint8_t *program, int32_t *bank,
                            int64_t *stem, int64_t *onset_frame, int64_t *offset_frame, int64_t capacity);

#ifdef __cplusplus
}
#endif

#endif
