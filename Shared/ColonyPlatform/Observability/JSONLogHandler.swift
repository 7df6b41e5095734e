import ColonyModels
import Foundation
import Logging

/// One JSON object per line: `timestamp` (ISO 8601 UTC with milliseconds), `level`, `service`,
/// `message`, `logger`, then the metadata (request id, trace id, user id, event id, ...) as
/// top-level keys, nested metadata as JSON objects and arrays. What log shippers (Loki, Fluent Bit,
/// CloudWatch) read without a parsing rule.
public struct JSONLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    public var logLevel: Logger.Level
    let label: String
    let service: String
    let output: JSONLogOutput

    public init(label: String, service: String, level: Logger.Level, metadataProvider: Logger.MetadataProvider?, output: JSONLogOutput = .standardOutput) {
        self.label = label
        self.service = service
        self.logLevel = level
        self.metadataProvider = metadataProvider
        self.output = output
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = self.metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let explicit = event.metadata { merged.merge(explicit) { _, new in new } }
        if let error = event.error { merged["error"] = .string(String(describing: error)) }
        output.write(Self.line(date: Date(), level: event.level, service: service, label: label, message: event.message.description, metadata: merged))
    }

    /// The JSON line for one entry (with its trailing newline). Reserved keys win over metadata.
    static func line(date: Date, level: Logger.Level, service: String, label: String, message: String, metadata: Logger.Metadata) -> String {
        var json = "{\"timestamp\":\"\(ISO8601.format(date))\",\"level\":\"\(level.rawValue)\",\"service\":"
        appendString(service, to: &json)
        json += ",\"message\":"
        appendString(message, to: &json)
        json += ",\"logger\":"
        appendString(label, to: &json)
        for key in metadata.keys.sorted() where !["timestamp", "level", "service", "message", "logger"].contains(key) {
            json += ","
            appendString(key, to: &json)
            json += ":"
            append(metadata[key]!, to: &json)
        }
        json += "}\n"
        return json
    }

    private static func append(_ value: Logger.Metadata.Value, to json: inout String) {
        switch value {
        case .string(let text): appendString(text, to: &json)
        case .stringConvertible(let convertible): appendString(convertible.description, to: &json)
        case .array(let values):
            json += "["
            for (index, element) in values.enumerated() {
                if index > 0 { json += "," }
                append(element, to: &json)
            }
            json += "]"
        case .dictionary(let dictionary):
            json += "{"
            for (index, key) in dictionary.keys.sorted().enumerated() {
                if index > 0 { json += "," }
                appendString(key, to: &json)
                json += ":"
                append(dictionary[key]!, to: &json)
            }
            json += "}"
        }
    }

    /// A JSON string literal: quotes, backslashes and control characters escaped.
    static func appendString(_ text: String, to json: inout String) {
        json += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": json += "\\\""
            case "\\": json += "\\\\"
            case "\n": json += "\\n"
            case "\r": json += "\\r"
            case "\t": json += "\\t"
            case _ where scalar.value < 0x20:
                json += "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count) + String(scalar.value, radix: 16)
            default: json.unicodeScalars.append(scalar)
            }
        }
        json += "\""
    }
}

/// Where JSON log lines go: standard output, whole lines at a time (one write per line, so lines
/// from concurrent tasks never interleave).
public struct JSONLogOutput: Sendable {
    let write: @Sendable (String) -> Void

    public init(write: @escaping @Sendable (String) -> Void) {
        self.write = write
    }

    func write(_ line: String) { write(line) }

    public static let standardOutput = JSONLogOutput { line in
        var line = line
        line.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Foundation.write(STDOUT_FILENO, bytes.baseAddress! + offset, bytes.count - offset)
                if written <= 0 { return }
                offset += written
            }
        }
    }
}
