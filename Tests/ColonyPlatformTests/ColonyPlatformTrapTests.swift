import ColonyModels
import ColonyPlatform
import ColonyTesting
import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// What every service decodes with: request bodies and settings. Extreme input is a 4xx (or a
/// refused setting), never a trap (issue 33).
@Suite("ColonyPlatform: no trap on extreme input")
struct ColonyPlatformTrapTests {
    let tokens = TestTokens()

    struct Counted: Codable, ResponseEncodable {
        var count: Int
        var metadata: [String: JSONValue]?
    }

    /// A live server (handlers on the same threads as in production), with the default 256 KiB
    /// body limit: JSON up to that size, nested as deep as a client likes.
    func makeApp() -> some ApplicationProtocol {
        let router = ColonyRouter.make(metrics: HTTPMetrics(), maxBodyBytes: ColonyRequestContext.defaultBodyLimit, readiness: ReadinessChecks())
        let verifier = TokenVerifier(configuration: tokens.verifierConfiguration(audience: .habithive), logger: TestEnvironment.logger)
        let api = router.group("habits/v1").add(middleware: TokenMiddleware(verifier: verifier))
        api.post("count") { request, context -> Counted in
            try RouteSupport.decode(Counted.self, try await RouteSupport.collect(request, context))
        }
        api.post("any") { request, context -> [String: String] in
            let value = try RouteSupport.decode(JSONValue.self, try await RouteSupport.collect(request, context))
            return ["kind": value.arrayValue != nil ? "array" : "other"]
        }
        return Application(router: router)
    }

    @Test("JSON nested 513, 600 or 100,000 levels deep is a 400/422 JSON error; 512 levels (Foundation's limit) decode without a stack overflow")
    func deepNesting() async throws {
        let token = try await tokens.token(app: .habithive)
        try await makeApp().test(.live) { client in
            for (path, depth) in [("any", 100_000), ("any", 600), ("any", 513), ("count", 100_000), ("count", 600)] {
                let nested = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
                let json = path == "any" ? nested : #"{"count":1,"metadata":{"x":"# + nested + "}}"
                let response = try await client.execute(uri: "/habits/v1/\(path)", method: .post, headers: [.authorization: "Bearer \(token)"], body: ByteBuffer(string: json))
                #expect([400, 422].contains(response.status.code), "\(path) \(depth): \(response.status)")
                let error = try JSONDecoder().decode([String: String].self, from: Data(buffer: response.body))
                #expect(error["code"] != nil && error["message"] != nil)
            }
            let shallow = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
            let fine = try await client.execute(uri: "/habits/v1/any", method: .post, headers: [.authorization: "Bearer \(token)"], body: ByteBuffer(string: shallow))
            #expect(fine.status == .ok)
        }
    }

    @Test("numbers an Int cannot hold (1e300, 2^63, 1.5, -1e300) in an Int field are 422, not a trap")
    func hugeNumbers() async throws {
        let token = try await tokens.token(app: .habithive)
        try await makeApp().test(.live) { client in
            for number in ["1e300", "9223372036854775808", "1.5", "-1e300", "123456789012345678901234567890"] {
                let response = try await client.execute(uri: "/habits/v1/count", method: .post, headers: [.authorization: "Bearer \(token)"],
                                                        body: ByteBuffer(string: #"{"count":\#(number)}"#))
                #expect(response.status == .unprocessableContent, "\(number): \(response.status)")
                #expect(try JSONDecoder().decode([String: String].self, from: Data(buffer: response.body))["code"] == "validation_failed")
            }
            // Inside free-form metadata the same numbers are just numbers.
            let free = try await client.execute(uri: "/habits/v1/count", method: .post, headers: [.authorization: "Bearer \(token)"],
                                                body: ByteBuffer(string: #"{"count":1,"metadata":{"n":1e300,"m":-1e300}}"#))
            #expect(free.status == .ok)
        }
    }

    @Test("a quota or window past what the counters hold is a refused setting, not a trap at the first request")
    func quotaBounds() throws {
        #expect(Quota("60/3600") == Quota(60, perSeconds: 3600))
        #expect(Quota("1000000000/31622400") != nil)
        for text in ["3000000000/60", "1/9223372036854775807", "9223372036854775807/1", "1/31622401", "0/60", "-1/60", "1/0"] {
            #expect(Quota(text) == nil, "\(text)")
        }
        #expect(throws: ConfigurationError.self) {
            try EnvironmentReader(["COLONY_TEST_QUOTA": "1/9223372036854775807"]).quota("COLONY_TEST_QUOTA", default: Quota(1, perSeconds: 1))
        }
    }

    @Test("a keyset cursor of 18 nines, or 19 digits, reads without a trap")
    func cursorEdges() {
        let id = "01a21cc2-e264-7000-8000-000000000001"
        #expect(KeysetCursor("999999999999999999_\(id)")?.micros == 999_999_999_999_999_999)
        #expect(KeysetCursor("9999999999999999999_\(id)") == nil)
        #expect(KeysetCursor("-1_\(id)") == nil)
    }
}
