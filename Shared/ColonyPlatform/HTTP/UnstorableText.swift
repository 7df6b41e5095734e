import Foundation

/// Text no service can keep: NUL (Postgres refuses it in `text`, so it used to end in a 500) and
/// unpaired UTF-16 surrogates (JSON can spell them, `"\uD800"`, but they are not Unicode). The
/// platform refuses both with 422 before a handler sees them: in JSON bodies
/// (`ColonyRequestDecoder`) and in the request's path and query (`ColonyMiddleware`).
public enum UnstorableText {
    /// What is wrong with the strings of a JSON text, nil when nothing is. Reads the escapes
    /// only; the JSON parser judges the rest.
    public static func problem(inJSON bytes: some Collection<UInt8>) -> String? {
        var index = bytes.startIndex
        var inString = false
        // A high surrogate waiting for its low half (only a `\uDC00`–`\uDFFF` escape may follow).
        var pendingHigh = false

        func next() -> UInt8? {
            guard index != bytes.endIndex else { return nil }
            defer { index = bytes.index(after: index) }
            return bytes[index]
        }
        func hex4() -> UInt16? {
            var value: UInt16 = 0
            for _ in 0..<4 {
                guard let byte = next(), let digit = hexValue(byte) else { return nil }
                value = value << 4 | UInt16(digit)
            }
            return value
        }

        while let byte = next() {
            if byte == 0 { return nul }
            guard inString else {
                if byte == UInt8(ascii: "\"") { inString = true }
                continue
            }
            if byte != UInt8(ascii: "\\") {
                if pendingHigh { return surrogate }
                if byte == UInt8(ascii: "\"") { inString = false }
                continue
            }
            guard let escaped = next() else { return nil }
            guard escaped == UInt8(ascii: "u") else {
                if pendingHigh { return surrogate }
                continue
            }
            guard let unit = hex4() else { return nil }  // malformed: the parser says so
            switch unit {
            case 0:
                return nul
            case 0xD800...0xDBFF:
                if pendingHigh { return surrogate }
                pendingHigh = true
            case 0xDC00...0xDFFF:
                if !pendingHigh { return surrogate }
                pendingHigh = false
            default:
                if pendingHigh { return surrogate }
            }
        }
        return pendingHigh ? surrogate : nil
    }

    /// What is wrong with a request target (path and query as sent, percent-encoded), nil when
    /// nothing is: a percent-encoded NUL.
    public static func problem(inTarget target: String) -> String? {
        // Over the bytes: Foundation's `contains("%00")` cost about 20,000 instructions a request.
        var previous: (UInt8, UInt8) = (0, 0)
        for byte in target.utf8 {
            if byte == 0 || (previous == (UInt8(ascii: "%"), UInt8(ascii: "0")) && byte == UInt8(ascii: "0")) { return nul }
            previous = (previous.1, byte)
        }
        return nil
    }

    static let nul = "text must not contain the NUL character (U+0000)"
    static let surrogate = "text must not contain unpaired UTF-16 surrogates (\\uD800–\\uDFFF alone)"

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
