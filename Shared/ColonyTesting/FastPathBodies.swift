/// JSON bodies that a write's fast path must leave to its generated route or read exactly as it
/// does (`PlainJSONWrite` against `RequestBodyCheck` and the runtime's decoder), for the services'
/// fast-path tests: each is sent to the service and to its twin with fast paths off.
public enum FastPathBodies {
    /// Around `object`, a good body of the operation (`{"content":"hi"}`): the same object padded,
    /// prefixed, cut or followed by more; bodies of other JSON shapes; numbers JSON has no room
    /// for; text Postgres cannot keep; nesting past the parsers' depth; and one past `limit` bytes.
    public static func hostile(around object: String, limit: Int) -> [String] {
        precondition(object.hasPrefix("{") && object.hasSuffix("}"), "an object's text")
        let inner = object.dropFirst().dropLast()
        let deep = String(repeating: "[", count: 1_100) + String(repeating: "]", count: 1_100)
        return [
            // The object itself, as a parser may or may not take it.
            " \n\t\(object) \n", "\u{FEFF}\(object)", "\(object) trailing", "\(object)\(object)", String(object.dropLast()), "{\(inner),}",
            "{\(inner),\(inner)}", "{\(inner),\"unknown\":{\"nested\":[1,2.5,true,false,\"x\"]}}", "{\(inner),\"unknown\":null}",
            "{\(inner),\"z\":1e400}", "{\(inner),\"z\":-0.0}", "{\(inner),\"z\":NaN}", "{\(inner),\"z\":Infinity}", "{\(inner),\"z\":\(deep)}",
            "{\(inner),\"z\":\"\\u0000\"}", "{\(inner),\"\\u0000\":1}", "{\(inner),\"z\":\"\\ud800\"}", "{\(inner),\"z\":'single'}",
            "{\(inner),/* comment */\"z\":1}", "{\(inner),z:1}",
            // Other shapes.
            "", " ", "{}", "[]", "[\(object)]", "\"text\"", "0", "-1", "true", "null", "NaN", "{", "}", "{\"", "\u{0}", deep,
            // One byte past the limit, and a body exactly at it.
            "{\(inner),\"pad\":\"\(String(repeating: "x", count: max(0, limit - inner.utf8.count - 10)))\"}",
            "{\(inner),\"pad\":\"\(String(repeating: "x", count: max(0, limit - inner.utf8.count - 11)))\"}",
        ]
    }
}
