import ColonyModels
import ColonyPlatform
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The notifications REST API under `/notifications/v1` (described by `NotificationsOpenAPI`),
/// for every app's tokens: the token's app scopes everything. Handlers decode, call the domain
/// on a pooled connection (reads) or in one transaction (writes), and encode.
struct NotificationsRoutes: Sendable {
    let support: RouteSupport
    let notifications: Notifications

    static let prefix = "/notifications/v1"
    typealias R = RouteSupport

    func add(to router: Router<ColonyRequestContext>, tokenMiddleware: TokenMiddleware, catalog: RouteCatalog) {
        let document = OpenAPIDocument(bytes: PackageResources.openapi_json)
        document.serve(at: "\(Self.prefix)/openapi.json", on: router)
        catalog.record(RouteKey(method: "GET", path: "\(Self.prefix)/openapi.json"))
        let routes = DocumentedRoutes(group: router.group(RouterPath(Self.prefix)).add(middleware: tokenMiddleware), prefix: Self.prefix, catalog: catalog)
        let support = self.support, notifications = self.notifications

        routes.on(.get, "devices") { _, context in
            let caller = try context.requireUser()
            return try await support.read(context) { _, connection in try await notifications.devices(of: caller, on: connection) }
        }
        routes.on(.post, "devices") { request, context in
            let caller = try context.requireUser()
            return try await support.write(request, context) { body, _, connection in
                let input = try R.decode(DeviceBody.self, body)
                let device = try NotificationsRules.device(token: try input.deviceToken(), environment: input.environment, platform: input.platform,
                                                           appVersion: input.appVersion, locale: input.locale)
                return try await notifications.register(device, caller: caller, on: connection)
            }
        }
        routes.on(.delete, "devices/{token}") { request, context in
            let caller = try context.requireUser()
            let token = context.parameters.get("token") ?? ""
            return try await support.write(request, context, status: .noContent) { _, _, connection in
                try await notifications.unregister(token: token, caller: caller, on: connection)
                return R.Empty()
            }
        }
        routes.on(.post, "live-activities") { request, context in
            let caller = try context.requireUser()
            return try await support.write(request, context) { body, _, connection in
                let input = try R.decode(LiveActivityBody.self, body)
                var errors = ValidationErrors()
                let activityID = NotificationsRules.activityID(input.activityId)
                errors.check(activityID != nil, "activity_id must be 1–128 characters of letters, digits and - _ . :")
                let token = NotificationsRules.token(input.token)
                errors.check(token != nil, "token must be the activity's push token in hex")
                let environment = input.environment.map(APNsEnvironment.named) ?? .production
                errors.check(environment != nil, "environment must be production (or prod) or sandbox (or development)")
                try errors.throwIfAny()
                return try await notifications.registerActivity(activityID!, post: input.postId, token: token!, environment: environment!, caller: caller, on: connection)
            }
        }
        routes.on(.delete, "live-activities/{activity_id}") { request, context in
            let caller = try context.requireUser()
            let activityID = context.parameters.get("activity_id") ?? ""
            return try await support.write(request, context, status: .noContent) { _, _, connection in
                try await notifications.unregisterActivity(activityID, caller: caller, on: connection)
                return R.Empty()
            }
        }
        routes.on(.get, "preferences") { _, context in
            let caller = try context.requireUser()
            return try await support.read(context) { _, connection in try await notifications.preferences(of: caller, on: connection) }
        }
        routes.on(.patch, "preferences") { request, context in
            let caller = try context.requireUser()
            return try await support.write(request, context) { body, _, connection in
                let input = try R.decode(PreferencesBody.self, body)
                return try await notifications.updatePreferences(kinds: input.kinds, quietHours: input.quietHours, caller: caller, on: connection)
            }
        }
        routes.on(.get, "notifications") { request, context in
            let caller = try context.requireUser()
            let cursor = try R.query(request, "cursor", "cursor is not one this service gave out") { KeysetCursor($0) }
            let limit = try R.limit(request, default: 30, range: 1...100)
            return try await support.read(context) { _, connection in try await notifications.list(caller, before: cursor, limit: limit, on: connection) }
        }
        routes.on(.post, "notifications/read-all") { request, context in
            let caller = try context.requireUser()
            return try await support.write(request, context) { _, _, connection in try await notifications.markAllRead(caller, on: connection) }
        }
        routes.on(.post, "notifications/{notification_id}/read") { request, context in
            let caller = try context.requireUser()
            let id = try R.uuid(context, "notification_id", NotificationsErrors.notificationNotFound)
            return try await support.write(request, context) { _, _, connection in try await notifications.markRead(id, caller: caller, on: connection) }
        }
        routes.on(.get, "deliveries") { request, context in
            let caller = try context.requireUser()
            let limit = try R.limit(request, default: 50, range: 1...500)
            return try await support.read(context) { _, connection in try await notifications.deliveryLog(caller.id, app: caller.app, limit: limit, on: connection) }
        }
    }

    // MARK: bodies

    /// `token`, or `apns_token` as the seeds' `device_tokens` table names it.
    struct DeviceBody: Decodable {
        var token: String?
        var apnsToken: String?
        var environment: String?
        var platform: String?
        var appVersion: String?
        var locale: String?

        func deviceToken() throws -> String {
            switch (token, apnsToken) {
            case (let token?, nil), (nil, let token?): return token
            case (let token?, let other?) where token == other: return token
            case (nil, nil): throw APIError.unprocessable("token (or apns_token) is required")
            default: throw APIError.unprocessable("token and apns_token name different tokens")
            }
        }
    }

    struct LiveActivityBody: Decodable {
        var activityId: String
        var postId: UUID
        var token: String
        var environment: String?
    }

    /// Absent leaves a setting; `"quiet_hours": null` removes the quiet hours.
    struct PreferencesBody: Decodable {
        var kinds: [String: Bool]?
        var quietHours: NotificationsRules.QuietHoursInput??

        enum CodingKeys: String, CodingKey { case kinds, quietHours }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            kinds = try container.decodeIfPresent([String: Bool].self, forKey: .kinds)
            quietHours = container.contains(.quietHours) ? .some(try container.decodeIfPresent(NotificationsRules.QuietHoursInput.self, forKey: .quietHours)) : nil
        }
    }
}
