import Foundation

/// A mailbox: an address and, optionally, the name shown with it.
public struct MailAddress: Sendable, Equatable, CustomStringConvertible {
    public var address: String
    public var name: String?

    public init(address: String, name: String? = nil) {
        self.address = address
        self.name = name
    }

    /// `noreply@example.com` or `Name <noreply@example.com>` (the name may be quoted).
    public init?(parsing text: String) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.hasSuffix(">"), let open = trimmed.lastIndex(of: "<") {
            var name = trimmed[..<open].trimmingCharacters(in: .whitespaces)
            if name.count >= 2, name.hasPrefix("\""), name.hasSuffix("\"") { name = String(name.dropFirst().dropLast()) }
            address = String(trimmed[trimmed.index(after: open)..<trimmed.index(before: trimmed.endIndex)])
            self.name = name.isEmpty ? nil : name
        } else {
            address = trimmed
            name = nil
        }
        guard Self.isDeliverable(address), !(name ?? "").contains(where: { $0.isNewline }) else { return nil }
    }

    /// An address SMTP can carry in `<…>` and a header without changing its meaning: one `@`,
    /// no spaces, angle brackets or control characters (no line breaks to smuggle commands or
    /// headers in), at most 254 bytes.
    public static func isDeliverable(_ address: String) -> Bool {
        let parts = address.split(separator: "@", omittingEmptySubsequences: false)
        return parts.count == 2 && !parts[0].isEmpty && !parts[1].isEmpty && address.utf8.count <= 254
            && !address.unicodeScalars.contains { $0.value < 0x21 || $0.value == 0x7F || "<>(),;:\\\"[]".unicodeScalars.contains($0) }
    }

    public var domain: String { String(address.split(separator: "@").last ?? "localhost") }

    public var description: String { name.map { "\($0) <\(address)>" } ?? address }

    /// The header form: the name as is, quoted, or as encoded words when it is not ASCII.
    var headerValue: String {
        guard let name, !name.isEmpty else { return address }
        let atext = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: " !#$%&'*+-/=?^_`{|}~"))
        let display: String
        if !name.unicodeScalars.allSatisfy(\.isASCII) {
            display = MIME.encodedWords(name)
        } else if name.unicodeScalars.allSatisfy({ atext.contains($0) }) {
            display = name
        } else {
            display = "\"" + name.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }
        return "\(display) <\(address)>"
    }
}

/// One mail as RFC 5322 + MIME: UTF-8 text, and an HTML alternative when there is one.
struct MailMessage {
    var from: MailAddress
    var to: String
    var subject: String
    var text: String
    var html: String?
    var date: Date
    var messageID: String

    init(from: MailAddress, to: String, subject: String, text: String, html: String?, date: Date = Date(), messageID: String? = nil) {
        self.from = from
        self.to = to
        self.subject = subject
        self.text = text
        self.html = html
        self.date = date
        self.messageID = messageID ?? "<\(UUID().uuidString.lowercased())@\(from.domain)>"
    }

    /// The whole message, CRLF line ends, 7-bit clean (bodies in base64, headers in encoded words).
    func rendered() -> [UInt8] {
        var headers = [
            ("Date", MIME.date(date)),
            ("From", from.headerValue),
            ("To", to),
            ("Subject", MIME.headerText(subject)),
            ("Message-ID", messageID),
            ("MIME-Version", "1.0"),
            // RFC 3834: vacation responders and the like must not answer it.
            ("Auto-Submitted", "auto-generated"),
        ]
        var body = ""
        if let html {
            let boundary = "=_colony_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
            headers.append(("Content-Type", "multipart/alternative; boundary=\"\(boundary)\""))
            body = "This is a multi-part message in MIME format.\r\n"
            for (type, content) in [("text/plain", text), ("text/html", html)] {
                body += "\r\n--\(boundary)\r\nContent-Type: \(type); charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n" + MIME.base64Lines(content)
            }
            body += "\r\n--\(boundary)--\r\n"
        } else {
            headers.append(("Content-Type", "text/plain; charset=utf-8"))
            headers.append(("Content-Transfer-Encoding", "base64"))
            body = MIME.base64Lines(text) + "\r\n"
        }
        let head = headers.map { "\($0.0): \(MIME.singleLine($0.1))" }.joined(separator: "\r\n")
        return Array((head + "\r\n\r\n" + body).utf8)
    }
}

/// The small part of MIME a transactional mail needs.
enum MIME {
    /// RFC 5322's date: `Tue, 24 Nov 2026 23:50:10 +0000`.
    static func date(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss '+0000'"
        return formatter.string(from: date)
    }

    /// A header's text: as is when short ASCII, else UTF-8 encoded words (RFC 2047). Line breaks
    /// never survive into a header.
    static func headerText(_ text: String) -> String {
        let flat = text.replacingOccurrences(of: "\r\n", with: " ").replacingOccurrences(of: "\n", with: " ").replacingOccurrences(of: "\r", with: " ")
        if flat.unicodeScalars.allSatisfy({ $0.isASCII && $0.value >= 0x20 && $0.value != 0x7F }) && flat.utf8.count <= 70 && !flat.contains("=?") {
            return flat
        }
        return encodedWords(flat)
    }

    /// `=?UTF-8?B?…?=` words of at most 75 characters, split between characters, folded.
    static func encodedWords(_ text: String) -> String {
        var words: [String] = []
        var chunk: [UInt8] = []
        for character in text {
            let bytes = Array(String(character).utf8)
            if chunk.count + bytes.count > 45, !chunk.isEmpty {
                words.append("=?UTF-8?B?\(Data(chunk).base64EncodedString())?=")
                chunk = []
            }
            chunk += bytes
        }
        if !chunk.isEmpty || words.isEmpty { words.append("=?UTF-8?B?\(Data(chunk).base64EncodedString())?=") }
        return words.joined(separator: "\r\n ")
    }

    /// A header value with every line break that is not a fold (CRLF + space) taken out.
    static func singleLine(_ value: String) -> String {
        value.replacingOccurrences(of: "\r\n ", with: "\u{0}")
            .replacingOccurrences(of: "\r", with: " ").replacingOccurrences(of: "\n", with: " ")
            .replacingOccurrences(of: "\u{0}", with: "\r\n ")
    }

    /// UTF-8 text as base64 in lines of 76.
    static func base64Lines(_ text: String) -> String {
        let normalized = text.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\n", with: "\r\n")
        let encoded = Data(normalized.utf8).base64EncodedString()
        var lines: [Substring] = []
        var index = encoded.startIndex
        while index < encoded.endIndex {
            let end = encoded.index(index, offsetBy: 76, limitedBy: encoded.endIndex) ?? encoded.endIndex
            lines.append(encoded[index..<end])
            index = end
        }
        return lines.joined(separator: "\r\n")
    }
}
