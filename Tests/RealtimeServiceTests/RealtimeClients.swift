import ChatAPI
import CirclesAPI
import ColonyClientTesting
import ColonyModels
import ColonyTesting
import Foundation
import HabitsAPI
import NearbyAPI
import ProjectsAPI
import Testing

// The domain services' generated clients, which these tests speak to the services realtime runs
// beside (realtime's own WebSocket traffic is no OpenAPI service). Every client module has its own
// `Client` and `Components`, so the names are always written with their module.
extension RunningService {
    func chatAPI(as user: User?) -> ChatAPI.Client { ChatAPI.Client(connection(as: user)) }
    func circlesAPI(as user: User?) -> CirclesAPI.Client { CirclesAPI.Client(connection(as: user)) }
    func habitsAPI(as user: User?) -> HabitsAPI.Client { HabitsAPI.Client(connection(as: user)) }
    func nearbyAPI(as user: User?) -> NearbyAPI.Client { NearbyAPI.Client(connection(as: user)) }
    func projectsAPI(as user: User?) -> ProjectsAPI.Client { ProjectsAPI.Client(connection(as: user)) }
}

extension RunningService {
    /// A chat group of `owner` with the users of `memberEmails` (each known to chat already).
    func chatGroup(owner: User, memberEmails: [String], name: String) async throws -> UUID {
        let created = try await chatAPI(as: owner).createGroup(body: .json(.init(name: name, memberEmails: memberEmails))).created.body.json
        return try #require(UUID(uuidString: created.id))
    }

    /// A text message from `user` in `group`.
    func sendText(_ content: String, in group: UUID, as user: User) async throws {
        _ = try await chatAPI(as: user).sendTextMessage(path: .init(groupId: group.lowercased), body: .json(.init(content: content))).created
    }

    /// A circle of `owner` that `members` joined by claiming an invite each.
    func circle(owner: User, members: [User], name: String = "Inner") async throws -> UUID {
        let api = circlesAPI(as: owner)
        let created = try await api.createCircle(body: .json(.init(name: name))).created.body.json
        let circle = try #require(UUID(uuidString: created.id))
        for member in members { try await claimInvite(to: circle, of: owner, as: member) }
        return circle
    }

    /// `member` claims a fresh invite to `owner`'s circle.
    func claimInvite(to circle: UUID, of owner: User, as member: User) async throws {
        let invite = try await circlesAPI(as: owner).createInvite(path: .init(circleId: circle.lowercased)).created.body.json
        _ = try await circlesAPI(as: member).claimInvite(body: .json(.init(code: invite.code))).ok
    }
}
