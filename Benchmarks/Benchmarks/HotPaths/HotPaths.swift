import Benchmark
import ColonyModels
import ColonyPlatform
import Foundation
import JWTKit
import Logging
import RealtimeService

// The hot paths under every request and event, one benchmark each (scripts/bench micro):
//   - token verification: a token seen for the first time (ES256) and one verified before (the cache);
//   - a history page's JSON (50 messages, as chat answers GET …/messages), Colony's writer and
//     Foundation's encoder with the same settings side by side;
//   - an event envelope's encoding (message_sent, as it goes into the outbox);
//   - a Phoenix frame (a postgres_changes message as realtime sends it to a socket).
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
}
