// Loads liblilv at run time and forwards each declared function to it (see CLilv.h for why),
// and implements the host features whose C signatures Swift cannot provide (the variadic log)
// or that must not lock on their read path (the URID map).
#include "CLilv.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ret, name, parameters, arguments, value on failure
#define TACTUS_LILV_FUNCTIONS(F, V) \
    F(LilvWorld *, lilv_world_new, (void), (), NULL) \
    V(lilv_world_free, (LilvWorld *world), (world)) \
    V(lilv_world_load_all, (LilvWorld *world), (world)) \
    V(lilv_world_set_option, (LilvWorld *world, const char *uri, const LilvNode *value), (world, uri, value)) \
    F(const LilvPlugins *, lilv_world_get_all_plugins, (const LilvWorld *world), (world), NULL) \
    F(LilvNode *, lilv_new_uri, (LilvWorld *world, const char *uri), (world, uri), NULL) \
    F(LilvNode *, lilv_new_string, (LilvWorld *world, const char *str), (world, str), NULL) \
    V(lilv_node_free, (LilvNode *value), (value)) \
    F(const char *, lilv_node_as_uri, (const LilvNode *value), (value), NULL) \
    F(const char *, lilv_node_as_string, (const LilvNode *value), (value), NULL) \
    F(bool, lilv_node_is_float, (const LilvNode *value), (value), false) \
    F(bool, lilv_node_is_uri, (const LilvNode *value), (value), false) \
    F(bool, lilv_node_equals, (const LilvNode *a, const LilvNode *b), (a, b), false) \
    F(float, lilv_node_as_float, (const LilvNode *value), (value), 0) \
    F(bool, lilv_node_is_int, (const LilvNode *value), (value), false) \
    F(int, lilv_node_as_int, (const LilvNode *value), (value), 0) \
    F(unsigned, lilv_plugins_size, (const LilvPlugins *c), (c), 0) \
    F(LilvIter *, lilv_plugins_begin, (const LilvPlugins *c), (c), NULL) \
    F(const LilvPlugin *, lilv_plugins_get, (const LilvPlugins *c, LilvIter *i), (c, i), NULL) \
    F(LilvIter *, lilv_plugins_next, (const LilvPlugins *c, LilvIter *i), (c, i), NULL) \
    F(bool, lilv_plugins_is_end, (const LilvPlugins *c, LilvIter *i), (c, i), true) \
    F(const LilvPlugin *, lilv_plugins_get_by_uri, (const LilvPlugins *p, const LilvNode *uri), (p, uri), NULL) \
    V(lilv_nodes_free, (LilvNodes *c), (c)) \
    F(unsigned, lilv_nodes_size, (const LilvNodes *c), (c), 0) \
    F(LilvIter *, lilv_nodes_begin, (const LilvNodes *c), (c), NULL) \
    F(const LilvNode *, lilv_nodes_get, (const LilvNodes *c, LilvIter *i), (c, i), NULL) \
    F(LilvIter *, lilv_nodes_next, (const LilvNodes *c, LilvIter *i), (c, i), NULL) \
    F(bool, lilv_nodes_is_end, (const LilvNodes *c, LilvIter *i), (c, i), true) \
    F(const LilvNode *, lilv_plugin_get_uri, (const LilvPlugin *p), (p), NULL) \
    F(LilvNode *, lilv_plugin_get_name, (const LilvPlugin *p), (p), NULL) \
    F(const LilvPluginClass *, lilv_plugin_get_class, (const LilvPlugin *p), (p), NULL) \
    F(const LilvNode *, lilv_plugin_class_get_uri, (const LilvPluginClass *c), (c), NULL) \
    F(LilvNodes *, lilv_plugin_get_required_features, (const LilvPlugin *p), (p), NULL) \
    F(LilvNodes *, lilv_plugin_get_value, (const LilvPlugin *p, const LilvNode *predicate), (p, predicate), NULL) \
    F(uint32_t, lilv_plugin_get_num_ports, (const LilvPlugin *p), (p), 0) \
    F(const LilvPort *, lilv_plugin_get_port_by_index, (const LilvPlugin *p, uint32_t i), (p, i), NULL) \
    F(bool, lilv_plugin_has_latency, (const LilvPlugin *p), (p), false) \
    F(const LilvNode *, lilv_port_get_symbol, (const LilvPlugin *p, const LilvPort *port), (p, port), NULL) \
    F(LilvNode *, lilv_port_get_name, (const LilvPlugin *p, const LilvPort *port), (p, port), NULL) \
    F(bool, lilv_port_is_a, (const LilvPlugin *p, const LilvPort *port, const LilvNode *c), (p, port, c), false) \
    F(bool, lilv_port_has_property, (const LilvPlugin *p, const LilvPort *port, const LilvNode *c), (p, port, c), false) \
    F(bool, lilv_port_supports_event, (const LilvPlugin *p, const LilvPort *port, const LilvNode *c), (p, port, c), false) \
    F(LilvNode *, lilv_port_get, (const LilvPlugin *p, const LilvPort *port, const LilvNode *c), (p, port, c), NULL) \
    V(lilv_port_get_range, (const LilvPlugin *p, const LilvPort *port, LilvNode **d, LilvNode **lo, LilvNode **hi), (p, port, d, lo, hi)) \
    F(LilvNodes *, lilv_plugin_get_related, (const LilvPlugin *p, const LilvNode *type), (p, type), NULL) \
    F(int, lilv_world_load_resource, (LilvWorld *w, const LilvNode *r), (w, r), -1) \
    F(LilvNode *, lilv_world_get, (LilvWorld *w, const LilvNode *s, const LilvNode *p, const LilvNode *o), (w, s, p, o), NULL) \
    F(LilvState *, lilv_state_new_from_world, (LilvWorld *w, LV2_URID_Map *m, const LilvNode *n), (w, m, n), NULL) \
    V(lilv_state_restore, (const LilvState *s, LilvInstance *i, LilvSetPortValueFunc f, void *u, uint32_t fl, const LV2_Feature *const *fe), (s, i, f, u, fl, fe)) \
    V(lilv_state_free, (LilvState *s), (s)) \
    F(LilvState *, lilv_state_new_from_instance, (const LilvPlugin *p, LilvInstance *i, LV2_URID_Map *m, const char *sd, const char *cd, const char *ld, const char *vd, LilvGetPortValueFunc g, void *u, uint32_t fl, const LV2_Feature *const *fe), (p, i, m, sd, cd, ld, vd, g, u, fl, fe), NULL) \
    F(int, lilv_state_save, (LilvWorld *w, LV2_URID_Map *m, LV2_URID_Unmap *u, const LilvState *s, const char *uri, const char *d, const char *f), (w, m, u, s, uri, d, f), -1) \
    F(LilvState *, lilv_state_new_from_file, (LilvWorld *w, LV2_URID_Map *m, const LilvNode *s, const char *p), (w, m, s, p), NULL) \
    F(const LilvNode *, lilv_state_get_plugin_uri, (const LilvState *s), (s), NULL) \
    F(LilvInstance *, lilv_plugin_instantiate, (const LilvPlugin *p, double rate, const LV2_Feature *const *f), (p, rate, f), NULL) \
    V(lilv_instance_free, (LilvInstance *instance), (instance))

#define TACTUS_LILV_POINTER(ret, name, params, args, failure) static ret (*loaded_##name) params;
#define TACTUS_LILV_POINTER_VOID(name, params, args) static void (*loaded_##name) params;
TACTUS_LILV_FUNCTIONS(TACTUS_LILV_POINTER, TACTUS_LILV_POINTER_VOID)

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int loaded = 0;
static char load_error[512];

static void load_library(void) {
    const char *override = getenv("TACTUS_LILV_LIBRARY");
    const char *name = override && *override ? override : "liblilv-0.so.0";
    // RTLD_LOCAL keeps lilv's (and serd's, sord's) symbols out of the global namespace.
    void *library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        const char *reason = dlerror();
        snprintf(load_error, sizeof load_error, "%s", reason ? reason : "liblilv-0.so.0: cannot be loaded");
        return;
    }
#define TACTUS_LILV_RESOLVE(ret, name, params, args, failure) \
    *(void **)(&loaded_##name) = dlsym(library, #name); \
    if (!loaded_##name) { snprintf(load_error, sizeof load_error, "%s has no function %s (lilv 0.24 or later is needed)", name_of_library, #name); return; }
#define TACTUS_LILV_RESOLVE_VOID(name, params, args) TACTUS_LILV_RESOLVE(void, name, params, args, 0)
    const char *name_of_library = name;
    TACTUS_LILV_FUNCTIONS(TACTUS_LILV_RESOLVE, TACTUS_LILV_RESOLVE_VOID)
    loaded = 1;
}

int tactus_lilv_load(void) {
    pthread_once(&load_once, load_library);
    return loaded;
}

const char *tactus_lilv_load_error(void) {
    return tactus_lilv_load() ? NULL : load_error;
}

#define TACTUS_LILV_FORWARD(ret, name, params, args, failure) \
    ret name params { \
        if (!tactus_lilv_load()) return failure; \
        return loaded_##name args; \
    }
#define TACTUS_LILV_FORWARD_VOID(name, params, args) \
    void name params { \
        if (tactus_lilv_load()) loaded_##name args; \
    }
TACTUS_LILV_FUNCTIONS(TACTUS_LILV_FORWARD, TACTUS_LILV_FORWARD_VOID)

// MARK: URID map

typedef struct {
    _Atomic(const char *) uri;
    uint32_t id;
} urid_slot;

typedef struct urid_table {
    uint32_t capacity; // a power of two
    urid_slot *slots;
    struct urid_table *previous; // kept for readers that loaded it before a growth
} urid_table;

typedef struct urid_names {
    uint32_t capacity;
    const char **names; // names[id - 1]
    struct urid_names *previous;
} urid_names;

struct tactus_urid_map {
    _Atomic(urid_table *) table;
    _Atomic(urid_names *) names;
    _Atomic uint32_t count;
    pthread_mutex_t lock;
    LV2_URID_Map map_feature;
    LV2_URID_Unmap unmap_feature;
};

static uint32_t hash_uri(const char *uri) {
    uint32_t hash = 2166136261u; // FNV-1a
    for (const unsigned char *p = (const unsigned char *)uri; *p; p++) hash = (hash ^ *p) * 16777619u;
    return hash;
}

static urid_table *new_table(uint32_t capacity, urid_table *previous) {
    urid_table *table = calloc(1, sizeof *table);
    if (!table) return NULL;
    table->slots = calloc(capacity, sizeof *table->slots);
    if (!table->slots) { free(table); return NULL; }
    table->capacity = capacity;
    table->previous = previous;
    return table;
}

static urid_names *new_names(uint32_t capacity, urid_names *previous) {
    urid_names *names = calloc(1, sizeof *names);
    if (!names) return NULL;
    names->names = calloc(capacity, sizeof *names->names);
    if (!names->names) { free(names); return NULL; }
    names->capacity = capacity;
    names->previous = previous;
    return names;
}

// The lock-free read: 0 when the URI is not (yet) in `table`.
static LV2_URID find(urid_table *table, const char *uri, uint32_t hash) {
    uint32_t mask = table->capacity - 1;
    for (uint32_t i = hash & mask;; i = (i + 1) & mask) {
        const char *stored = atomic_load_explicit(&table->slots[i].uri, memory_order_acquire);
        if (!stored) return 0;
        if (strcmp(stored, uri) == 0) return table->slots[i].id;
    }
}

static void insert(urid_table *table, const char *uri, uint32_t hash, uint32_t id) {
    uint32_t mask = table->capacity - 1;
    uint32_t i = hash & mask;
    while (atomic_load_explicit(&table->slots[i].uri, memory_order_relaxed)) i = (i + 1) & mask;
    table->slots[i].id = id;
    atomic_store_explicit(&table->slots[i].uri, uri, memory_order_release);
}

static LV2_URID map_callback(LV2_URID_Map_Handle handle, const char *uri) {
    return tactus_urid_map_uri(handle, uri);
}

static const char *unmap_callback(LV2_URID_Unmap_Handle handle, LV2_URID urid) {
    return tactus_urid_unmap(handle, urid);
}

tactus_urid_map *tactus_urid_map_new(void) {
    tactus_urid_map *map = calloc(1, sizeof *map);
    if (!map) return NULL;
    urid_table *table = new_table(256, NULL);
    urid_names *names = new_names(128, NULL);
    if (!table || !names) { free(map); return NULL; }
    atomic_init(&map->table, table);
    atomic_init(&map->names, names);
    atomic_init(&map->count, 0);
    pthread_mutex_init(&map->lock, NULL);
    map->map_feature = (LV2_URID_Map){map, map_callback};
    map->unmap_feature = (LV2_URID_Unmap){map, unmap_callback};
    return map;
}

void tactus_urid_map_free(tactus_urid_map *map) {
    if (!map) return;
    urid_names *names = atomic_load(&map->names);
    uint32_t count = atomic_load(&map->count);
    for (uint32_t i = 0; i < count; i++) free((void *)names->names[i]);
    while (names) { urid_names *previous = names->previous; free(names->names); free(names); names = previous; }
    urid_table *table = atomic_load(&map->table);
    while (table) { urid_table *previous = table->previous; free(table->slots); free(table); table = previous; }
    pthread_mutex_destroy(&map->lock);
    free(map);
}

LV2_URID tactus_urid_map_uri(tactus_urid_map *map, const char *uri) {
    if (!map || !uri) return 0;
    uint32_t hash = hash_uri(uri);
    LV2_URID id = find(atomic_load_explicit(&map->table, memory_order_acquire), uri, hash);
    if (id) return id;
    pthread_mutex_lock(&map->lock);
    urid_table *table = atomic_load_explicit(&map->table, memory_order_relaxed);
    id = find(table, uri, hash);
    if (!id) {
        uint32_t count = atomic_load_explicit(&map->count, memory_order_relaxed);
        urid_names *names = atomic_load_explicit(&map->names, memory_order_relaxed);
        char *copy = strdup(uri);
        if (!copy) goto done;
        if (count == names->capacity) {
            urid_names *grown = new_names(names->capacity * 2, names);
            if (!grown) { free(copy); goto done; }
            memcpy(grown->names, names->names, count * sizeof *names->names);
            atomic_store_explicit(&map->names, grown, memory_order_release);
            names = grown;
        }
        // At most half full, so probes stay short and always end at an empty slot.
        if ((count + 1) * 2 > table->capacity) {
            urid_table *grown = new_table(table->capacity * 2, table);
            if (!grown) { free(copy); goto done; }
            for (uint32_t i = 0; i < count; i++) insert(grown, names->names[i], hash_uri(names->names[i]), i + 1);
            atomic_store_explicit(&map->table, grown, memory_order_release);
            table = grown;
        }
        id = count + 1;
        names->names[count] = copy;
        insert(table, copy, hash, id);
        atomic_store_explicit(&map->count, id, memory_order_release);
    }
done:
    pthread_mutex_unlock(&map->lock);
    return id;
}

const char *tactus_urid_unmap(tactus_urid_map *map, LV2_URID urid) {
    if (!map || urid == 0) return NULL;
    uint32_t count = atomic_load_explicit(&map->count, memory_order_acquire);
    if (urid > count) return NULL;
    urid_names *names = atomic_load_explicit(&map->names, memory_order_acquire);
    return names->names[urid - 1];
}

LV2_URID_Map *tactus_urid_map_feature(tactus_urid_map *map) { return &map->map_feature; }
LV2_URID_Unmap *tactus_urid_unmap_feature(tactus_urid_map *map) { return &map->unmap_feature; }
uint32_t tactus_urid_map_count(tactus_urid_map *map) { return atomic_load(&map->count); }

// MARK: Log

struct tactus_log {
    LV2_Log_Log feature;
    tactus_log_sink sink;
    void *context;
    LV2_URID trace, note, warning, error;
};

static int log_vprintf(LV2_Log_Handle handle, LV2_URID type, const char *fmt, va_list ap) {
    tactus_log *log = handle;
    char line[1024];
    int length = vsnprintf(line, sizeof line, fmt, ap);
    if (length < 0) return length;
    // Plugins end their lines with a newline; the sink takes one line without it.
    size_t end = strlen(line);
    while (end > 0 && (line[end - 1] == '\n' || line[end - 1] == '\r')) line[--end] = 0;
    int level = type == log->error ? 3 : type == log->warning ? 2 : type == log->trace ? 0 : 1;
    if (log->sink) log->sink(log->context, level, line);
    return length;
}

static int log_printf(LV2_Log_Handle handle, LV2_URID type, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int length = log_vprintf(handle, type, fmt, ap);
    va_end(ap);
    return length;
}

tactus_log *tactus_log_new(tactus_urid_map *map, tactus_log_sink sink, void *context) {
    tactus_log *log = calloc(1, sizeof *log);
    if (!log) return NULL;
    log->feature = (LV2_Log_Log){log, log_printf, log_vprintf};
    log->sink = sink;
    log->context = context;
    log->trace = tactus_urid_map_uri(map, "http://lv2plug.in/ns/ext/log#Trace");
    log->note = tactus_urid_map_uri(map, "http://lv2plug.in/ns/ext/log#Note");
    log->warning = tactus_urid_map_uri(map, "http://lv2plug.in/ns/ext/log#Warning");
    log->error = tactus_urid_map_uri(map, "http://lv2plug.in/ns/ext/log#Error");
    return log;
}

void tactus_log_free(tactus_log *log) { free(log); }
LV2_Log_Log *tactus_log_feature(tactus_log *log) { return &log->feature; }
