import Benchmark
import ColonyModels
import ColonyPlatform
import Foundation
import JWTKit
import Logging
import NIOCore
import RealtimeService

// The hot paths under every request and event, one benchmark each (scripts/bench micro):
//   - token verification: a token seen for the first time (ES256) and one verified before (the cache);
//   - a history page's JSON (50 messages, as chat answers GET …/messages), Colony's writer and
//     Foundation's encoder with the same settings side by side;
//   - an event envelope's encoding (message_sent, as it goes into the outbox);
//   - a Phoenix frame (a postgres_changes message as realtime sends it to a socket);
//   - the worst paths of `scripts/bench profile` (docs/benchmarks.md): a history page's rows read
//     from the one cell of column arrays its statement returns (`PageColumns`, 51 rows of chat's
//     11 columns); nearby's answer (100 people) through the generated route's encoder (Foundation's,
//     keys sorted), nearby's whole query being ten times any other path's instructions; a post's
//     body through the generated routes' decoder, as circles' create and the other writes read it.
// Thresholds: allocations per operation must not grow (they are exact on any machine); wall
// clock may vary by the machine's noise (a shared 2-core box drifts 2×), so its tolerance is wide:
// `swift package benchmark thresholds check` fails on a regression beyond them against the
// figures stored in Thresholds/ (`scripts/bench micro update` stores new ones).


// MARK: - Inputs

let keyID = "bench-key"
let privateKey = ES256PrivateKey()
let jwks: String = {
    let parameters = privateKey.publicKey.parameters!
    return #"{"keys":[{"kty":"EC","crv":"P-256","alg":"ES256","use":"sig","kid":"\#(keyID)","x":"\#(parameters.x)","y":"\#(parameters.y)"}]}"#
}()

func mintTokens(_ count: Int) async throws -> [String] {
    let keys = await JWTKeyCollection().add(ecdsa: privateKey, kid: JWKIdentifier(string: keyID))
    var tokens: [String] = []
    for _ in 0..<count {
        let claims = AccessTokenClaims(sub: UUID().uuidString.lowercased(), aud: App.unify.rawValue, iss: "colony-auth",
                                       exp: Date().addingTimeInterval(3600), sessionId: UUID().uuidString.lowercased())
        tokens.append(try await keys.sign(claims, kid: JWKIdentifier(string: keyID)))
    }
    return tokens
}

let tokenCount = 3000

/// Tokens minted before a benchmark runs and a verifier that has loaded its keys (one token seen).
final class Tokens: @unchecked Sendable {
    private(set) var all: [String] = []
    private var index = 0
    private(set) var verifier = TokenVerifier(
        configuration: TokenVerifierConfiguration(keySource: .staticJWKS(jwks), issuer: "colony-auth", audience: .unify),
        logger: Logger(label: "bench"))

    var first: String { all[0] }

    func prepare(count: Int) async throws {
        all = try await mintTokens(count)
        verifier = TokenVerifier(configuration: TokenVerifierConfiguration(keySource: .staticJWKS(jwks), issuer: "colony-auth", audience: .unify),
                                 logger: Logger(label: "bench"))
        _ = try await verifier.verify(all[0])
        index = 0
    }

    /// The next token not yet verified (the benchmark runs fewer iterations than there are).
    func next() -> String {
        index += 1
        return all[index % all.count]
    }
}

let tokens = Tokens()

/// The shape of chat's history page (`HistoryPage`: messages with their sender and cursor).
struct HistoryPage: Encodable {
    struct Sender: Encodable {
        var id: UUID
        var displayName: String
    }

    struct Message: Encodable {
        var id: UUID
        var groupId: UUID
        var content: String
        var sentBy: UUID
        var sentAt: Date
        var isEdited: Bool
        var messageType: MessageType
        var voiceDuration: Double?
        var voiceUrl: String?
        var user: Sender
        var cursor: String?
    }

    var messages: [Message]
    var hasMore: Bool
    var olderCursor: String?
    var newerCursor: String?
}

let page: HistoryPage = {
    let group = UUID()
    let senders = (0..<8).map { HistoryPage.Sender(id: UUID(), displayName: "Member \($0)") }
    let messages = (0..<50).map { n in
        let sender = senders[n % senders.count]
        return HistoryPage.Message(id: UUID(), groupId: group, content: "Message \(n): " + String(repeating: "lorem ipsum ", count: 1 + n % 8),
                                   sentBy: sender.id, sentAt: Date(timeIntervalSince1970: 1_790_000_000 + Double(n) * 61.5), isEdited: n % 7 == 0,
                                   messageType: .text, voiceDuration: nil, voiceUrl: nil, user: sender,
                                   cursor: "\(1_790_000_000_000_000 + n)_\(UUID().uuidString.lowercased())")
    }
    return HistoryPage(messages: messages, hasMore: true, olderCursor: messages.last?.cursor, newerCursor: messages.first?.cursor)
}()

let event: EventEnvelope<MessageSent> = {
    let user = UUID()
    return EventEnvelope(app: .unify, aggregateId: UUID().uuidString.lowercased(), actor: user, payload: MessageSent(
        message: MessageRow(id: UUID(), groupId: UUID(), content: "lorem ipsum dolor sit amet, consectetur adipiscing elit", sentBy: user,
                            sentAt: Date(), isEdited: false, messageType: .text, voiceDuration: nil, voiceUrl: nil),
        senderDisplayName: "Ada"))
}()

let change = PhoenixMessage(ref: nil, topic: "realtime:public:messages", event: PhoenixEvent.postgresChanges, payload: .object([
    "ids": .array([.number(42)]),
    "data": .object([
        "schema": .string("public"), "table": .string("messages"), "type": .string("INSERT"), "commit_timestamp": .string("2026-11-25T03:00:00.000Z"),
        "columns": .array([.object(["name": .string("id"), "type": .string("uuid")]), .object(["name": .string("content"), "type": .string("text")])]),
        "record": .object(["id": .string(UUID().uuidString.lowercased()), "content": .string("lorem ipsum dolor sit amet"),
                           "sent_by": .string(UUID().uuidString.lowercased()), "sent_at": .string("2026-11-25T03:00:00.000Z"), "is_edited": .bool(false)]),
        "errors": .null,
    ]),
]))

/// A page cell as Postgres's `record_send` writes `ROW(array_agg(c1), …)` (see `PageColumns`):
/// the field count, then per column the array's type oid and length, then `array_send`'s
/// one-dimensional array of the elements' type (`nil` a null element).
func pageCell(_ columns: [(oid: UInt32, values: [[UInt8]?])]) -> ByteBuffer {
    var cell = ByteBuffer()
    cell.writeInteger(Int32(columns.count))
    for column in columns {
        var array = ByteBuffer()
        array.writeInteger(Int32(1))
        array.writeInteger(Int32(column.values.contains { $0 == nil } ? 1 : 0))
        array.writeInteger(column.oid)
        array.writeInteger(Int32(column.values.count))
        array.writeInteger(Int32(1))
        for value in column.values {
            if let value {
                array.writeInteger(Int32(value.count))
                array.writeBytes(value)
            } else {
                array.writeInteger(Int32(-1))
            }
        }
        cell.writeInteger(UInt32(0))  // the array type's oid, which the reader does not check
        cell.writeInteger(Int32(array.readableBytes))
        cell.writeBuffer(&array)
    }
    return cell
}

func bigEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] { withUnsafeBytes(of: value.bigEndian) { Array($0) } }
func uuidBytes(_ id: UUID) -> [UInt8] { withUnsafeBytes(of: id.uuid) { Array($0) } }

/// 51 rows of chat's history page (`HistorySQL`: the message's ten columns and its cursor's
/// microseconds), in the binary format the service reads them in.
let historyCell: ByteBuffer = {
    let group = UUID(), senders = (0..<8).map { _ in UUID() }
    let rows = 0..<51
    let micros = rows.map { Int64(1_790_000_000_000_000 + $0 * 61_500_000) }
    return pageCell([
        (2950, rows.map { _ in uuidBytes(UUID()) }),
        (2950, rows.map { _ in uuidBytes(group) }),
        (25, rows.map { Array("Message \($0): \(String(repeating: "lorem ipsum ", count: 1 + $0 % 8))".utf8) }),
        (2950, rows.map { uuidBytes(senders[$0 % 8]) }),
        (1184, micros.map { bigEndian($0 - 946_684_800_000_000) }),
        (16, rows.map { [$0 % 7 == 0 ? 1 : 0] }),
        (25, rows.map { _ in Array("text".utf8) }),
        (701, rows.map { _ in nil }),
        (25, rows.map { _ in nil }),
        (25, rows.map { Array("Member \($0 % 8)".utf8) }),
        (20, micros.map { bigEndian($0) }),
    ])
}()

/// A history row as chat reads it (`StoredMessage` and its cursor), column by column.
struct HistoryRow {
    var id: UUID, groupID: UUID, content: String, sentBy: UUID, sentAt: Date, isEdited: Bool, type: String
    var voiceDuration: Double?, voicePath: String?, senderName: String, cursorMicros: Int64

    init(_ row: inout PageRow) throws {
        id = try row.uuid(); groupID = try row.uuid(); content = try row.text(); sentBy = try row.uuid()
        sentAt = try row.date(); isEdited = try row.bool(); type = try row.text(); voiceDuration = try row.optionalDouble()
        voicePath = try row.optionalText(); senderName = try row.text(); cursorMicros = try row.int64()
    }
}

/// Nearby's answer (`NearbyList`: the document's `NearbyUser`s) for 100 people, as its generated
/// route encodes it.
struct NearbyList: Encodable {
    struct SocialLinks: Encodable { var instagram: String?, snapchat: String?, tiktok: String?, linkedin: String?, youtube: String?, x: String?, other: String? }
    struct Position: Encodable { var latitude: Double, longitude: Double }
    struct User: Encodable {
        var userId: String, name: String, age: Int?, school: String?, bio: String?, socialLinks: SocialLinks, photoUrl: String?
        var distanceFeet: Int, distanceMiles: Double, distanceText: String, position: Position
        enum CodingKeys: String, CodingKey {
            case userId = "user_id", name, age, school, bio, socialLinks = "social_links", photoUrl = "photo_url"
            case distanceFeet = "distance_feet", distanceMiles = "distance_miles", distanceText = "distance_text", position
        }
    }
    var sharing: Bool, radiusFeet: Int, users: [User]
    enum CodingKeys: String, CodingKey { case sharing, radiusFeet = "radius_feet", users }
}

let nearbyList = NearbyList(sharing: true, radiusFeet: 500, users: (0..<100).map { n in
    let feet = 5 * n
    return NearbyList.User(userId: UUID().uuidString.lowercased(), name: "Person \(n)", age: 18 + n % 40, school: n % 3 == 0 ? "State University" : nil,
                           bio: "Here for the coffee and the conversation, number \(n).", socialLinks: .init(instagram: "@person\(n)", x: n % 2 == 0 ? "@p\(n)" : nil),
                           photoUrl: "https://colony.example/storage/v1/object/sign/avatars/\(UUID().uuidString.lowercased())?token=abc", distanceFeet: feet,
                           distanceMiles: Double(feet) / 5280, distanceText: "\(feet) ft", position: .init(latitude: 40.7128 + Double(n) * 1e-5, longitude: -74.006 - Double(n) * 1e-5))
})

/// The generated routes' answer encoder: Foundation's, keys sorted (`GeneratedRoutes.configuration`).
let generatedRouteEncoder: JSONEncoder = {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    return encoder
}()

/// Circles' `PostCreate` as the generated routes decode it.
struct PostCreate: Decodable {
    var type: String, body: String, mood: String?, category: String?, urgency: String?, location: String?
    var latitude: Double?, longitude: Double?, startsAt: Date?, pollOptions: [String]?
    enum CodingKeys: String, CodingKey {
        case type, body, mood, category, urgency, location, latitude, longitude, startsAt = "starts_at", pollOptions = "poll_options"
    }
}

let postBody = Data(#"{"type":"thought","body":"Bench 12-345 lorem ipsum dolor sit amet, consectetur adipiscing elit","mood":"calm"}"#.utf8)

// MARK: - Benchmarks

// Names use underscores for spaces: package-benchmark 1.38.1 stores thresholds under the name with
// spaces made underscores but looks them up under the name as given, so `thresholds check` found
// none for a name with spaces ("Could not find any matching absolute thresholds", exit 1).
let benchmarks: @Sendable () -> Void = {
    let mallocs = BenchmarkThresholds(absolute: [.p50: 2, .p90: 4])
    let time = BenchmarkThresholds(relative: [.p50: 100.0])
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .mallocCountTotal],
        timeUnits: .microseconds,
        warmupIterations: 10,
        maxDuration: .seconds(3),
        maxIterations: 100_000,
        thresholds: [.wallClock: time, .mallocCountTotal: mallocs]
    )

    // Every iteration a token this verifier has not seen: the signature is checked.
    Benchmark("token_verification,_first_time_(ES256)", configuration: .init(warmupIterations: 0, maxIterations: tokenCount - 1)) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try await tokens.verifier.verify(tokens.next()))
        }
    } setup: {
        try await tokens.prepare(count: tokenCount)
    }

    Benchmark("token_verification,_cached") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try await tokens.verifier.verify(tokens.first))
        }
    } setup: {
        try await tokens.prepare(count: 1)
    }

    Benchmark("history_page_JSON_(50_messages),_ColonyJSON.encode") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try ColonyJSON.encode(page))
        }
    }

    Benchmark("history_page_JSON_(50_messages),_Foundation_JSONEncoder") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try ColonyJSON.encoder().encode(page))
        }
    }

    Benchmark("event_envelope_encoding_(message_sent)") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try event.encoded())
        }
    }

    Benchmark("Phoenix_frame_encode_(postgres_changes,_v1_and_v2)") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(PhoenixSerializer.v1.encode(change))
            blackHole(PhoenixSerializer.v2.encode(change))
        }
    }

    Benchmark("history_page_rows_(51),_PageColumns.decode") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try PageColumns.decode(historyCell) { try HistoryRow(&$0) })
        }
    }

    Benchmark("nearby_answer_(100_people),_generated_route_encoder") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try generatedRouteEncoder.encode(nearbyList))
        }
    }

    Benchmark("post_body_(circles_create),_generated_route_decoder") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try GeneratedRoutes.requestDecoder.decode(PostCreate.self, from: postBody))
        }
    }
}
