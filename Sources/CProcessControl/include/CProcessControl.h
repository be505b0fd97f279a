#ifndef TACTUS_CPROCESSCONTROL_H
#define TACTUS_CPROCESSCONTROL_H

/// Asks the kernel to send `signal_number` to this process when its parent dies (Linux's
/// PR_SET_PDEATHSIG, which Swift cannot call: prctl is variadic). Returns 0 on success.
int tactus_signal_when_parent_dies(int signal_number);

#endif
