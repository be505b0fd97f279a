#include "CProcessControl.h"
#include <sys/prctl.h>

int tactus_signal_when_parent_dies(int signal_number) {
    return prctl(PR_SET_PDEATHSIG, (unsigned long)signal_number, 0UL, 0UL, 0UL);
}
