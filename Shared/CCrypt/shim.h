// libxcrypt (Debian's libcrypt): bcrypt hashing and verification, compatible with the
// $2a$/$2b$/$2y$ hashes Supabase Auth stores.
#include <crypt.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

// Password hashing threads run at a lower priority than the threads serving requests, so a
// flood of sign-ins slows sign-ins, not every other request. Linux applies a nice value to the
// calling thread only when given its thread id.
static inline void colony_lower_current_thread_priority(int nice_value) {
    setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), nice_value);
}
