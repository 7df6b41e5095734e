import ColonyModels
import ColonyPlatform
import ColonyTesting
import Foundation
import NIOCore
import Testing

/// The feed page's and posting's fast paths (`CirclesAPI.fastPaths`) against the generated routes
/// they stand in for: the same requests, good and bad, to the service and to a twin with fast
/// paths off, on the same data, answer the same status, `Content-Type` and bytes.
@Suite("Circles: the fast paths of the feed page and of posting")
struct CirclesFastPathTests {
    @Test("GET /circles/v1/circles/{circle_id}/posts answers byte for byte as the generated route")
    func feedPageMatchesGeneratedRoute() async throws {
        try await withRunningCircles { circles in
            let owner = try await circles.user(handle: "fast_owner"), member = try await circles.user(handle: "fast_member"), outsider = try await circles.user()
            let circle = try await circles.circle(owner: owner, members: [member])
            let empty = try await circles.circle(owner: owner, name: "Empty \"quiet\" / one")
            // Every kind of card: notes with text that needs escaping, an ask, a poll with a vote,
            // an event with RSVPs and a place, reactions, a kept mark and a photo.
            let poll = try await circles.post(circle, as: owner, .init(_type: .poll, body: "Lunch?", pollOptions: ["Tacos", "Sushi \"rolls\""]))
            let event = try await circles.post(circle, as: member, .init(_type: .event, body: "Hike", location: "Trail / 2", latitude: 40.7128, longitude: -74,
                                                                         startsAt: try #require(ISO8601.parse("2030-01-01T09:00:00.123Z"))))
            let ask = try await circles.post(circle, as: member, .init(_type: .ask, body: "Ride?", mood: "hopeful", category: "ride", urgency: .urgent))
            for index in 0..<22 {
                _ = try await circles.post(circle, as: index.isMultiple(of: 2) ? owner : member, .init(_type: .note, body: "note \(index) \u{1F680} \\ \" \n tab\t é \u{2028}"))
            }
            let detail = try await circles.service.request(.GET, "/posts/\(poll)", as: member)
            let option = try #require(detail.body["poll_options"]?.arrayValue?.first?["id"]?.stringValue)
            #expect(try await circles.service.request(.PUT, "/posts/\(poll)/vote", as: member, json: ["option_id": option]).status == 200)
            #expect(try await circles.service.request(.PUT, "/posts/\(event)/rsvp", as: owner, json: ["status": "maybe"]).status == 200)
            #expect(try await circles.service.request(.PUT, "/posts/\(ask)/keep", as: owner).status == 200)
            for emoji in ["%F0%9F%94%A5", "%E2%9D%A4%EF%B8%8F"] {
                #expect(try await circles.service.request(.PUT, "/posts/\(ask)/reactions/\(emoji)", as: member).status == 200)
            }
            let png = ByteBuffer(bytes: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 0])
            #expect(try await circles.service.request(.PUT, "/posts/\(event)/photo", as: member, bytes: png, contentType: "image/png").status == 200)

            let first = try await circles.service.request(.GET, "/circles/\(circle)/posts", as: owner)
            #expect(first.status == 200 && first.body["posts"]?.arrayValue?.count == 20, "\(first.body)")
            let cursor = try #require(first.body["next_cursor"]?.stringValue)
            let paths = [
                "/circles/\(circle)/posts", "/circles/\(circle)/posts?limit=5", "/circles/\(circle)/posts?limit=100",
                "/circles/\(circle)/posts?before=\(cursor)", "/circles/\(circle)/posts?before=\(cursor)&limit=1",
                "/circles/\(empty)/posts", "/circles/\(circle.uuidString.uppercased())/posts",
                "/circles/\(circle)/posts?limit=0", "/circles/\(circle)/posts?limit=101", "/circles/\(circle)/posts?limit=abc",
                "/circles/\(circle)/posts?limit=", "/circles/\(circle)/posts?limit=%2B5", "/circles/\(circle)/posts?limit=05&limit=abc", "/circles/\(circle)/posts?limit=1.5", "/circles/\(circle)/posts?before=garbage",
                "/circles/\(circle)/posts?before=", "/circles/not-a-uuid/posts", "/circles/\(UUID())/posts",
                // What the fast path leaves to the generated route: a bare or empty query item, a repeated or encoded value, an encoded id.
                "/circles/\(circle)/posts?limit", "/circles/\(circle)/posts?limit=5&&before=\(cursor)", "/circles/\(circle)/posts?limit=5&limit=6",
                "/circles/\(circle)/posts?limit=%35", "/circles/\(circle)/posts?before=a%20b", "/circles/\(circle)/posts?utm=x&limit=3",
                "/circles/\(circle.uuidString.lowercased().replacingOccurrences(of: "-", with: "%2D"))/posts",
            ]
            try await circles.withTwin(configure: { $0.fastPaths = .off }) { generated in
                var compared = 0
                for (user, label) in [(owner, "owner"), (member, "member"), (outsider, "outsider")] {
                    for path in paths {
                        try await Self.expectSame(path, as: user, label, fast: circles.service, generated: generated)
                        compared += 1
                    }
                }
                try await Self.expectSame("/circles/\(circle)/posts", as: nil, "no token", fast: circles.service, generated: generated)
                for accept in ["application/json", "*/*", "text/html", "application/json, text/plain"] {
                    try await Self.expectSame("/circles/\(circle)/posts?limit=3", as: owner, "Accept: \(accept)", headers: [("Accept", accept)],
                                              fast: circles.service, generated: generated)
                }
                #expect(compared == 3 * paths.count)
            }
        }
    }

    @Test("POST /circles/v1/circles/{circle_id}/posts answers as the generated route, good and bad bodies alike")
    func postingMatchesGeneratedRoute() async throws {
        try await withRunningCircles { circles in
            let owner = try await circles.user(handle: "post_owner"), outsider = try await circles.user()
            let circle = try await circles.circle(owner: owner)
            let posts = "/circles/\(circle)/posts"
            let bodies = [
                #"{"type":"note","body":"hello"}"#,
                #"{"type":"note","body":"escapes \" \\ / \n \t \u00e9 \ud83d\ude80 \u2028 é 🚀","mood":"calm"}"#,
                #"{"type":"poll","body":"Lunch?","poll_options":["Tacos","Sushi \"rolls\""]}"#,
                #"{"type":"event","body":"Hike","location":"Trail / 2","latitude":40.7128,"longitude":-74,"starts_at":"2030-01-01T10:00:00.5+01:00"}"#,
                #"{"type":"event","body":"Hike","starts_at":"2030-01-01T09:00:00Z","latitude":1e1,"longitude":-0.0}"#,
                #"{"type":"ask","body":"Ride?","mood":"hopeful","category":"ride","urgency":"urgent","unknown":{"x":[1,2]}}"#,
                // Refused, by the document's types or the rules.
                #"{"type":"poll","body":"Lunch?","poll_options":["only one"]}"#, #"{"type":"note","body":""}"#,
                #"{"type":"gossip","body":"x"}"#, #"{"body":"no type"}"#, #"{"type":"note","body":5}"#, "{}", "[]", "\"note\"", "",
                #"{"type":"note","body":"x","mood":null}"#, #"{"type":"note","body":"null"}"#, #"{"type":"event","body":"x","starts_at":"tomorrow"}"#,
                #"{"type":"event","body":"x","latitude":NaN}"#, #"{"type":"note","body":"nul \u0000 byte"}"#, #"{"type":"note","body":"#,
                #"{"type":"note","body":"x"} trailing"#, "{\"type\":\"note\",\"body\":\"\(String(repeating: "x", count: 70_000))\"}",
            ]
            try await circles.withTwin(configure: { $0.fastPaths = .off }) { generated in
                let varying: Set<String> = ["id", "created_at", "expires_at", "updated_at"]
                var compared = 0
                for body in bodies {
                    for (user, path) in [(owner, posts), (outsider, posts), (owner, "/circles/\(UUID())/posts"), (owner, "/circles/not-a-uuid/posts")] {
                        let difference = try await circles.service.differenceFromGenerated(.POST, path, as: user, body: body, generated: generated, varying: varying)
                        #expect(difference == nil, "\(difference ?? "")")
                        compared += 1
                    }
                }
                let note = #"{"type":"note","body":"hi"}"#
                for (contentType, headers) in [("application/json; charset=utf-8", []), ("application/JSON", []), ("text/plain", []),
                                               ("application/json", [("Accept", "text/html")]), ("application/json", [("Accept", "*/*")])] as [(String, [(String, String)])] {
                    let difference = try await circles.service.differenceFromGenerated(.POST, posts, as: owner, body: note, contentType: contentType,
                                                                                         headers: headers, generated: generated, varying: varying)
                    #expect(difference == nil, "\(contentType) \(headers): \(difference ?? "")")
                }
                for (path, user, contentType) in [(posts, nil, "application/json"), (posts + "?x=1", owner, "application/json"), (posts, owner, nil)] as [(String, RunningService.User?, String?)] {
                    let difference = try await circles.service.differenceFromGenerated(.POST, path, as: user, body: note, contentType: contentType,
                                                                                         generated: generated, varying: varying)
                    #expect(difference == nil, "\(path) \(contentType ?? "no type"): \(difference ?? "")")
                }
                #expect(compared == 4 * bodies.count)
            }
            // Both twins posted each good body: the feed shows them all, whole.
            let feed = try await circles.service.request(.GET, "\(posts)?limit=100", as: owner)
            let shown = feed.body["posts"]?.arrayValue ?? []
            #expect(feed.status == 200 && shown.count >= 2 * 6, "\(feed.body)")
            #expect(shown.allSatisfy { $0["id"]?.stringValue != nil && $0["author"] != nil }, "\(feed.body)")
        }
    }

    static func expectSame(_ path: String, as user: RunningService.User?, _ label: String, headers: [(String, String)] = [],
                           fast: RunningService, generated: RunningService) async throws {
        let one = try await fast.request(.GET, path, as: user, headers: headers)
        let other = try await generated.request(.GET, path, as: user, headers: headers)
        let (a, b) = (String(buffer: one.bytes), String(buffer: other.bytes))
        #expect(one.status == other.status, "\(label) \(path): \(one.status) \(a) against the generated \(other.status) \(b)")
        #expect(one.headers["Content-Type"] == other.headers["Content-Type"], "\(label) \(path)")
        #expect(a == b, "\(label) \(path):\n\(a)\nagainst the generated\n\(b)")
    }
}
