/// The token of an `Authorization: Bearer <token>` header: the scheme in any case, then the
/// token with the blanks around it trimmed. Read over the header's bytes: Foundation's trimming
/// copied every token through UTF-16 on every request.
public enum BearerToken {
    /// The token, or nil for another scheme or an empty token.
    public static func from(authorization header: String) -> String? {
        let bytes = header.utf8
        var index = bytes.startIndex
        for expected in "bearer".utf8 {
            // `| 0x20` folds an ASCII capital to its small letter; nothing else maps onto one.
            guard index < bytes.endIndex, bytes[index] | 0x20 == expected else { return nil }
            index = bytes.index(after: index)
        }
        guard index < bytes.endIndex, isBlank(bytes[index]) else { return nil }
        var start = index, end = bytes.endIndex
        while start < end, isBlank(bytes[start]) { start = bytes.index(after: start) }
        while end > start, isBlank(bytes[bytes.index(before: end)]) { end = bytes.index(before: end) }
        guard start < end else { return nil }
        return String(header[start..<end])
    }

    private static func isBlank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
}
