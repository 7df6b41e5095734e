import ColonyModels
import Foundation

/// Who a planned push goes to.
public enum Recipients: Sendable, Equatable {
    /// Everyone in the group, circle or hive, by this service's membership projection.
    case members(MembershipScope, UUID)
    case users([UUID])
}

/// A push to users, planned from one domain event: the in-app notification and one APNs push to
/// each of the recipients' devices.
public struct PushPlan: Sendable, Equatable {
    public var kind: NotificationKind
    /// Whose users it goes to: the kind's app, or for a kind of every app the event's.
    public var app: App
    public var recipients: Recipients
    /// Never pushed to: the one who acted.
    public var excluding: Set<UUID>
    public var title: String
    public var body: String
    /// Groups the app's notifications on the lock screen (`thread-id`).
    public var threadID: String?
    /// Replaces an earlier push with the same id on the device (`apns-collapse-id`).
    public var collapseID: String?
    /// Ids the app opens the right screen with; never another user's private data.
    public var data: [String: JSONValue]
    /// APNs stops trying to deliver after this (`apns-expiration`); nil: a day.
    public var expiresAt: Date?

    public var pushType: PushType { kind.isAlert ? .alert : .background }

    /// `app` is required for a kind of every app (`NotificationKind.app` nil), and otherwise the kind's.
    public init(kind: NotificationKind, app: App? = nil, recipients: Recipients, excluding: Set<UUID>, title: String, body: String, threadID: String?,
                collapseID: String?, data: [String: JSONValue], expiresAt: Date?) {
        guard let resolved = app ?? kind.app else { preconditionFailure("\(kind.rawValue) is in every app: its plan names the app") }
        precondition(kind.app == nil || kind.app == resolved, "\(kind.rawValue) is \(kind.app!.rawValue)'s, not \(resolved.rawValue)'s")
        self.kind = kind
        self.app = resolved
        self.recipients = recipients
        self.excluding = excluding
        self.title = title
        self.body = body
        self.threadID = threadID
        self.collapseID = collapseID
        self.data = data
        self.expiresAt = expiresAt
    }
}

/// A Live Activity update (or end) for every activity token registered for an event post.
public struct LiveActivityPlan: Sendable, Equatable {
    public enum Event: String, Sendable { case update, end }

    public var postID: UUID
    public var event: Event
    public var contentState: [String: JSONValue]
    /// The lock screen drops an ended activity at this time.
    public var dismissalDate: Date?
    /// The activity shows as stale after this (the event's start).
    public var staleDate: Date?
}

/// Names the push texts use, from this service's projection of the domain events.
public struct NameKey: Hashable, Sendable {
    public enum Kind: String, Sendable { case circle, group, project }
    public var kind: Kind
    public var id: UUID

    public init(_ kind: Kind, _ id: UUID) {
        self.kind = kind
        self.id = id
    }
}

/// An event post as this service knows it (for RSVP alerts and Live Activities).
public struct EventPostInfo: Sendable, Equatable {
    public var postID: UUID
    public var circleID: UUID
    public var authorID: UUID
    public var title: String
    public var location: String?
    public var startsAt: Date?
    public var counts: RSVPCounts

    public init(postID: UUID, circleID: UUID, authorID: UUID, title: String, location: String?, startsAt: Date?, counts: RSVPCounts) {
        self.postID = postID
        self.circleID = circleID
        self.authorID = authorID
        self.title = title
        self.location = location
        self.startsAt = startsAt
        self.counts = counts
    }

    /// What a MyCirclee upcoming-event Live Activity shows.
    public var contentState: [String: JSONValue] {
        var state: [String: JSONValue] = [
            "post_id": .string(postID.uuidString.lowercased()),
            "title": .string(title),
            "going": .number(Double(counts.going)),
            "maybe": .number(Double(counts.maybe)),
            "declined": .number(Double(counts.declined)),
        ]
        state["location"] = location.map(JSONValue.string) ?? .null
        state["starts_at"] = startsAt.map { .string(ISO8601.format($0)) } ?? .null
        return state
    }
}

/// Which events push what to whom: the rules, as plain functions of the event. The handler
/// looks up the names (`lookups`) and the event post first, then asks for the plans.
public enum Triggers {
    public struct Lookups: Sendable, Equatable {
        public var names: Set<NameKey> = []
        public var eventPost: UUID?
    }

    public struct Plans: Sendable, Equatable {
        public var pushes: [PushPlan] = []
        public var liveActivities: [LiveActivityPlan] = []
    }

    /// What the texts of `event`'s pushes need from the projection.
    public static func lookups(for event: ReceivedEvent) throws -> Lookups {
        switch event.type {
        case .postCreated:
            return Lookups(names: [NameKey(.circle, try event.decode(PostCreated.self).payload.post.circleId)])
        case .postUpdated, .postDeleted, .postExpired:
            return Lookups(eventPost: try post(of: event)?.id)
        case .eventRsvped:
            return Lookups(eventPost: try event.decode(EventRsvped.self).payload.postId)
        case .dmSent:
            return Lookups(names: [NameKey(.circle, try event.decode(DMSent.self).payload.circleId)])
        case .messageSent:
            return Lookups(names: [NameKey(.group, try event.decode(MessageSent.self).payload.message.groupId)])
        case .supportSent:
            return Lookups(names: [NameKey(.project, try event.decode(SupportSent.self).payload.message.projectId)])
        case .projectFollowed:
            return Lookups(names: [NameKey(.project, try event.decode(ProjectFollowed.self).payload.follow.projectId)])
        default:
            return Lookups()
        }
    }

    /// The pushes `event` makes. `names` and `eventPost` are what `lookups` asked for (missing
    /// ones fall back to the app's name).
    public static func plans(for event: ReceivedEvent, names: [NameKey: String] = [:], eventPost: EventPostInfo? = nil) throws -> Plans {
        var plans = try planned(for: event, names: names, eventPost: eventPost)
        // Those who blocked the author get no push of it (`EventEnvelope.withheldFrom`).
        if let withheld = event.header.withheldFrom, !withheld.isEmpty {
            for index in plans.pushes.indices { plans.pushes[index].excluding.formUnion(withheld) }
        }
        return plans
    }

    static func planned(for event: ReceivedEvent, names: [NameKey: String], eventPost: EventPostInfo?) throws -> Plans {
        let actor = event.header.actor.map { Set([$0]) } ?? []
        switch event.type {
        // MyCirclee
        case .postCreated:
            let post = try event.decode(PostCreated.self).payload.post
            let circle = names[NameKey(.circle, post.circleId)] ?? "MyCirclee"
            return Plans(pushes: [PushPlan(
                kind: .circlePost, recipients: .members(.circle, post.circleId), excluding: actor.union([post.authorId]),
                title: circle, body: postText(post), threadID: "circle-\(post.circleId.lowercased)", collapseID: nil,
                data: ["circle_id": id(post.circleId), "post_id": id(post.id), "post_type": .string(post.type.rawValue)],
                expiresAt: post.expiresAt
            )])
        case .dmSent:
            let payload = try event.decode(DMSent.self).payload
            guard payload.notifyRecipient, payload.recipientId != payload.message.senderId else { return Plans() }
            let circle = names[NameKey(.circle, payload.circleId)]
            return Plans(pushes: [PushPlan(
                kind: .directMessage, recipients: .users([payload.recipientId]), excluding: actor.union([payload.message.senderId]),
                title: circle.map { "New message · \($0)" } ?? "New message", body: excerpt(payload.message.body),
                threadID: "dm-\(payload.message.threadId.lowercased)", collapseID: nil,
                data: ["circle_id": id(payload.circleId), "thread_id": id(payload.message.threadId), "message_id": id(payload.message.id)],
                expiresAt: nil
            )])
        case .eventRsvped:
            let payload = try event.decode(EventRsvped.self).payload
            var plans = Plans()
            if var post = eventPost {
                if let counts = payload.counts { post.counts = counts }
                plans.liveActivities = [LiveActivityPlan(postID: post.postID, event: .update, contentState: post.contentState, dismissalDate: nil, staleDate: post.startsAt)]
            }
            if let status = payload.status, let author = payload.authorId ?? eventPost?.authorID, author != payload.userId {
                let answer = switch status {
                case .going: "A circle member is going"
                case .maybe: "A circle member might come"
                case .declined: "A circle member can't make it"
                }
                let counts = payload.counts ?? eventPost?.counts
                plans.pushes = [PushPlan(
                    kind: .eventRSVP, recipients: .users([author]), excluding: actor.union([payload.userId]),
                    title: eventPost.map { "📅 \(excerpt($0.title, limit: 60))" } ?? "📅 Your event",
                    body: counts.map { "\(answer) · \($0.going) going, \($0.maybe) maybe" } ?? answer,
                    threadID: "event-\(payload.postId.lowercased)", collapseID: "rsvp-\(payload.postId.lowercased)",
                    data: ["circle_id": id(payload.circleId), "post_id": id(payload.postId), "status": .string(status.rawValue)],
                    expiresAt: nil
                )]
            }
            return plans
        case .postUpdated:
            let post = try event.decode(PostUpdated.self).payload.post
            guard post.type == .event else { return Plans() }
            let info = EventPostInfo(postID: post.id, circleID: post.circleId, authorID: post.authorId, title: post.body, location: post.location,
                                     startsAt: post.startsAt, counts: eventPost?.counts ?? RSVPCounts(going: 0, maybe: 0, declined: 0))
            return Plans(liveActivities: [LiveActivityPlan(postID: post.id, event: .update, contentState: info.contentState, dismissalDate: nil, staleDate: post.startsAt)])
        case .postDeleted, .postExpired:
            guard let post = try post(of: event), post.type == .event else { return Plans() }
            let state = eventPost?.contentState ?? ["post_id": id(post.id)]
            return Plans(liveActivities: [LiveActivityPlan(postID: post.id, event: .end, contentState: state, dismissalDate: event.header.occurredAt, staleDate: nil)])
        case .presenceChanged:
            let presence = try event.decode(PresenceChanged.self).payload.presence
            return Plans(pushes: [PushPlan(
                kind: .presence, recipients: .members(.circle, presence.circleId), excluding: actor.union([presence.userId]),
                title: "", body: "", threadID: nil, collapseID: "presence-\(presence.circleId.lowercased)",
                data: ["circle_id": id(presence.circleId), "user_id": id(presence.userId), "status": .string(presence.status.rawValue)],
                expiresAt: event.header.occurredAt.addingTimeInterval(3600)
            )])
        // Unify
        case .messageSent:
            let payload = try event.decode(MessageSent.self).payload
            let message = payload.message
            let group = names[NameKey(.group, message.groupId)] ?? "Unify"
            let text = message.messageType == .voice ? "🎤 Voice message\(message.voiceDuration.flatMap(Self.duration).map { " (\($0))" } ?? "")" : excerpt(message.content)
            return Plans(pushes: [PushPlan(
                kind: .groupMessage, recipients: .members(.group, message.groupId), excluding: actor.union([message.sentBy]),
                title: group, body: "\(payload.senderDisplayName): \(text)", threadID: "group-\(message.groupId.lowercased)", collapseID: nil,
                data: ["group_id": id(message.groupId), "message_id": id(message.id)], expiresAt: nil
            )])
        // HabitHive
        case .hiveAdvanced:
            // The member whose log completed the day knows it already: not told "everyone's done".
            let payload = try event.decode(HiveAdvanced.self).payload
            let hive = payload.hive
            return Plans(pushes: [PushPlan(
                kind: .hiveAdvanced, recipients: .members(.hive, hive.id), excluding: actor.union(payload.completedBy.map { [$0] } ?? []),
                title: "🐝 \(hive.name)", body: "Everyone's done today: the streak is \(hive.currentLength) \(hive.currentLength == 1 ? "day" : "days")!",
                threadID: "hive-\(hive.id.lowercased)", collapseID: "hive-\(hive.id.lowercased)-\(payload.day.dayDate)",
                data: ["hive_id": id(hive.id), "day_date": .string("\(payload.day.dayDate)"), "length": .number(Double(hive.currentLength))], expiresAt: nil
            )])
        case .streakMilestone:
            let payload = try event.decode(StreakMilestone.self).payload
            return Plans(pushes: [PushPlan(
                kind: .streakMilestone, recipients: .members(.hive, payload.hiveId), excluding: actor,
                title: "🎉 \(payload.hiveName)", body: "\(payload.length)-day shared streak! Keep it going together.",
                threadID: "hive-\(payload.hiveId.lowercased)", collapseID: "milestone-\(payload.hiveId.lowercased)-\(payload.length)",
                data: ["hive_id": id(payload.hiveId), "length": .number(Double(payload.length))], expiresAt: nil
            )])
        case .hiveAtRisk:
            let payload = try event.decode(HiveAtRisk.self).payload
            guard !payload.missingUserIds.isEmpty else { return Plans() }
            let done = payload.doneUserIds.count
            return Plans(pushes: [PushPlan(
                kind: .hiveAtRisk, recipients: .users(payload.missingUserIds), excluding: actor,
                title: "⏰ \(payload.hiveName) is at risk",
                body: "\(done) \(done == 1 ? "member has" : "members have") logged today. Log yours to keep the streak alive.",
                threadID: "hive-\(payload.hiveId.lowercased)", collapseID: "risk-\(payload.hiveId.lowercased)-\(payload.dayDate)",
                data: ["hive_id": id(payload.hiveId), "day_date": .string("\(payload.dayDate)")], expiresAt: nil
            )])
        case .habitStreakMilestone:
            let payload = try event.decode(HabitStreakMilestone.self).payload
            return Plans(pushes: [PushPlan(
                kind: .streakMilestone, recipients: .users([payload.userId]), excluding: [],
                title: "🎉 \(payload.emoji.map { "\($0) " } ?? "")\(payload.habitName)", body: "\(payload.length)-day streak! Keep it going.",
                threadID: "habit-\(payload.habitId.lowercased)", collapseID: "habit-milestone-\(payload.habitId.lowercased)-\(payload.length)",
                data: ["habit_id": id(payload.habitId), "length": .number(Double(payload.length))], expiresAt: nil
            )])
        case .hiveInvited:
            let payload = try event.decode(HiveInvited.self).payload
            let invitation = payload.invitation
            let inviter = payload.invitedByName.isEmpty ? "Someone" : payload.invitedByName
            return Plans(pushes: [PushPlan(
                kind: .hiveInvitation, recipients: .users([invitation.userId]), excluding: actor.subtracting([invitation.userId]),
                title: "🐝 \(payload.hiveName)", body: "\(inviter) invited you to their hive.",
                threadID: "hive-\(invitation.hiveId.lowercased)", collapseID: "invitation-\(invitation.id.lowercased)",
                data: ["hive_id": id(invitation.hiveId), "invitation_id": id(invitation.id)], expiresAt: nil
            )])
        case .hiveJoined:
            let payload = try event.decode(HiveJoined.self).payload
            return Plans(pushes: [PushPlan(
                kind: .hiveJoined, recipients: .members(.hive, payload.member.hiveId), excluding: actor.union([payload.member.userId]),
                title: "🐝 \(payload.hiveName)", body: "Someone new joined your hive.",
                threadID: "hive-\(payload.member.hiveId.lowercased)", collapseID: nil,
                data: ["hive_id": id(payload.member.hiveId)], expiresAt: nil
            )])
        // I Believe In You
        case .supportSent:
            let payload = try event.decode(SupportSent.self).payload
            let message = payload.message
            let project = names[NameKey(.project, message.projectId)] ?? "your project"
            // An anonymous message names nobody: not in the text, not in the data.
            let sender = message.isAnonymous ? "Someone" : (payload.senderName ?? "Someone")
            var excluded = actor
            if let sender = message.senderId, !message.isAnonymous { excluded.insert(sender) }
            return Plans(pushes: [PushPlan(
                kind: .supportMessage, recipients: .users([payload.ownerId]), excluding: excluded,
                title: "💚 \(sender) believes in \(project)", body: excerpt(message.message),
                threadID: "project-\(message.projectId.lowercased)", collapseID: nil,
                data: ["project_id": id(message.projectId), "message_id": id(message.id)], expiresAt: nil
            )])
        case .projectFollowed:
            let payload = try event.decode(ProjectFollowed.self).payload
            // A re-follow within a day of the announced follow is not news.
            guard payload.notifyOwner != false else { return Plans() }
            let project = names[NameKey(.project, payload.follow.projectId)] ?? "your project"
            return Plans(pushes: [PushPlan(
                kind: .newFollower, recipients: .users([payload.ownerId]), excluding: actor.union([payload.follow.userId]),
                title: "✨ New supporter", body: "Someone started following \(project) (\(payload.followerCount) \(payload.followerCount == 1 ? "follower" : "followers")).",
                threadID: "project-\(payload.follow.projectId.lowercased)", collapseID: nil,
                data: ["project_id": id(payload.follow.projectId)], expiresAt: nil
            )])
        // The console's moderation (issue 39), in the event's app. Neither names the other party:
        // the reporter hears what was done, the warned user what about, never who reported.
        case .reportResolved:
            let payload = try event.decode(ReportResolved.self).payload
            let object = objectName(payload.objectType)
            let body = switch payload.outcome {
            case "removed": "We removed the \(object) you reported. Thank you."
            case "warned", "suspended": "We took action on the \(object) you reported. Thank you."
            case "dismissed": "We looked at the \(object) you reported and found it within the rules."
            default: "We looked at the \(object) you reported. Thank you."
            }
            return Plans(pushes: [PushPlan(
                kind: .reportOutcome, app: payload.app, recipients: .users([payload.reporterId]), excluding: [],
                title: "Your report", body: body, threadID: "moderation", collapseID: "report-\(payload.objectId.lowercased)",
                data: ["object_type": .string(payload.objectType), "object_id": id(payload.objectId), "outcome": .string(payload.outcome)],
                expiresAt: nil
            )])
        case .userWarned:
            let payload = try event.decode(UserWarned.self).payload
            let object = objectName(payload.objectType)
            let reason = payload.categories.first.flatMap(categoryName).map { " for \($0)" } ?? ""
            var data: [String: JSONValue] = ["object_type": .string(payload.objectType), "object_id": id(payload.objectId)]
            if let category = payload.categories.first { data["category"] = .string(category.rawValue) }
            return Plans(pushes: [PushPlan(
                kind: .moderationWarning, app: payload.app, recipients: .users([payload.userId]), excluding: [],
                title: "A warning from the moderators",
                body: "Your \(object) was reported\(reason) and breaks the community rules. Further breaches can get your account suspended.",
                threadID: "moderation", collapseID: "warning-\(payload.objectId.lowercased)", data: data, expiresAt: nil
            )])
        default:
            return Plans()
        }
    }

    /// A reported object's type as the texts say it (the domain services' `object_type`s).
    static func objectName(_ type: String) -> String {
        switch type {
        case "dm": "message"
        case "support_message": "support message"
        default: excerpt(type.replacingOccurrences(of: "_", with: " "), limit: 40)
        }
    }

    /// A report category as the warning says it; nil for `other` (the warning names none).
    static func categoryName(_ category: ReportCategory) -> String? {
        switch category {
        case .spam: "spam"
        case .harassment: "harassment"
        case .hate: "hate speech"
        case .sexual: "sexual content"
        case .violence: "violence"
        case .selfHarm: "self-harm"
        case .illegal: "illegal content"
        case .other: nil
        }
    }

    static func post(of event: ReceivedEvent) throws -> PostRow? {
        switch event.type {
        case .postCreated: try event.decode(PostCreated.self).payload.post
        case .postUpdated: try event.decode(PostUpdated.self).payload.post
        case .postDeleted: try event.decode(PostDeleted.self).payload.post
        case .postExpired: try event.decode(PostExpired.self).payload.post
        default: nil
        }
    }

    static func postText(_ post: PostRow) -> String {
        switch post.type {
        case .note: excerpt(post.body)
        case .event: "📅 " + excerpt(post.body) + (post.location.map { " · \($0)" } ?? "")
        case .ask: (post.urgency.map { "🙋 Ask (\($0.rawValue)): " } ?? "🙋 Ask: ") + excerpt(post.body)
        case .poll: "📊 Poll: " + excerpt(post.body)
        }
    }

    /// The first `limit` characters, on a word boundary where there is one.
    public static func excerpt(_ text: String, limit: Int = 140) -> String {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.count > limit else { return trimmed }
        let cut = trimmed.prefix(limit)
        let word = cut.lastIndex(of: " ").map { cut[..<$0] } ?? cut
        return String(word.count > limit / 2 ? word : cut) + "…"
    }

    /// `m:ss`; nil for a length no voice message has (negative, NaN, or days long): the
    /// event comes from another service, and `Int(_:)` of `1e300` would end this one.
    static func duration(_ seconds: Double) -> String? {
        guard seconds >= 0, seconds < 86_400 else { return nil }
        let total = Int(seconds.rounded())
        return "\(total / 60):\(String(format: "%02d", total % 60))"
    }

    static func id(_ value: UUID) -> JSONValue { .string(value.lowercased) }
}
