import AsyncHTTPClient
import ColonyPlatform
import Foundation
import NIOHTTP1

/// Bodies that used to reach traps, or could (issue 33): JSON nested past Foundation's 512
/// levels, and numbers no field holds (1e300, 2^63, 1.5, -1e300) in every property a documented
/// operation's body names, one at a time and all at once.
extension RunningService {
    /// The documented write operations (POST, PUT, PATCH) that answered a hostile body with a 5xx
    /// or with something other than a JSON `{"code","message"}` error when they refused it. Path
    /// parameters are random ids unless `values` names them. Empty when every answer was fine; a
    /// trap would end the test process itself.
    public func hostileBodyProblems(_ document: OpenAPIDocument, as user: User, values: [String: String] = [:]) async throws -> (problems: [String], requests: Int) {
        guard let root = try JSONSerialization.jsonObject(with: Data(document.json.utf8)) as? [String: Any],
              let paths = root["paths"] as? [String: Any] else { return (["the document does not parse"], 0) }
        let schemas = ((root["components"] as? [String: Any])?["schemas"] as? [String: Any]) ?? [:]
        var problems: [String] = []
        var requests = 0
        let numbers = ["1e300", "-1e300", "9223372036854775808", "1.5", "123456789012345678901234567890"]
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        let deepObject = String(repeating: #"{"a":"#, count: 600) + "1" + String(repeating: "}", count: 600)
        for (template, item) in paths.sorted(by: { $0.key < $1.key }) {
            guard let item = item as? [String: Any] else { continue }
            for method in ["post", "put", "patch"] {
                guard let operation = item[method] as? [String: Any] else { continue }
                var path = template
                for (name, value) in values { path = path.replacingOccurrences(of: "{\(name)}", with: value) }
                path = path.replacingOccurrences(of: #"\{[a-z_]+\}"#, with: UUID().uuidString.lowercased(), options: .regularExpression)
                let properties = Self.bodyProperties(operation, schemas: schemas)
                var bodies = [deep, deepObject]
                for property in properties {
                    for number in numbers { bodies.append(#"{"\#(property)":\#(number)}"#) }
                    bodies.append(#"{"\#(property)":\#(deep)}"#)
                }
                if !properties.isEmpty {
                    bodies.append("{" + properties.map { #""\#($0)":1e300"# }.joined(separator: ",") + "}")
                }
                for body in bodies {
                    requests += 1
                    let reply = try await request(HTTPMethod(rawValue: method.uppercased()), "\(base)\(path)", as: user, raw: body)
                    let shown = "\(method.uppercased()) \(template) with \(body.prefix(80))"
                    if reply.status >= 500 {
                        problems.append("\(shown): \(reply.status) \(reply.body)")
                    } else if reply.status >= 400, reply.code == nil || reply.body["message"]?.stringValue == nil {
                        problems.append("\(shown): \(reply.status) without a JSON error")
                    }
                }
            }
        }
        return (problems, requests)
    }

    /// The same for query strings: every documented query parameter of every operation, alone,
    /// set to numbers no parameter holds, a cursor of 19 nines, NaN, years past 9999 and 4,000 digits.
    public func hostileQueryProblems(_ document: OpenAPIDocument, as user: User, values: [String: String] = [:]) async throws -> (problems: [String], requests: Int) {
        guard let root = try JSONSerialization.jsonObject(with: Data(document.json.utf8)) as? [String: Any],
              let paths = root["paths"] as? [String: Any] else { return (["the document does not parse"], 0) }
        let shared = ((root["components"] as? [String: Any])?["parameters"] as? [String: Any]) ?? [:]
        let hostile = ["1e300", "-1e300", "9223372036854775808", "-9223372036854775809", "NaN", "-Infinity", "1.5", "-1",
                       "9999999999999999999_01a21cc2-e264-7000-8000-000000000001", "999999999999999999_ffffffff-ffff-ffff-ffff-ffffffffffff",
                       "99999-12-31T23:59:59Z", "0000-01-01T00:00:00%2B23:59", String(repeating: "9", count: 4000)]
        var problems: [String] = []
        var requests = 0
        for (template, item) in paths.sorted(by: { $0.key < $1.key }) {
            guard let item = item as? [String: Any] else { continue }
            for method in ["get", "post", "put", "patch", "delete"] {
                guard let operation = item[method] as? [String: Any] else { continue }
                let names = ((operation["parameters"] as? [[String: Any]]) ?? []).compactMap { parameter -> String? in
                    let resolved = (parameter["$ref"] as? String).flatMap { $0.split(separator: "/").last }.flatMap { shared[String($0)] as? [String: Any] } ?? parameter
                    return resolved["in"] as? String == "query" ? resolved["name"] as? String : nil
                }
                var path = template
                for (name, value) in values { path = path.replacingOccurrences(of: "{\(name)}", with: value) }
                path = path.replacingOccurrences(of: #"\{[a-z_]+\}"#, with: UUID().uuidString.lowercased(), options: .regularExpression)
                for name in names {
                    for value in hostile {
                        requests += 1
                        let reply = try await request(HTTPMethod(rawValue: method.uppercased()), "\(base)\(path)?\(name)=\(value)", as: user)
                        let shown = "\(method.uppercased()) \(template)?\(name)=\(value.prefix(60))"
                        if reply.status >= 500 {
                            problems.append("\(shown): \(reply.status) \(reply.body)")
                        } else if reply.status >= 400, reply.status != 414, reply.code == nil || reply.body["message"]?.stringValue == nil {
                            problems.append("\(shown): \(reply.status) without a JSON error")
                        }
                    }
                }
            }
        }
        return (problems, requests)
    }

    /// The top-level property names of an operation's JSON body (through one `$ref`).
    static func bodyProperties(_ operation: [String: Any], schemas: [String: Any]) -> [String] {
        guard let content = (operation["requestBody"] as? [String: Any])?["content"] as? [String: Any],
              var schema = (content["application/json"] as? [String: Any])?["schema"] as? [String: Any] else { return [] }
        if let reference = schema["$ref"] as? String, let name = reference.split(separator: "/").last, let resolved = schemas[String(name)] as? [String: Any] {
            schema = resolved
        }
        return ((schema["properties"] as? [String: Any])?.keys.sorted()) ?? []
    }
}
