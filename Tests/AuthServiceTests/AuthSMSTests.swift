import AuthService
import ColonyModels
import ColonyTesting
import Foundation
import Hummingbird
import Synchronization
import Testing

/// A local stand-in for Twilio's Messages API: checks what Twilio checks (basic auth with the
/// account SID and token, the account in the path, form-encoded `To`, `Body` and `From` or
/// `MessagingServiceSid`), answers as Twilio does (201 with the message, or its error JSON), and
/// records every request. A test can script the next answers (429, 503, …).
final class TwilioStandIn: Sendable {
    struct Received: Sendable {
        var authorization: String?
        var contentType: String?
        var fields: [String: String]
        var status: Int
    }

    let accountSID = "AC" + String(repeating: "0123456789abcdef", count: 2)
    let authToken = "twilio-test-token-" + UUID().uuidString.lowercased()
    private let state = Mutex<(received: [Received], scripted: [(Int, String)], port: Int)>(([], [], 0))

    var received: [Received] { state.withLock { $0.received } }
    var url: URL { URL(string: "http://127.0.0.1:\(state.withLock { $0.port })")! }

    func script(_ answers: [(Int, String)]) {
        state.withLock { $0.scripted += answers }
    }

    func settings(from: String? = "+15005550006", messagingServiceSID: String? = nil, token: String? = nil, attempts: Int = 3) -> TwilioSettings {
        TwilioSettings(accountSID: accountSID, authToken: token ?? authToken, from: from, messagingServiceSID: messagingServiceSID, baseURL: url, attempts: attempts, retryDelay: .milliseconds(50))
    }

    static func error(_ code: Int, _ message: String, status: Int) -> String {
        #"{"code": \#(code), "message": "\#(message)", "more_info": "https://www.twilio.com/docs/errors/\#(code)", "status": \#(status)}"#
    }

    func run<Result: Sendable>(_ body: @Sendable (TwilioStandIn) async throws -> Result) async throws -> Result {
        let port = try freePort()
        state.withLock { $0.port = port }
        let router = Router()
        router.post("/2010-04-01/Accounts/:sid/Messages.json") { request, context -> Response in
            let bytes = try await request.body.collect(upTo: 1 << 16)
            let fields = Self.formFields(String(buffer: bytes))
            let authorization = request.headers[.authorization]
            let expected = "Basic " + Data("\(self.accountSID):\(self.authToken)".utf8).base64EncodedString()
            var (status, answer): (Int, String)
            if authorization != expected {
                (status, answer) = (401, Self.error(20003, "Authenticate", status: 401))
            } else if context.parameters.get("sid") != self.accountSID {
                (status, answer) = (404, Self.error(20404, "The requested resource was not found", status: 404))
            } else if request.headers[.contentType] != "application/x-www-form-urlencoded" || fields["Body"] == nil {
                (status, answer) = (400, Self.error(21602, "Message body is required.", status: 400))
            } else if !(fields["To"] ?? "").hasPrefix("+") || (fields["To"] ?? "").dropFirst().contains(where: { !$0.isNumber }) {
                (status, answer) = (400, Self.error(21211, "The 'To' number \(fields["To"] ?? "") is not a valid phone number.", status: 400))
            } else if (fields["From"] == nil) == (fields["MessagingServiceSid"] == nil) {
                (status, answer) = (400, Self.error(21603, "A 'From' or 'MessagingServiceSid' parameter is required to send a message.", status: 400))
            } else if let next = self.state.withLock({ $0.scripted.isEmpty ? nil : $0.scripted.removeFirst() }) {
                (status, answer) = next
            } else {
                (status, answer) = (201, #"{"sid": "SM\#(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased())", "status": "queued"}"#)
            }
            self.state.withLock { $0.received.append(Received(authorization: authorization, contentType: request.headers[.contentType], fields: fields, status: status)) }
            var headers = HTTPFields()
            headers[.contentType] = "application/json"
            if status == 429 { headers[.retryAfter] = "1" }
            return Response(status: .init(code: status), headers: headers, body: .init(byteBuffer: ByteBuffer(string: answer)))
        }
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)), logger: TestEnvironment.logger)
        return try await withTestServer(app) {
            try await waitUntil(timeout: .seconds(30)) { canConnect(port: port) }
            return try await body(self)
        }
    }

    /// `application/x-www-form-urlencoded` as a server reads it (`+` is a space).
    static func formFields(_ body: String) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in body.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? "" }
            if parts.count == 2 { fields[parts[0]] = parts[1] }
        }
        return fields
    }
}

@Suite("Auth SMS through a Twilio-compatible provider", .serialized)
struct AuthSMSTests {
    func sms(to: String = "+15551234567", text: String = "Dein HabitHive-Code: 123456. Gültig für 10 Minuten.") -> OutgoingMessage {
        OutgoingMessage(app: .habithive, channel: .sms, to: to, kind: "sms", subject: "", text: text, html: nil, locale: "de", code: "123456", link: nil, sentAt: Date())
    }

    @Test("an SMS is POSTed form-encoded with basic auth: the plus of the number and the umlauts arrive intact")
    func requestShape() async throws {
        try await TwilioStandIn().run { twilio in
            try await TwilioMessageSender(settings: twilio.settings(), logger: TestEnvironment.logger).send(sms())
            let request = try #require(twilio.received.first)
            #expect(request.status == 201)
            #expect(request.fields == ["To": "+15551234567", "From": "+15005550006", "Body": "Dein HabitHive-Code: 123456. Gültig für 10 Minuten."])
            // A Messaging Service instead of a number.
            try await TwilioMessageSender(settings: twilio.settings(from: nil, messagingServiceSID: "MG0123"), logger: TestEnvironment.logger).send(sms())
            #expect(twilio.received.last?.fields["MessagingServiceSid"] == "MG0123" && twilio.received.last?.fields["From"] == nil)
        }
    }

    @Test("429 and 5xx are tried again (after Retry-After) until accepted; Twilio's errors are reported with its code and message, and not retried")
    func retriesAndErrors() async throws {
        try await TwilioStandIn().run { twilio in
            twilio.script([(429, TwilioStandIn.error(20429, "Too Many Requests", status: 429)), (503, TwilioStandIn.error(20503, "Service unavailable", status: 503))])
            try await TwilioMessageSender(settings: twilio.settings(attempts: 3), logger: TestEnvironment.logger).send(sms())
            #expect(twilio.received.map(\.status) == [429, 503, 201])

            let before = twilio.received.count
            await #expect {
                try await TwilioMessageSender(settings: twilio.settings(), logger: TestEnvironment.logger).send(sms(to: "+1555abc"))
            } throws: { error in
                guard let error = error as? SMSProviderError else { return false }
                return error.status == 400 && error.code == 21211 && "\(error)".contains("is not a valid phone number") && !error.isTransient
            }
            await #expect {
                try await TwilioMessageSender(settings: twilio.settings(token: "wrong-token"), logger: TestEnvironment.logger).send(sms())
            } throws: { error in
                (error as? SMSProviderError)?.status == 401 && (error as? SMSProviderError)?.code == 20003
            }
            #expect(twilio.received.count == before + 2, "refusals are not retried")
        }
    }

    @Test("HabitHive's phone sign-in through the provider: the texted code (from the SMS template) signs in")
    func phoneSignInThroughProvider() async throws {
        try await TwilioStandIn().run { twilio in
            let provider = twilio.settings()
            try await withRunningAuth(configure: { $0.sender.sms = .twilio(provider) }) { auth in
                let phone = "+1555" + String(Int.random(in: 1_000_000...9_999_999))
                let otp = try await auth.request(.POST, "/otp", app: .habithive, json: ["phone": phone], headers: [("Accept-Language", "de-DE,de;q=0.9")])
                #expect(otp.status == 200, "\(otp.json)")
                let texted = try #require(twilio.received.last)
                #expect(texted.fields["To"] == phone)
                let body = try #require(texted.fields["Body"])
                #expect(body.hasPrefix("Dein HabitHive-Code: "), "\(body)")
                let code = try #require(body.split(whereSeparator: { !$0.isNumber }).first { $0.count == 6 }.map(String.init))
                let verified = try await auth.request(.POST, "/verify", app: .habithive, json: ["type": "sms", "phone": phone, "token": code])
                #expect(verified.status == 200 && verified.json["access_token"] is String, "\(verified.json)")
            }
        }
    }
}
