import ColonyClientTesting
import ColonyModels
import ColonyPlatform
import ColonyTesting
import Foundation
import Testing
@testable import NotificationsService

/// Issue 39: the console's moderation outcomes (`report_resolved`, `user_warned`, on the console's
/// topic) become in-app notifications and pushes in the event's app.
@Suite("Notifications: moderation outcomes")
struct ModerationNotificationTests {
    /// Who resolves reports: an operator, no app user.
    static let moderator = UUID()

    @Test("report_resolved: the reporter hears each outcome in the event's app, in the list and on their phone, and never who was reported")
    func reportOutcome() async throws {
        try await withRunningNotifications { n in
            let reporter = try await n.device(.habithive)
            // The same person's MyCirclee install hears nothing of a HabitHive report.
            let elsewhere = try await n.device(.mycirclee, user: try await n.service.user(reporter.id, app: .mycirclee))
            let removed = UUID(), suspended = UUID(), dismissed = UUID()
            let outcomes: [(UUID, String, String, String)] = [
                (removed, "hive", "removed", "We removed the hive you reported. Thank you."),
                (suspended, "profile", "suspended", "We took action on the profile you reported. Thank you."),
                (dismissed, "hive", "dismissed", "We looked at the hive you reported and found it within the rules."),
            ]
            for (object, type, outcome, _) in outcomes {
                try await n.publish(ReportResolved(reporterId: reporter.id, app: .habithive, objectType: type, objectId: object, outcome: outcome, resolvedAt: Date()),
                                    app: .habithive, aggregate: reporter.id, actor: Self.moderator)
            }
            try await n.waitForPushes([reporter.token], count: 3)
            try await n.settle()

            let pushes = n.pushes(to: reporter.token)
            #expect(pushes.count == 3)
            #expect(pushes.allSatisfy { $0.kind == "report_outcome" && $0.pushType == "alert" && $0.topic == "com.example.habithive" && $0.alertTitle == "Your report" })
            #expect(Set(pushes.compactMap(\.alertBody)) == Set(outcomes.map(\.3)))
            #expect(n.pushes(to: elsewhere.token).isEmpty)

            let list = try await n.notifications(of: reporter.user)
            #expect(list.notifications.count == 3 && list.unreadCount == 3)
            for (object, type, outcome, body) in outcomes {
                let entry = try #require(list.notifications.first { $0.data.value["object_id"] as? String == object.lowercased })
                #expect(entry.kind == "report_outcome" && entry.title == "Your report" && entry.body == body)
                #expect(entry.data.value["object_type"] as? String == type && entry.data.value["outcome"] as? String == outcome)
                #expect(entry.data.value.keys.sorted() == ["object_id", "object_type", "outcome"], "nothing about the reported user: \(entry.data.value)")
            }
            #expect(try await n.notifications(of: elsewhere.user).notifications.isEmpty)
            let log = try await n.deliveries(of: reporter.user)
            #expect(log.count == 3 && log.allSatisfy { $0.kind == "report_outcome" && $0.app == "habithive" && $0.status == .sent }, "\(log)")
            // No actor is recorded: the moderator is no app user, and the reported one is never named.
            try await n.service.withDatabase { database in
                let actors = try await database.query("SELECT count(*)::int FROM notifications WHERE user_id = \(reporter.id) AND actor_id IS NOT NULL").collect()
                #expect(try actors.first?.decode(Int.self) == 0)
            }
        }
    }

    @Test("user_warned: the warned user is told what about and what further breaches mean; content_removed and operator_action notify no one")
    func warning() async throws {
        try await withRunningNotifications { n in
            let owner = try await n.device(.unify)
            let message = UUID(), group = UUID()
            // One key, one partition: handled in this order.
            try await n.publish(OperatorAction(entryId: 1, operatorId: Self.moderator, operatorEmail: "mod@example.com", role: "moderator", action: "resolve_reports",
                                               app: .unify, target: message.lowercased, outcome: "ok", ipAddress: nil, at: Date()),
                                app: .unify, aggregate: owner.id, actor: Self.moderator)
            try await n.publish(ContentRemoved(app: .unify, objectType: "message", objectId: message, ownerId: owner.id, categories: [.harassment], removedAt: Date()),
                                app: .unify, aggregate: owner.id, actor: Self.moderator)
            try await n.publish(UserWarned(userId: owner.id, app: .unify, objectType: "message", objectId: message, categories: [.harassment, .spam], warnedAt: Date()),
                                app: .unify, aggregate: owner.id, actor: Self.moderator)
            try await n.publish(UserWarned(userId: owner.id, app: .unify, objectType: "group", objectId: group, categories: [.other], warnedAt: Date()),
                                app: .unify, aggregate: owner.id, actor: Self.moderator)
            try await n.waitForPushes([owner.token], count: 2)
            try await n.settle()

            let pushes = n.pushes(to: owner.token)
            #expect(pushes.count == 2, "content_removed and operator_action push nothing: \(pushes.map(\.payloadText))")
            #expect(pushes.allSatisfy { $0.kind == "moderation_warning" && $0.topic == "com.example.unify" && $0.alertTitle == "A warning from the moderators" })
            let list = try await n.notifications(of: owner.user).notifications
            #expect(list.count == 2 && list.allSatisfy { $0.kind == "moderation_warning" })
            let aboutMessage = try #require(list.first { $0.data.value["object_id"] as? String == message.lowercased })
            #expect(aboutMessage.body == "Your message was reported for harassment and breaks the community rules. Further breaches can get your account suspended.")
            #expect(aboutMessage.data.value["object_type"] as? String == "message" && aboutMessage.data.value["category"] as? String == "harassment")
            let aboutGroup = try #require(list.first { $0.data.value["object_id"] as? String == group.lowercased })
            #expect(aboutGroup.body == "Your group was reported and breaks the community rules. Further breaches can get your account suspended.")
            #expect(Set(pushes.compactMap(\.alertBody)) == Set(list.map(\.body)))
            let log = try await n.deliveries(of: owner.user)
            #expect(log.count == 2 && log.allSatisfy { $0.kind == "moderation_warning" && $0.app == "unify" }, "\(log)")
        }
    }

    @Test("preferences: report_outcome is in every app's and can be switched off; moderation_warning cannot (422), and a disabled_kinds naming it is not obeyed")
    func preferences() async throws {
        try await withRunningNotifications { n in
            for app in App.allCases {
                let kinds = try await n.api(try await n.user(app)).getPreferences().ok.body.json.kinds.additionalProperties
                #expect(kinds["report_outcome"] == true && kinds["moderation_warning"] == nil, "\(app): \(kinds)")
            }
            let user = try await n.device(.socialspot)
            let api = n.api(user.user)
            let off = try await api.updatePreferences(body: .json(.init(kinds: .init(additionalProperties: ["report_outcome": false])))).ok.body.json
            #expect(off.kinds.additionalProperties == ["report_outcome": false])
            for enabled in [false, true] {
                let refused = try await answer { try await api.updatePreferences(body: .json(.init(kinds: .init(additionalProperties: ["moderation_warning": enabled])))) }
                #expect(refused.status == 422 && refused.code == "validation_failed" && refused.message?.contains("moderation_warning cannot be switched off") == true, "\(refused.body)")
            }
            #expect(try await api.getPreferences().ok.body.json == off)
            // Written some other way (an old row, a hand edit): not obeyed.
            try await n.service.withDatabase { database in
                try await database.query("UPDATE preferences SET disabled_kinds = disabled_kinds || '{moderation_warning}' WHERE user_id = \(user.id) AND app = 'socialspot'").collect()
            }

            try await n.publish(ReportResolved(reporterId: user.id, app: .socialspot, objectType: "profile", objectId: UUID(), outcome: "removed", resolvedAt: Date()),
                                app: .socialspot, aggregate: user.id, actor: Self.moderator)
            try await n.publish(UserWarned(userId: user.id, app: .socialspot, objectType: "profile", objectId: user.id, categories: [.spam], warnedAt: Date()),
                                app: .socialspot, aggregate: user.id, actor: Self.moderator)
            try await n.waitForPushes([user.token])
            try await n.settle()
            #expect(n.pushes(to: user.token).map(\.kind) == ["moderation_warning"])
            #expect(try await n.notifications(of: user.user).notifications.map(\.kind) == ["moderation_warning"])
            #expect(try await n.deliveries(of: user.user).map(\.kind) == ["moderation_warning"])

            // Switched back on, the next outcome arrives.
            _ = try await api.updatePreferences(body: .json(.init(kinds: .init(additionalProperties: ["report_outcome": true])))).ok
            try await n.publish(ReportResolved(reporterId: user.id, app: .socialspot, objectType: "profile", objectId: UUID(), outcome: "dismissed", resolvedAt: Date()),
                                app: .socialspot, aggregate: user.id, actor: Self.moderator)
            try await n.waitForPushes([user.token], count: 2)
            #expect(n.pushes(to: user.token).last?.kind == "report_outcome")
        }
    }

    @Test("quiet hours hold a report's outcome (the list has it at once); a suspended account gets neither kind, not even in its list")
    func quietHoursAndSuspension() async throws {
        try await withRunningNotifications { n in
            let sleeper = try await n.device(.ibelieveinyou), suspended = try await n.device(.ibelieveinyou), control = try await n.device(.ibelieveinyou)
            let quiet = try await answer {
                try await n.api(sleeper.user).updatePreferences(body: .json(.init(quietHours: .init(start: Self.utcClock(-3600), end: Self.utcClock(7200), timezone: "UTC"))))
            }
            #expect(quiet.status == 200, "\(quiet.body)")
            try await n.publish(ReportResolved(reporterId: sleeper.id, app: .ibelieveinyou, objectType: "support_message", objectId: UUID(), outcome: "removed", resolvedAt: Date()),
                                app: .ibelieveinyou, aggregate: sleeper.id, actor: Self.moderator)
            try await waitUntil { try await !n.notifications(of: sleeper.user).notifications.isEmpty }
            let entry = try #require(try await n.notifications(of: sleeper.user).notifications.first)
            #expect(entry.kind == "report_outcome" && entry.body == "We removed the support message you reported. Thank you.")
            let held = try await n.deliveries(of: sleeper.user)
            #expect(held.count == 1 && held.first?.status == .pending && held.first?.heldUntil != nil, "\(held)")

            try await n.publish(UserSuspended(userId: suspended.id, app: .ibelieveinyou, until: Date().addingTimeInterval(3600), suspendedAt: Date()),
                                app: .ibelieveinyou, aggregate: suspended.id, actor: nil)
            try await waitUntil {
                try await n.service.withDatabase { database in
                    try await database.query("SELECT count(*)::int FROM suspended_accounts WHERE user_id = \(suspended.id)").collect().first?.decode(Int.self) == 1
                }
            }
            // All on one key: once the control's arrives, the suspended account's were handled.
            try await n.publish(UserWarned(userId: suspended.id, app: .ibelieveinyou, objectType: "project", objectId: UUID(), categories: [.hate], warnedAt: Date()),
                                app: .ibelieveinyou, aggregate: suspended.id, actor: Self.moderator)
            try await n.publish(ReportResolved(reporterId: suspended.id, app: .ibelieveinyou, objectType: "post", objectId: UUID(), outcome: "warned", resolvedAt: Date()),
                                app: .ibelieveinyou, aggregate: suspended.id, actor: Self.moderator)
            try await n.publish(ReportResolved(reporterId: control.id, app: .ibelieveinyou, objectType: "post", objectId: UUID(), outcome: "warned", resolvedAt: Date()),
                                app: .ibelieveinyou, aggregate: suspended.id, actor: Self.moderator)
            try await n.waitForPushes([control.token])
            try await n.settle()
            #expect(n.pushes(to: control.token).first?.alertBody == "We took action on the post you reported. Thank you.")
            #expect(n.pushes(to: suspended.token).isEmpty)
            #expect(n.pushes(to: sleeper.token).isEmpty, "held by the quiet hours")
            try await n.service.withDatabase { database in
                let rows = try await database.query("SELECT (SELECT count(*)::int FROM notifications WHERE user_id = \(suspended.id)) + (SELECT count(*)::int FROM deliveries WHERE user_id = \(suspended.id))").collect()
                #expect(try rows.first?.decode(Int.self) == 0)
            }
        }
    }

    @Test("the plans: every app's kinds carry the event's app; a fixed kind keeps its own")
    func plans() throws {
        #expect(NotificationKind.reportOutcome.app == nil && NotificationKind.moderationWarning.app == nil)
        for app in App.allCases {
            #expect(NotificationKind.kinds(of: app).contains(.moderationWarning) && !NotificationKind.preferenceKinds(of: app).contains(.moderationWarning))
            #expect(NotificationKind.preferenceKinds(of: app).contains(.reportOutcome))
        }
        #expect(PushPlan(kind: .groupMessage, recipients: .users([]), excluding: [], title: "", body: "", threadID: nil, collapseID: nil, data: [:], expiresAt: nil).app == .unify)
        #expect(Triggers.objectName("dm") == "message" && Triggers.objectName("support_message") == "support message")
        #expect(Triggers.categoryName(.selfHarm) == "self-harm" && Triggers.categoryName(.other) == nil)
    }

    /// `HH:MM` in UTC, `offset` seconds from now.
    static func utcClock(_ offset: TimeInterval) -> String {
        let parts = Calendar(identifier: .gregorian).dateComponents(in: TimeZone(identifier: "UTC")!, from: Date().addingTimeInterval(offset))
        return String(format: "%02d:%02d", parts.hour ?? 0, parts.minute ?? 0)
    }
}
