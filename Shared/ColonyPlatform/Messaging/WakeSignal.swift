import Synchronization

/// Wakes one waiting loop early (a Postgres notification, a settled batch, shutdown), or lets
/// it sleep until a timeout. A wake with nobody waiting is remembered for the next wait.
public final class WakeSignal: Sendable {
    public init() {}

    private struct State {
        var pending = false
        var waiter: (id: UInt64, continuation: CheckedContinuation<Void, Never>)?
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    public func wake() {
        let continuation: CheckedContinuation<Void, Never>? = state.withLock { state in
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter.continuation
            }
            state.pending = true
            return nil
        }
        continuation?.resume()
    }

    /// Resumes the waiter `id` if it is still the one waiting (its timeout passed).
    private func timeOut(_ id: UInt64) {
        let continuation: CheckedContinuation<Void, Never>? = state.withLock { state in
            guard let waiter = state.waiter, waiter.id == id else { return nil }
            state.waiter = nil
            return waiter.continuation
        }
        continuation?.resume()
    }

    public func wait(timeout: Duration) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let id: UInt64? = state.withLock { state in
                    if state.pending || Task.isCancelled {
                        state.pending = false
                        return nil
                    }
                    state.nextID += 1
                    state.waiter = (state.nextID, continuation)
                    return state.nextID
                }
                guard let id else {
                    continuation.resume()
                    return
                }
                Task {
                    try? await Task.sleep(for: timeout)
                    self.timeOut(id)
                }
            }
        } onCancel: {
            self.wake()
        }
    }
}
