import AsyncHTTPClient
import ColonyClient
import ColonyTesting
import Foundation
import HTTPTypes
import NIOCore
import OpenAPIAsyncHTTPClient
import Synchronization

/// Tests speak to a running service through its generated client (`HabitsAPI.Client`,
/// `ChatAPI.Client`, …) as an app does through the gateway: the same `ColonyConnection`, dates
/// and bearer token, over AsyncHTTPClient instead of URLSession.
///
///     let api = HabitsAPI.Client(habits.connection(as: user))
///     let habit = try await api.createHabit(body: .json(…)).created.body.json
///     let refused = try await answer { try await api.getHabit(path: .init(habitId: id)) }
///     #expect(refused.status == 404 && refused.code == "habit_not_found")
extension RunningService {
    /// A connection to this service as `user` (nil sends no token). The documents' paths carry
    /// the service's prefix, so the server URL is the service's base, as the gateway's is.
    public func connection(as user: User?) -> ColonyConnection {
        let token = user?.token
        var connection = ColonyConnection(gateway: URL(string: base)!) { token }
        // HTTPClient.shared: the process's own client, which is never shut down by its users
        // (AsyncHTTPClient's rule for it), so no test leaves a client running or stops one another
        // test still uses. The deadline counts the wait for a pooled connection, as `request`'s does.
        connection.transport = AsyncHTTPClientTransport(configuration: .init(client: .shared, timeout: .seconds(120)))
        connection.middlewares.append(AnswerRecordingMiddleware())
        return connection
    }
}

/// An operation's typed output with what the HTTP answer said, for assertions on any status:
/// the generated `Output` enums name only the documented statuses (anything else is
/// `.undocumented`), and every refusal's body is Colony's `{"code","message"}`.
public struct Answer<Output: Sendable>: Sendable {
    public let output: Output
    public let status: Int
    public let headers: HTTPFields
    /// The body as JSON (nil if it was not JSON), and as an object (empty if it was not one).
    public let json: JSONValue?
    public let body: [String: JSONValue]
    public var code: String? { body["code"]?.stringValue }
    public var message: String? { body["message"]?.stringValue }
}

/// Runs one call of a client made by `RunningService.connection(as:)` and returns its output with
/// the status, headers and error body of the answer it got.
public func answer<Output: Sendable>(_ call: () async throws -> Output) async throws -> Answer<Output> {
    let record = AnswerRecord()
    let output = try await AnswerRecord.$current.withValue(record) { try await call() }
    guard let recorded = record.answer.withLock({ $0 }) else {
        throw TestSetupError("answer { … }: the call made no request through a connection(as:) client")
    }
    let (response, bytes) = recorded
    let json = try? JSONDecoder().decode(JSONValue.self, from: Data(bytes))
    var body: [String: JSONValue] = [:]
    if case .object(let object)? = json { body = object }
    return Answer(output: output, status: response.status.code, headers: response.headerFields, json: json, body: body)
}

/// Where `AnswerRecordingMiddleware` leaves the answer of the call `answer` runs (a task local, so
/// concurrent calls in a test's task group each see their own).
final class AnswerRecord: Sendable {
    @TaskLocal static var current: AnswerRecord?
    let answer = Mutex<(HTTPResponse, [UInt8])?>(nil)
}

/// Keeps a copy of the answer's status, headers and body for `answer { … }`; the generated code
/// then reads the body from that copy.
struct AnswerRecordingMiddleware: ClientMiddleware {
    func intercept(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
                   next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)) async throws -> (HTTPResponse, HTTPBody?) {
        let (response, responseBody) = try await next(request, body, baseURL)
        guard let record = AnswerRecord.current else { return (response, responseBody) }
        let bytes: [UInt8] = if let responseBody { try await [UInt8](collecting: responseBody, upTo: 64 << 20) } else { [] }
        record.answer.withLock { $0 = (response, bytes) }
        return (response, responseBody == nil ? nil : HTTPBody(bytes))
    }
}
