import AsyncHTTPClient
import AuthService
import ColonyModels
import ColonyTesting
import Foundation
import NIOCore
import NIOPosix
import Testing

/// Mail over SMTP against a real SMTP server (aiosmtpd): TLS both ways, AUTH both ways, what a
/// server refuses and what it asks to retry, and the delivered message as a mail program reads it.
@Suite("Auth mail over SMTP", .serialized)
struct AuthMailTests {
    let logger = TestEnvironment.logger
    let subject = "Grüße aus Köln – dein Code ✓"
    let text = "Hallo Ada,\n\ndein Code: 123456\nÄnderungen übernehmen?\n"
    let html = "<p>Hallo <b>Ada</b>, dein Code: 123456</p>"

    func message(to: String = "ada@example.com", html: String? = nil) -> OutgoingMessage {
        OutgoingMessage(app: .unify, channel: .email, to: to, kind: "signup", subject: subject, text: text, html: html, locale: "de", code: "123456", link: nil, sentAt: Date())
    }

    func sender(_ settings: SMTPSettings) -> SMTPMessageSender {
        SMTPMessageSender(client: SMTPClient(settings: settings, logger: logger), logger: logger)
    }

    @Test("STARTTLS and AUTH PLAIN: delivered with Date, Message-ID, a UTF-8 subject, and text and HTML alternatives")
    func startTLSWithPlain() async throws {
        let server = try SMTPServerProcess()
        try await server.start(security: .startTLS, user: "colony", password: "s3cret pass")
        defer { server.stop() }
        let sentAt = Date()
        try await sender(server.settings(security: .startTLS, user: "colony", password: "s3cret pass", auth: .plain)).send(message(html: html))
        let mail = try await server.waitForMessage()
        #expect(mail.defects.isEmpty, "\(mail.defects)")
        #expect(mail.headers["Subject"] == subject)
        #expect(mail.rawSubject?.hasPrefix("=?UTF-8?B?") == true, "the subject is not ASCII: it travels as encoded words")
        #expect(mail.headers["From"] == "Colony Tests <no-reply@colony.test>")
        #expect(mail.headers["To"] == "ada@example.com")
        #expect(mail.headers["Delivered-To"] == "ada@example.com")
        #expect(mail.headers["Return-Path"] == "<no-reply@colony.test>")
        #expect(mail.headers["MIME-Version"] == "1.0")
        #expect(mail.headers["Auto-Submitted"] == "auto-generated")
        let messageID = try #require(mail.headers["Message-ID"])
        #expect(messageID.hasPrefix("<") && messageID.hasSuffix("@colony.test>"), "\(messageID)")
        let date = try #require(mail.dateUtc.flatMap { try? Date($0, strategy: .iso8601) })
        #expect(abs(date.timeIntervalSince(sentAt)) < 60, "Date: \(mail.headers["Date"] ?? "")")
        #expect(mail.contentType == "multipart/alternative")
        #expect(mail.parts["text/plain"]?.charset == "utf-8")
        #expect(mail.parts["text/plain"]?.content.replacingOccurrences(of: "\r\n", with: "\n") == text)
        #expect(mail.parts["text/html"]?.content.replacingOccurrences(of: "\r\n", with: "\n") == html)
        #expect(!mail.raw.contains("s3cret"), "no credential in the message")
    }

    @Test("AUTH LOGIN after STARTTLS; implicit TLS (SMTPS); a text-only mail is one text/plain part")
    func loginAndImplicitTLS() async throws {
        let startTLS = try SMTPServerProcess()
        try await startTLS.start(security: .startTLS, user: "colony", password: "s3cret")
        defer { startTLS.stop() }
        try await sender(startTLS.settings(security: .startTLS, user: "colony", password: "s3cret", auth: .login)).send(message())
        let viaLogin = try await startTLS.waitForMessage()
        #expect(viaLogin.contentType == "text/plain" && viaLogin.defects.isEmpty)
        #expect(viaLogin.parts["text/plain"]?.content.replacingOccurrences(of: "\r\n", with: "\n") == text)

        let implicit = try SMTPServerProcess()
        try await implicit.start(security: .tls, user: "colony", password: "s3cret")
        defer { implicit.stop() }
        try await sender(implicit.settings(security: .tls, user: "colony", password: "s3cret")).send(message(html: html))
        let viaTLS = try await implicit.waitForMessage()
        #expect(viaTLS.headers["Subject"] == subject && viaTLS.contentType == "multipart/alternative")
    }

    @Test("a wrong password is refused with the server's words and not retried")
    func authenticationFailure() async throws {
        let server = try SMTPServerProcess()
        try await server.start(security: .startTLS, user: "colony", password: "right")
        defer { server.stop() }
        do {
            try await sender(server.settings(security: .startTLS, user: "colony", password: "wrong", attempts: 3)).send(message())
            Issue.record("a wrong password was accepted")
        } catch let error as SMTPError {
            guard case .refused(_, let reply) = error else { Issue.record("expected a refusal, got \(error)"); return }
            #expect(reply.code == 535)
            #expect(!error.isTransient)
            #expect("\(error)".contains("535") && "\(error)".contains("Authentication credentials invalid"), "\(error)")
            #expect(!"\(error)".contains("wrong"), "the password is not in the error")
        }
        #expect(server.authAttempts().count == 1, "a refusal is not retried: \(server.authAttempts())")
        #expect(server.received().isEmpty)
    }

    @Test("a refused recipient fails at once with what the server said; nothing is delivered")
    func refusedRecipient() async throws {
        let server = try SMTPServerProcess()
        try await server.start(security: .startTLS, user: "colony", password: "s3cret", refuse: ["nobody@example.com"])
        defer { server.stop() }
        await #expect {
            try await sender(server.settings(security: .startTLS, user: "colony", password: "s3cret")).send(message(to: "nobody@example.com"))
        } throws: { error in
            guard let error = error as? SMTPError, case .refused(let command, let reply) = error else { return false }
            return reply.code == 550 && command == "RCPT TO:<nobody@example.com>" && "\(error)".contains("Recipient address rejected")
        }
        #expect(server.received().isEmpty)
    }

    @Test("a temporary failure (451) is tried again with backoff and delivered once; one that lasts fails after the attempts")
    func temporaryFailureRetried() async throws {
        let server = try SMTPServerProcess()
        try await server.start(security: .startTLS, user: "colony", password: "s3cret", tempfail: 2)
        defer { server.stop() }
        try await sender(server.settings(security: .startTLS, user: "colony", password: "s3cret", attempts: 3)).send(message())
        #expect(server.received().count == 1)

        let busy = try SMTPServerProcess()
        try await busy.start(security: .none, tempfail: 10)
        defer { busy.stop() }
        await #expect {
            try await sender(busy.settings(security: .none, attempts: 2)).send(message())
        } throws: { error in
            guard let error = error as? SMTPError, case .temporaryFailure(_, let reply) = error else { return false }
            return reply.code == 451 && "\(error)".contains("try again later")
        }
        #expect(busy.received().isEmpty)
    }

    @Test("TLS is not optional: an untrusted certificate and a server without STARTTLS are refused before anything is sent")
    func noDowngrade() async throws {
        let server = try SMTPServerProcess()
        try await server.start(security: .startTLS, user: "colony", password: "s3cret")
        defer { server.stop() }
        await #expect {
            try await sender(server.settings(security: .startTLS, user: "colony", password: "s3cret", trusted: false)).send(message())
        } throws: { error in
            guard let error = error as? SMTPError, case .tlsFailed = error else { return false }
            return true
        }
        // A server (or a man in the middle) that offers AUTH but no STARTTLS: the password and the
        // mail would cross in the clear, so nothing is sent.
        let plain = try SMTPServerProcess()
        try await plain.start(security: .none, user: "colony", password: "s3cret", plainAuth: true)
        defer { plain.stop() }
        await #expect(throws: SMTPError.startTLSNotOffered) {
            try await sender(plain.settings(security: .startTLS, user: "colony", password: "s3cret")).send(message())
        }
        #expect(server.received().isEmpty && plain.received().isEmpty)
    }

    @Test("a server that never answers times out; an unreachable one is a connection error worth retrying")
    func timeoutsAndConnectionErrors() async throws {
        // Accepts connections and says nothing.
        let silent = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { $0.eventLoop.makeSucceededVoidFuture() }
            .bind(host: "127.0.0.1", port: 0).get()
        defer { silent.close(promise: nil) }
        var settings = SMTPSettings(host: "127.0.0.1", port: silent.localAddress!.port!, security: .none, from: MailAddress(address: "no-reply@colony.test"), commandTimeout: .seconds(1), attempts: 1)
        await #expect(throws: SMTPError.timedOut("the greeting")) {
            try await sender(settings).send(message())
        }
        settings.port = try freePort()
        settings.attempts = 2
        settings.retryDelay = .milliseconds(50)
        await #expect {
            try await sender(settings).send(message())
        } throws: { error in
            guard let error = error as? SMTPError, case .connectionFailed = error else { return false }
            return error.isTransient
        }
    }

    @Test("dot-stuffing: lines that start with a dot, and a lone dot, arrive as they were")
    func dotStuffing() async throws {
        let server = try SMTPServerProcess()
        try await server.start(security: .none)
        defer { server.stop() }
        let body = "first\r\n.\r\n..two dots\r\n.one dot\r\nlast"
        let raw = "From: no-reply@colony.test\r\nTo: ada@example.com\r\nSubject: dots\r\n\r\n" + body + "\r\n"
        try await SMTPClient(settings: server.settings(security: .none), logger: logger).send(from: "no-reply@colony.test", to: ["ada@example.com"], message: Array(raw.utf8))
        let mail = try await server.waitForMessage()
        #expect(mail.parts["text/plain"]?.content == body + "\r\n")
    }

    @Test("header injection: line breaks in a subject or a name stay inside it; an address with one is refused")
    func headerInjection() async throws {
        let server = try SMTPServerProcess()
        try await server.start(security: .none)
        defer { server.stop() }
        var injected = message()
        injected.subject = "Hello\r\nBcc: victim@example.com\r\n\r\nforged body"
        try await sender(server.settings(security: .none)).send(injected)
        let mail = try await server.waitForMessage()
        #expect(mail.headers["Bcc"] == nil && mail.headers["Delivered-To"] == "ada@example.com")
        #expect(mail.headers["Subject"]?.contains("Bcc: victim@example.com") == true)
        #expect(mail.parts["text/plain"]?.content.replacingOccurrences(of: "\r\n", with: "\n") == text)
        await #expect(throws: SMTPError.invalidAddress("ada@example.com>\r\nRCPT TO:<victim@example.com")) {
            try await sender(server.settings(security: .none)).send(message(to: "ada@example.com>\r\nRCPT TO:<victim@example.com"))
        }
        #expect(server.received().count == 1)
    }

    @Test("must show: Unify's sign-up confirmation goes through a real SMTP server (STARTTLS, AUTH) in German, and its link confirms the account")
    func confirmationMailThroughSMTP() async throws {
        let server = try SMTPServerProcess()
        try await server.start(security: .startTLS, user: "colony", password: "s3cret")
        defer { server.stop() }
        let smtp = server.settings(security: .startTLS, user: "colony", password: "s3cret")
        try await withRunningAuth(configure: { $0.sender.mail = .smtp(smtp) }) { auth in
            let email = "\(uniqueName("unify"))@example.com"
            let created = try await auth.request(.POST, "/signup", app: .unify, json: ["email": email, "password": "correct-horse-1", "data": ["full_name": "Ada"]])
            #expect(created.status == 200 && created.json["access_token"] == nil, "\(created.json)")
            let mail = try await server.waitForMessage()
            #expect(mail.defects.isEmpty)
            #expect(mail.headers["To"] == email && mail.headers["Delivered-To"] == email)
            #expect(mail.headers["Subject"] == "Bestätige dein Unify-Konto")
            #expect(mail.contentType == "multipart/alternative")
            let text = try #require(mail.parts["text/plain"]?.content)
            #expect(text.contains("Willkommen bei Unify!"))
            let link = try #require(text.split(whereSeparator: \.isWhitespace).first { $0.hasPrefix("\(auth.authURL)/verify?") }.map(String.init))
            let code = try #require(text.split(whereSeparator: { !$0.isNumber }).first { $0.count == 6 }.map(String.init))
            // The HTML part carries the same link, escaped for HTML.
            #expect(mail.parts["text/html"]?.content.contains(link.replacingOccurrences(of: "&", with: "&amp;")) == true)
            #expect(mail.parts["text/html"]?.content.contains(code) == true)
            // Not confirmed yet; the mailed link confirms it and hands the app a session.
            #expect(try await auth.signIn(app: .unify, email: email, password: "correct-horse-1").json["code"] as? String == "email_not_confirmed")
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))
            let response = try await client.execute(HTTPClientRequest(url: link), timeout: .seconds(15))
            try await client.shutdown()
            let location = try #require(response.headers.first(name: "Location"))
            #expect(location.hasPrefix("unify://auth-callback#access_token="), "\(location)")
            #expect(try await auth.signIn(app: .unify, email: email, password: "correct-horse-1").status == 200)
        }
    }

    @Test("an SMTP server that refuses the recipient makes an email change answer 502 with a clear error, not a 500")
    func refusalThroughTheService() async throws {
        let server = try SMTPServerProcess()
        try await server.start(security: .startTLS, user: "colony", password: "s3cret", refuse: ["bounce@example.com"])
        defer { server.stop() }
        let smtp = server.settings(security: .startTLS, user: "colony", password: "s3cret")
        try await withRunningAuth(configure: { $0.sender.mail = .smtp(smtp) }) { auth in
            // Sign-ups of apps that confirm addresses, recover and magic links are queued (answered
            // alike for every address, issue 33): the refusal is logged. An email change is sent
            // while the request waits.
            let signUp = try await auth.request(.POST, "/signup", json: ["email": "\(uniqueName("b"))@example.com", "password": "correct-horse-1"])
            let access = try #require(signUp.json["access_token"] as? String, "\(signUp.json)")
            let response = try await auth.request(.PUT, "/user", bearer: access, json: ["email": "bounce@example.com"])
            #expect(response.status == 502 && response.json["code"] as? String == "unexpected_failure", "\(response.json)")
        }
    }
}
