import ColonyModels
import ColonyPlatform
import Foundation

/// What operators see and do of pushes, through notifications' routes (`PushClient`): a user's
/// devices and last deliveries, an app's delivery log, and a test push to one device (support
/// checking "I get no notifications"). Rights are checked per app first; a test push is audited.
public struct PushSupport: Sendable {
    /// nil when `COLONY_CONSOLE_SERVICE_URLS` names no notifications: the pages say so.
    let push: PushClient?
    let operators: Operators

    public init(push: PushClient?, operators: Operators) {
        self.push = push
        self.operators = operators
    }

    static let notConfigured = ConsoleRefusal(.unavailable, "The console is not told where notifications answers (COLONY_CONSOLE_SERVICE_URLS).")

    public func user(_ id: UUID, app: App, by actor: SignedInOperator) async throws -> PushAdmin.UserPush {
        guard actor.rights.allows(.viewUsers, on: app) else { throw ConsoleRefusal(.forbidden, "You do not work on \(app.rawValue).") }
        guard let push else { throw Self.notConfigured }
        return try await push.user(id, app: app, limit: PushAdmin.defaultUserLimit, operatorEmail: actor.email)
    }

    /// The app's delivery log, newest first; `status` one of `PushAdmin.statuses` or nil.
    public func log(app: App, status: String?, by actor: SignedInOperator) async throws -> [PushAdmin.Delivery] {
        guard actor.rights.allows(.viewUsers, on: app) else { throw ConsoleRefusal(.forbidden, "You do not work on \(app.rawValue).") }
        guard status.map({ PushAdmin.statuses.contains($0) }) ?? true else { throw ConsoleRefusal(.badInput, "No such delivery status.") }
        guard let push else { throw Self.notConfigured }
        return try await push.deliveries(app: app, status: status, limit: PushAdmin.defaultLogLimit, operatorEmail: actor.email)
    }

    /// Queues a test push to one of the user's devices; refused and failed attempts are audited too.
    public func sendTest(user: UUID, device: UUID, app: App, by actor: SignedInOperator) async throws -> PushAdmin.TestPush {
        let action = "send_test_push", target = user.lowercased, detail = "device \(device.lowercased)"
        guard actor.rights.allows(.sendTestPush, on: app) else {
            try await operators.record(actor, action: action, app: app, target: target, outcome: .refused, detail: "no right", ipAddress: nil)
            throw ConsoleRefusal(.forbidden, "Your role may not send test pushes on \(app.rawValue).")
        }
        guard let push else { throw Self.notConfigured }
        do {
            let queued = try await push.sendTest(user: user, device: device, app: app, operatorEmail: actor.email)
            try await operators.record(actor, action: action, app: app, target: target, outcome: .ok, detail: "\(detail), delivery \(queued.deliveryId.lowercased)", ipAddress: nil)
            return queued
        } catch let failure as ConsoleHTTP.Failure {
            try await operators.record(actor, action: action, app: app, target: target, outcome: .failed, detail: "\(detail): \(failure.description)", ipAddress: nil)
            if failure.status == 404 { throw ConsoleRefusal(.notFound, "This user has no such device in \(app.rawValue).") }
            throw ConsoleRefusal(.unavailable, "notifications could not queue it now (\(failure.status)); try again in a moment.")
        }
    }
}
