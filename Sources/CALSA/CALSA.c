// Loads libasound at run time and forwards each declared function to it (see CALSA.h for why).
#include "CALSA.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>

#define TACTUS_ALSA_POINTER(ret, name, params, args, failure) static ret (*loaded_##name) params;
#define TACTUS_ALSA_POINTER_VOID(name, params, args) static void (*loaded_##name) params;
TACTUS_ALSA_FUNCTIONS(TACTUS_ALSA_POINTER, TACTUS_ALSA_POINTER_VOID)

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int loaded = 0;
static char load_error[512];

static void load_library(void) {
    // RTLD_LOCAL: libasound's symbols stay out of the global namespace, so nothing else in the
    // process binds to them by accident. The library stays loaded for the life of the process.
    void *library = dlopen("libasound.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        const char *reason = dlerror();
        snprintf(load_error, sizeof load_error, "%s", reason ? reason : "libasound.so.2: cannot be loaded");
        return;
    }
#define TACTUS_ALSA_RESOLVE(ret, name, params, args, failure) \
    *(void **)(&loaded_##name) = dlsym(library, #name); \
    if (!loaded_##name) { snprintf(load_error, sizeof load_error, "libasound.so.2 has no function %s (ALSA 1.2.6 or later is needed)", #name); return; }
#define TACTUS_ALSA_RESOLVE_VOID(name, params, args) TACTUS_ALSA_RESOLVE(void, name, params, args, 0)
    TACTUS_ALSA_FUNCTIONS(TACTUS_ALSA_RESOLVE, TACTUS_ALSA_RESOLVE_VOID)
    loaded = 1;
}

int tactus_alsa_load(void) {
    pthread_once(&load_once, load_library);
    return loaded;
}

const char *tactus_alsa_load_error(void) {
    return tactus_alsa_load() ? NULL : load_error;
}

#define TACTUS_ALSA_FORWARD(ret, name, params, args, failure) \
    ret name params { \
        if (!tactus_alsa_load()) return failure; \
        return loaded_##name args; \
    }
#define TACTUS_ALSA_FORWARD_VOID(name, params, args) \
    void name params { \
        if (tactus_alsa_load()) loaded_##name args; \
    }
TACTUS_ALSA_FUNCTIONS(TACTUS_ALSA_FORWARD, TACTUS_ALSA_FORWARD_VOID)

static void silent_error_handler(const char *file, int line, const char *function, int err, const char *fmt, ...) {
    (void)file; (void)line; (void)function; (void)err; (void)fmt;
}

void tactus_alsa_silence_errors(void) {
    if (tactus_alsa_load()) snd_lib_error_set_handler(silent_error_handler);
}
