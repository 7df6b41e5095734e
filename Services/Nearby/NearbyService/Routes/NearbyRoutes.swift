import ColonyModels
import ColonyPlatform
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import PostgresNIO

/// The nearby REST API under `/nearby/v1` (described by `NearbyOpenAPI`). Handlers decode, call
/// the domain on a pooled connection (reads) or in one transaction (writes), and encode.
struct NearbyRoutes: Sendable {
    let support: RouteSupport
    let nearby: Nearby
    let uploadLimit: Int

    static let prefix = "/nearby/v1"
    typealias R = RouteSupport

    func add(to router: Router<ColonyRequestContext>, tokenMiddleware: TokenMiddleware, catalog: RouteCatalog) {
        let document = OpenAPIDocument(bytes: PackageResources.openapi_json)
        document.serve(at: "\(Self.prefix)/openapi.json", on: router)
        catalog.record(RouteKey(method: "GET", path: "\(Self.prefix)/openapi.json"))
        let routes = DocumentedRoutes(group: router.group(RouterPath(Self.prefix)).add(middleware: tokenMiddleware), prefix: Self.prefix, catalog: catalog)
        let support = self.support, nearby = self.nearby

        routes.on(.get, "profile") { _, context in
            try await support.read(context) { user, connection in try await nearby.get(user, on: connection) }
        }
        routes.on(.patch, "profile") { request, context in
            try await support.write(request, context) { body, user, connection in
                let patch = try R.decode(ProfilePatch.self, body)
                return try await nearby.edit(user, .init(name: patch.name, bio: patch.bio, school: patch.school, birthday: patch.birthday, socialLinks: patch.socialLinks), on: connection)
            }
        }
        routes.on(.put, "profile/photo") { request, context in
            let type = request.headers[.contentType]
            return try await support.write(request, context, limit: uploadLimit) { body, user, connection in
                try await nearby.setPhoto(user, image: body, contentType: type, on: connection)
            }
        }
        routes.on(.delete, "profile/photo") { request, context in
            try await support.write(request, context) { _, user, connection in try await nearby.removePhoto(user, on: connection) }
        }
        routes.on(.patch, "settings") { request, context in
            try await support.write(request, context) { body, user, connection in
                let settings = try R.decode(SettingsPatch.self, body)
                return try await nearby.setSettings(user, darkMode: settings.darkMode, satelliteMap: settings.satelliteMap, shareLocation: settings.shareLocation, on: connection)
            }
        }
        routes.on(.put, "location") { request, context in
            try await support.write(request, context) { body, user, connection in
                let report = try Self.decodeLocation(body)
                return try await nearby.report(user, latitude: report.latitude, longitude: report.longitude, accuracy: report.accuracy, on: connection)
            }
        }
        routes.on(.delete, "location") { request, context in
            try await support.write(request, context, status: .noContent) { _, user, connection in
                try await nearby.removeLocation(user, reason: .removed, on: connection)
                return R.Empty()
            }
        }
        routes.on(.get, "nearby") { request, context in
            let radius = try R.query(request, "radius_feet", "radius_feet must be a whole number of feet") { Int($0) }
            let limit = try R.limit(request, default: 100, range: 1...500)
            return try await support.read(context) { user, connection in try await nearby.nearby(user, radiusFeet: radius, limit: limit, on: connection) }
        }
        routes.on(.get, "users/{user_id}") { _, context in
            let other = try R.uuid(context, "user_id", NearbyErrors.userNotFound)
            return try await support.read(context) { user, connection in try await nearby.user(other, viewer: user, on: connection) }
        }
        routes.on(.get, "blocks") { _, context in
            try await support.read(context) { user, connection in try await nearby.blocked(by: user, on: connection) }
        }
        routes.on(.post, "blocks") { request, context in
            try await support.write(request, context, status: .created) { body, user, connection in
                try await nearby.block(try R.decode(BlockBody.self, body).userId, by: user, on: connection)
            }
        }
        routes.on(.delete, "blocks/{user_id}") { request, context in
            let other = try R.uuid(context, "user_id", NearbyErrors.userNotFound)
            return try await support.write(request, context, status: .noContent) { _, user, connection in
                try await nearby.unblock(other, by: user, on: connection)
                return R.Empty()
            }
        }
    }

    /// A position report. JSON5 is accepted here so that a client's NaN or Infinity reaches the
    /// coordinate check (422) instead of failing as malformed JSON.
    static func decodeLocation(_ body: ByteBuffer) throws -> LocationBody {
        try ColonyRequestDecoder.decode(LocationBody.self, from: Data(buffer: body), allowingJSON5: true)
    }

    // MARK: bodies

    struct LocationBody: Decodable {
        var latitude: Double
        var longitude: Double
        var accuracy: Double?
    }

    struct SettingsPatch: Decodable {
        var darkMode: Bool?
        var satelliteMap: Bool?
        var shareLocation: Bool?
    }

    struct BlockBody: Decodable { var userId: UUID }

    /// Absent leaves a field; null (or "") clears bio, school and birthday.
    struct ProfilePatch: Decodable {
        var name: String?
        var bio: String??
        var school: String??
        var birthday: LocalDate??
        var socialLinks: SocialLinks?

        enum CodingKeys: String, CodingKey { case name, bio, school, birthday, socialLinks }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            name = try container.decodeIfPresent(String.self, forKey: .name)
            bio = container.contains(.bio) ? .some(try container.decodeIfPresent(String.self, forKey: .bio)) : nil
            school = container.contains(.school) ? .some(try container.decodeIfPresent(String.self, forKey: .school)) : nil
            birthday = container.contains(.birthday) ? .some(try container.decodeIfPresent(LocalDate.self, forKey: .birthday)) : nil
            socialLinks = try container.decodeIfPresent(SocialLinks.self, forKey: .socialLinks)
        }
    }
}
