// Loads libjack at run time and forwards each declared function to it (see CJACK.h for why).
#include "CJACK.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#define TACTUS_JACK_POINTER(ret, name, params, args, failure) static ret (*loaded_##name) params;
#define TACTUS_JACK_POINTER_VOID(name, params, args) static void (*loaded_##name) params;
TACTUS_JACK_FUNCTIONS(TACTUS_JACK_POINTER, TACTUS_JACK_POINTER_VOID)
static jack_client_t *(*loaded_jack_client_open)(const char *name, int options, int *status, ...);

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int loaded = 0;
static char load_error[512];

static void quiet(const char *message) { (void)message; }

static void load_library(void) {
    void *library = dlopen("libjack.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        const char *reason = dlerror();
        snprintf(load_error, sizeof load_error, "%s", reason ? reason : "libjack.so.0: cannot be loaded");
        return;
    }
#define TACTUS_JACK_RESOLVE(ret, name, params, args, failure) \
    *(void **)(&loaded_##name) = dlsym(library, #name); \
    if (!loaded_##name) { snprintf(load_error, sizeof load_error, "libjack.so.0 has no function %s", #name); return; }
#define TACTUS_JACK_RESOLVE_VOID(name, params, args) TACTUS_JACK_RESOLVE(void, name, params, args, 0)
    TACTUS_JACK_FUNCTIONS(TACTUS_JACK_RESOLVE, TACTUS_JACK_RESOLVE_VOID)
    TACTUS_JACK_RESOLVE(jack_client_t *, jack_client_open, (), (), NULL)
    loaded_jack_set_error_function(quiet);
    loaded_jack_set_info_function(quiet);
    loaded = 1;
}

int tactus_jack_load(void) {
    pthread_once(&load_once, load_library);
    return loaded;
}

const char *tactus_jack_load_error(void) {
    return tactus_jack_load() ? NULL : load_error;
}

#define TACTUS_JACK_FORWARD(ret, name, params, args, failure) \
    ret name params { \
        if (!tactus_jack_load()) return failure; \
        return loaded_##name args; \
    }
#define TACTUS_JACK_FORWARD_VOID(name, params, args) \
    void name params { \
        if (tactus_jack_load()) loaded_##name args; \
    }
TACTUS_JACK_FUNCTIONS(TACTUS_JACK_FORWARD, TACTUS_JACK_FORWARD_VOID)

jack_client_t *tactus_jack_client_open(const char *client_name, const char *server_name, int *status) {
    *status = JackFailure;
    if (!tactus_jack_load()) return NULL;
    if (server_name) return loaded_jack_client_open(client_name, JackNoStartServer | JackServerName, status, server_name);
    return loaded_jack_client_open(client_name, JackNoStartServer, status);
}
