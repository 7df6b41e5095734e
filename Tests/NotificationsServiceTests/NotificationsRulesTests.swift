import ColonyModels
import ColonyPlatform
import Crypto
import Foundation
import Testing
@testable import NotificationsService

@Suite("Notifications: rules without HTTP")
struct NotificationsRulesTests {
    func date(_ text: String) -> Date { ISO8601.parse(text)! }

    @Test("quiet hours: inside and outside, across midnight, in the user's zone, held until the window's end")
    func quietHours() {
        let night = QuietHours(start: 22 * 60, end: 7 * 60, timeZone: "Europe/Berlin")
        // 22:30 UTC is 23:30 in Berlin (winter): held until 07:00 Berlin = 06:00 UTC.
        #expect(night.heldUntil(date("2026-11-24T22:30:00Z")) == date("2026-11-25T06:00:00Z"))
        // 05:59 UTC is 06:59 Berlin: still inside, ends a minute later.
        #expect(night.heldUntil(date("2026-11-25T05:59:00Z")) == date("2026-11-25T06:00:00Z"))
        #expect(night.heldUntil(date("2026-11-25T06:00:00Z")) == nil)
        #expect(night.heldUntil(date("2026-11-24T20:59:00Z")) == nil)
        // A daytime window.
        let focus = QuietHours(start: 9 * 60, end: 17 * 60 + 30, timeZone: "Asia/Kolkata")
        #expect(focus.heldUntil(date("2026-11-24T04:00:00Z")) == date("2026-11-24T12:00:00Z"))  // 09:30 IST → 17:30 IST
        #expect(focus.heldUntil(date("2026-11-24T12:00:00Z")) == nil)
        // Summer time: 07:00 Berlin is 05:00 UTC in July.
        #expect(night.heldUntil(date("2026-07-01T21:00:00Z")) == date("2026-07-02T05:00:00Z"))
        #expect(QuietHours(start: 60, end: 60, timeZone: "UTC").heldUntil(Date()) == nil)
        #expect(QuietHours.minutes("07:05") == 425 && QuietHours.minutes("24:00") == nil && QuietHours.minutes("7:05") == nil)
    }

    @Test("preferences: kinds of the app only, HH:MM and a real time zone, null removes quiet hours")
    func preferences() throws {
        let none = NotificationsRules.Preferences(disabledKinds: [], quietHours: nil)
        let off = try NotificationsRules.preferences(app: .mycirclee, current: none, kinds: ["circlePost": false, "dm": true], quietHours: nil)
        #expect(off.disabledKinds == [.circlePost])
        #expect(throws: ValidationErrors.self) { try NotificationsRules.preferences(app: .mycirclee, current: none, kinds: ["group_message": false], quietHours: nil) }
        let quiet = try NotificationsRules.preferences(app: .unify, current: none, kinds: nil, quietHours: .some(.init(start: "22:00", end: "07:00", timezone: "Europe/Berlin")))
        #expect(quiet.quietHours == QuietHours(start: 1320, end: 420, timeZone: "Europe/Berlin"))
        #expect(try NotificationsRules.preferences(app: .unify, current: quiet, kinds: nil, quietHours: .some(nil)).quietHours == nil)
        #expect(throws: ValidationErrors.self) { try NotificationsRules.preferences(app: .unify, current: none, kinds: nil, quietHours: .some(.init(start: "22:00", end: "07:00", timezone: "Mars/Olympus"))) }
        #expect(throws: ValidationErrors.self) { try NotificationsRules.preferences(app: .unify, current: none, kinds: nil, quietHours: .some(.init(start: "25:00", end: "07:00", timezone: "UTC"))) }
    }

    @Test("device tokens: hex, normalised to lower case; environment and platform checked")
    func devices() throws {
        let token = String(repeating: "AB", count: 32)
        #expect(try NotificationsRules.device(token: token, environment: nil, platform: nil, appVersion: "2.1", locale: "de-DE").token == token.lowercased())
        #expect(throws: ValidationErrors.self) { try NotificationsRules.device(token: "xyz", environment: nil, platform: nil, appVersion: nil, locale: nil) }
        #expect(throws: ValidationErrors.self) { try NotificationsRules.device(token: token, environment: "staging", platform: nil, appVersion: nil, locale: nil) }
        // The names as the document's enum spells them, no other case (as `platform`).
        #expect(throws: ValidationErrors.self) { try NotificationsRules.device(token: token, environment: "PROD", platform: nil, appVersion: nil, locale: nil) }
        #expect(throws: ValidationErrors.self) { try NotificationsRules.device(token: token, environment: nil, platform: "android", appVersion: nil, locale: nil) }
        // The seeds' names: `prod` (HabitHive's default), `development` (Xcode's) and the rest.
        for (name, environment) in [("prod", APNsEnvironment.production), ("production", .production),
                                    ("sandbox", .sandbox), ("development", .sandbox), ("dev", .sandbox)] {
            #expect(try NotificationsRules.device(token: token, environment: name, platform: nil, appVersion: nil, locale: nil).environment == environment, "\(name)")
        }
    }

    @Test("APNs answers: 410 and BadDeviceToken kill the token, 429 and 5xx retry, an expired provider token is replaced, the rest is final")
    func apnsOutcomes() {
        #expect(APNsClient.outcome(status: 410, reason: "Unregistered", timestamp: 1_700_000_000_000) == .deadToken(status: 410, reason: "Unregistered", since: Date(timeIntervalSince1970: 1_700_000_000)))
        #expect(APNsClient.outcome(status: 400, reason: "BadDeviceToken", timestamp: nil) == .deadToken(status: 400, reason: "BadDeviceToken", since: nil))
        #expect(APNsClient.outcome(status: 429, reason: "TooManyRequests", timestamp: nil) == .retry(status: 429, reason: "TooManyRequests"))
        #expect(APNsClient.outcome(status: 503, reason: "ServiceUnavailable", timestamp: nil) == .retry(status: 503, reason: "ServiceUnavailable"))
        #expect(APNsClient.outcome(status: 403, reason: "ExpiredProviderToken", timestamp: nil) == .providerTokenExpired(reason: "ExpiredProviderToken"))
        #expect(APNsClient.outcome(status: 400, reason: "DeviceTokenNotForTopic", timestamp: nil) == .rejected(status: 400, reason: "DeviceTokenNotForTopic"))
        #expect(NotificationsRules.retryDelay(attempt: 1, jitter: 0) == .seconds(1))
        #expect(NotificationsRules.retryDelay(attempt: 4, jitter: 0) == .seconds(8))
        #expect(NotificationsRules.retryDelay(attempt: 30, jitter: 0) == .seconds(300))
    }

    @Test("the provider token is an ES256 JWT with kid, iss and iat, reused for 40 minutes, replaced no sooner than 20")
    func providerToken() throws {
        let key = P256.Signing.PrivateKey()
        let token = ProviderToken(teamID: "TEAM", keyID: "KEY", key: key)
        let start = Date()
        let first = try token.token(now: start)
        let parts = first.split(separator: ".").map(String.init)
        #expect(parts.count == 3)
        func decode(_ text: String) -> [String: Any] {
            (try? JSONSerialization.jsonObject(with: Base64URL.decode(text)!) as? [String: Any]) ?? [:]
        }
        #expect(decode(parts[0])["alg"] as? String == "ES256" && decode(parts[0])["kid"] as? String == "KEY")
        #expect(decode(parts[1])["iss"] as? String == "TEAM" && decode(parts[1])["iat"] as? Int == Int(start.timeIntervalSince1970))
        #expect(key.publicKey.isValidSignature(try P256.Signing.ECDSASignature(rawRepresentation: Base64URL.decode(parts[2])!), for: Data("\(parts[0]).\(parts[1])".utf8)))
        #expect(try token.token(now: start.addingTimeInterval(39 * 60)) == first)
        #expect(try token.token(now: start.addingTimeInterval(41 * 60)) != first)
        let second = try token.token(now: start.addingTimeInterval(41 * 60))
        token.expire(now: start.addingTimeInterval(42 * 60))  // too fresh to replace
        #expect(try token.token(now: start.addingTimeInterval(42 * 60)) == second)
    }

    func event<Payload: EventPayload>(_ payload: Payload, actor: UUID?) throws -> ReceivedEvent {
        try ReceivedEvent(bytes: EventEnvelope(app: nil, aggregateId: "x", actor: actor, payload: payload).encoded())
    }

    @Test("those who blocked the author (the event's withheld_from) get none of its pushes")
    func withheldFromBlockers() throws {
        let alice = UUID(), blocker = UUID(), circle = UUID()
        let envelope = EventEnvelope(app: .mycirclee, aggregateId: circle.lowercased, actor: alice, withheldFrom: [blocker],
                                     payload: PostCreated(post: Rows.post(circle: circle, author: alice), pollOptions: []))
        let plans = try Triggers.plans(for: ReceivedEvent(bytes: envelope.encoded()), names: [NameKey(.circle, circle): "Friends"])
        #expect(plans.pushes.count == 1 && plans.pushes[0].excluding == [alice, blocker])
    }

    @Test("plans never include the actor; an anonymous supporter is named nowhere; a DM with notify off pushes nothing")
    func plans() throws {
        let alice = UUID(), bob = UUID(), circle = UUID()
        let post = try Triggers.plans(for: event(PostCreated(post: Rows.post(circle: circle, author: alice), pollOptions: []), actor: alice),
                                      names: [NameKey(.circle, circle): "Friends"])
        #expect(post.pushes.count == 1 && post.pushes[0].recipients == .members(.circle, circle) && post.pushes[0].excluding.contains(alice))
        #expect(post.pushes[0].title == "Friends")

        let project = UUID(), sender = UUID()
        let message = SupportMessageRow(id: UUID(), projectId: project, senderId: nil, message: "You've got this", isAnonymous: true, createdAt: Date())
        let support = try Triggers.plans(for: event(SupportSent(message: message, senderName: "Sam", ownerId: alice), actor: nil), names: [NameKey(.project, project): "Solar Kiln"])
        #expect(support.pushes[0].title == "💚 Someone believes in Solar Kiln")
        let payload = try APNsPayload.encode(APNsPayload.push(support.pushes[0], notificationID: nil))
        #expect(!payload.contains("Sam") && !payload.contains(sender.uuidString.lowercased()))

        let dm = DMMessageRow(id: UUID(), threadId: UUID(), senderId: alice, body: "hi", replyToId: nil, createdAt: Date(), readAt: nil)
        #expect(try Triggers.plans(for: event(DMSent(circleId: circle, message: dm, participantIds: [alice, bob], recipientId: bob, notifyRecipient: false), actor: alice)).pushes.isEmpty)
        let notified = try Triggers.plans(for: event(DMSent(circleId: circle, message: dm, participantIds: [alice, bob], recipientId: bob, notifyRecipient: true), actor: alice))
        #expect(notified.pushes.first?.recipients == .users([bob]))

        let atRisk = try Triggers.plans(for: event(HiveAtRisk(hiveId: UUID(), hiveName: "Run", dayDate: Rows.today, missingUserIds: [bob], doneUserIds: [alice]), actor: nil))
        #expect(atRisk.pushes.first?.recipients == .users([bob]))
    }

    @Test("a payload over APNs' 4 KB loses body text, never its ids")
    func payloadSize() throws {
        let plan = PushPlan(kind: .groupMessage, recipients: .users([]), excluding: [], title: "Group", body: String(repeating: "ü", count: 5000),
                            threadID: "t", collapseID: nil, data: ["group_id": .string("g")], expiresAt: nil)
        let text = try APNsPayload.encode(APNsPayload.push(plan, notificationID: UUID()))
        #expect(text.utf8.count <= APNsPayload.maxBytes)
        #expect(text.contains("\"group_id\":\"g\""))
    }
}
