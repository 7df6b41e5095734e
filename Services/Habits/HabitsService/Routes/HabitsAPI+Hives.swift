import ColonyModels
import ColonyPlatform
import Foundation
import OpenAPIRuntime

/// Hives (shared streaks), their invites and invitations, and their activity feed.
extension HabitsAPI {
    func listHives(_ input: Operations.ListHives.Input) async throws -> Operations.ListHives.Output {
        .ok(.init(body: .json(try await database.callerRead { caller, connection in try await hives.list(userID: caller.id, on: connection) })))
    }

    func createHive(_ input: Operations.CreateHive.Input) async throws -> Operations.CreateHive.Output {
        guard case .json(let body) = input.body else { throw APIError.unprocessable("body: expected JSON") }
        let draft = HabitDraft(name: body.name, emoji: body.emoji, colorHex: body.colorHex ?? "#FF9F1C", type: body._type.map(HabitType.init) ?? .checkbox,
                               targetPerDay: body.targetPerDay ?? 1, scheduleDaily: body.scheduleDaily ?? true, scheduleWeekmask: body.scheduleWeekmask ?? 127,
                               reminderTimes: body.reminderTimes ?? [])
        let (detail, replayed) = try await writes.answer(status: 201) { caller, connection in
            try await hives.create(name: body.name, draft: draft, userID: caller.id, on: connection)
        }
        return .created(.init(headers: .init(idempotentReplayed: replayed), body: .json(detail)))
    }

    func joinHive(_ input: Operations.JoinHive.Input) async throws -> Operations.JoinHive.Output {
        guard case .json(let body) = input.body else { throw APIError.unprocessable("body: expected JSON") }
        let (detail, replayed) = try await writes.answer { caller, connection in try await hives.join(code: body.code, userID: caller.id, on: connection) }
        return .ok(.init(headers: .init(idempotentReplayed: replayed), body: .json(detail)))
    }

    func getHive(_ input: Operations.GetHive.Input) async throws -> Operations.GetHive.Output {
        let id = try Self.id(input.path.hiveId, HabitsErrors.hiveNotFound)
        return .ok(.init(body: .json(try await database.callerRead { caller, connection in try await hives.detail(id, userID: caller.id, on: connection) })))
    }

    func updateHive(_ input: Operations.UpdateHive.Input) async throws -> Operations.UpdateHive.Output {
        let id = try Self.id(input.path.hiveId, HabitsErrors.hiveNotFound)
        guard case .json(let body) = input.body else { throw APIError.unprocessable("body: expected JSON") }
        let patch = Hives.Patch(name: body.name, colorHex: body.colorHex, targetPerDay: body.targetPerDay, scheduleDaily: body.scheduleDaily, scheduleWeekmask: body.scheduleWeekmask)
        let (detail, replayed) = try await writes.answer { caller, connection in try await hives.update(id, patch, userID: caller.id, on: connection) }
        return .ok(.init(headers: .init(idempotentReplayed: replayed), body: .json(detail)))
    }

    func deleteHive(_ input: Operations.DeleteHive.Input) async throws -> Operations.DeleteHive.Output {
        let id = try Self.id(input.path.hiveId, HabitsErrors.hiveNotFound)
        let replayed = try await writes.noContent { caller, connection in try await hives.delete(id, userID: caller.id, on: connection) }
        return .noContent(.init(headers: .init(idempotentReplayed: replayed)))
    }

    // MARK: logs and days

    func logHiveToday(_ input: Operations.LogHiveToday.Input) async throws -> Operations.LogHiveToday.Output {
        let id = try Self.id(input.path.hiveId, HabitsErrors.hiveNotFound)
        let body: Components.Schemas.HiveLogRequest? = if case .json(let body) = input.body { body } else { nil }
        // `date` is not one of the document's fields here, but a habit's log takes one: say why it is refused.
        if let date = body?.additionalProperties["date"], date.value != nil {
            throw HabitsErrors.validation("a hive is logged for today (or `at`), not for a chosen date")
        }
        let (result, replayed) = try await writes.answer { caller, connection in
            try await hives.logToday(id, userID: caller.id, value: body?.value ?? 1, at: body?.at, on: connection)
        }
        return .ok(.init(headers: .init(idempotentReplayed: replayed), body: .json(result)))
    }

    func listHiveDays(_ input: Operations.ListHiveDays.Input) async throws -> Operations.ListHiveDays.Output {
        let id = try Self.id(input.path.hiveId, HabitsErrors.hiveNotFound)
        let from = try Self.localDate(input.query.from, "from"), to = try Self.localDate(input.query.to, "to")
        return .ok(.init(body: .json(try await database.callerRead { caller, connection in try await hives.days(id, userID: caller.id, from: from, to: to, on: connection) })))
    }

    func advanceHive(_ input: Operations.AdvanceHive.Input) async throws -> Operations.AdvanceHive.Output {
        let id = try Self.id(input.path.hiveId, HabitsErrors.hiveNotFound)
        let body: Components.Schemas.AdvanceRequest? = if case .json(let body) = input.body { body } else { nil }
        let day = try body?.day.map { try Self.localDate($0, "day") }
        let (result, replayed) = try await writes.answer { caller, connection in try await hives.advanceNow(id, userID: caller.id, day: day, on: connection) }
        return .ok(.init(headers: .init(idempotentReplayed: replayed), body: .json(result)))
    }

    func listHiveActivity(_ input: Operations.ListHiveActivity.Input) async throws -> Operations.ListHiveActivity.Output {
        let id = try Self.id(input.path.hiveId, HabitsErrors.hiveNotFound)
        let limit = input.query.limit ?? 20
        guard (1...100).contains(limit) else { throw HabitsErrors.validation("limit must be between 1 and 100") }
        return .ok(.init(body: .json(try await database.callerRead { caller, connection in
            try await hives.feed(id, userID: caller.id, before: input.query.before, limit: limit, on: connection)
        })))
    }

    // MARK: members

    func leaveHive(_ input: Operations.LeaveHive.Input) async throws -> Operations.LeaveHive.Output {
        let id = try Self.id(input.path.hiveId, HabitsErrors.hiveNotFound)
        let replayed = try await writes.noContent { caller, connection in try await hives.leave(id, userID: caller.id, on: connection) }
        return .noContent(.init(headers: .init(idempotentReplayed: replayed)))
    }

    func removeHiveMember(_ input: Operations.RemoveHiveMember.Input) async throws -> Operations.RemoveHiveMember.Output {
        let id = try Self.id(input.path.hiveId, HabitsErrors.hiveNotFound)
        let member = try Self.id(input.path.userId, HabitsErrors.memberNotFound)
        let replayed = try await writes.noContent { caller, connection in try await hives.remove(id, member: member, userID: caller.id, on: connection) }
        return .noContent(.init(headers: .init(idempotentReplayed: replayed)))
    }

    // MARK: invite codes

    func listHiveInvites(_ input: Operations.ListHiveInvites.Input) async throws -> Operations.ListHiveInvites.Output {
        let id = try Self.id(input.path.hiveId, HabitsErrors.hiveNotFound)
        return .ok(.init(body: .json(try await database.callerRead { caller, connection in
            try await hives.invites(id, userID: caller.id, on: connection).map(Components.Schemas.HiveInvite.init)
        })))
    }

    func createHiveInvite(_ input: Operations.CreateHiveInvite.Input) async throws -> Operations.CreateHiveInvite.Output {
        let id = try Self.id(input.path.hiveId, HabitsErrors.hiveNotFound)
        let body: Components.Schemas.InviteCreate? = if case .json(let body) = input.body { body } else { nil }
        let (invite, replayed) = try await writes.answer(status: 201) { caller, connection in
            Components.Schemas.HiveInvite(try await hives.createInvite(id, userID: caller.id, ttlMinutes: body?.ttlMinutes, maxUses: body?.maxUses, on: connection))
        }
        return .created(.init(headers: .init(idempotentReplayed: replayed), body: .json(invite)))
    }

    // MARK: invitations (a contact match asked by name)

    func inviteContactToHive(_ input: Operations.InviteContactToHive.Input) async throws -> Operations.InviteContactToHive.Output {
        let id = try Self.id(input.path.hiveId, HabitsErrors.hiveNotFound)
        guard case .json(let body) = input.body else { throw APIError.unprocessable("body: expected JSON") }
        guard let invitee = UUID(canonical: body.userId) else { throw HabitsErrors.validation("user_id must be a UUID") }
        let (invitation, replayed) = try await writes.answer(status: 201) { caller, connection in
            Components.Schemas.HiveInvitation(try await invitations.invite(id, invitee: invitee, userID: caller.id, on: connection))
        }
        return .created(.init(headers: .init(idempotentReplayed: replayed), body: .json(invitation)))
    }

    func listMyInvitations(_ input: Operations.ListMyInvitations.Input) async throws -> Operations.ListMyInvitations.Output {
        .ok(.init(body: .json(try await database.callerRead { caller, connection in
            try await invitations.pending(userID: caller.id, on: connection).map(Components.Schemas.PendingInvitation.init)
        })))
    }

    func acceptHiveInvitation(_ input: Operations.AcceptHiveInvitation.Input) async throws -> Operations.AcceptHiveInvitation.Output {
        let id = try Self.id(input.path.invitationId, HabitsErrors.invitationNotFound)
        let (detail, replayed) = try await writes.answer { caller, connection in try await invitations.accept(id, userID: caller.id, on: connection) }
        return .ok(.init(headers: .init(idempotentReplayed: replayed), body: .json(detail)))
    }

    func declineHiveInvitation(_ input: Operations.DeclineHiveInvitation.Input) async throws -> Operations.DeclineHiveInvitation.Output {
        let id = try Self.id(input.path.invitationId, HabitsErrors.invitationNotFound)
        let (invitation, replayed) = try await writes.answer { caller, connection in
            Components.Schemas.HiveInvitation(try await invitations.decline(id, userID: caller.id, on: connection))
        }
        return .ok(.init(headers: .init(idempotentReplayed: replayed), body: .json(invitation)))
    }
}
