// Hand-written declarations of the parts of libvorbisfile 1.3 (vorbis/vorbisfile.h,
// vorbis/codec.h) Tactus uses, and a loader that resolves them with dlopen/dlsym.

#include "CVorbisFile.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// OggVorbis_File is 944 bytes, 8-byte aligned, on 64-bit Linux (libvorbisfile 1.3.7, checked
// with sizeof against /usr/include/vorbis/vorbisfile.h); only libvorbisfile looks inside. The
// storage is rounded up and over-aligned so a slightly larger build of the struct still fits.
typedef struct {
    _Alignas(16) unsigned char bytes[1024];
} ov_file_storage;

typedef struct {
    size_t (*read_func)(void *ptr, size_t size, size_t count, void *source);
    int (*seek_func)(void *source, int64_t offset, int whence);
    int (*close_func)(void *source);
    long (*tell_func)(void *source);
} ov_callbacks;

// The leading fields of vorbis_info (codec.h): version, channels, rate.
typedef struct {
    int version;
    int channels;
    long rate;
} vorbis_info_head;

static struct {
    int (*ov_open_callbacks)(void *source, ov_file_storage *file, const char *initial, long initial_bytes, ov_callbacks callbacks);
    int (*ov_clear)(ov_file_storage *file);
    int64_t (*ov_pcm_total)(ov_file_storage *file, int link);
    vorbis_info_head *(*ov_info)(ov_file_storage *file, int link);
    long (*ov_read)(ov_file_storage *file, char *buffer, int length, int big_endian, int word_size, int is_signed, int *bitstream);
} api;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int load_status = -1;
static char load_message[512];

static void load_library(void) {
    void *library = dlopen("libvorbisfile.so.3", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        const char *why = dlerror();
        strncpy(load_message, why ? why : "dlopen failed", sizeof load_message - 1);
        return;
    }
#define RESOLVE(name) \
    do { \
        *(void **)(&api.name) = dlsym(library, #name); \
        if (!api.name) { \
            strncpy(load_message, "libvorbisfile.so.3 has no symbol " #name, sizeof load_message - 1); \
            return; \
        } \
    } while (0)
    RESOLVE(ov_open_callbacks);
    RESOLVE(ov_clear);
    RESOLVE(ov_pcm_total);
    RESOLVE(ov_info);
    RESOLVE(ov_read);
#undef RESOLVE
    load_status = 0;
}

int tactus_vorbis_load(void) {
    pthread_once(&load_once, load_library);
    return load_status;
}

const char *tactus_vorbis_load_error(void) {
    pthread_once(&load_once, load_library);
    return load_status == 0 ? NULL : load_message;
}

struct tactus_vorbis_stream {
    ov_file_storage file;
    const unsigned char *data;
    size_t size;
    size_t position;
};

// Memory callbacks: the stream reads its bytes from the bank's mapping, never past `size`.
__attribute__((visibility("hidden"))) size_t tactus_vorbis_memory_read(void *ptr, size_t size, size_t count, void *source) {
    tactus_vorbis_stream *s = source;
    if (size == 0) return 0;
    size_t wanted = size * count;
    size_t left = s->size - s->position;
    if (wanted > left) wanted = left - left % size;
    memcpy(ptr, s->data + s->position, wanted);
    s->position += wanted;
    return wanted / size;
}

__attribute__((visibility("hidden"))) int tactus_vorbis_memory_seek(void *source, int64_t offset, int whence) {
    tactus_vorbis_stream *s = source;
    int64_t base;
    switch (whence) {
    case 0: base = 0; break;                        // SEEK_SET
    case 1: base = (int64_t)s->position; break;     // SEEK_CUR
    case 2: base = (int64_t)s->size; break;         // SEEK_END
    default: return -1;
    }
    if (offset < -base || offset > (int64_t)s->size - base) return -1;
    s->position = (size_t)(base + offset);
    return 0;
}

__attribute__((visibility("hidden"))) long tactus_vorbis_memory_tell(void *source) {
    return (long)((tactus_vorbis_stream *)source)->position;
}

int tactus_vorbis_open(const void *data, size_t size, tactus_vorbis_stream **stream) {
    *stream = NULL;
    if (tactus_vorbis_load() != 0) return -129;   // OV_EFAULT
    tactus_vorbis_stream *s = calloc(1, sizeof *s);
    if (!s) return -129;
    s->data = data;
    s->size = size;
    ov_callbacks callbacks = {tactus_vorbis_memory_read, tactus_vorbis_memory_seek, NULL, tactus_vorbis_memory_tell};
    int status = api.ov_open_callbacks(s, &s->file, NULL, 0, callbacks);
    if (status != 0) {
        // ov_open_callbacks leaves nothing to clear on failure.
        free(s);
        return status;
    }
    *stream = s;
    return 0;
}

int tactus_vorbis_channels(tactus_vorbis_stream *stream) {
    vorbis_info_head *info = api.ov_info(&stream->file, -1);
    return info ? info->channels : 0;
}

long tactus_vorbis_rate(tactus_vorbis_stream *stream) {
    vorbis_info_head *info = api.ov_info(&stream->file, -1);
    return info ? info->rate : 0;
}

long long tactus_vorbis_frame_count(tactus_vorbis_stream *stream) {
    return (long long)api.ov_pcm_total(&stream->file, -1);
}

long tactus_vorbis_read(tactus_vorbis_stream *stream, void *buffer, int byte_count) {
    int bitstream = 0;
    return api.ov_read(&stream->file, buffer, byte_count, 0, 2, 1, &bitstream);
}

void tactus_vorbis_close(tactus_vorbis_stream *stream) {
    if (!stream) return;
    api.ov_clear(&stream->file);
    free(stream);
}
