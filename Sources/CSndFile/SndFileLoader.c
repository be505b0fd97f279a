// Loads libsndfile at run time and forwards calls through a table of its functions.
#include "CSndFile.h"
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

#define HIDDEN __attribute__((visibility("hidden")))

static struct {
    tactus_SNDFILE *(*open_fd)(int, int, tactus_SF_INFO *, int);
    int (*format_check)(const tactus_SF_INFO *);
    tactus_sf_count_t (*writef_float)(tactus_SNDFILE *, const float *, tactus_sf_count_t);
    tactus_sf_count_t (*writef_int)(tactus_SNDFILE *, const int *, tactus_sf_count_t);
    tactus_sf_count_t (*readf_int)(tactus_SNDFILE *, int *, tactus_sf_count_t);
    int (*command)(tactus_SNDFILE *, int, void *, int);
    int (*set_string)(tactus_SNDFILE *, int, const char *);
    int (*close)(tactus_SNDFILE *);
    const char *(*strerror)(tactus_SNDFILE *);
} table;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loadResult = -1;
static char loadMessage[512];

static void loadOnce(void) {
    void *handle = dlopen("libsndfile.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char *reason = dlerror();
        strncpy(loadMessage, reason ? reason : "dlopen failed", sizeof loadMessage - 1);
        return;
    }
    struct { const char *name; void **slot; } symbols[] = {
        {"sf_open_fd", (void **)&table.open_fd},
        {"sf_format_check", (void **)&table.format_check},
        {"sf_writef_float", (void **)&table.writef_float},
        {"sf_writef_int", (void **)&table.writef_int},
        {"sf_readf_int", (void **)&table.readf_int},
        {"sf_command", (void **)&table.command},
        {"sf_set_string", (void **)&table.set_string},
        {"sf_close", (void **)&table.close},
        {"sf_strerror", (void **)&table.strerror},
    };
    for (unsigned i = 0; i < sizeof symbols / sizeof symbols[0]; i++) {
        *symbols[i].slot = dlsym(handle, symbols[i].name);
        if (!*symbols[i].slot) {
            const char *reason = dlerror();
            strncpy(loadMessage, reason ? reason : symbols[i].name, sizeof loadMessage - 1);
            dlclose(handle);
            memset(&table, 0, sizeof table);
            return;
        }
    }
    loadResult = 0;
}

HIDDEN int tactus_sndfile_load(char *message, int capacity) {
    pthread_once(&once, loadOnce);
    if (loadResult != 0 && message && capacity > 0) {
        strncpy(message, loadMessage, (size_t)capacity - 1);
        message[capacity - 1] = 0;
    }
    return loadResult;
}

HIDDEN tactus_SNDFILE *tactus_sf_open_fd(int fd, int mode, tactus_SF_INFO *info, int close_desc) {
    return table.open_fd(fd, mode, info, close_desc);
}
HIDDEN int tactus_sf_format_check(const tactus_SF_INFO *info) { return table.format_check(info); }
HIDDEN tactus_sf_count_t tactus_sf_writef_float(tactus_SNDFILE *file, const float *frames, tactus_sf_count_t count) {
    return table.writef_float(file, frames, count);
}
HIDDEN tactus_sf_count_t tactus_sf_writef_int(tactus_SNDFILE *file, const int *frames, tactus_sf_count_t count) {
    return table.writef_int(file, frames, count);
}
HIDDEN tactus_sf_count_t tactus_sf_readf_int(tactus_SNDFILE *file, int *frames, tactus_sf_count_t count) {
    return table.readf_int(file, frames, count);
}
HIDDEN int tactus_sf_command(tactus_SNDFILE *file, int command, void *data, int size) {
    return table.command(file, command, data, size);
}
HIDDEN int tactus_sf_set_string(tactus_SNDFILE *file, int type, const char *text) {
    return table.set_string(file, type, text);
}
HIDDEN int tactus_sf_close(tactus_SNDFILE *file) { return table.close(file); }
HIDDEN const char *tactus_sf_strerror(tactus_SNDFILE *file) { return table.strerror(file); }
