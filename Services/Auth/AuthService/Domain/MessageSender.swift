import AsyncHTTPClient
import ColonyModels
import Foundation
import Logging
import NIOCore

public enum MessageChannel: String, Codable, Sendable {
    case email, sms
}

/// A mail or SMS the auth service sends: a sign-in code, a link, or both; or a notice (no code).
public struct OutgoingMessage: Codable, Sendable, Equatable {
    public var app: App
    public var channel: MessageChannel
    /// An email address, or an E.164 phone number with its plus.
    public var to: String
    /// What the code or link does: signup, magiclink, recovery, email_change (to the new and, for a
    /// secure change, the current address), sms, phone_change, reauthentication; or the notice
    /// email_changed (to the old address once a change is done).
    public var kind: String
    public var subject: String
    public var text: String
    /// The HTML alternative of a mail, when its template has one.
    public var html: String?
    /// The language it was written in (`en`, `de`, …).
    public var locale: String
    public var code: String?
    public var link: String?
    public var sentAt: Date

    public init(app: App, channel: MessageChannel, to: String, kind: String, subject: String, text: String, html: String?, locale: String, code: String?, link: String?, sentAt: Date) {
        self.app = app
        self.channel = channel
        self.to = to
        self.kind = kind
        self.subject = subject
        self.text = text
        self.html = html
        self.locale = locale
        self.code = code
        self.link = link
        self.sentAt = sentAt
    }
}

/// Where mail and SMS go: SMTP for mail and a Twilio-compatible provider for SMS in production,
/// the signed webhook to a bridge for any other provider, the folder for development and tests.
public protocol MessageSender: Sendable {
    func send(_ message: OutgoingMessage) async throws
}

/// Mail one way, SMS another.
public struct ChannelMessageSender: MessageSender {
    public let mail: any MessageSender
    public let sms: any MessageSender

    public init(mail: any MessageSender, sms: any MessageSender) {
        self.mail = mail
        self.sms = sms
    }

    public func send(_ message: OutgoingMessage) async throws {
        try await (message.channel == .email ? mail : sms).send(message)
    }
}

/// Writes each message as `<unix ms>-<uuid>.json` into a folder (and logs it), where tests
/// and a person at the terminal can read the codes.
public struct FolderMessageSender: MessageSender {
    public let folder: URL
    let logger: Logger

    public init(folder: String, logger: Logger) {
        self.folder = URL(fileURLWithPath: folder, isDirectory: true)
        self.logger = logger
    }

    public func send(_ message: OutgoingMessage) async throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let name = "\(Int64(message.sentAt.timeIntervalSince1970 * 1000))-\(UUID().uuidString.lowercased()).json"
        let data = try ColonyJSON.encoder().encode(message)
        // Written whole under a temporary name, then renamed: readers never see half a file.
        let temporary = folder.appendingPathComponent(".\(name).tmp")
        try data.write(to: temporary)
        try FileManager.default.moveItem(at: temporary, to: folder.appendingPathComponent(name))
        logger.info("message written", metadata: ["channel": "\(message.channel.rawValue)", "kind": "\(message.kind)", "file": "\(name)"])
    }
}

/// POSTs each message as JSON to a provider bridge, signed the Standard Webhooks way
/// (`WebhookSecret`) so the bridge can refuse forgeries; any non-2xx answer is a failure.
public struct WebhookMessageSender: MessageSender {
    public let url: URL
    let secret: WebhookSecret
    let client: HTTPClient

    public init(url: URL, secret: WebhookSecret, client: HTTPClient = .shared) {
        self.url = url
        self.secret = secret
        self.client = client
    }

    public func send(_ message: OutgoingMessage) async throws {
        let body = Array(try ColonyJSON.encoder().encode(message))
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        for header in secret.headers(id: "msg_" + UUID().uuidString.lowercased(), timestamp: Date(), body: body) {
            request.headers.add(name: header.name, value: header.value)
        }
        request.body = .bytes(ByteBuffer(bytes: body))
        let response = try await client.execute(request, timeout: .seconds(10))
        guard (200..<300).contains(response.status.code) else {
            throw WebhookFailure(status: Int(response.status.code))
        }
    }

    struct WebhookFailure: Error { var status: Int }
}
