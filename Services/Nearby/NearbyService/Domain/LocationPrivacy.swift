import ColonyModels
import ColonyPlatform
import Crypto
import Foundation
import Logging
import PostgresNIO
import Synchronization

/// What others see of a reported position, and only that: the point moved by a secret offset
/// (`offsetFeet`, in a direction of its own) and snapped to the grid. The offset is a keyed hash
/// of the user and the ~600 m area they are in, so it is the same for every viewer (several
/// accounts cannot average it away) and stays put while the user does (a person at home cannot
/// be averaged out over days); it changes only when they move to another area. Distances and
/// who is in range are computed from this point, so trilateration ends at it, not at the person.
struct LocationPrivacy: Sendable {
    let offsetFeet: ClosedRange<Double>
    let gridFeet: Double
    let key: SymmetricKey

    /// The side of the areas an offset holds for.
    static let areaMeters = 600.0

    func shown(user: UUID, latitude: Double, longitude: Double) -> ApproximatePosition {
        let (north, east) = offset(user: user, latitude: latitude, longitude: longitude)
        let moved = NearbyRules.moved(latitude: latitude, longitude: longitude, north: north, east: east)
        return NearbyRules.approximate(latitude: moved.latitude, longitude: moved.longitude, gridMeters: gridFeet * NearbyRules.metersPerFoot)
    }

    /// The user's offset in this area, in meters north and east.
    func offset(user: UUID, latitude: Double, longitude: Double) -> (north: Double, east: Double) {
        guard offsetFeet.upperBound > 0 else { return (0, 0) }
        let step = Self.areaMeters / NearbyRules.metersPerDegreeLatitude
        let row = Int((latitude / step).rounded(.down))
        let rowLatitude = (Double(row) + 0.5) * step
        let column = Int((longitude / (step / max(cos(rowLatitude * .pi / 180), 0.01))).rounded(.down))
        let mac = Array(HMAC<SHA256>.authenticationCode(for: Data("\(user.lowercased)|\(row)|\(column)".utf8), using: key))
        func unit(_ bytes: ArraySlice<UInt8>) -> Double {
            Double(bytes.reduce(UInt64(0)) { ($0 << 8) | UInt64($1) } >> 11) / Double(UInt64(1) << 53)
        }
        let angle = unit(mac[0..<8]) * 2 * .pi
        let feet = offsetFeet.lowerBound + unit(mac[8..<16]) * (offsetFeet.upperBound - offsetFeet.lowerBound)
        let meters = feet * NearbyRules.metersPerFoot
        return (meters * cos(angle), meters * sin(angle))
    }
}

/// The deployment's offset key: made by the migration (random, in the schema, so every replica
/// uses the same one and nothing needs configuring), read once.
final class LocationNoiseKey: Sendable {
    private let cached = Mutex<SymmetricKey?>(nil)

    init() {}

    func key(on connection: PostgresConnection, logger: Logger) async throws -> SymmetricKey {
        if let key = cached.withLock({ $0 }) { return key }
        let text = try await connection.query("SELECT key FROM location_noise_key WHERE id = 1", logger: logger).firstValue(String.self)
        guard let text, !text.isEmpty else { throw NearbyErrors.noiseKeyMissing }
        let key = SymmetricKey(data: Data(text.utf8))
        cached.withLock { $0 = key }
        return key
    }
}
