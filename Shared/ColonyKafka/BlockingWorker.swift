import Foundation
import Synchronization

/// A dedicated thread for librdkafka's blocking calls (poll, commit, close, admin requests).
/// Swift's global executor runs on as many threads as there are cores, so a blocking call on
/// it (or on a libdispatch global queue, which Linux shares with it) stalls unrelated tasks.
final class BlockingWorker: Sendable {
    private final class JobQueue: Sendable {
        let jobs = Mutex<[@Sendable () -> Void]>([])
        let available = DispatchSemaphore(value: 0)
    }

    private let queue = JobQueue()

    init(name: String) {
        let thread = Thread { [queue] in
            while true {
                queue.available.wait()
                guard let job = queue.jobs.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else { return }
                job()
            }
        }
        thread.name = name
        thread.start()
    }

    /// Runs `job` on the worker's thread after the jobs before it.
    func submit(_ job: @escaping @Sendable () -> Void) {
        queue.jobs.withLock { $0.append(job) }
        queue.available.signal()
    }

    /// Runs `job` on the worker's thread and returns its result.
    func run<Value: Sendable>(_ job: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            submit { continuation.resume(with: Swift.Result { try job() }) }
        }
    }

    /// Ends the thread once the jobs already submitted have run.
    func stop() {
        queue.available.signal()
    }

    /// Runs one blocking call on a short-lived thread of its own (rare calls: admin, metadata).
    static func runDetached<Value: Sendable>(name: String, _ job: @escaping @Sendable () throws -> Value) async throws -> Value {
        let worker = BlockingWorker(name: name)
        defer { worker.stop() }
        return try await worker.run(job)
    }
}
