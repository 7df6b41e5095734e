import ColonyModels
import ColonyPlatform
import Foundation
import Logging
import NIOSSL

extension AuthSettings {
    /// Where mail and SMS go, each channel by the first that is configured:
    /// mail: `COLONY_AUTH_SMTP_HOST` (SMTP), `COLONY_AUTH_WEBHOOK_URL`, `COLONY_AUTH_MAIL_DIR`;
    /// SMS: `COLONY_AUTH_TWILIO_ACCOUNT_SID` (Twilio-compatible), `COLONY_AUTH_WEBHOOK_URL`,
    /// `COLONY_AUTH_MAIL_DIR`. A channel with none of them stops startup, and so does one left to
    /// `COLONY_AUTH_MAIL_DIR` when `COLONY_AUTH_MAIL_DIR_ALLOWED` is `off` (production).
    static func senders(environment: EnvironmentReader) throws(ConfigurationError) -> SenderConfiguration {
        var webhook: SenderConfiguration.Transport?
        if let url = try environment.url("COLONY_AUTH_WEBHOOK_URL") {
            let text = try environment.secret("COLONY_AUTH_WEBHOOK_SECRET", minimumLength: 32)
            guard let secret = WebhookSecret(text) else {
                throw ConfigurationError(variable: "COLONY_AUTH_WEBHOOK_SECRET", problem: "must be whsec_ followed by the base64 of at least 24 random bytes (e.g. whsec_$(openssl rand -base64 32))")
            }
            webhook = .webhook(url, secret: secret)
        }
        let folder = environment.optionalString("COLONY_AUTH_MAIL_DIR").map { SenderConfiguration.Transport.folder($0) }
        guard let mail = try smtp(environment).map({ SenderConfiguration.Transport.smtp($0) }) ?? webhook ?? folder else {
            throw ConfigurationError(variable: "COLONY_AUTH_SMTP_HOST", problem: "(or COLONY_AUTH_WEBHOOK_URL, or COLONY_AUTH_MAIL_DIR) is required: mails need somewhere to go")
        }
        guard let sms = try twilio(environment).map({ SenderConfiguration.Transport.twilio($0) }) ?? webhook ?? folder else {
            throw ConfigurationError(variable: "COLONY_AUTH_TWILIO_ACCOUNT_SID", problem: "(or COLONY_AUTH_WEBHOOK_URL, or COLONY_AUTH_MAIL_DIR) is required: SMS need somewhere to go")
        }
        // Production refuses the development fallback: codes and links written to a folder reach nobody.
        if try environment.enumeration("COLONY_AUTH_MAIL_DIR_ALLOWED", default: MailFolderUse.on) == .off {
            if case .folder(let path) = mail {
                try environment.problem(ConfigurationError(variable: "COLONY_AUTH_MAIL_DIR_ALLOWED", problem: """
                    is off, but mails would go to the folder COLONY_AUTH_MAIL_DIR=\(path): set COLONY_AUTH_SMTP_HOST \
                    (with COLONY_AUTH_SMTP_FROM) or COLONY_AUTH_WEBHOOK_URL
                    """))
            }
            if case .folder(let path) = sms {
                try environment.problem(ConfigurationError(variable: "COLONY_AUTH_MAIL_DIR_ALLOWED", problem: """
                    is off, but SMS would go to the folder COLONY_AUTH_MAIL_DIR=\(path): set COLONY_AUTH_TWILIO_ACCOUNT_SID \
                    (with COLONY_AUTH_TWILIO_AUTH_TOKEN and COLONY_AUTH_TWILIO_FROM) or COLONY_AUTH_WEBHOOK_URL
                    """))
            }
        }
        return SenderConfiguration(mail: mail, sms: sms)
    }

    /// `COLONY_AUTH_MAIL_DIR_ALLOWED`: whether mails and SMS may go to `COLONY_AUTH_MAIL_DIR`
    /// (development) when no SMTP, Twilio or webhook carries them; production turns it off.
    enum MailFolderUse: String, CaseIterable, Sendable {
        case on, off
    }

    /// `COLONY_AUTH_SMTP_*`, when `HOST` is set.
    static func smtp(_ environment: EnvironmentReader) throws(ConfigurationError) -> SMTPSettings? {
        guard let host = environment.optionalString("COLONY_AUTH_SMTP_HOST") else { return nil }
        let security = try environment.enumeration("COLONY_AUTH_SMTP_SECURITY", default: SMTPSettings.Security.startTLS)
        let fromText = try environment.string("COLONY_AUTH_SMTP_FROM")
        guard let from = MailAddress(parsing: fromText) else {
            throw ConfigurationError(variable: "COLONY_AUTH_SMTP_FROM", problem: "must be an address or Name <address>, got \"\(fromText)\"")
        }
        let username = environment.optionalString("COLONY_AUTH_SMTP_USER")
        let password = environment.optionalString("COLONY_AUTH_SMTP_PASSWORD")
        guard (username == nil) == (password == nil) else {
            throw ConfigurationError(variable: username == nil ? "COLONY_AUTH_SMTP_USER" : "COLONY_AUTH_SMTP_PASSWORD", problem: "is required with \(username == nil ? "COLONY_AUTH_SMTP_PASSWORD" : "COLONY_AUTH_SMTP_USER")")
        }
        if security == .none, username != nil {
            throw ConfigurationError(variable: "COLONY_AUTH_SMTP_SECURITY", problem: "is none, so a password would cross the network in the clear: use starttls or tls with COLONY_AUTH_SMTP_USER")
        }
        let caFile = environment.optionalString("COLONY_AUTH_SMTP_CA_FILE")
        if let caFile {
            do { _ = try NIOSSLCertificate.fromPEMFile(caFile) } catch {
                throw ConfigurationError(variable: "COLONY_AUTH_SMTP_CA_FILE", problem: "could not be read as PEM certificates (\(caFile)): \(error)")
            }
        }
        return SMTPSettings(
            host: host,
            port: try environment.int("COLONY_AUTH_SMTP_PORT", default: security.defaultPort, range: 1...65535),
            security: security, username: username, password: password,
            authMechanism: try environment.enumeration("COLONY_AUTH_SMTP_AUTH", default: SMTPSettings.AuthMechanism.auto),
            from: from,
            heloName: environment.string("COLONY_AUTH_SMTP_HELO", default: ProcessInfo.processInfo.hostName.isEmpty ? "localhost" : ProcessInfo.processInfo.hostName),
            caFile: caFile,
            connectTimeout: .seconds(try environment.int("COLONY_AUTH_SMTP_CONNECT_TIMEOUT_SECONDS", default: 10, range: 1...300)),
            commandTimeout: .seconds(try environment.int("COLONY_AUTH_SMTP_TIMEOUT_SECONDS", default: 30, range: 1...600)),
            attempts: try environment.int("COLONY_AUTH_SMTP_ATTEMPTS", default: 3, range: 1...10)
        )
    }

    /// `COLONY_AUTH_TWILIO_*`, when `ACCOUNT_SID` is set.
    static func twilio(_ environment: EnvironmentReader) throws(ConfigurationError) -> TwilioSettings? {
        guard let sid = environment.optionalString("COLONY_AUTH_TWILIO_ACCOUNT_SID") else { return nil }
        let from = environment.optionalString("COLONY_AUTH_TWILIO_FROM")
        let service = environment.optionalString("COLONY_AUTH_TWILIO_MESSAGING_SERVICE_SID")
        guard from != nil || service != nil else {
            throw ConfigurationError(variable: "COLONY_AUTH_TWILIO_FROM", problem: "(or COLONY_AUTH_TWILIO_MESSAGING_SERVICE_SID) is required with COLONY_AUTH_TWILIO_ACCOUNT_SID")
        }
        var settings = TwilioSettings(
            accountSID: sid, authToken: try environment.string("COLONY_AUTH_TWILIO_AUTH_TOKEN"), from: from, messagingServiceSID: service,
            attempts: try environment.int("COLONY_AUTH_TWILIO_ATTEMPTS", default: 3, range: 1...10)
        )
        if let url = try environment.url("COLONY_AUTH_TWILIO_URL") { settings.baseURL = url }
        return settings
    }
}

extension AuthService {
    /// The sender the configuration names, mail and SMS each their own way.
    public static func makeSender(_ configuration: SenderConfiguration, apps: [App: AppAuthSettings] = [:], logger: Logger) -> any MessageSender {
        func make(_ transport: SenderConfiguration.Transport) -> any MessageSender {
            switch transport {
            case .folder(let folder): FolderMessageSender(folder: folder, logger: logger)
            case .webhook(let url, let secret): WebhookMessageSender(url: url, secret: secret)
            case .smtp(let settings):
                SMTPMessageSender(client: SMTPClient(settings: settings, logger: logger), senders: apps.compactMapValues { $0.mailFrom.flatMap(MailAddress.init(parsing:)) }, logger: logger)
            case .twilio(let settings): TwilioMessageSender(settings: settings, logger: logger)
            }
        }
        if configuration.mail == configuration.sms, case .folder = configuration.mail { return make(configuration.mail) }
        return ChannelMessageSender(mail: make(configuration.mail), sms: make(configuration.sms))
    }
}
