import ColonyModels
import ColonyPlatform
import Foundation
import Hummingbird
import NIOCore
import OpenAPIRuntime

/// The nearby REST API under `/nearby/v1`: the operations of `openapi.json`, as the generated
/// `APIProtocol` has them. Each reads the caller and runs the domain on a pooled connection
/// (reads) or in one transaction (writes).
struct NearbyAPI: APIProtocol {
    let database: Database
    let nearby: Nearby
    /// Reports of people's cards (`NearbyReportables`).
    let reports: ReportDesk
    /// The document, served as itself.
    let document: Components.Schemas.OpenAPIDocument

    init(database: Database, nearby: Nearby, reports: ReportDesk) throws {
        self.database = database
        self.nearby = nearby
        self.reports = reports
        self.document = try JSONDecoder().decode(Components.Schemas.OpenAPIDocument.self, from: Data(PackageResources.openapi_json))
    }

    /// Serves the operations behind the token middleware (but the document), profile photos up
    /// to their upload limit, the nearby list by its fast path unless `COLONY_FAST_PATHS=off`.
    func register(on router: Router<ColonyRequestContext>, context: ServiceContext, uploadLimit: Int) throws {
        let fastPaths = fastPaths()
        try registerHandlers(on: GeneratedRoutes.transport(router, behind: context.tokenMiddleware, publicPaths: ["/nearby/v1/openapi.json"],
                                                           fastPaths: fastPaths, mode: context.configuration.fastPaths),
                             serverURL: GeneratedRoutes.serverURL, configuration: GeneratedRoutes.configuration,
                             middlewares: GeneratedRoutes.middlewares(maxBodyBytes: context.configuration.maxBodyBytes, uploads: ["setProfilePhoto": uploadLimit]))
        try GeneratedFastPath.requireOperations(fastPaths, in: NearbyService.openAPIDocument)
    }

    func getOpenAPIDocument(_ input: Operations.GetOpenAPIDocument.Input) async throws -> Operations.GetOpenAPIDocument.Output {
        .ok(.init(body: .json(document)))
    }

    // MARK: profile and settings

    func getProfile(_ input: Operations.GetProfile.Input) async throws -> Operations.GetProfile.Output {
        .ok(.init(body: .json(try await database.callerRead { caller, connection in try await nearby.get(caller.id, on: connection) })))
    }

    func updateProfile(_ input: Operations.UpdateProfile.Input) async throws -> Operations.UpdateProfile.Output {
        guard case .json(let patch) = input.body else { throw APIError.unprocessable("body: expected JSON") }
        let birthday = try RequestBodyNulls.field(patch.birthday, "birthday").map { text in
            try text.map { text in
                guard let date = LocalDate(text) else { throw APIError.unprocessable("birthday must be a YYYY-MM-DD date") }
                return date
            }
        }
        let edit = Nearby.ProfileEdit(name: patch.name, bio: RequestBodyNulls.field(patch.bio, "bio"), school: RequestBodyNulls.field(patch.school, "school"),
                                      birthday: birthday, socialLinks: patch.socialLinks.map(SocialLinks.init))
        return .ok(.init(body: .json(try await database.callerWrite { caller, connection in try await nearby.edit(caller.id, edit, on: connection) })))
    }

    func setProfilePhoto(_ input: Operations.SetProfilePhoto.Input) async throws -> Operations.SetProfilePhoto.Output {
        let (image, contentType): (HTTPBody, String) = switch input.body {
        case .jpeg(let body): (body, "image/jpeg")
        case .png(let body): (body, "image/png")
        }
        // Held in memory already, within the upload limit (`RequestBodyCheck`).
        let bytes = ByteBuffer(bytes: try await [UInt8](collecting: image, upTo: .max))
        return .ok(.init(body: .json(try await database.callerWrite { caller, connection in
            try await nearby.setPhoto(caller.id, image: bytes, contentType: contentType, on: connection)
        })))
    }

    func removeProfilePhoto(_ input: Operations.RemoveProfilePhoto.Input) async throws -> Operations.RemoveProfilePhoto.Output {
        .ok(.init(body: .json(try await database.callerWrite { caller, connection in try await nearby.removePhoto(caller.id, on: connection) })))
    }

    func updateSettings(_ input: Operations.UpdateSettings.Input) async throws -> Operations.UpdateSettings.Output {
        guard case .json(let settings) = input.body else { throw APIError.unprocessable("body: expected JSON") }
        return .ok(.init(body: .json(try await database.callerWrite { caller, connection in
            try await nearby.setSettings(caller.id, darkMode: settings.darkMode, satelliteMap: settings.satelliteMap, shareLocation: settings.shareLocation, on: connection)
        })))
    }

    // MARK: location

    func reportLocation(_ input: Operations.ReportLocation.Input) async throws -> Operations.ReportLocation.Output {
        guard case .json(let report) = input.body else { throw APIError.unprocessable("body: expected JSON") }
        return .ok(.init(body: .json(try await database.callerWrite { caller, connection in
            try await nearby.report(caller.id, latitude: report.latitude, longitude: report.longitude, accuracy: report.accuracy, on: connection)
        })))
    }

    func removeLocation(_ input: Operations.RemoveLocation.Input) async throws -> Operations.RemoveLocation.Output {
        try await database.callerWrite { caller, connection in try await nearby.removeLocation(caller.id, reason: .removed, on: connection) }
        return .noContent(.init())
    }

    func listNearby(_ input: Operations.ListNearby.Input) async throws -> Operations.ListNearby.Output {
        let limit = input.query.limit ?? 100
        guard (1...500).contains(limit) else { throw APIError.unprocessable("limit must be between 1 and 500") }
        return .ok(.init(body: .json(try await database.callerRead { caller, connection in
            try await nearby.nearby(caller.id, radiusFeet: input.query.radiusFeet, limit: limit, on: connection)
        })))
    }

    func getNearbyUser(_ input: Operations.GetNearbyUser.Input) async throws -> Operations.GetNearbyUser.Output {
        // Anything that is not a UUID cannot name anyone: the same 404 as a stranger.
        guard let other = UUID(canonical: input.path.userId) else { throw NearbyErrors.userNotFound }
        return .ok(.init(body: .json(try await database.callerRead { caller, connection in try await nearby.user(other, viewer: caller.id, on: connection) })))
    }

    // MARK: blocks

    func listBlocks(_ input: Operations.ListBlocks.Input) async throws -> Operations.ListBlocks.Output {
        .ok(.init(body: .json(try await database.callerRead { caller, connection in try await nearby.blocked(by: caller.id, on: connection) })))
    }

    func blockUser(_ input: Operations.BlockUser.Input) async throws -> Operations.BlockUser.Output {
        guard case .json(let block) = input.body else { throw APIError.unprocessable("body: expected JSON") }
        guard let other = UUID(canonical: block.userId) else { throw APIError.unprocessable("user_id must be a UUID") }
        return .created(.init(body: .json(try await database.callerWrite { caller, connection in try await nearby.block(other, by: caller.id, on: connection) })))
    }

    func unblockUser(_ input: Operations.UnblockUser.Input) async throws -> Operations.UnblockUser.Output {
        guard let other = UUID(canonical: input.path.userId) else { throw NearbyErrors.userNotFound }
        try await database.callerWrite { caller, connection in try await nearby.unblock(other, by: caller.id, on: connection) }
        return .noContent(.init())
    }
}

extension SocialLinks {
    /// A social-links update as sent; `NearbyRules.socialLinks` checks and normalizes it.
    init(_ update: Components.Schemas.SocialLinksUpdate) {
        self.init(instagram: update.instagram, snapchat: update.snapchat, tiktok: update.tiktok, linkedin: update.linkedin,
                  youtube: update.youtube, x: update.x, other: update.other)
    }
}
