import ColonyModels
import ColonyPlatform
import ColonyStorage
import Foundation
import Metrics
import NIOCore
import PostgresNIO

/// A person's copy of their data (`POST /user/export`, an operator's subject access request):
/// auth records the export and publishes `user_export_requested`; each service that holds
/// something of the person writes its part to the exports bucket (`UserExport`); the assembly
/// job waits for every part's manifest, zips them with auth's own part, mails the person a
/// signed link valid for `UserExports.linkLifetime`, and the sweep deletes the archive after.
public struct ExportResource: Encodable, Sendable, Equatable {
    public var id: String
    public var status: String
    public var requestedAt: Date
    public var readyAt: Date?
    public var expiresAt: Date?

    init(_ record: ExportRecord) {
        id = record.id.uuidString.lowercased()
        status = record.status.rawValue
        requestedAt = record.requestedAt
        readyAt = record.readyAt
        expiresAt = record.expiresAt
    }
}

public enum UserExports {
    /// How long the link and the archive live.
    public static let linkLifetime: Duration = .seconds(7 * 86_400)
}

extension AuthErrors {
    static let exportInProgress = APIError(.conflict, code: "export_in_progress", message: "A copy of your data is being made; you will get a mail when it is ready")
    static let exportNeedsAddress = APIError(.unprocessableContent, code: "confirmed_address_required", message: "The link to the copy of your data is sent by mail or text message: confirm an email address or phone number first")
    static let exportsNotConfigured = APIError(.serviceUnavailable, code: "exports_unavailable", message: "Data exports are not configured on this server")
}

extension Accounts {
    /// `POST /user/export`: from a session that signed in long ago only with a reauthentication
    /// `nonce`, as for deleting the account (a stolen session must not walk off with the data).
    public func requestOwnExport(app: App, caller: AuthenticatedCaller, nonce: String?) async throws -> ExportResource {
        if try await needsReauthentication(app: app, caller: caller) {
            try await consumeReauthentication(app: app, userID: caller.userID, nonce: nonce)
        }
        return try await requestExport(app: app, userID: caller.userID, requestedBy: "user", client: nil)
    }

    /// Starts an export for the person (`requestedBy`: "user", or the operator's name for a
    /// subject access request). 409 while one runs, 429 past the per-person budget, 422 for an
    /// account with neither a confirmed email address nor a confirmed phone (the link goes by
    /// mail, or by SMS to an account with only a phone).
    public func requestExport(app: App, userID: UUID, requestedBy: String, client: ClientInfo?) async throws -> ExportResource {
        guard exports != nil else { throw AuthErrors.exportsNotConfigured }
        let store = ExportStore(logger: logger)
        let user: UserRecord = try await database.withConnection { connection in
            guard let user = try await users.find(id: userID, app: app, on: connection) else { throw AuthErrors.userNotFound }
            guard try await store.running(userID: userID, on: connection) == nil else { throw AuthErrors.exportInProgress }
            return user
        }
        guard Self.noticeRecipient(user) != nil else { throw AuthErrors.exportNeedsAddress }
        // The budget counts requests that got this far: a refused second request costs nothing.
        if let retryAfter = try await limiter.hit("export:\(userID.lowercased)", rule: settings.rateLimits.exportPerUser) {
            throw AuthErrors.overRequestRateLimit(retryAfter: retryAfter)
        }
        let record = ExportRecord(id: UUID.timeOrdered(), app: app, userID: userID, requestedBy: requestedBy, status: .running, requestedAt: ISO8601.wholeMilliseconds(Date()))
        try await database.transaction { connection in
            guard try await store.insert(record, on: connection) else { throw AuthErrors.exportInProgress }
            let actor = requestedBy == "user" ? AuditActor.user(user) : AuditActor.operator(requestedBy)
            try await audit(.userExportRequested, actor: actor, traits: ["user_id": .string(userID.lowercased), "export_id": .string(record.id.lowercased)], ip: client?.ip, app: app, on: connection)
            let payload = UserExportRequested(exportId: record.id, userId: userID, app: app, requestedAt: record.requestedAt)
            try await outbox.publish(EventEnvelope(app: app, aggregateId: userID.lowercased, actor: userID, payload: payload), on: connection, logger: logger)
        }
        ExportMetrics.requested.increment()
        return ExportResource(record)
    }

    /// The account an operator names by id, email or phone.
    public func findUserID(app: App, identifier: String) async throws -> UUID? {
        try await database.withConnection { connection in
            if let id = UUID(uuidString: identifier) { return try await users.find(id: id, app: app, on: connection)?.id }
            if identifier.contains("@") { return try await users.find(email: identifier.lowercased(), app: app, on: connection)?.id }
            return try await users.find(phone: identifier.filter { $0.isNumber }, app: app, on: connection)?.id
        }
    }

    /// `GET /user/export`: the caller's exports, newest first.
    public func listOwnExports(app: App, caller: AuthenticatedCaller) async throws -> [ExportResource] {
        try await database.withConnection { connection in
            try await ExportStore(logger: logger).list(userID: caller.userID, app: app, on: connection).map(ExportResource.init)
        }
    }

    // MARK: jobs

    /// Assembles every running export whose parts are all written; fails those past
    /// `settings.exportTimeoutSeconds`. Returns how many were mailed.
    @discardableResult
    public func assembleExports(now: Date = Date()) async throws -> Int {
        guard let storage = exports else { return 0 }
        let running = try await database.withConnection { try await ExportStore(logger: logger).running(limit: 20, on: $0) }
        var mailed = 0
        for export in running {
            do {
                if try await assemble(export.id, storage: storage, now: now) { mailed += 1 }
            } catch {
                // One export's trouble (a mail server down) must not hold the others; it is tried again next run.
                logger.error("export not assembled; trying again next run", metadata: ["export_id": "\(export.id)", "error": "\(error)"])
            }
        }
        return mailed
    }

    /// One export, under its row's lock (another replica skips it): auth's part, then, once
    /// every part's manifest is there, the archive, the mail and the row, in that order, so a
    /// failure anywhere leaves it running and whole for the next run. True when mailed.
    private func assemble(_ id: UUID, storage: Storage, now: Date) async throws -> Bool {
        let store = ExportStore(logger: logger)
        let backend = storage.backend
        let bucket = UserExport.bucket.name
        let outcome: (mailed: Bool, manifests: [UserExport.Manifest], failed: Bool) = try await database.transaction { connection in
            guard let export = try await store.lockRunning(id: id, on: connection) else { return (false, [], false) }
            let request = UserExportRequested(exportId: export.id, userId: export.userID, app: export.app, requestedAt: export.requestedAt)
            if try await backend.get(bucket: bucket, key: UserExport.manifestKey(export.id, .auth)) == nil {
                try await UserExportWriter(backend: backend, logger: logger).write(AuthExport.plan, request: request, on: connection)
            }
            var manifests: [UserExport.Manifest] = []
            var missing: [ColonyService] = []
            for service in UserExport.contributors(for: export.app) {
                guard let object = try await backend.get(bucket: bucket, key: UserExport.manifestKey(export.id, service)) else {
                    missing.append(service)
                    continue
                }
                manifests.append(try ColonyJSON.decoder().decode(UserExport.Manifest.self, from: Data(buffer: object.body)))
            }
            guard missing.isEmpty else {
                guard now.timeIntervalSince(export.requestedAt) > Double(settings.exportTimeoutSeconds) else { return (false, [], false) }
                logger.error("export failed: parts missing past the deadline", metadata: ["export_id": "\(export.id)", "missing": "\(missing.map(\.rawValue))"])
                try await store.markFailed(id: export.id, on: connection)
                ExportMetrics.failed.increment()
                return (false, manifests, true)
            }
            var archive = ZipArchive()
            try archive.add("README.md", ByteBuffer(string: Self.exportOverview(export, manifests: manifests, now: now)))
            for manifest in manifests {
                for entry in manifest.entries {
                    let key = UserExport.partPrefix(export.id, manifest.service) + "/" + entry
                    guard let object = try await backend.get(bucket: bucket, key: key) else {
                        throw UserExportIncomplete(key: key)
                    }
                    try archive.add("\(manifest.service.rawValue)/\(entry)", object.body)
                }
            }
            let body = try archive.finished()
            try await backend.put(bucket: bucket, key: UserExport.archiveKey(export.id), body: body, contentType: "application/zip")
            let expires = now.addingTimeInterval(Double(UserExports.linkLifetime.components.seconds))
            guard let user = try await users.find(id: export.userID, app: export.app, on: connection), let (channel, recipient) = Self.noticeRecipient(user) else {
                // Erased (or its addresses removed) while the parts were written: nobody to tell.
                try await store.markFailed(id: export.id, on: connection)
                try await backend.delete(bucket: bucket, key: UserExport.archiveKey(export.id))
                return (false, manifests, true)
            }
            let link = storage.signedURL(UserExport.bucket, key: UserExport.archiveKey(export.id), expiresIn: UserExports.linkLifetime)
            let message = try compose(.exportReady, channel: channel, user: user, to: recipient, kind: "export_ready", code: nil, link: link,
                                      extra: ["expires_at": Self.mailTime(expires)], acceptLanguage: nil, now: now)
            // Sent before the row says ready: a failed send rolls back and is tried again.
            try await deliver(message)
            try await store.markReady(id: export.id, readyAt: now, expiresAt: expires, bytes: body.readableBytes, on: connection)
            ExportMetrics.ready.increment()
            ExportMetrics.bytes.record(body.readableBytes)
            logger.info("export ready", metadata: ["export_id": "\(export.id)", "bytes": "\(body.readableBytes)", "files": "\(archive.count)"])
            return (true, manifests, false)
        }
        // The parts are in the archive (or the export failed): they go.
        if outcome.mailed || outcome.failed {
            await deleteParts(id, manifests: outcome.manifests, backend: backend)
        }
        return outcome.mailed
    }

    /// Deletes archives past their week and those of erased accounts. Returns how many went.
    @discardableResult
    public func sweepExports(now: Date = Date()) async throws -> Int {
        guard let storage = exports else { return 0 }
        let store = ExportStore(logger: logger)
        let ended = try await database.transaction { try await store.expire(now: now, on: $0) }
        for export in ended {
            try await storage.backend.delete(bucket: UserExport.bucket.name, key: UserExport.archiveKey(export.id))
            if export.status == .failed {
                await deleteParts(export.id, manifests: [], backend: storage.backend)
            }
        }
        try await database.withConnection { try await store.deleteOrphans(on: $0) }
        if !ended.isEmpty { logger.info("exports ended", metadata: ["count": "\(ended.count)"]) }
        return ended.count
    }

    /// A part's objects: those its manifest names, or, for a part that never finished, every one
    /// its `entries.json` said it might write.
    private func deleteParts(_ id: UUID, manifests given: [UserExport.Manifest], backend: any StorageBackend) async {
        let bucket = UserExport.bucket.name
        for service in ColonyService.allCases {
            do {
                let manifestKey = UserExport.manifestKey(id, service)
                let entriesKey = UserExport.entriesKey(id, service)
                var entries = given.first { $0.service == service }?.entries
                if entries == nil, let object = try await backend.get(bucket: bucket, key: manifestKey) {
                    entries = try ColonyJSON.decoder().decode(UserExport.Manifest.self, from: Data(buffer: object.body)).entries
                }
                if entries == nil, let object = try await backend.get(bucket: bucket, key: entriesKey) {
                    entries = try ColonyJSON.decoder().decode([String].self, from: Data(buffer: object.body))
                }
                guard let entries else { continue }
                for entry in entries {
                    try await backend.delete(bucket: bucket, key: UserExport.partPrefix(id, service) + "/" + entry)
                }
                try await backend.delete(bucket: bucket, key: manifestKey)
                try await backend.delete(bucket: bucket, key: entriesKey)
            } catch {
                logger.error("export part not deleted", metadata: ["export_id": "\(id)", "service": "\(service.rawValue)", "error": "\(error)"])
            }
        }
    }

    /// The archive's README: what is in it and where.
    static func exportOverview(_ export: ExportRecord, manifests: [UserExport.Manifest], now: Date) -> String {
        var text = """
            # Your data from \(export.app.rawValue)

            This archive is the copy of your data you asked for on \(ISO8601.format(export.requestedAt)), made on \(ISO8601.format(now)).
            Each folder is one part of the app, as one of Colony's services keeps it: `data.json` holds the rows
            (JSON, times in UTC), `README.md` says what each field means, and `files/` holds the files you uploaded.

            """
        for manifest in manifests.sorted(by: { $0.service.rawValue < $1.service.rawValue }) {
            let rows = manifest.rows.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            let files = manifest.entries.filter { $0.hasPrefix("files/") }.count
            text += "\n- `\(manifest.service.rawValue)/`: \(rows.isEmpty ? "no rows" : rows); \(files) file\(files == 1 ? "" : "s")"
        }
        return text + "\n"
    }

    /// Where a notice without a code goes (an export's link, an inactivity warning): the
    /// confirmed email address, else the confirmed phone.
    static func noticeRecipient(_ user: UserRecord) -> (MessageChannel, String)? {
        if let email = user.email, user.emailConfirmedAt != nil { return (.email, email) }
        if let phone = user.phone, user.phoneConfirmedAt != nil { return (.sms, phone) }
        return nil
    }

    static func mailTime(_ date: Date) -> String {
        let text = ISO8601.format(date)
        // "2026-12-05T09:30:00.000Z" → "2026-12-05 09:30"
        return text.count >= 16 ? String(text.prefix(16)).replacingOccurrences(of: "T", with: " ") : text
    }
}

/// A manifest names an object that is gone: the export is tried again, and fails at its deadline.
struct UserExportIncomplete: Error, CustomStringConvertible {
    var key: String
    var description: String { "export object \(key) is missing" }
}

enum ExportMetrics {
    static let requested = Counter(label: "colony_exports_requested_total")
    static let ready = Counter(label: "colony_exports_ready_total")
    static let failed = Counter(label: "colony_exports_failed_total")
    static let bytes = Recorder(label: "colony_export_archive_bytes")
}
