import ColonyModels
import Foundation
import Logging

/// Sends auth's mails through an SMTP server: text, and HTML as its alternative when the
/// template has one, from the app's sender (`mail_from` per app) or the deployment's.
public struct SMTPMessageSender: MessageSender {
    let client: SMTPClient
    let senders: [App: MailAddress]
    let logger: Logger

    public init(client: SMTPClient, senders: [App: MailAddress] = [:], logger: Logger) {
        self.client = client
        self.senders = senders
        self.logger = logger
    }

    public func send(_ message: OutgoingMessage) async throws {
        let from = senders[message.app] ?? client.settings.from
        let mail = MailMessage(from: from, to: message.to, subject: message.subject, text: message.text, html: message.html, date: message.sentAt)
        try await client.send(from: from.address, to: [message.to], message: mail.rendered())
        logger.info("mail sent", metadata: ["kind": "\(message.kind)", "app": "\(message.app.rawValue)", "message_id": "\(mail.messageID)"])
    }
}
