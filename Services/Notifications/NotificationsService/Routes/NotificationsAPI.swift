import ColonyModels
import ColonyPlatform
import Foundation
import Hummingbird
import OpenAPIRuntime
import PostgresNIO

/// The notifications REST API under `/notifications/v1`: the operations of `openapi.json`, as the
/// generated `APIProtocol` has them, for every app's tokens: the token's app scopes everything.
/// Each reads the caller and runs the domain on a pooled connection (reads) or in one
/// transaction (writes).
struct NotificationsAPI: APIProtocol {
    let database: Database
    let notifications: Notifications
    /// The document, served as itself.
    let document: Components.Schemas.OpenAPIDocument

    init(database: Database, notifications: Notifications) throws {
        self.database = database
        self.notifications = notifications
        self.document = try JSONDecoder().decode(Components.Schemas.OpenAPIDocument.self, from: Data(PackageResources.openapi_json))
    }

    /// Serves the operations behind the token middleware (but the document).
    func register(on router: Router<ColonyRequestContext>, context: ServiceContext) throws {
        try registerHandlers(on: GeneratedRoutes.transport(router, behind: context.tokenMiddleware, publicPaths: ["/notifications/v1/openapi.json"]),
                             serverURL: GeneratedRoutes.serverURL, configuration: GeneratedRoutes.configuration,
                             middlewares: GeneratedRoutes.middlewares(maxBodyBytes: context.configuration.maxBodyBytes))
    }

    // The caller with their app, which scopes every operation here (`Database.callerRead` gives the id only).

    func getOpenAPIDocument(_ input: Operations.GetOpenAPIDocument.Input) async throws -> Operations.GetOpenAPIDocument.Output {
        .ok(.init(body: .json(document)))
    }

    // MARK: devices

    func listDevices(_ input: Operations.ListDevices.Input) async throws -> Operations.ListDevices.Output {
        .ok(.init(body: .json(try await database.callerRead { caller, connection in try await notifications.devices(of: caller, on: connection) })))
    }

    func registerDevice(_ input: Operations.RegisterDevice.Input) async throws -> Operations.RegisterDevice.Output {
        guard case .json(let body) = input.body else { throw APIError.unprocessable("body: expected JSON") }
        let caller = try RequestCaller.require()
        // The rules name what is wrong with every field at once, as they always have.
        let device = try NotificationsRules.device(token: try Self.deviceToken(body), environment: body.environment?.rawValue, platform: body.platform?.rawValue,
                                                   appVersion: body.appVersion, locale: body.locale)
        return .ok(.init(body: .json(try await database.callerWrite { _, connection in try await notifications.register(device, caller: caller, on: connection) })))
    }

    /// `token`, or `apns_token` as the seeds' `device_tokens` table names it.
    static func deviceToken(_ body: Components.Schemas.DeviceRegistration) throws -> String {
        switch (body.token, body.apnsToken) {
        case (let token?, nil), (nil, let token?): return token
        case (let token?, let other?) where token == other: return token
        case (nil, nil): throw APIError.unprocessable("token (or apns_token) is required")
        default: throw APIError.unprocessable("token and apns_token name different tokens")
        }
    }

    func unregisterDevice(_ input: Operations.UnregisterDevice.Input) async throws -> Operations.UnregisterDevice.Output {
        try await database.callerWrite { caller, connection in try await notifications.unregister(token: input.path.token, caller: caller, on: connection) }
        return .noContent(.init())
    }

    // MARK: Live Activities

    func registerLiveActivity(_ input: Operations.RegisterLiveActivity.Input) async throws -> Operations.RegisterLiveActivity.Output {
        guard case .json(let body) = input.body else { throw APIError.unprocessable("body: expected JSON") }
        let caller = try RequestCaller.require()
        guard let post = UUID(canonical: body.postId) else { throw APIError.unprocessable("post_id must be a UUID") }
        var errors = ValidationErrors()
        let activityID = NotificationsRules.activityID(body.activityId)
        errors.check(activityID != nil, "activity_id must be 1–128 characters of letters, digits and - _ . :")
        let token = NotificationsRules.token(body.token)
        errors.check(token != nil, "token must be the activity's push token in hex")
        let environment = body.environment.map { APNsEnvironment.named($0.rawValue) } ?? .production
        errors.check(environment != nil, "environment must be production (or prod) or sandbox (or development)")
        try errors.throwIfAny()
        guard let activityID, let token, let environment else { throw APIError.unprocessable(errors.description) }
        return .ok(.init(body: .json(try await database.callerWrite { _, connection in
            try await notifications.registerActivity(activityID, post: post, token: token, environment: environment, caller: caller, on: connection)
        })))
    }

    func unregisterLiveActivity(_ input: Operations.UnregisterLiveActivity.Input) async throws -> Operations.UnregisterLiveActivity.Output {
        try await database.callerWrite { caller, connection in try await notifications.unregisterActivity(input.path.activityId, caller: caller, on: connection) }
        return .noContent(.init())
    }

    // MARK: preferences

    func getPreferences(_ input: Operations.GetPreferences.Input) async throws -> Operations.GetPreferences.Output {
        .ok(.init(body: .json(try await database.callerRead { caller, connection in try await notifications.preferences(of: caller, on: connection) })))
    }

    func updatePreferences(_ input: Operations.UpdatePreferences.Input) async throws -> Operations.UpdatePreferences.Output {
        guard case .json(let patch) = input.body else { throw APIError.unprocessable("body: expected JSON") }
        // Absent leaves a setting; `"quiet_hours": null` removes the quiet hours.
        let quietHours = RequestBodyNulls.field(patch.quietHours, "quiet_hours").map { quiet in
            quiet.map { NotificationsRules.QuietHoursInput(start: $0.start, end: $0.end, timezone: $0.timezone) }
        }
        return .ok(.init(body: .json(try await database.callerWrite { caller, connection in
            try await notifications.updatePreferences(kinds: patch.kinds?.additionalProperties, quietHours: quietHours, caller: caller, on: connection)
        })))
    }

    // MARK: the in-app list and the delivery log

    func listNotifications(_ input: Operations.ListNotifications.Input) async throws -> Operations.ListNotifications.Output {
        let cursor = try input.query.cursor.map { text in
            guard let cursor = KeysetCursor(text) else { throw APIError.unprocessable("cursor is not one this service gave out") }
            return cursor
        }
        let limit = try Self.limit(input.query.limit, default: 30, range: 1...100)
        return .ok(.init(body: .json(try await database.callerRead { caller, connection in try await notifications.list(caller, before: cursor, limit: limit, on: connection) })))
    }

    func markAllNotificationsRead(_ input: Operations.MarkAllNotificationsRead.Input) async throws -> Operations.MarkAllNotificationsRead.Output {
        .ok(.init(body: .json(try await database.callerWrite { caller, connection in try await notifications.markAllRead(caller, on: connection) })))
    }

    func markNotificationRead(_ input: Operations.MarkNotificationRead.Input) async throws -> Operations.MarkNotificationRead.Output {
        // Anything that is not a UUID cannot name a notification: the same 404 as another's.
        guard let id = UUID(canonical: input.path.notificationId) else { throw NotificationsErrors.notificationNotFound }
        return .ok(.init(body: .json(try await database.callerWrite { caller, connection in try await notifications.markRead(id, caller: caller, on: connection) })))
    }

    func listDeliveries(_ input: Operations.ListDeliveries.Input) async throws -> Operations.ListDeliveries.Output {
        let limit = try Self.limit(input.query.limit, default: 50, range: 1...500)
        return .ok(.init(body: .json(try await database.callerRead { caller, connection in
            try await notifications.deliveryLog(caller.id, app: caller.app, limit: limit, on: connection)
        })))
    }

    /// `limit` within `range`, `defaultValue` when absent.
    static func limit(_ value: Int?, default defaultValue: Int, range: ClosedRange<Int>) throws -> Int {
        let limit = value ?? defaultValue
        guard range.contains(limit) else { throw APIError.unprocessable("limit must be between \(range.lowerBound) and \(range.upperBound)") }
        return limit
    }
}
