// The part of lilv's C API and of the LV2 ABI that Tactus uses, declared here rather than taken
// from <lilv/lilv.h> and <lv2/...>: liblilv is loaded at run time (CLilv.c), so Tactus builds on
// a machine without lilv's or LV2's headers and runs without the library for everything but
// hosted plugins. The LV2 structs are LV2's stable C ABI (unchanged since LV2 1.0); the lilv
// functions are those of lilv 0.24, whose ABI is stable within its soname liblilv-0.so.0.
#ifndef TACTUS_CLILV_H
#define TACTUS_CLILV_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// MARK: LV2 ABI

typedef void *LV2_Handle;
typedef uint32_t LV2_URID;

typedef struct {
    const char *URI;
    void *data;
} LV2_Feature;

typedef struct LV2_Descriptor {
    const char *URI;
    LV2_Handle (*instantiate)(const struct LV2_Descriptor *descriptor, double sample_rate, const char *bundle_path,
                              const LV2_Feature *const *features);
    void (*connect_port)(LV2_Handle instance, uint32_t port, void *data_location);
    void (*activate)(LV2_Handle instance);
    void (*run)(LV2_Handle instance, uint32_t sample_count);
    void (*deactivate)(LV2_Handle instance);
    void (*cleanup)(LV2_Handle instance);
    const void *(*extension_data)(const char *uri);
} LV2_Descriptor;

typedef void *LV2_URID_Map_Handle;
typedef struct {
    LV2_URID_Map_Handle handle;
    LV2_URID (*map)(LV2_URID_Map_Handle handle, const char *uri);
} LV2_URID_Map;

typedef void *LV2_URID_Unmap_Handle;
typedef struct {
    LV2_URID_Unmap_Handle handle;
    const char *(*unmap)(LV2_URID_Unmap_Handle handle, LV2_URID urid);
} LV2_URID_Unmap;

/// options.h's LV2_Options_Context: Tactus gives instance options only.
enum { TACTUS_LV2_OPTIONS_INSTANCE = 0 };

typedef struct {
    uint32_t context;
    uint32_t subject;
    LV2_URID key;
    uint32_t size;
    LV2_URID type;
    const void *value;
} LV2_Options_Option;

typedef struct {
    uint32_t size;
    uint32_t type;
} LV2_Atom;

typedef struct {
    uint32_t unit;
    uint32_t pad;
} LV2_Atom_Sequence_Body;

typedef struct {
    LV2_Atom atom;
    LV2_Atom_Sequence_Body body;
} LV2_Atom_Sequence;

/// An event of a sequence in frames: its time, then its body, then the body's bytes, padded to 8.
typedef struct {
    int64_t frames;
    LV2_Atom body;
} LV2_Atom_Event_Frames;

typedef uint32_t LV2_Worker_Status;
enum { TACTUS_LV2_WORKER_SUCCESS = 0, TACTUS_LV2_WORKER_ERR_UNKNOWN = 1, TACTUS_LV2_WORKER_ERR_NO_SPACE = 2 };

typedef void *LV2_Worker_Schedule_Handle;
typedef struct {
    LV2_Worker_Schedule_Handle handle;
    LV2_Worker_Status (*schedule_work)(LV2_Worker_Schedule_Handle handle, uint32_t size, const void *data);
} LV2_Worker_Schedule;

typedef void *LV2_Worker_Respond_Handle;
typedef LV2_Worker_Status (*LV2_Worker_Respond_Function)(LV2_Worker_Respond_Handle handle, uint32_t size, const void *data);

typedef struct {
    LV2_Worker_Status (*work)(LV2_Handle instance, LV2_Worker_Respond_Function respond, LV2_Worker_Respond_Handle handle,
                              uint32_t size, const void *data);
    LV2_Worker_Status (*work_response)(LV2_Handle instance, uint32_t size, const void *body);
    LV2_Worker_Status (*end_run)(LV2_Handle instance);
} LV2_Worker_Interface;

typedef void *LV2_Log_Handle;
typedef struct {
    LV2_Log_Handle handle;
    int (*printf)(LV2_Log_Handle handle, LV2_URID type, const char *fmt, ...);
    int (*vprintf)(LV2_Log_Handle handle, LV2_URID type, const char *fmt, va_list ap);
} LV2_Log_Log;

// MARK: lilv

typedef struct LilvWorldImpl LilvWorld;
typedef struct LilvPluginImpl LilvPlugin;
typedef struct LilvPluginClassImpl LilvPluginClass;
typedef struct LilvPortImpl LilvPort;
typedef struct LilvNodeImpl LilvNode;
typedef void LilvNodes;
typedef void LilvPlugins;
typedef void LilvIter;
typedef struct LilvStateImpl LilvState;
/// Receives one port value of a state: the port's symbol and a typed value (`type` is a URID).
typedef void (*LilvSetPortValueFunc)(const char *port_symbol, void *user_data, const void *value, uint32_t size, uint32_t type);

/// lilv.h's LilvInstanceImpl, public so that lilv's instance functions can be inline.
typedef struct {
    const LV2_Descriptor *lv2_descriptor;
    LV2_Handle lv2_handle;
    void *pimpl;
} LilvInstance;

/// Loads liblilv (once; later calls return the first result): 1 on success, else 0. The
/// library is `liblilv-0.so.0`, or the file or name in the environment variable
/// `TACTUS_LILV_LIBRARY` when it is set (a test names a missing one to see the refusal).
int tactus_lilv_load(void);
/// Why the library could not be loaded (NULL once it is).
const char *tactus_lilv_load_error(void);

LilvWorld *lilv_world_new(void);
void lilv_world_free(LilvWorld *world);
void lilv_world_load_all(LilvWorld *world);
/// Sets a world option (the search path, `http://drobilla.net/ns/lilv#lv2-path`) before loading.
void lilv_world_set_option(LilvWorld *world, const char *uri, const LilvNode *value);
const LilvPlugins *lilv_world_get_all_plugins(const LilvWorld *world);
LilvNode *lilv_new_uri(LilvWorld *world, const char *uri);
LilvNode *lilv_new_string(LilvWorld *world, const char *str);
void lilv_node_free(LilvNode *value);
const char *lilv_node_as_uri(const LilvNode *value);
const char *lilv_node_as_string(const LilvNode *value);
bool lilv_node_is_float(const LilvNode *value);
bool lilv_node_is_uri(const LilvNode *value);
bool lilv_node_equals(const LilvNode *a, const LilvNode *b);
float lilv_node_as_float(const LilvNode *value);
bool lilv_node_is_int(const LilvNode *value);
int lilv_node_as_int(const LilvNode *value);

unsigned lilv_plugins_size(const LilvPlugins *collection);
LilvIter *lilv_plugins_begin(const LilvPlugins *collection);
const LilvPlugin *lilv_plugins_get(const LilvPlugins *collection, LilvIter *i);
LilvIter *lilv_plugins_next(const LilvPlugins *collection, LilvIter *i);
bool lilv_plugins_is_end(const LilvPlugins *collection, LilvIter *i);
const LilvPlugin *lilv_plugins_get_by_uri(const LilvPlugins *plugins, const LilvNode *uri);

void lilv_nodes_free(LilvNodes *collection);
unsigned lilv_nodes_size(const LilvNodes *collection);
LilvIter *lilv_nodes_begin(const LilvNodes *collection);
const LilvNode *lilv_nodes_get(const LilvNodes *collection, LilvIter *i);
LilvIter *lilv_nodes_next(const LilvNodes *collection, LilvIter *i);
bool lilv_nodes_is_end(const LilvNodes *collection, LilvIter *i);

const LilvNode *lilv_plugin_get_uri(const LilvPlugin *plugin);
LilvNode *lilv_plugin_get_name(const LilvPlugin *plugin);
const LilvPluginClass *lilv_plugin_get_class(const LilvPlugin *plugin);
const LilvNode *lilv_plugin_class_get_uri(const LilvPluginClass *plugin_class);
LilvNodes *lilv_plugin_get_required_features(const LilvPlugin *plugin);
LilvNodes *lilv_plugin_get_value(const LilvPlugin *plugin, const LilvNode *predicate);
uint32_t lilv_plugin_get_num_ports(const LilvPlugin *plugin);
const LilvPort *lilv_plugin_get_port_by_index(const LilvPlugin *plugin, uint32_t index);
bool lilv_plugin_has_latency(const LilvPlugin *plugin);

const LilvNode *lilv_port_get_symbol(const LilvPlugin *plugin, const LilvPort *port);
LilvNode *lilv_port_get_name(const LilvPlugin *plugin, const LilvPort *port);
bool lilv_port_is_a(const LilvPlugin *plugin, const LilvPort *port, const LilvNode *port_class);
bool lilv_port_has_property(const LilvPlugin *plugin, const LilvPort *port, const LilvNode *property);
bool lilv_port_supports_event(const LilvPlugin *plugin, const LilvPort *port, const LilvNode *event_type);
LilvNode *lilv_port_get(const LilvPlugin *plugin, const LilvPort *port, const LilvNode *predicate);
void lilv_port_get_range(const LilvPlugin *plugin, const LilvPort *port, LilvNode **def, LilvNode **min, LilvNode **max);

/// The resources of `type` (presets, for `pset:Preset`) that apply to `plugin`.
LilvNodes *lilv_plugin_get_related(const LilvPlugin *plugin, const LilvNode *type);
/// Reads the data files that describe `resource` (a preset's); 0 on success.
int lilv_world_load_resource(LilvWorld *world, const LilvNode *resource);
/// The first object of a statement about `subject` (NULL leaves a part open), or NULL.
LilvNode *lilv_world_get(LilvWorld *world, const LilvNode *subject, const LilvNode *predicate, const LilvNode *object);
LilvState *lilv_state_new_from_world(LilvWorld *world, LV2_URID_Map *map, const LilvNode *node);
void lilv_state_restore(const LilvState *state, LilvInstance *instance, LilvSetPortValueFunc set_value, void *user_data,
                        uint32_t flags, const LV2_Feature *const *features);
void lilv_state_free(LilvState *state);
/// Reads the port value of `port_symbol` for a state being saved: its bytes, size and type.
typedef const void *(*LilvGetPortValueFunc)(const char *port_symbol, void *user_data, uint32_t *size, uint32_t *type);
LilvState *lilv_state_new_from_instance(const LilvPlugin *plugin, LilvInstance *instance, LV2_URID_Map *map, const char *scratch_dir,
                                        const char *copy_dir, const char *link_dir, const char *save_dir, LilvGetPortValueFunc get_value,
                                        void *user_data, uint32_t flags, const LV2_Feature *const *features);
int lilv_state_save(LilvWorld *world, LV2_URID_Map *map, LV2_URID_Unmap *unmap, const LilvState *state, const char *uri,
                    const char *dir, const char *filename);
LilvState *lilv_state_new_from_file(LilvWorld *world, LV2_URID_Map *map, const LilvNode *subject, const char *path);
const LilvNode *lilv_state_get_plugin_uri(const LilvState *state);

LilvInstance *lilv_plugin_instantiate(const LilvPlugin *plugin, double sample_rate, const LV2_Feature *const *features);
void lilv_instance_free(LilvInstance *instance);

// MARK: Host features written in C

/// A URID map and unmap without a fixed size. Mapping a URI already mapped takes no lock and
/// allocates nothing (readers probe an open-addressed table published with release ordering),
/// so plugins may map known URIs on the audio thread; a new URI takes a mutex and may grow the
/// tables (old tables are kept until the map is freed, so a reader never sees freed memory).
typedef struct tactus_urid_map tactus_urid_map;
tactus_urid_map *tactus_urid_map_new(void);
void tactus_urid_map_free(tactus_urid_map *map);
LV2_URID tactus_urid_map_uri(tactus_urid_map *map, const char *uri);
const char *tactus_urid_unmap(tactus_urid_map *map, LV2_URID urid);
/// The map as the feature structs plugins receive (owned by the map).
LV2_URID_Map *tactus_urid_map_feature(tactus_urid_map *map);
LV2_URID_Unmap *tactus_urid_unmap_feature(tactus_urid_map *map);
/// The number of URIs mapped.
uint32_t tactus_urid_map_count(tactus_urid_map *map);

/// Receives a plugin's log line: `level` 0 trace, 1 note, 2 warning, 3 error.
typedef void (*tactus_log_sink)(void *context, int level, const char *message);
/// The log feature: each line is formatted into a fixed buffer (at most 1023 bytes, no
/// allocation) and handed to `sink`; nothing is written to standard output or error.
typedef struct tactus_log tactus_log;
tactus_log *tactus_log_new(tactus_urid_map *map, tactus_log_sink sink, void *context);
void tactus_log_free(tactus_log *log);
LV2_Log_Log *tactus_log_feature(tactus_log *log);

#endif
