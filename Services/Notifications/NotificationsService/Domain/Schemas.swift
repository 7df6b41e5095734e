import ColonyModels
import Foundation
import OpenAPIRuntime

// What the domain answers with: the document's own types (Generated/), under the names the
// domain uses. The stores' rows become them here.

/// An install's token or a Live Activity's, as registered.
typealias RegisteredDevice = Components.Schemas.Device
typealias DeviceList = Components.Schemas.DeviceList
/// A page of the in-app list, newest first, with the unread count.
typealias NotificationPage = Components.Schemas.NotificationPage
typealias UnreadCount = Components.Schemas.UnreadCount
typealias DeliveryLog = Components.Schemas.DeliveryLog
/// Preferences as the app shows them: every kind of the app with on/off, and the quiet hours.
typealias PreferencesView = Components.Schemas.Preferences

/// A row that does not fit its document type (a value the table's checks should have kept out).
struct UnexpectedRow: Error, CustomStringConvertible {
    let description: String
}

extension Components.Schemas.Device {
    init(_ row: DeviceRow) throws {
        guard let kind = KindPayload(rawValue: row.kind) else { throw UnexpectedRow(description: "devices.kind \(row.kind)") }
        let environment: EnvironmentPayload = switch row.environment {
        case .sandbox: .sandbox
        case .production: .production
        }
        self.init(id: row.id.lowercased, app: row.app.rawValue, kind: kind, token: row.token, environment: environment, platform: row.platform,
                  appVersion: row.appVersion, locale: row.locale, activityId: row.activityId, postId: row.postId?.lowercased,
                  createdAt: row.createdAt, updatedAt: row.updatedAt)
    }
}

extension Components.Schemas.Notification {
    init(_ entry: NotificationEntry) throws {
        self.init(id: entry.id.lowercased, kind: entry.kind, title: entry.title, body: entry.body,
                  data: try OpenAPIObjectContainer(unvalidatedValue: entry.data.mapValues(\.untyped)), createdAt: entry.createdAt, readAt: entry.readAt)
    }
}

extension Components.Schemas.Delivery {
    init(_ entry: PushAdmin.Delivery) throws {
        guard let pushType = PushTypePayload(rawValue: entry.pushType) else { throw UnexpectedRow(description: "deliveries.push_type \(entry.pushType)") }
        guard let status = StatusPayload(rawValue: entry.status) else { throw UnexpectedRow(description: "deliveries.status \(entry.status)") }
        self.init(id: entry.id.lowercased, eventId: entry.eventId.lowercased, app: entry.app, kind: entry.kind, pushType: pushType, status: status,
                  attempts: entry.attempts, lastStatus: entry.lastStatus, lastReason: entry.lastReason, tokenSuffix: entry.tokenSuffix,
                  heldUntil: entry.heldUntil, createdAt: entry.createdAt, sentAt: entry.sentAt)
    }
}

extension NotificationsRules.Preferences {
    /// As the app shows them: every kind of `app` a user may switch, with on/off, and the quiet hours.
    func view(app: App) -> PreferencesView {
        let kinds = Dictionary(uniqueKeysWithValues: NotificationKind.preferenceKinds(of: app).map { ($0.rawValue, !disabledKinds.contains($0)) })
        let quiet = quietHours.map { PreferencesView.QuietHoursPayload(start: QuietHours.text($0.start), end: QuietHours.text($0.end), timezone: $0.timeZone) }
        // The document's `quiet_hours` is null, not absent, when there are none (the app shows
        // "no quiet hours"); the generated optional leaves nil out, so the null goes in as an
        // additional property (the document's `Preferences` allows them).
        return PreferencesView(kinds: .init(additionalProperties: kinds), quietHours: quiet, additionalProperties: quiet == nil ? Self.noQuietHours : .init())
    }

    /// `{"quiet_hours": null}`: a nil value is written as `null` (the literal always validates).
    static let noQuietHours = (try? OpenAPIObjectContainer(unvalidatedValue: ["quiet_hours": nil])) ?? .init()
}

extension JSONValue {
    /// The value as `OpenAPIObjectContainer` takes it (Foundation's JSON types).
    var untyped: (any Sendable)? {
        switch self {
        case .null: nil
        case .bool(let value): value
        case .number(let value): value
        case .string(let value): value
        case .array(let values): values.map(\.untyped)
        case .object(let values): values.mapValues(\.untyped)
        }
    }
}
