import ChatAPI
import ChatService
import ColonyModels
import ColonyTesting
import ColonyClient
import ColonyClientTesting
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
        var groupID: String { group.uuidString }
    }

    struct Case: Sendable {
        let name: String
        /// The operation through the actor's client; the answer's status.
        let call: @Sendable (ChatAPI.Client, Fixture, Cast) async throws -> Int
        /// Expected status for owner, admin, user, outsider.
        let expected: [Int]
    }

    static func status<Output: Sendable>(_ call: () async throws -> Output) async throws -> Int { try await answer(call).status }
    static func time(_ text: String) throws -> Date { try #require(ISO8601.parse(text)) }
    static let start = "2030-05-01T10:00:00Z", end = "2030-05-01T11:00:00Z"

    static let cases: [Case] = [
        Case(name: "rename group", call: { api, f, _ in try await status { try await api.renameGroup(path: .init(groupId: f.groupID), body: .json(.init(name: "Renamed"))) } }, expected: [200, 403, 403, 404]),
        Case(name: "delete group", call: { api, f, _ in try await status { try await api.deleteGroup(path: .init(groupId: f.groupID)) } }, expected: [204, 403, 403, 404]),
        Case(name: "set group picture", call: { api, f, _ in try await status { try await api.setGroupPicture(path: .init(groupId: f.groupID), body: .png(upload(AudioFixtures.png))) } }, expected: [200, 200, 403, 404]),
        Case(name: "remove group picture", call: { api, f, _ in try await status { try await api.removeGroupPicture(path: .init(groupId: f.groupID)) } }, expected: [200, 200, 403, 404]),
        Case(name: "add members", call: { api, f, c in try await status { try await api.addMembers(path: .init(groupId: f.groupID), body: .json(.init(emails: [c.extraEmail]))) } }, expected: [200, 200, 403, 404]),
        Case(name: "remove a user", call: { api, f, c in try await status { try await api.removeMember(path: .init(groupId: f.groupID, userId: c.target.id.uuidString)) } }, expected: [204, 204, 403, 404]),
        Case(name: "remove an admin", call: { api, f, c in try await status { try await api.removeMember(path: .init(groupId: f.groupID, userId: c.admin2.id.uuidString)) } }, expected: [204, 403, 403, 404]),
        Case(name: "remove the owner", call: { api, f, c in try await status { try await api.removeMember(path: .init(groupId: f.groupID, userId: c.owner.id.uuidString)) } }, expected: [409, 403, 403, 404]),
        Case(name: "promote", call: { api, f, c in try await status { try await api.setMemberRole(path: .init(groupId: f.groupID, userId: c.target.id.uuidString), body: .json(.init(role: .admin))) } }, expected: [200, 403, 403, 404]),
        Case(name: "demote", call: { api, f, c in try await status { try await api.setMemberRole(path: .init(groupId: f.groupID, userId: c.admin2.id.uuidString), body: .json(.init(role: .user))) } }, expected: [200, 403, 403, 404]),
        Case(name: "transfer ownership", call: { api, f, c in try await status { try await api.transferGroupOwnership(path: .init(groupId: f.groupID), body: .json(.init(newOwnerId: c.target.id.uuidString))) } }, expected: [200, 403, 403, 404]),
        Case(name: "leave without successor", call: { api, f, _ in try await status { try await api.leaveGroup(path: .init(groupId: f.groupID), body: .json(.init())) } }, expected: [409, 204, 204, 404]),
        Case(name: "mark read", call: { api, f, _ in try await status { try await api.markGroupRead(path: .init(groupId: f.groupID), body: .json(.init())) } }, expected: [200, 200, 200, 404]),
        Case(name: "send text", call: { api, f, _ in try await status { try await api.sendTextMessage(path: .init(groupId: f.groupID), body: .json(.init(content: "hi"))) } }, expected: [201, 201, 201, 404]),
        Case(name: "send voice", call: { api, f, _ in try await status { try await api.sendVoiceMessage(path: .init(groupId: f.groupID), query: .init(duration: 3.5), body: .audioMp4(upload(AudioFixtures.m4a))) } }, expected: [201, 201, 201, 404]),
        Case(name: "edit someone's message", call: { api, f, _ in try await status { try await api.editMessage(path: .init(groupId: f.groupID, messageId: f.targetMessage.uuidString), body: .json(.init(content: "edited"))) } }, expected: [403, 403, 403, 404]),
        Case(name: "delete someone's message", call: { api, f, _ in try await status { try await api.deleteMessage(path: .init(groupId: f.groupID, messageId: f.targetMessage.uuidString)) } }, expected: [204, 204, 403, 404]),
        Case(name: "create group event", call: { api, f, _ in
            try await status { try await api.createEvent(body: .json(.init(title: "Standup", startsAt: time(start), endsAt: time(end), groupId: f.groupID))) }
        }, expected: [201, 201, 201, 404]),
        Case(name: "update someone's event", call: { api, f, _ in try await status { try await api.updateEvent(path: .init(eventId: f.targetEvent.uuidString), body: .json(.init(title: "Moved"))) } }, expected: [200, 200, 403, 404]),
        Case(name: "delete someone's event", call: { api, f, _ in try await status { try await api.deleteEvent(path: .init(eventId: f.targetEvent.uuidString)) } }, expected: [204, 204, 403, 404]),
    ]

    func fixture(_ chat: RunningChat, _ cast: Cast) async throws -> Fixture {
        let group = try await chat.group(owner: cast.owner, admins: [cast.admin, cast.admin2], members: [cast.user, cast.target])
        let targets = chat.api(cast.target)
        let message = try await targets.sendTextMessage(path: .init(groupId: group.uuidString), body: .json(.init(content: "target's"))).created.body.json
        let event = try await targets.createEvent(body: .json(.init(title: "Target's", startsAt: Self.time(Self.start), endsAt: Self.time(Self.end), groupId: group.uuidString))).created.body.json
        return Fixture(group: group,
                       targetMessage: try #require(UUID(uuidString: message.id)),
                       targetEvent: try #require(UUID(uuidString: event.id)))
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
                    let status = try await testCase.call(chat.api(cast.actor(actor)), fixture, cast)
                    #expect(status == testCase.expected[index], "\(testCase.name) as \(actor): \(status)")
                }
            }
        }
    }

    @Test("an outsider reads nothing of a group")
    func outsiderReads() async throws {
        try await withRunningChat { chat in
            let owner = try await chat.user(), outsider = try await chat.user()
            let group = try await chat.group(owner: owner)
            let owners = chat.api(owner), outsiders = chat.api(outsider)
            let sent = try await answer { try await owners.sendTextMessage(path: .init(groupId: group.uuidString), body: .json(.init(content: "secret"))) }
            let event = try await owners.createEvent(body: .json(.init(title: "Secret", startsAt: Self.time(Self.start), endsAt: Self.time(Self.end), groupId: group.uuidString))).created.body.json.id
            let year = ChatAPI.Operations.ListEvents.Input.Query(from: try Self.time("2030-01-01T00:00:00Z"), to: try Self.time("2030-12-31T00:00:00Z"))
            let reads: [(String, () async throws -> Int)] = [
                ("getGroup", { try await Self.status { try await outsiders.getGroup(path: .init(groupId: group.uuidString)) } }),
                ("listMembers", { try await Self.status { try await outsiders.listMembers(path: .init(groupId: group.uuidString)) } }),
                ("listMessages", { try await Self.status { try await outsiders.listMessages(path: .init(groupId: group.uuidString)) } }),
                ("listEvents of the group", { try await Self.status { try await outsiders.listEvents(query: .init(from: year.from, to: year.to, groupId: group.uuidString)) } }),
                ("getEvent", { try await Self.status { try await outsiders.getEvent(path: .init(eventId: event)) } }),
            ]
            for (operation, read) in reads {
                let status = try await read()
                #expect(status == 404, "\(operation): \(status)")
            }
            #expect(try await outsiders.listGroups().ok.body.json.isEmpty)
            #expect(try await outsiders.listEvents(query: year).ok.body.json.isEmpty)
            #expect(sent.status == 201)
        }
    }

    @Test("members edit only their own text messages")
    func editOwn() async throws {
        try await withRunningChat { chat in
            let owner = try await chat.user(), member = try await chat.user()
            let group = try await chat.group(owner: owner, members: [member])
            let members = chat.api(member), path = ChatAPI.Operations.SendTextMessage.Input.Path(groupId: group.uuidString)
            let id = try await members.sendTextMessage(path: path, body: .json(.init(content: "typo"))).created.body.json.id
            let edited = try await members.editMessage(path: .init(groupId: group.uuidString, messageId: id), body: .json(.init(content: "fixed"))).ok.body.json
            #expect(edited.isEdited == true && edited.content == "fixed")
            let voice = try await members.sendVoiceMessage(path: .init(groupId: group.uuidString), query: .init(duration: 2), body: .audioMp4(upload(AudioFixtures.m4a))).created.body.json.id
            let voiceEdit = try await answer { try await members.editMessage(path: .init(groupId: group.uuidString, messageId: voice), body: .json(.init(content: "x"))) }
            #expect(voiceEdit.status == 409 && voiceEdit.code == "voice_not_editable")
        }
    }
}
