import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL

/// Where and how auth hands its mails to an SMTP server (`COLONY_AUTH_SMTP_*`).
public struct SMTPSettings: Sendable, Equatable {
    public enum Security: String, Sendable, Equatable {
        /// Plain connection, then `STARTTLS` (required: a server that does not offer it is refused,
        /// never written to in the clear). Port 587.
        case startTLS = "starttls"
        /// TLS from the first byte ("SMTPS"). Port 465.
        case tls
        /// No encryption and no AUTH: only for a mail catcher on this machine.
        case none
    }

    public enum AuthMechanism: String, Sendable, Equatable {
        /// PLAIN when the server offers it, else LOGIN.
        case auto, plain, login
    }

    public var host: String
    public var port: Int
    public var security: Security
    public var username: String?
    public var password: String?
    public var authMechanism: AuthMechanism
    /// The `From` of every mail: `noreply@example.com` or `Colony <noreply@example.com>`.
    public var from: MailAddress
    /// The name in `EHLO`.
    public var heloName: String
    /// PEM file of extra certificate authorities to trust (a private relay's own CA).
    public var caFile: String?
    public var connectTimeout: Duration
    /// How long any one reply may take (the greeting, each command, the end of DATA).
    public var commandTimeout: Duration
    /// Tries per message: temporary failures (4xx replies, connection errors, timeouts) are tried
    /// again after `retryDelay`, doubling each time; refusals (5xx) are not.
    public var attempts: Int
    public var retryDelay: Duration

    public init(host: String, port: Int? = nil, security: Security = .startTLS, username: String? = nil, password: String? = nil, authMechanism: AuthMechanism = .auto, from: MailAddress, heloName: String = "localhost", caFile: String? = nil, connectTimeout: Duration = .seconds(10), commandTimeout: Duration = .seconds(30), attempts: Int = 3, retryDelay: Duration = .seconds(1)) {
        self.host = host
        self.port = port ?? security.defaultPort
        self.security = security
        self.username = username
        self.password = password
        self.authMechanism = authMechanism
        self.from = from
        self.heloName = heloName
        self.caFile = caFile
        self.connectTimeout = connectTimeout
        self.commandTimeout = commandTimeout
        self.attempts = attempts
        self.retryDelay = retryDelay
    }
}

extension SMTPSettings.Security {
    public var defaultPort: Int {
        switch self {
        case .startTLS: 587
        case .tls: 465
        case .none: 25
        }
    }
}

/// One reply of an SMTP server: its code and its lines' text.
public struct SMTPReply: Sendable, Equatable, CustomStringConvertible {
    public var code: Int
    public var lines: [String]

    public var description: String { "\(code) " + lines.joined(separator: " / ") }
}

/// Why a mail was not handed over. `isTransient` ones are worth another try.
public enum SMTPError: Error, CustomStringConvertible, Equatable {
    /// The server refused (5xx): what was asked and what it said.
    case refused(command: String, reply: SMTPReply)
    /// The server asked to try again later (4xx).
    case temporaryFailure(command: String, reply: SMTPReply)
    case connectionFailed(String)
    case timedOut(String)
    /// A `starttls` server that does not offer STARTTLS: nothing is sent in the clear.
    case startTLSNotOffered
    case tlsFailed(String)
    case noSupportedAuthMechanism(offered: String)
    case protocolViolation(String)
    case invalidAddress(String)

    public var isTransient: Bool {
        switch self {
        case .temporaryFailure, .connectionFailed, .timedOut: true
        default: false
        }
    }

    public var description: String {
        switch self {
        case .refused(let command, let reply): "the SMTP server refused \(command): \(reply)"
        case .temporaryFailure(let command, let reply): "the SMTP server failed \(command) temporarily: \(reply)"
        case .connectionFailed(let reason): "could not talk to the SMTP server: \(reason)"
        case .timedOut(let step): "the SMTP server did not answer \(step) in time"
        case .startTLSNotOffered: "the SMTP server does not offer STARTTLS (COLONY_AUTH_SMTP_SECURITY=starttls): nothing was sent in the clear"
        case .tlsFailed(let reason): "TLS with the SMTP server failed: \(reason)"
        case .noSupportedAuthMechanism(let offered): "the SMTP server offers no AUTH mechanism we speak (PLAIN, LOGIN); it offers: \(offered.isEmpty ? "none" : offered)"
        case .protocolViolation(let reason): "the SMTP server answered something that is not SMTP: \(reason)"
        case .invalidAddress(let address): "not a deliverable address: \(address)"
        }
    }
}

/// A small SMTP client (RFC 5321) on SwiftNIO: one connection per message, STARTTLS or implicit
/// TLS, AUTH PLAIN or LOGIN, a timeout on every step, and retries with backoff for what the
/// server or the network says is temporary.
public struct SMTPClient: Sendable {
    public let settings: SMTPSettings
    /// The TLS context (nil without TLS), or why it could not be made (settings are checked at
    /// startup, so only a CA file changed since then gets here).
    let tls: Result<NIOSSLContext, SMTPError>?
    let logger: Logger

    public init(settings: SMTPSettings, logger: Logger) {
        self.settings = settings
        self.logger = logger
        if settings.security == .none {
            tls = nil
        } else {
            do { tls = .success(try Self.tlsContext(caFile: settings.caFile)) } catch { tls = .failure(error) }
        }
    }

    /// TLS 1.2 or later, the system's roots plus `caFile`'s, host names checked.
    public static func tlsContext(caFile: String?) throws(SMTPError) -> NIOSSLContext {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.minimumTLSVersion = .tlsv12
        do {
            if let caFile {
                configuration.additionalTrustRoots = [.certificates(try NIOSSLCertificate.fromPEMFile(caFile))]
            }
            return try NIOSSLContext(configuration: configuration)
        } catch {
            throw SMTPError.tlsFailed("could not set up TLS\(caFile.map { " with the CA file \($0)" } ?? ""): \(error)")
        }
    }

    /// Hands `message` (the whole RFC 5322 text, CRLF line ends) to the server for `recipients`,
    /// trying again after transient failures.
    public func send(from sender: String, to recipients: [String], message: [UInt8]) async throws {
        for address in [sender] + recipients where !MailAddress.isDeliverable(address) {
            throw SMTPError.invalidAddress(address)
        }
        var delay = settings.retryDelay
        for attempt in 1...max(1, settings.attempts) {
            do {
                try await deliverOnce(from: sender, to: recipients, message: message)
                return
            } catch let error as SMTPError where error.isTransient && attempt < settings.attempts {
                logger.warning("SMTP delivery failed; trying again", metadata: ["attempt": "\(attempt)", "retry_in": "\(delay)", "error": "\(error)"])
                try await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(60))
            }
        }
    }

    private func deliverOnce(from sender: String, to recipients: [String], message: [UInt8]) async throws {
        try await withSession { session, channel in
            try await greet(&session, channel: channel)
            try await transaction(&session, from: sender, to: recipients, message: message)
        }
    }

    /// Connects, greets, switches to TLS and authenticates as a delivery does, then says QUIT
    /// without sending anything (`colony-admin doctor`). Returns the extensions the server
    /// offered in its last EHLO reply.
    public func check() async throws -> [String] {
        try await withSession { session, channel in
            let extensions = try await greet(&session, channel: channel)
            _ = try? await session.command("QUIT", expect: 221)
            return extensions
        }
    }

    /// One connection with its session; errors come out as `SMTPError`s.
    private func withSession<Value: Sendable>(_ body: (inout SMTPSession, any Channel) async throws -> Value) async throws -> Value {
        let implicitTLS = settings.security == .tls ? try tls?.get() : nil
        let channel: NIOAsyncChannel<SMTPReply, ByteBuffer>
        do {
            let host = settings.host
            channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connectTimeout(TimeAmount(settings.connectTimeout))
                .connect(host: settings.host, port: settings.port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        if let implicitTLS {
                            try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: implicitTLS, serverHostname: Self.sniName(host)))
                        }
                        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(SMTPReplyDecoder()))
                        return try NIOAsyncChannel<SMTPReply, ByteBuffer>(wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            throw SMTPError.connectionFailed("\(settings.host):\(settings.port): \(error)")
        }
        let watchdog = Watchdog(channel: channel.channel, timeout: settings.commandTimeout)
        do {
            return try await channel.executeThenClose { inbound, outbound in
                var session = SMTPSession(replies: inbound.makeAsyncIterator(), outbound: outbound, watchdog: watchdog)
                return try await body(&session, channel.channel)
            }
        } catch let error as SMTPError {
            throw error
        } catch let error as NIOSSLError {
            throw SMTPError.tlsFailed("\(error)")
        } catch let error as BoringSSLError {
            throw SMTPError.tlsFailed("\(error)")
        } catch {
            if let step = watchdog.firedStep { throw SMTPError.timedOut(step) }
            throw SMTPError.connectionFailed("\(error)")
        }
    }

    /// The greeting, EHLO, STARTTLS (when configured) and AUTH (with credentials); returns the
    /// extensions of the last EHLO reply.
    @discardableResult
    private func greet(_ session: inout SMTPSession, channel: any Channel) async throws -> [String] {
        try await session.expect("the greeting", 220)
        var extensions = try await session.command("EHLO \(settings.heloName)", expect: 250).lines.dropFirst().map { $0.uppercased() }
        if settings.security == .startTLS {
            guard extensions.contains(where: { $0 == "STARTTLS" }) else { throw SMTPError.startTLSNotOffered }
            try await session.command("STARTTLS", expect: 220)
            guard let context = try tls?.get() else { throw SMTPError.tlsFailed("no TLS context") }
            let serverName = Self.sniName(settings.host)
            try await channel.eventLoop.submit {
                try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: context, serverHostname: serverName), position: .first)
            }.get()
            extensions = try await session.command("EHLO \(settings.heloName)", expect: 250).lines.dropFirst().map { $0.uppercased() }
        }
        if let username = settings.username, let password = settings.password {
            let offered = extensions.first { $0.hasPrefix("AUTH ") || $0.hasPrefix("AUTH=") }.map { String($0.dropFirst(5)) } ?? ""
            let mechanisms = Set(offered.split(separator: " ").map(String.init))
            let usePlain: Bool
            switch settings.authMechanism {
            case .plain: usePlain = true
            case .login: usePlain = false
            case .auto:
                guard mechanisms.contains("PLAIN") || mechanisms.contains("LOGIN") else { throw SMTPError.noSupportedAuthMechanism(offered: offered) }
                usePlain = mechanisms.contains("PLAIN")
            }
            if usePlain {
                let credentials = Data([0] + Array(username.utf8) + [0] + Array(password.utf8)).base64EncodedString()
                try await session.command("AUTH PLAIN \(credentials)", shown: "AUTH PLAIN", expect: 235)
            } else {
                try await session.command("AUTH LOGIN", expect: 334)
                try await session.command(Data(username.utf8).base64EncodedString(), shown: "AUTH LOGIN (user name)", expect: 334)
                try await session.command(Data(password.utf8).base64EncodedString(), shown: "AUTH LOGIN (password)", expect: 235)
            }
        }
        return extensions
    }

    private func transaction(_ session: inout SMTPSession, from sender: String, to recipients: [String], message: [UInt8]) async throws {
        try await session.command("MAIL FROM:<\(sender)>", expect: 250)
        for recipient in recipients {
            try await session.command("RCPT TO:<\(recipient)>", expect: 250, 251)
        }
        try await session.command("DATA", expect: 354)
        try await session.send(ByteBuffer(bytes: SMTPData.stuffed(message)), step: "the message (DATA)", expect: 250)
        // The mail is the server's now; a QUIT that goes wrong changes nothing.
        _ = try? await session.command("QUIT", expect: 221)
    }

    /// SNI takes host names only; an IP address is checked against the certificate without it.
    static func sniName(_ host: String) -> String? {
        host.contains(":") || host.split(separator: ".").allSatisfy({ Int($0) != nil }) ? nil : host
    }
}

/// The reply side and the command side of one connection.
struct SMTPSession {
    var replies: NIOAsyncChannelInboundStream<SMTPReply>.AsyncIterator
    let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    let watchdog: Watchdog

    @discardableResult
    mutating func expect(_ step: String, _ codes: Int...) async throws -> SMTPReply {
        try await read(step: step, codes: codes)
    }

    /// Sends `line` and reads the reply; `shown` names it in errors and logs (never a secret).
    @discardableResult
    mutating func command(_ line: String, shown: String? = nil, expect codes: Int...) async throws -> SMTPReply {
        try await send(ByteBuffer(string: line + "\r\n"), step: shown ?? line, codes: codes)
    }

    @discardableResult
    mutating func send(_ bytes: ByteBuffer, step: String, expect codes: Int...) async throws -> SMTPReply {
        try await send(bytes, step: step, codes: codes)
    }

    private mutating func send(_ bytes: ByteBuffer, step: String, codes: [Int]) async throws -> SMTPReply {
        // A server that stops reading must not hold a write forever either.
        watchdog.arm(step: step)
        try await outbound.write(bytes)
        return try await read(step: step, codes: codes)
    }

    private mutating func read(step: String, codes: [Int]) async throws -> SMTPReply {
        watchdog.arm(step: step)
        let next = try await replies.next()
        watchdog.disarm()
        guard let reply = next else {
            if let fired = watchdog.firedStep { throw SMTPError.timedOut(fired) }
            throw SMTPError.connectionFailed("the server closed the connection (waiting for the reply to \(step))")
        }
        if codes.contains(reply.code) { return reply }
        switch reply.code {
        case 400..<500: throw SMTPError.temporaryFailure(command: step, reply: reply)
        case 500..<600: throw SMTPError.refused(command: step, reply: reply)
        default: throw SMTPError.protocolViolation("unexpected reply to \(step): \(reply)")
        }
    }
}

/// Closes the connection when a reply takes longer than the timeout, so the waiting read ends;
/// `firedStep` then says which step it was.
final class Watchdog: @unchecked Sendable {
    // @unchecked: every field is guarded by `lock`.
    private let lock = NSLock()
    private let channel: any Channel
    private let timeout: TimeAmount
    private var scheduled: Scheduled<Void>?
    private var fired: String?

    init(channel: any Channel, timeout: Duration) {
        self.channel = channel
        self.timeout = TimeAmount(timeout)
    }

    var firedStep: String? { lock.withLock { fired } }

    func arm(step: String) {
        let task = channel.eventLoop.scheduleTask(in: timeout) { [self] in
            lock.withLock { fired = step }
            channel.close(promise: nil)
        }
        lock.withLock {
            scheduled?.cancel()
            scheduled = task
        }
    }

    func disarm() {
        lock.withLock {
            scheduled?.cancel()
            scheduled = nil
        }
    }
}

/// Splits the server's bytes into replies: lines `NNN-text` continue, `NNN text` ends one.
struct SMTPReplyDecoder: ByteToMessageDecoder {
    typealias InboundOut = SMTPReply
    static let maximumLineBytes = 4096
    static let maximumLines = 128
    private var lines: [String] = []

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let end = buffer.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) else {
            if buffer.readableBytes > Self.maximumLineBytes { throw SMTPError.protocolViolation("a reply line longer than \(Self.maximumLineBytes) bytes") }
            return .needMoreData
        }
        let length = end - buffer.readerIndex
        var line = buffer.readString(length: length) ?? ""
        buffer.moveReaderIndex(forwardBy: 1)
        if line.hasSuffix("\r") { line.removeLast() }
        let bytes = Array(line.utf8)
        guard bytes.count >= 3, let code = Int(String(decoding: bytes[0..<3], as: UTF8.self)), (100..<600).contains(code) else {
            throw SMTPError.protocolViolation("\"\(line.prefix(80))\"")
        }
        let separator = bytes.count > 3 ? bytes[3] : UInt8(ascii: " ")
        let text = bytes.count > 4 ? String(decoding: bytes[4...], as: UTF8.self) : ""
        lines.append(text)
        guard lines.count <= Self.maximumLines else { throw SMTPError.protocolViolation("a reply of more than \(Self.maximumLines) lines") }
        if separator == UInt8(ascii: "-") { return .continue }
        context.fireChannelRead(wrapInboundOut(SMTPReply(code: code, lines: lines)))
        lines = []
        return .continue
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        while try decode(context: context, buffer: &buffer) == .continue, buffer.readableBytes > 0 {}
        return .needMoreData
    }
}

/// The message as DATA carries it.
enum SMTPData {
    /// CRLF line ends throughout, a dot doubled at the start of any line (RFC 5321 4.5.2), and the
    /// terminating `CRLF . CRLF`.
    static func stuffed(_ message: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(message.count + message.count / 64 + 5)
        var atLineStart = true
        var previous: UInt8 = 0
        for byte in message {
            if byte == UInt8(ascii: "\n"), previous != UInt8(ascii: "\r") { out.append(UInt8(ascii: "\r")) }
            if atLineStart, byte == UInt8(ascii: ".") { out.append(UInt8(ascii: ".")) }
            out.append(byte)
            atLineStart = byte == UInt8(ascii: "\n")
            previous = byte
        }
        if !atLineStart { out += Array("\r\n".utf8) }
        out += Array(".\r\n".utf8)
        return out
    }
}
