/*
 * libsmf_dump: loads a Standard MIDI File with libsmf and prints every event, one per line:
 *
 *     TRACK TICK HEXBYTES
 *
 * TRACK counts from 0 in file order, TICK is the absolute tick (time_pulses), and HEXBYTES
 * are lowercase hex digits without separators.  Channel and system messages print as libsmf
 * holds them (status byte first, running status expanded); sysex prints as F0 followed by the
 * stored payload (libsmf strips the length field); meta events print as FF, the type, then
 * the data, without the length field.  End of track prints as "ff2f" like any other meta
 * event.  The first line is "HEADER FORMAT TRACKS PPQN".
 *
 * On a load failure it prints "ERROR" and exits with status 1.  libsmf aborts on some inputs
 * (DESIGN.md section 8), so callers run this in a child process.  GLib messages from libsmf
 * go to stderr, which callers may discard.
 *
 * Build: cc -O1 -o libsmf_dump libsmf_dump.c $(pkg-config --cflags --libs smf)
 */
#include <stdio.h>
#include <stdlib.h>
#include <smf.h>

static void print_hex(const unsigned char *bytes, int count)
{
    for (int i = 0; i < count; i++)
        printf("%02x", bytes[i]);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s FILE.mid\n", argv[0]);
        return 2;
    }
    smf_t *smf = smf_load(argv[1]);
    if (smf == NULL) {
        printf("ERROR\n");
        return 1;
    }
    printf("HEADER %d %d %d\n", smf->format, smf->number_of_tracks, smf->ppqn);
    for (int t = 1; t <= smf->number_of_tracks; t++) {
        smf_track_t *track = smf_get_track_by_number(smf, t);
        if (track == NULL) {
            printf("ERROR\n");
            return 1;
        }
        smf_event_t *event;
        while ((event = smf_track_get_next_event(track)) != NULL) {
            const unsigned char *b = event->midi_buffer;
            int n = event->midi_buffer_length;
            printf("%d %d ", t - 1, event->time_pulses);
            if (n >= 2 && b[0] == 0xFF) {
                /* FF type VLQ-length data: drop the length field. */
                int p = 2;
                while (p < n && (b[p] & 0x80))
                    p++;
                p++;
                print_hex(b, 2);
                if (p < n)
                    print_hex(b + p, n - p);
            } else {
                print_hex(b, n);
            }
            putchar('\n');
        }
    }
    /* smf_delete is quadratic in the event count and the process ends here anyway. */
    return fflush(stdout) == 0 ? 0 : 1;
}
