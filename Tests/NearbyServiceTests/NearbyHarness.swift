import ColonyClientTesting
import ColonyModels
import ColonyPlatform
import ColonyStorage
import ColonyTesting
import Foundation
import NearbyAPI
import NearbyService
import NIOCore
import Testing

/// A running nearby service (see `RunningService`) with its storage directory, on a schema with
/// PostGIS.
struct RunningNearby: Sendable {
    let service: RunningService
    let storageRoot: String

    /// The generated client as `user` (nil: no token).
    func api(_ user: RunningService.User?) -> NearbyAPI.Client { NearbyAPI.Client(service.connection(as: user)) }

    /// A socialspot user with a profile, sharing (or not), at a position when given.
    func user(name: String = "Sam", sharing: Bool = true, at position: (Double, Double)? = nil) async throws -> RunningService.User {
        let user = try await service.user()
        let api = api(user)
        _ = try await api.updateProfile(body: .json(.init(name: name))).ok
        _ = try await api.updateSettings(body: .json(.init(shareLocation: sharing))).ok
        if let position { try await move(user, to: position) }
        return user
    }

    @discardableResult
    func move(_ user: RunningService.User, to position: (Double, Double)) async throws -> Schemas.LocationReport {
        try await api(user).reportLocation(body: .json(.init(latitude: position.0, longitude: position.1))).ok.body.json
    }

    /// The people `user` sees nearby, nearest first.
    func list(seenBy user: RunningService.User, radiusFeet: Int? = nil) async throws -> Schemas.NearbyList {
        try await api(user).listNearby(query: .init(radiusFeet: radiusFeet)).ok.body.json
    }

    /// Names of the people `user` sees nearby, nearest first.
    func names(seenBy user: RunningService.User, radiusFeet: Int? = nil) async throws -> [String] {
        try await list(seenBy: user, radiusFeet: radiusFeet).users.map(\.name)
    }

    /// A second instance on the same schema and storage, with `settings` and configured by
    /// `configure` (fast paths off, say); its photo URLs name this one, so the two answer alike.
    func withTwin(settings: NearbySettings, configure: @escaping @Sendable (inout ServiceConfiguration) -> Void,
                  _ body: @Sendable (RunningService) async throws -> Void) async throws {
        let (root, base) = (storageRoot, service.base)
        try await withRunningTwin(of: service, .nearby, configure: configure, definition: { _ in
            let storage = Storage(backend: FileSystemStorageBackend(root: root), publicBaseURL: base, signingKey: Array("nearby-tests-signing-key-0123456789abcdef".utf8))
            return NearbyService.definition(settings: settings, storage: storage)
        }, body)
    }

    /// The point `feet` from (latitude, longitude) along `azimuth` degrees, on the spheroid
    /// (PostGIS's own geodesic, the one the service measures with).
    func point(from origin: (Double, Double), feet: Double, azimuth: Double) async throws -> (Double, Double) {
        try await service.withDatabase { database in
            let rows = try await database.query("""
                SELECT ST_Y(p::geometry), ST_X(p::geometry) FROM (
                    SELECT ST_Project(ST_SetSRID(ST_MakePoint(\(origin.1), \(origin.0)), 4326)::geography, \(feet * 0.3048), radians(\(azimuth))) AS p
                ) projected
                """).collect()
            let (latitude, longitude) = try rows[0].decode((Double, Double).self)
            return (latitude, longitude)
        }
    }
}

typealias Schemas = NearbyAPI.Components.Schemas
typealias ClientOperations = NearbyAPI.Operations

extension NearbySettings {
    /// Exact positions (no offset, no grid) and no rate limits: for tests of the geometry only.
    static let exact = NearbySettings(maxPhotoBytes: 64 << 10, offsetFeet: 0...0, gridFeet: 0, reportQuota: Quota(10_000, perSeconds: 60),
                                      queryQuota: Quota(10_000, perSeconds: 60), targetQuota: Quota(10_000, perSeconds: 60), maxSpeedMetersPerSecond: 1_000_000)
    /// The privacy rules as deployed, with the rate limits and speed check lifted: what an
    /// attacker with unlimited patience (or many accounts) gets.
    static let unlimited = NearbySettings(maxPhotoBytes: 64 << 10, reportQuota: Quota(10_000, perSeconds: 60), queryQuota: Quota(10_000, perSeconds: 60),
                                          targetQuota: Quota(10_000, perSeconds: 60), maxSpeedMetersPerSecond: 1_000_000)
}

/// Starts the nearby service with filesystem storage in a fresh directory.
func withRunningNearby(settings: NearbySettings = NearbySettings(maxPhotoBytes: 64 << 10), _ body: @Sendable (RunningNearby) async throws -> Void) async throws {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("colony-nearby-\(UUID().uuidString)").path
    defer { try? FileManager.default.removeItem(atPath: root) }
    try await withRunningService(.nearby, app: .socialspot, apiPrefix: "/nearby/v1", extensions: NearbyService.extensions,
                                 configure: { $0.maxUploadBytes = settings.maxUploadBytes }, definition: { base in
        let storage = Storage(backend: FileSystemStorageBackend(root: root), publicBaseURL: base, signingKey: Array("nearby-tests-signing-key-0123456789abcdef".utf8))
        return NearbyService.definition(settings: settings, storage: storage)
    }) { service in
        try await body(RunningNearby(service: service, storageRoot: root))
    }
}
