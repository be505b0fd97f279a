/* Loads a DLS bank with libinstpatch (FluidSynth's DLS reader) and prints what it read, one
 * line per instrument, region, connection and sample, in the form DLSInteropTests prints
 * Tactus's reading; with -w OUT it also writes the bank back out through libinstpatch's DLS
 * writer, giving the tests banks written by a tool other than Tactus.
 *
 * Build: cc -o libinstpatch_dls_dump libinstpatch_dls_dump.c $(pkg-config --cflags --libs libinstpatch-1.0)
 */
#include <libinstpatch/libinstpatch.h>
#include <stdio.h>
#include <string.h>

static const char *name_of(IpatchDLS2Info *info) {
    const char *name = ipatch_dls2_info_peek(info, IPATCH_DLS2_NAME);
    return name ? name : "";
}

static void print_info(IpatchDLS2SampleInfo *info) {
    if (!info) { printf(" info=none"); return; }
    printf(" info=%u,%d,%d,%u,%u,%u", info->root_note, info->fine_tune, info->gain,
           info->options & IPATCH_DLS2_SAMPLE_LOOP_MASK, info->loop_start, info->loop_end);
}

static void print_conns(GSList *conns) {
    for (GSList *p = conns; p; p = p->next) {
        IpatchDLS2Conn *c = p->data;
        printf("  conn %u %u %u %u %d\n", c->src, c->ctrlsrc, c->dest, c->trans, c->scale);
    }
}

int main(int argc, char **argv) {
    const char *out = NULL, *in = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-w") && i + 1 < argc) out = argv[++i];
        else in = argv[i];
    }
    if (!in) { fprintf(stderr, "usage: libinstpatch_dls_dump [-w OUT.dls] IN.dls\n"); return 2; }
    ipatch_init();
    GError *err = NULL;
    IpatchDLSFile *file = ipatch_dls_file_new();
    IpatchFileHandle *handle = ipatch_file_open(IPATCH_FILE(file), in, "r", &err);
    if (!handle) { fprintf(stderr, "open: %s\n", err ? err->message : "?"); return 1; }
    IpatchDLSReader *reader = ipatch_dls_reader_new(handle);
    IpatchDLS2 *dls = ipatch_dls_reader_load(reader, &err);
    if (!dls) { fprintf(stderr, "load: %s\n", err ? err->message : "?"); return 1; }

    for (GSList *p = dls->insts; p; p = p->next) {
        IpatchDLS2Inst *inst = p->data;
        int drum = (ipatch_item_get_flags(inst) & IPATCH_DLS2_INST_PERCUSSION) != 0;
        printf("inst bank=%u program=%u drum=%d name=%s\n", inst->bank, inst->program, drum, name_of(inst->info));
        print_conns(inst->conns);
        for (GSList *r = inst->regions; r; r = r->next) {
            IpatchDLS2Region *region = r->data;
            printf(" region keys=%u-%u vel=%u-%u group=%u phase=%u channel=%u sample=%s",
                   region->note_range_low, region->note_range_high, region->velocity_range_low,
                   region->velocity_range_high, region->key_group, region->phase_group, region->channel,
                   region->sample ? name_of(region->sample->info) : "(none)");
            print_info(region->sample_info);
            printf("\n");
            print_conns(region->conns);
        }
    }
    for (GSList *p = dls->samples; p; p = p->next) {
        IpatchDLS2Sample *sample = p->data;
        printf("sample name=%s rate=%d frames=%u", name_of(sample->info), sample->rate,
               ipatch_sample_get_size(IPATCH_SAMPLE(sample), NULL));
        print_info(sample->sample_info);
        printf("\n");
    }
    if (out) {
        IpatchDLSFile *outFile = ipatch_dls_file_new();
        IpatchFileHandle *outHandle = ipatch_file_open(IPATCH_FILE(outFile), out, "w", &err);
        if (!outHandle) { fprintf(stderr, "open for writing: %s\n", err ? err->message : "?"); return 1; }
        IpatchDLSWriter *writer = ipatch_dls_writer_new(outHandle, dls);
        if (!ipatch_dls_writer_save(writer, &err)) { fprintf(stderr, "write: %s\n", err ? err->message : "?"); return 1; }
        ipatch_file_close(outHandle);
    }
    return 0;
}
