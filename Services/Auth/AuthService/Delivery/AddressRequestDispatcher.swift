import ColonyPlatform
import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// Handles the queued address requests (recover, magic links, confirming sign-ups) of every
/// replica: woken by its own replica's requests at once, and by the clock for requests another
/// replica left (its lease ended) or that failed and wait for another try.
final class AddressRequestDispatcher: Service, Sendable {
    private let accounts: Accounts
    private let signal: WakeSignal
    private let pollInterval: Duration
    private let logger: Logger
    private let stopping = Atomic<Bool>(false)
    static let batchSize = 16

    init(accounts: Accounts, signal: WakeSignal, pollInterval: Duration = .seconds(5), logger: Logger) {
        self.accounts = accounts
        self.signal = signal
        self.pollInterval = pollInterval
        self.logger = logger
    }

    func run() async throws {
        await withGracefulShutdownHandler {
            while !stopping.load(ordering: .relaxed) && !Task.isCancelled {
                let handled: Int
                do {
                    handled = try await accounts.handleDueAddressRequests(limit: Self.batchSize)
                } catch {
                    logger.warning("address requests could not be leased, will retry", metadata: ["error": "\(error)"])
                    handled = 0
                    try? await Task.sleep(for: .seconds(1))
                }
                if handled < Self.batchSize { await signal.wait(timeout: pollInterval) }
            }
        } onGracefulShutdown: {
            self.stopping.store(true, ordering: .relaxed)
            self.signal.wake()
        }
    }
}
