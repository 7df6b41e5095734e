// libxcrypt (Debian's libcrypt): bcrypt hashing and verification, compatible with the
// $2a$/$2b$/$2y$ hashes Supabase Auth stores.
#include <crypt.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <pthread.h>
#include <sched.h>
#ifndef SCHED_IDLE
#define SCHED_IDLE 5
#endif

// Password hashing threads yield to the threads serving requests, so a flood of sign-ins slows
// sign-ins, not every other request: SCHED_IDLE threads run only when a core would otherwise
// idle, and are preempted at once when a request thread wakes. If the scheduler refuses, the
// thread falls back to the lowest nice value (Linux applies it to the calling thread only when
// given its thread id).
static inline void colony_lower_current_thread_priority(void) {
    struct sched_param param = { .sched_priority = 0 };
    if (pthread_setschedparam(pthread_self(), SCHED_IDLE, &param) != 0) {
        setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19);
    }
}
