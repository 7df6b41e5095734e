import AsyncHTTPClient
import Foundation
import Logging
import NIOCore

/// An SMS provider that speaks Twilio's Messages API (`COLONY_AUTH_TWILIO_*`): Twilio itself, or
/// any compatible one at another base URL.
public struct TwilioSettings: Sendable, Equatable {
    public var accountSID: String
    public var authToken: String
    /// The sending number (E.164), or else…
    public var from: String?
    /// …a Messaging Service that picks the number.
    public var messagingServiceSID: String?
    public var baseURL: URL
    /// Tries per SMS: 429, 5xx and connection errors are tried again after `retryDelay`,
    /// doubling each time (or after the provider's `Retry-After`, up to 30 s).
    public var attempts: Int
    public var retryDelay: Duration
    public var requestTimeout: Duration

    public init(accountSID: String, authToken: String, from: String? = nil, messagingServiceSID: String? = nil, baseURL: URL = URL(string: "https://api.twilio.com")!, attempts: Int = 3, retryDelay: Duration = .seconds(1), requestTimeout: Duration = .seconds(15)) {
        self.accountSID = accountSID
        self.authToken = authToken
        self.from = from
        self.messagingServiceSID = messagingServiceSID
        self.baseURL = baseURL
        self.attempts = attempts
        self.retryDelay = retryDelay
        self.requestTimeout = requestTimeout
    }
}

/// Why an SMS was not accepted by the provider.
public struct SMSProviderError: Error, CustomStringConvertible {
    /// The HTTP status (nil: no answer at all).
    public var status: Int?
    /// Twilio's error `code` and `message` when it sent its error JSON.
    public var code: Int?
    public var message: String

    public var isTransient: Bool { status == nil || status == 429 || (status ?? 0) >= 500 }

    public var description: String {
        guard let status else { return "could not reach the SMS provider: \(message)" }
        return "the SMS provider refused the message (HTTP \(status)\(code.map { ", code \($0)" } ?? "")): \(message)"
    }
}

/// Sends each SMS with `POST /2010-04-01/Accounts/{AccountSid}/Messages.json`, form-encoded
/// `To`, `Body` and `From` (or `MessagingServiceSid`), HTTP basic auth with the account SID and
/// auth token.
public struct TwilioMessageSender: MessageSender {
    public let settings: TwilioSettings
    let client: HTTPClient
    let logger: Logger

    public init(settings: TwilioSettings, client: HTTPClient = .shared, logger: Logger) {
        self.settings = settings
        self.client = client
        self.logger = logger
    }

    public func send(_ message: OutgoingMessage) async throws {
        var delay = settings.retryDelay
        for attempt in 1...max(1, settings.attempts) {
            do {
                try await post(message)
                return
            } catch let error as SMSProviderError where error.isTransient && attempt < settings.attempts {
                logger.warning("SMS provider failed; trying again", metadata: ["attempt": "\(attempt)", "retry_in": "\(delay)", "error": "\(error)"])
                try await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(30))
            }
        }
    }

    private func post(_ message: OutgoingMessage) async throws {
        let sid = Self.formEncoded(settings.accountSID)
        var request = HTTPClientRequest(url: settings.baseURL.absoluteString.trimmingSuffix("/") + "/2010-04-01/Accounts/\(sid)/Messages.json")
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Basic " + Data("\(settings.accountSID):\(settings.authToken)".utf8).base64EncodedString())
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "Accept", value: "application/json")
        var fields = [("To", message.to), ("Body", message.text)]
        if let service = settings.messagingServiceSID {
            fields.append(("MessagingServiceSid", service))
        } else if let from = settings.from {
            fields.append(("From", from))
        }
        request.body = .bytes(ByteBuffer(string: fields.map { "\($0.0)=\(Self.formEncoded($0.1))" }.joined(separator: "&")))
        let response: HTTPClientResponse
        let body: ByteBuffer
        do {
            response = try await client.execute(request, timeout: TimeAmount(settings.requestTimeout))
            body = try await response.body.collect(upTo: 64 << 10)
        } catch {
            throw SMSProviderError(status: nil, code: nil, message: "\(error)")
        }
        let status = Int(response.status.code)
        guard !(200..<300).contains(status) else { return }
        // Twilio's error JSON: {"code": 21211, "message": "…", "more_info": "…", "status": 400}.
        struct TwilioError: Decodable { var code: Int?; var message: String? }
        let details = try? JSONDecoder().decode(TwilioError.self, from: Data(buffer: body))
        let text = details?.message ?? String(buffer: body).prefix(300).description
        var error = SMSProviderError(status: status, code: details?.code, message: text.isEmpty ? "no details" : text)
        if error.isTransient, let retryAfter = response.headers.first(name: "Retry-After").flatMap(Int.init), retryAfter > 0 {
            error.message += " (Retry-After \(retryAfter) s)"
            try await Task.sleep(for: .seconds(min(retryAfter, 30)))
        }
        throw error
    }

    /// ASCII letters and digits and `-._~` (`CharacterSet.alphanumerics` would let "ä" through raw).
    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// `application/x-www-form-urlencoded`: everything but unreserved characters escaped (a `+`
    /// in a phone number must stay a plus, not become a space).
    static func formEncoded(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: unreserved) ?? value
    }
}

extension String {
    fileprivate func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}
