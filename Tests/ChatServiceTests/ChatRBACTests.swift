import ChatService
import ColonyModels
import ColonyTesting
import Foundation
import NIOCore
import NIOHTTP1
import Testing

/// The seed's role logic from the outside: every mutating route × owner, admin, user and
/// outsider, each on a fresh group so one case cannot disturb the next.
@Suite("Chat: roles")
struct ChatRBACTests {
    enum Actor: String, CaseIterable, CustomStringConvertible {
        case owner, admin, user, outsider
        var description: String { rawValue }
    }

    /// The people around one group: `target` is a plain member with a message and a group event
    /// of their own; `admin2` is a second admin; `extra` is not in the group.
    struct Cast: Sendable {
        let owner, admin, admin2, user, target, outsider, extra: RunningService.User
        let extraEmail: String

        func actor(_ actor: Actor) -> RunningService.User {
            switch actor {
            case .owner: owner
            case .admin: admin
            case .user: user
            case .outsider: outsider
            }
        }
    }

    struct Fixture: Sendable {
        let group: UUID
        let targetMessage: UUID
        let targetEvent: UUID
    }

    struct Case: Sendable {
        let name: String
        let method: HTTPMethod
        let path: @Sendable (Fixture, Cast) -> String
        var json: (@Sendable (Fixture, Cast) -> [String: any Sendable])? = nil
        var upload: (ByteBuffer, String)? = nil
        /// Expected status for owner, admin, user, outsider.
        let expected: [Int]
    }

    static let start = "2030-05-01T10:00:00Z", end = "2030-05-01T11:00:00Z"

    static let cases: [Case] = [
        Case(name: "rename group", method: .PATCH, path: { f, _ in "/groups/\(f.group)" }, json: { _, _ in ["name": "Renamed"] }, expected: [200, 403, 403, 404]),
        Case(name: "delete group", method: .DELETE, path: { f, _ in "/groups/\(f.group)" }, expected: [204, 403, 403, 404]),
        Case(name: "set group picture", method: .PUT, path: { f, _ in "/groups/\(f.group)/picture" }, upload: (AudioFixtures.png, "image/png"), expected: [200, 200, 403, 404]),
        Case(name: "remove group picture", method: .DELETE, path: { f, _ in "/groups/\(f.group)/picture" }, expected: [200, 200, 403, 404]),
        Case(name: "add members", method: .POST, path: { f, _ in "/groups/\(f.group)/members" }, json: { _, c in ["emails": [c.extraEmail]] }, expected: [200, 200, 403, 404]),
        Case(name: "remove a user", method: .DELETE, path: { f, c in "/groups/\(f.group)/members/\(c.target.id)" }, expected: [204, 204, 403, 404]),
        Case(name: "remove an admin", method: .DELETE, path: { f, c in "/groups/\(f.group)/members/\(c.admin2.id)" }, expected: [204, 403, 403, 404]),
        Case(name: "remove the owner", method: .DELETE, path: { f, c in "/groups/\(f.group)/members/\(c.owner.id)" }, expected: [409, 403, 403, 404]),
        Case(name: "promote", method: .PATCH, path: { f, c in "/groups/\(f.group)/members/\(c.target.id)" }, json: { _, _ in ["role": "admin"] }, expected: [200, 403, 403, 404]),
        Case(name: "demote", method: .PATCH, path: { f, c in "/groups/\(f.group)/members/\(c.admin2.id)" }, json: { _, _ in ["role": "user"] }, expected: [200, 403, 403, 404]),
        Case(name: "transfer ownership", method: .POST, path: { f, _ in "/groups/\(f.group)/transfer" }, json: { _, c in ["new_owner_id": c.target.id.uuidString] }, expected: [200, 403, 403, 404]),
        Case(name: "leave without successor", method: .POST, path: { f, _ in "/groups/\(f.group)/leave" }, expected: [409, 204, 204, 404]),
        Case(name: "mark read", method: .POST, path: { f, _ in "/groups/\(f.group)/read" }, expected: [200, 200, 200, 404]),
        Case(name: "send text", method: .POST, path: { f, _ in "/groups/\(f.group)/messages" }, json: { _, _ in ["content": "hi"] }, expected: [201, 201, 201, 404]),
        Case(name: "send voice", method: .POST, path: { f, _ in "/groups/\(f.group)/messages/voice?duration=3.5" }, upload: (AudioFixtures.m4a, "audio/mp4"), expected: [201, 201, 201, 404]),
        Case(name: "edit someone's message", method: .PATCH, path: { f, _ in "/groups/\(f.group)/messages/\(f.targetMessage)" }, json: { _, _ in ["content": "edited"] }, expected: [403, 403, 403, 404]),
        Case(name: "delete someone's message", method: .DELETE, path: { f, _ in "/groups/\(f.group)/messages/\(f.targetMessage)" }, expected: [204, 204, 403, 404]),
        Case(name: "create group event", method: .POST, path: { _, _ in "/events" },
             json: { f, _ in ["title": "Standup", "starts_at": start, "ends_at": end, "group_id": f.group.uuidString] }, expected: [201, 201, 201, 404]),
        Case(name: "update someone's event", method: .PATCH, path: { f, _ in "/events/\(f.targetEvent)" }, json: { _, _ in ["title": "Moved"] }, expected: [200, 200, 403, 404]),
        Case(name: "delete someone's event", method: .DELETE, path: { f, _ in "/events/\(f.targetEvent)" }, expected: [204, 204, 403, 404]),
    ]

    func fixture(_ chat: RunningChat, _ cast: Cast) async throws -> Fixture {
        let group = try await chat.group(owner: cast.owner, admins: [cast.admin, cast.admin2], members: [cast.user, cast.target])
        let message = try await chat.service.request(.POST, "/groups/\(group)/messages", as: cast.target, json: ["content": "target's"])
        let event = try await chat.service.request(.POST, "/events", as: cast.target, json: ["title": "Target's", "starts_at": Self.start, "ends_at": Self.end, "group_id": group.uuidString])
        #expect(message.status == 201 && event.status == 201)
        return Fixture(group: group,
                       targetMessage: try #require(message.body["id"]?.stringValue.flatMap(UUID.init(uuidString:))),
                       targetEvent: try #require(event.body["id"]?.stringValue.flatMap(UUID.init(uuidString:))))
    }

    @Test("every mutating route × owner, admin, user, outsider")
    func matrix() async throws {
        try await withRunningChat { chat in
            var users: [RunningService.User] = []
            for _ in 0..<7 { users.append(try await chat.user()) }
            let cast = Cast(owner: users[0], admin: users[1], admin2: users[2], user: users[3], target: users[4], outsider: users[5], extra: users[6],
                            extraEmail: try await chat.email(of: users[6]))
            for testCase in Self.cases {
                for (index, actor) in Actor.allCases.enumerated() {
                    let fixture = try await fixture(chat, cast)
                    let path = testCase.path(fixture, cast)
                    let reply: RunningService.Reply
                    if let upload = testCase.upload {
                        reply = try await chat.service.request(testCase.method, path, as: cast.actor(actor), bytes: upload.0, contentType: upload.1)
                    } else {
                        reply = try await chat.service.request(testCase.method, path, as: cast.actor(actor), json: testCase.json?(fixture, cast) ?? [:])
                    }
                    #expect(reply.status == testCase.expected[index], "\(testCase.name) as \(actor): \(reply.status) \(reply.body)")
                }
            }
        }
    }

    @Test("an outsider reads nothing of a group")
    func outsiderReads() async throws {
        try await withRunningChat { chat in
            let owner = try await chat.user(), outsider = try await chat.user()
            let group = try await chat.group(owner: owner)
            let sent = try await chat.service.request(.POST, "/groups/\(group)/messages", as: owner, json: ["content": "secret"])
            let event = try await chat.service.request(.POST, "/events", as: owner, json: ["title": "Secret", "starts_at": Self.start, "ends_at": Self.end, "group_id": group.uuidString])
            for path in ["/groups/\(group)", "/groups/\(group)/members", "/groups/\(group)/messages",
                         "/events?from=2030-01-01T00:00:00Z&to=2030-12-31T00:00:00Z&group_id=\(group)",
                         "/events/\(event.body["id"]?.stringValue ?? "")"] {
                let reply = try await chat.service.request(.GET, path, as: outsider)
                #expect(reply.status == 404, "\(path): \(reply.status)")
            }
            let mine = try await chat.service.request(.GET, "/groups", as: outsider)
            #expect(mine.status == 200 && mine.array.isEmpty)
            let all = try await chat.service.request(.GET, "/events?from=2030-01-01T00:00:00Z&to=2030-12-31T00:00:00Z", as: outsider)
            #expect(all.status == 200 && all.array.isEmpty)
            #expect(sent.status == 201)
        }
    }

    @Test("members edit only their own text messages")
    func editOwn() async throws {
        try await withRunningChat { chat in
            let owner = try await chat.user(), member = try await chat.user()
            let group = try await chat.group(owner: owner, members: [member])
            let sent = try await chat.service.request(.POST, "/groups/\(group)/messages", as: member, json: ["content": "typo"])
            let id = sent.body["id"]?.stringValue ?? ""
            let edited = try await chat.service.request(.PATCH, "/groups/\(group)/messages/\(id)", as: member, json: ["content": "fixed"])
            #expect(edited.status == 200 && edited.body["is_edited"]?.boolValue == true && edited.body["content"]?.stringValue == "fixed")
            let voice = try await chat.service.request(.POST, "/groups/\(group)/messages/voice?duration=2", as: member, bytes: AudioFixtures.m4a, contentType: "audio/mp4")
            let voiceEdit = try await chat.service.request(.PATCH, "/groups/\(group)/messages/\(voice.body["id"]?.stringValue ?? "")", as: member, json: ["content": "x"])
            #expect(voiceEdit.status == 409 && voiceEdit.code == "voice_not_editable")
        }
    }
}
