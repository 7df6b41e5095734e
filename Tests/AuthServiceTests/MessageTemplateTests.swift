import AuthService
import ColonyModels
import ColonyPlatform
import ColonyTesting
import Foundation
import Testing

/// The wording of auth's mails and SMS: shipped templates per language, the operator's files over
/// them, and which language a user gets.
@Suite("Auth message templates")
struct MessageTemplateTests {
    let values = ["app_name": "Unify", "code": "123456", "link": "https://auth.example/verify?token=abc&type=signup", "email": "ada@example.com", "new_email": "new@example.com", "site_url": "unify://auth-callback", "lifetime_minutes": "60",
                  "expires_at": "2026-12-05 09:30", "erase_on": "2026-12-12 09:30"]

    @Test("every message kind renders in English and German with its code and link, for mail and SMS as it is sent")
    func shippedTemplatesAreComplete() throws {
        let templates = MessageTemplates.shipped
        for locale in ["en", "de"] {
            for name in MessageTemplateName.allCases {
                for channel in [MessageChannel.email, .sms] {
                    let rendered = templates.render(name, channel: channel, app: .unify, locales: [locale], values: values)
                    let expected: Bool = switch (name, channel) {
                    case (.phoneOTP, .sms), (.phoneChange, .sms), (.reauthentication, _), (.exportReady, _), (.inactiveAccount, _): true
                    case (.phoneOTP, .email), (.phoneChange, .email), (_, .sms): false
                    default: true
                    }
                    guard expected else {
                        #expect(rendered == nil, "\(name) has no \(channel) wording")
                        continue
                    }
                    let message = try #require(rendered, "\(locale) \(name) \(channel)")
                    #expect(message.locale == locale)
                    #expect(!message.text.contains("{{") && message.text.contains("Unify"), "\(locale) \(name): \(message.text)")
                    switch name {
                    case .emailChanged: break
                    // Notices without a code: the export's link and its end, the account's erasure date.
                    case .exportReady: #expect(message.text.contains(values["link"]!) && message.text.contains("2026-12-05 09:30"), "\(locale) \(name)")
                    case .inactiveAccount: #expect(message.text.contains("2026-12-12 09:30"), "\(locale) \(name)")
                    default: #expect(message.text.contains("123456"), "\(locale) \(name)")
                    }
                    if channel == .email {
                        #expect(!message.subject.isEmpty && !message.subject.contains("\n"))
                        let html = try #require(message.html, "\(locale) \(name) has an HTML part")
                        #expect(html.contains("<html lang=\"\(locale)\">"))
                        if [.confirmation, .magicLink, .recovery, .emailChange, .emailChangeCurrent].contains(name) {
                            #expect(message.text.contains(values["link"]!))
                            #expect(html.contains("href=\"https://auth.example/verify?token=abc&amp;type=signup\""), "the link, escaped for HTML")
                        }
                    } else {
                        #expect(message.html == nil && message.subject.isEmpty && message.text.count <= 160, "one SMS segment: \(message.text)")
                    }
                }
            }
        }
        #expect(templates.render(.confirmation, channel: .email, app: .unify, locales: ["de"], values: values)?.subject == "Bestätige dein Unify-Konto")
    }

    @Test("the language: user metadata, then Accept-Language by preference, then the app's default, then English; regions fall back to the language")
    func localeOrder() {
        #expect(MessageLocale.candidates(userMetadata: ["locale": .string("de_AT")], acceptLanguage: "fr-CH, fr;q=0.9, en;q=0.8", appDefault: "en") == ["de-at", "de", "fr-ch", "fr", "en"])
        #expect(MessageLocale.candidates(userMetadata: ["language": .string("DE")], acceptLanguage: nil, appDefault: "en") == ["de", "en"])
        #expect(MessageLocale.candidates(userMetadata: [:], acceptLanguage: "en;q=0.5, de;q=0.9, *;q=0.1, it;q=0", appDefault: "de") == ["de", "en"])
        #expect(MessageLocale.candidates(userMetadata: ["locale": .number(3)], acceptLanguage: "<script>, ../../etc", appDefault: "de") == ["de", "en"])
        let templates = MessageTemplates.shipped
        let french = MessageLocale.candidates(userMetadata: [:], acceptLanguage: "fr", appDefault: "de")
        #expect(templates.render(.confirmation, channel: .email, app: .unify, locales: french, values: values)?.locale == "de", "no French: the app's default")
        #expect(templates.render(.confirmation, channel: .email, app: .mycirclee, locales: MessageLocale.candidates(userMetadata: [:], acceptLanguage: "fr", appDefault: "en"), values: values)?.locale == "en")
    }

    @Test("operators override by files: per app and language over every app's, file by file; text takes values as they are, HTML escapes them")
    func overrides() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(uniqueName("templates")).path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        func write(_ path: String, _ text: String) throws {
            let url = URL(fileURLWithPath: folder).appendingPathComponent(path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try text.write(to: url, atomically: true, encoding: .utf8)
        }
        try write("de/confirmation.subject.mustache", "Willkommen, {{email}}")
        try write("unify/de/confirmation.subject.mustache", "Unify: bitte bestätigen\n")
        try write("fr/confirmation.subject.mustache", "Confirmez votre compte {{app_name}}")
        try write("fr/confirmation.text.mustache", "Code : {{code}} <{{email}}> & co")
        try write("fr/confirmation.html.mustache", "<p>{{email}} & {{app_name}}</p>")
        try write("README.md", "notes for the team: not a template")
        let templates = try MessageTemplates.load(overrides: folder)
        #expect(templates.render(.confirmation, channel: .email, app: .unify, locales: ["de"], values: values)?.subject == "Unify: bitte bestätigen")
        let mycirclee = try #require(templates.render(.confirmation, channel: .email, app: .mycirclee, locales: ["de"], values: values))
        #expect(mycirclee.subject == "Willkommen, ada@example.com")
        #expect(mycirclee.text.hasPrefix("Willkommen bei Unify!"), "the text not overridden: the shipped German one")
        let french = try #require(templates.render(.confirmation, channel: .email, app: .unify, locales: ["fr", "en"], values: ["app_name": "Unify", "code": "123456", "email": "a&b<c>@example.com"]))
        #expect(french.locale == "fr" && french.subject == "Confirmez votre compte Unify")
        #expect(french.text == "Code : 123456 <a&b<c>@example.com> & co\n")
        #expect(french.html == "<p>a&amp;b&lt;c&gt;@example.com & Unify</p>")
        // A French SMS was not given: the next language has it.
        #expect(templates.render(.phoneOTP, channel: .sms, app: .habithive, locales: ["fr", "en"], values: values)?.locale == "en")
    }

    @Test("a template file the layout does not know, or that does not parse, stops startup with its name")
    func badOverrides() throws {
        for (path, text, problem) in [
            ("de/confirmaton.subject.mustache", "x", "confirmaton.subject.mustache"),
            ("de/phone_otp.subject.mustache", "x", "phone_otp.subject.mustache"),
            ("mycircle/de/confirmation.subject.mustache", "x", "mycircle is not an app"),
            ("DE/confirmation.subject.mustache", "x", "lower-case locale"),
            ("de/confirmation.text.mustache", "{{#code}} unclosed", "not a valid Mustache template"),
        ] {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent(uniqueName("templates")).path
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let url = URL(fileURLWithPath: folder).appendingPathComponent(path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try text.write(to: url, atomically: true, encoding: .utf8)
            #expect { _ = try MessageTemplates.load(overrides: folder) } throws: { error in
                guard let error = error as? ConfigurationError else { return false }
                return error.variable == "COLONY_AUTH_TEMPLATES_DIR" && error.problem.contains(problem)
            }
        }
        #expect(throws: ConfigurationError.self) { _ = try MessageTemplates.load(overrides: "/nonexistent/templates") }
    }

    @Test("through the service: the user's metadata language, else the request's Accept-Language, else the app's default")
    func languageThroughTheService() async throws {
        try await withRunningAuth { auth in
            // MyCirclee's default is English; Accept-Language asks for German.
            let first = "\(uniqueName("de"))@example.com"
            #expect(try await auth.request(.POST, "/otp", json: ["email": first], headers: [("Accept-Language", "de-DE,de;q=0.9,en;q=0.8")]).status == 200)
            let german = try await auth.waitForMessage(to: first)
            #expect(german.locale == "de" && german.subject == "Dein Anmeldelink für MyCirclee" && german.html != nil)
            #expect(german.text.contains(german.code!) && german.text.contains(german.link!))
            // The metadata's language wins over the request's.
            let second = "\(uniqueName("en"))@example.com"
            #expect(try await auth.request(.POST, "/otp", json: ["email": second, "data": ["locale": "en-GB"]], headers: [("Accept-Language", "de")]).status == 200)
            #expect(try await auth.waitForMessage(to: second).subject == "Your MyCirclee sign-in link")
            // Unify speaks German unless asked otherwise.
            let third = "\(uniqueName("unify"))@example.com"
            #expect(try await auth.request(.POST, "/signup", app: .unify, json: ["email": third, "password": "correct-horse-1"], headers: [("Accept-Language", "fr-FR")]).status == 200)
            #expect(try await auth.waitForMessage(to: third).subject == "Bestätige dein Unify-Konto")
        }
    }
}
