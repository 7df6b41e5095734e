import ColonyModels
import ColonyPlatform
import Foundation
import Mustache

/// The wordings auth sends, one per message kind. Each is a set of Mustache files
/// `<name>.<part>.mustache`: mails have `subject`, `text` and optionally `html`; SMS have `sms`.
public enum MessageTemplateName: String, CaseIterable, Sendable {
    case confirmation
    /// An operator's invitation (`POST /invite`).
    case invite
    case magicLink = "magic_link"
    case recovery
    /// To the new address of an email change.
    case emailChange = "email_change"
    /// To the current address of a secure email change.
    case emailChangeCurrent = "email_change_current"
    /// A mail or an SMS, whichever the account has.
    case reauthentication
    /// The notice to the old address once an email change is done (no code).
    case emailChanged = "email_changed"
    case phoneOTP = "phone_otp"
    case phoneChange = "phone_change"
    /// The signed link to a person's data export (no code): a mail, or an SMS to an account
    /// with only a phone.
    case exportReady = "export_ready"
    /// An unused account will be erased on `{{erase_on}}` unless its owner signs in (no code).
    case inactiveAccount = "inactive_account"

    init(kind: OneTimeTokenKind) {
        switch kind {
        case .signup: self = .confirmation
        case .invite: self = .invite
        case .magiclink: self = .magicLink
        case .recovery: self = .recovery
        case .emailChange: self = .emailChange
        case .emailChangeCurrent: self = .emailChangeCurrent
        case .reauthentication: self = .reauthentication
        case .sms: self = .phoneOTP
        case .phoneChange: self = .phoneChange
        }
    }

    var channels: Set<MessageChannel> {
        switch self {
        case .phoneOTP, .phoneChange: [.sms]
        case .reauthentication, .exportReady, .inactiveAccount: [.email, .sms]
        default: [.email]
        }
    }
}

/// One file of a template set.
public enum MessageTemplatePart: String, CaseIterable, Sendable {
    case subject, text, html, sms

    var channel: MessageChannel { self == .sms ? .sms : .email }
}

/// A message's wording, rendered.
public struct RenderedMessage: Sendable, Equatable {
    public var locale: String
    public var subject: String
    public var text: String
    public var html: String?
}

/// Every template, from the operator's folder (`COLONY_AUTH_TEMPLATES_DIR`) over the ones auth
/// ships (`Templates/` beside this code). Both use one layout:
///
///     <locale>/<name>.<part>.mustache         for every app
///     <app>/<locale>/<name>.<part>.mustache   for one app (wins over the above)
///
/// and the operator's files win over the shipped ones, file by file.
public struct MessageTemplates: Sendable {
    struct Key: Hashable, Sendable {
        var app: App?
        var locale: String
        var name: MessageTemplateName
        var part: MessageTemplatePart
    }

    /// Highest priority first: the operator's, then the shipped.
    let layers: [[Key: MustacheTemplate]]

    /// The templates auth ships: English and German for every kind.
    public static let shipped: MessageTemplates = {
        do {
            guard let folder = Bundle.module.url(forResource: "Templates", withExtension: nil) else {
                throw ConfigurationError(variable: "COLONY_AUTH_TEMPLATES_DIR", problem: "(auth's own templates are missing from its resource bundle)")
            }
            return MessageTemplates(layers: [try read(folder: folder.path, variable: "auth's shipped templates")])
        } catch {
            fatalError("auth's shipped templates do not load: \(error)")
        }
    }()

    /// The shipped templates with the operator's folder over them.
    public static func load(overrides folder: String?) throws(ConfigurationError) -> MessageTemplates {
        guard let folder else { return shipped }
        return MessageTemplates(layers: [try read(folder: folder, variable: "COLONY_AUTH_TEMPLATES_DIR")] + shipped.layers)
    }

    /// Renders `name` for `channel` in the first of `locales` that has it (mail: subject and text;
    /// SMS: sms), each part from the highest layer that has it; nil when no locale has it.
    public func render(_ name: MessageTemplateName, channel: MessageChannel, app: App, locales: [String], values: [String: String]) -> RenderedMessage? {
        for locale in locales {
            func template(_ part: MessageTemplatePart) -> MustacheTemplate? {
                for layer in layers {
                    if let found = layer[Key(app: app, locale: locale, name: name, part: part)] ?? layer[Key(app: nil, locale: locale, name: name, part: part)] {
                        return found
                    }
                }
                return nil
            }
            switch channel {
            case .sms:
                guard let sms = template(.sms) else { continue }
                return RenderedMessage(locale: locale, subject: "", text: sms.render(values).trimmingCharacters(in: .whitespacesAndNewlines), html: nil)
            case .email:
                guard let subject = template(.subject), let text = template(.text) else { continue }
                let line = subject.render(values).components(separatedBy: .newlines).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.joined(separator: " ")
                return RenderedMessage(
                    locale: locale, subject: line, text: text.render(values).trimmingCharacters(in: .whitespacesAndNewlines) + "\n",
                    html: template(.html)?.render(values)
                )
            }
        }
        return nil
    }

    /// Every `.mustache` file under `folder` (other files are left alone), each parsed; a file
    /// whose place or name the layout does not know, or that does not parse, is an error naming it.
    static func read(folder: String, variable: String) throws(ConfigurationError) -> [Key: MustacheTemplate] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ConfigurationError(variable: variable, problem: "names \(folder), which is not a folder")
        }
        let root = URL(fileURLWithPath: folder, isDirectory: true).standardizedFileURL
        var templates: [Key: MustacheTemplate] = [:]
        let files = (FileManager.default.enumerator(atPath: root.path)?.allObjects as? [String] ?? []).filter { $0.hasSuffix(".mustache") }.sorted()
        for relative in files {
            var components = relative.split(separator: "/").map(String.init)
            let file = components.removeLast()
            var app: App?
            if components.count == 2 {
                guard let named = App(rawValue: components[0]) else {
                    throw ConfigurationError(variable: variable, problem: "has \(relative): \(components[0]) is not an app (\(App.allCases.map(\.rawValue).joined(separator: ", ")))")
                }
                app = named
                components.removeFirst()
            }
            guard components.count == 1, let locale = MessageLocale.normalized(components[0]), locale == components[0] else {
                throw ConfigurationError(variable: variable, problem: "has \(relative): templates go in <locale>/ or <app>/<locale>/, with a lower-case locale such as en, de or pt-br")
            }
            let pieces = file.split(separator: ".").map(String.init)
            guard pieces.count == 3, let name = MessageTemplateName(rawValue: pieces[0]), let part = MessageTemplatePart(rawValue: pieces[1]), name.channels.contains(part.channel) else {
                throw ConfigurationError(variable: variable, problem: "has \(relative): not a template auth knows; names are <name>.<subject|text|html|sms>.mustache with a name among \(MessageTemplateName.allCases.map(\.rawValue).joined(separator: ", ")) (sms only for phone_otp, phone_change, reauthentication, export_ready, inactive_account)")
            }
            let path = root.appendingPathComponent(relative).path
            guard let data = FileManager.default.contents(atPath: path), let source = String(data: data, encoding: .utf8) else {
                throw ConfigurationError(variable: variable, problem: "has \(relative), which is not readable UTF-8 text")
            }
            do {
                // Only HTML escapes what it inserts; subject, text and SMS take values as they are.
                templates[Key(app: app, locale: locale, name: name, part: part)] = try MustacheTemplate(string: part == .html ? source : "{{% CONTENT_TYPE: TEXT}}" + source)
            } catch {
                throw ConfigurationError(variable: variable, problem: "has \(relative), which is not a valid Mustache template: \(error)")
            }
        }
        return templates
    }
}

/// Which language a message goes out in.
public enum MessageLocale {
    /// The user's `locale` (or `language`) from sign-up metadata, then the request's
    /// `Accept-Language` by preference, then the app's default, then English; each tag also as
    /// its language alone (`de-at`, then `de`).
    public static func candidates(userMetadata: [String: JSONValue], acceptLanguage: String?, appDefault: String) -> [String] {
        var tags: [String] = []
        for key in ["locale", "language"] {
            if case .string(let value)? = userMetadata[key] { tags.append(value) }
        }
        tags += preferred(acceptLanguage: acceptLanguage ?? "")
        tags += [appDefault, "en"]
        var result: [String] = []
        for tag in tags {
            guard let normalized = normalized(tag) else { continue }
            let language = String(normalized.split(separator: "-")[0])
            for candidate in [normalized, language] where !result.contains(candidate) {
                result.append(candidate)
            }
        }
        return result
    }

    /// `Accept-Language`'s tags, most wanted first (q=0 and `*` left out; at most 16 read).
    static func preferred(acceptLanguage header: String) -> [String] {
        let ranges: [(tag: String, quality: Double, index: Int)] = header.split(separator: ",").prefix(16).enumerated().compactMap { index, item in
            let fields = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let tag = fields.first, !tag.isEmpty, tag != "*" else { return nil }
            var quality = 1.0
            for field in fields.dropFirst() where field.lowercased().hasPrefix("q=") {
                quality = Double(field.dropFirst(2)) ?? 0
            }
            return quality > 0 ? (tag, quality, index) : nil
        }
        return ranges.sorted { ($0.quality, -$0.index) > ($1.quality, -$1.index) }.map(\.tag)
    }

    /// `de_DE` → `de-de`; nil for anything that is not a language tag.
    static func normalized(_ tag: String) -> String? {
        let lowered = tag.trimmingCharacters(in: .whitespaces).lowercased().replacingOccurrences(of: "_", with: "-")
        let subtags = lowered.split(separator: "-", omittingEmptySubsequences: false)
        guard let first = subtags.first, (2...3).contains(first.count), first.allSatisfy({ $0 >= "a" && $0 <= "z" }),
              subtags.dropFirst().allSatisfy({ (1...8).contains($0.count) && $0.allSatisfy { ($0 >= "a" && $0 <= "z") || ($0 >= "0" && $0 <= "9") } }),
              lowered.count <= 35 else { return nil }
        return lowered
    }
}
