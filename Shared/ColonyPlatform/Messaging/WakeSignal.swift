import Synchronization

/// Wakes one waiting loop early (a Postgres notification, a shutdown), or lets it sleep until
/// a timeout. A wake with nobody waiting is remembered for the next wait.
final class WakeSignal: Sendable {
    private struct State {
        var pending = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())

    func wake() {
        let waiter: CheckedContinuation<Void, Never>? = state.withLock { state in
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.pending = true
            return nil
        }
        waiter?.resume()
    }

    func wait(timeout: Duration) async {
        let alreadyWoken = state.withLock { state in
            defer { state.pending = false }
            return state.pending
        }
        if alreadyWoken { return }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    let resumeNow = self.state.withLock { state in
                        if state.pending {
                            state.pending = false
                            return true
                        }
                        state.waiter = continuation
                        return false
                    }
                    if resumeNow { continuation.resume() }
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                self.wake()
            }
            await group.next()
            group.cancelAll()
        }
        // The timeout task may have left a wake behind after the waiter resumed; drop it only if
        // it came from the timer would need more state, and an extra early pass is harmless.
    }
}
