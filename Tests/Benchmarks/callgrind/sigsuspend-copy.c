// Preloaded into a service profiled under valgrind 3.19 (scripts/bench profile): libdispatch's
// signal thread calls sigsuspend() with a mask in read-only memory, and valgrind's rt_sigsuspend
// wrapper writes into the caller's mask (removing its own signal), which kills valgrind with
// SIGSEGV. Suspending on a copy on the stack behaves the same and leaves the caller's mask alone.
#define _GNU_SOURCE
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

int sigsuspend(const sigset_t *mask) {
    sigset_t copy = *mask;
    return (int)syscall(SYS_rt_sigsuspend, &copy, (size_t)(_NSIG / 8));
}
