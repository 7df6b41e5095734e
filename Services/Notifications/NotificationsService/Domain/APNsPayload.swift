import ColonyModels
import Foundation

/// The JSON bodies APNs delivers to the apps. Custom keys sit beside `aps`: `kind` and `data`
/// (the ids the app opens the right screen with).
public enum APNsPayload {
    /// The largest payload APNs accepts for these push types.
    public static let maxBytes = 4096

    public static func alert(_ plan: PushPlan, notificationID: UUID?) -> [String: JSONValue] {
        var aps: [String: JSONValue] = [
            "alert": .object(["title": .string(plan.title), "body": .string(plan.body)]),
            "sound": .string("default"),
        ]
        if let thread = plan.threadID { aps["thread-id"] = .string(thread) }
        var payload: [String: JSONValue] = ["aps": .object(aps), "kind": .string(plan.kind.rawValue), "data": .object(plan.data)]
        if let notificationID { payload["notification_id"] = .string(notificationID.lowercased) }
        return payload
    }

    /// A silent push: the app wakes in the background (widgets reload).
    public static func background(_ plan: PushPlan) -> [String: JSONValue] {
        ["aps": .object(["content-available": .number(1)]), "kind": .string(plan.kind.rawValue), "data": .object(plan.data)]
    }

    public static func push(_ plan: PushPlan, notificationID: UUID?) -> [String: JSONValue] {
        plan.pushType == .alert ? alert(plan, notificationID: notificationID) : background(plan)
    }

    /// ActivityKit's remote update: `timestamp` orders updates, `content-state` is the
    /// activity's state, an `end` may say when to dismiss it.
    public static func liveActivity(_ plan: LiveActivityPlan, at date: Date) -> [String: JSONValue] {
        var aps: [String: JSONValue] = [
            "timestamp": .number((date.timeIntervalSince1970).rounded(.down)),
            "event": .string(plan.event.rawValue),
            "content-state": .object(plan.contentState),
        ]
        if let dismissal = plan.dismissalDate { aps["dismissal-date"] = .number(dismissal.timeIntervalSince1970.rounded(.down)) }
        if let stale = plan.staleDate { aps["stale-date"] = .number(stale.timeIntervalSince1970.rounded(.down)) }
        return ["aps": .object(aps), "kind": .string(NotificationKind.eventActivity.rawValue)]
    }

    /// The payload as APNs gets it; an alert too large for APNs loses body text until it fits.
    public static func encode(_ payload: [String: JSONValue]) throws -> String {
        var payload = payload
        var text = try render(payload)
        while text.utf8.count > maxBytes, case .object(var aps)? = payload["aps"], case .object(var alert)? = aps["alert"],
              let body = alert["body"]?.stringValue, body.count > 1 {
            alert["body"] = .string(String(body.prefix(body.count * 3 / 4)) + "…")
            aps["alert"] = .object(alert)
            payload["aps"] = .object(aps)
            text = try render(payload)
        }
        return text
    }

    static func render(_ payload: [String: JSONValue]) throws -> String {
        // Apple's JSON, not Colony's: slashes unescaped, as each byte counts against APNs' 4 KB.
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(payload), as: UTF8.self)
    }
}
