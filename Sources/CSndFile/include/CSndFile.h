// Hand-written declarations of the few libsndfile types, constants and functions Tactus uses
// (values checked against sndfile.h of libsndfile 1.2). No system header is included: the
// library is loaded at run time with dlopen, so building needs nothing but the toolchain.
#ifndef TACTUS_CSNDFILE_H
#define TACTUS_CSNDFILE_H

#include <stdint.h>

typedef int64_t tactus_sf_count_t;
typedef struct tactus_SNDFILE tactus_SNDFILE;

typedef struct {
    tactus_sf_count_t frames;
    int samplerate;
    int channels;
    int format;
    int sections;
    int seekable;
} tactus_SF_INFO;

/// libsndfile's SF_INSTRUMENT: the root key and loops a file stores (WAV `smpl`, AIFF `INST`
/// and `MARK`); loop ends are exclusive (one past the last frame played).
typedef struct {
    int mode;
    uint32_t start;
    uint32_t end;
    uint32_t count;
} tactus_SF_LOOP;

typedef struct {
    int gain;
    char basenote, detune;
    char velocity_lo, velocity_hi;
    char key_lo, key_hi;
    int loop_count;
    tactus_SF_LOOP loops[16];
} tactus_SF_INSTRUMENT;

enum {
    TACTUS_SF_FORMAT_WAV = 0x010000,
    TACTUS_SF_FORMAT_FLAC = 0x170000,
    TACTUS_SF_FORMAT_OGG = 0x200000,
    TACTUS_SF_FORMAT_PCM_16 = 0x0002,
    TACTUS_SF_FORMAT_PCM_24 = 0x0003,
    TACTUS_SF_FORMAT_VORBIS = 0x0060,
    TACTUS_SF_FORMAT_OPUS = 0x0064,
    TACTUS_SFM_READ = 0x10,
    TACTUS_SFM_WRITE = 0x20,
    TACTUS_SFC_SET_VBR_ENCODING_QUALITY = 0x1300,
    TACTUS_SFC_SET_COMPRESSION_LEVEL = 0x1301,
    TACTUS_SF_STR_SOFTWARE = 0x03,
    TACTUS_SFC_GET_INSTRUMENT = 0x10D0,
    TACTUS_SF_TRUE = 1,
};

/// Loads the library (once; later calls return the first result). Returns 0 on success, else
/// -1 with a message from dlerror() copied into `message` (at most `capacity` bytes).
int tactus_sndfile_load(char *message, int capacity);

tactus_SNDFILE *tactus_sf_open_fd(int fd, int mode, tactus_SF_INFO *info, int close_desc);
int tactus_sf_format_check(const tactus_SF_INFO *info);
tactus_sf_count_t tactus_sf_writef_float(tactus_SNDFILE *file, const float *frames, tactus_sf_count_t count);
tactus_sf_count_t tactus_sf_writef_int(tactus_SNDFILE *file, const int *frames, tactus_sf_count_t count);
/// Reads up to `count` frames of interleaved samples, scaled to the full int range.
tactus_sf_count_t tactus_sf_readf_int(tactus_SNDFILE *file, int *frames, tactus_sf_count_t count);
int tactus_sf_command(tactus_SNDFILE *file, int command, void *data, int size);
int tactus_sf_set_string(tactus_SNDFILE *file, int type, const char *text);
int tactus_sf_close(tactus_SNDFILE *file);
const char *tactus_sf_strerror(tactus_SNDFILE *file);

#endif
