import Foundation

/// Base64url without padding (RFC 4648 §5), as JWTs, refresh tokens, PKCE and signed URLs use it.
public enum Base64URL {
    /// Byte by byte, without intermediate strings: tokens are made on every request.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        let encoded = Data(bytes).base64EncodedData()
        var output = [UInt8]()
        output.reserveCapacity(encoded.count)
        for byte in encoded {
            switch byte {
            case UInt8(ascii: "+"): output.append(UInt8(ascii: "-"))
            case UInt8(ascii: "/"): output.append(UInt8(ascii: "_"))
            case UInt8(ascii: "="): continue
            default: output.append(byte)
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The bytes, or nil when `text` is not base64url (padding optional).
    public static func decode(_ text: some StringProtocol) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }
}
