#ifndef TACTUS_CVORBISFILE_H
#define TACTUS_CVORBISFILE_H

// Ogg Vorbis decoding from memory through libvorbisfile, loaded at run time with dlopen: no
// libvorbis header or library is needed to build Tactus. Only what Tactus uses is declared.

#include <stddef.h>

/// An Ogg Vorbis stream being decoded from memory (opaque; owns libvorbisfile's state).
typedef struct tactus_vorbis_stream tactus_vorbis_stream;

/// Loads libvorbisfile.so.3 and resolves the functions Tactus calls, once per process (thread
/// safe). Returns 0 on success; otherwise -1, and `tactus_vorbis_load_error` says why.
int tactus_vorbis_load(void);

/// The dynamic loader's message for the failed load, or NULL after a success.
const char *tactus_vorbis_load_error(void);

/// Opens the complete Ogg Vorbis stream in `data[0..<size]` (the bytes must outlive the
/// stream). Returns 0 and the stream in `*stream`, or libvorbisfile's negative error code
/// (`*stream` is then NULL). The library must be loaded.
int tactus_vorbis_open(const void *data, size_t size, tactus_vorbis_stream **stream);

/// Channels of the stream's first logical bitstream.
int tactus_vorbis_channels(tactus_vorbis_stream *stream);

/// Frames per second of the stream's first logical bitstream.
long tactus_vorbis_rate(tactus_vorbis_stream *stream);

/// Total frames of the stream (ov_pcm_total), or a negative error code.
long long tactus_vorbis_frame_count(tactus_vorbis_stream *stream);

/// Decodes up to `byte_count` bytes of interleaved signed 16-bit little-endian samples into
/// `buffer` (ov_read). Returns the bytes written, 0 at the end of the stream, or a negative
/// error code (OV_HOLE for a gap in the data, OV_EBADLINK, OV_EINVAL).
long tactus_vorbis_read(tactus_vorbis_stream *stream, void *buffer, int byte_count);

/// Closes the stream and frees it.
void tactus_vorbis_close(tactus_vorbis_stream *stream);

#endif
